"""`job_output` and `job_kill`: a background job's output since the last look, and its end
(Claude Code's `BashOutput` and `KillShell`, under eukhe's names). The jobs are the run's
(`Context.jobs`): a job started by another session is not found."""

from __future__ import annotations

from typing import ClassVar

from eukhe.json_types import JsonObject
from eukhe.tools.base import BackgroundJobs, Context, Result

__all__ = ["JOB_KILL", "JOB_OUTPUT", "JobKill", "JobOutput"]


def _jobs(ctx: Context) -> BackgroundJobs | None:
    return ctx.jobs


_NONE = Result("this run offers no background jobs", True)


class JobOutput:
    name = "job_output"
    description = (
        "Read what a background job (started by bash with run_in_background) printed since your last "
        "look, the latest part when it printed much (what was cut is said), and whether it still runs, "
        "or why it ended and its exit status. `filter`: a regular expression; only the lines that match "
        "are shown (the rest of what came is still counted as read; Perl-style, as grep -P reads it)."
    )
    schema: ClassVar[JsonObject] = {
        "type": "object",
        "properties": {
            "job_id": {"type": "string", "description": "The job's id, as bash gave it (job-...)."},
            "filter": {
                "type": "string",
                "description": "Show only the lines matching this regular expression.",
            },
        },
        "required": ["job_id"],
        "additionalProperties": False,
    }
    replay_safe = False  # each look moves what was read: a replay reads its recorded result

    async def run(self, args: JsonObject, ctx: Context) -> Result:
        jobs = _jobs(ctx)
        if jobs is None:
            return _NONE
        pattern = args.get("filter")
        try:
            text = await jobs.output(str(args["job_id"]), pattern if isinstance(pattern, str) else None)
        except Exception as e:
            return Result(str(e), True)
        return Result(text)


class JobKill:
    name = "job_kill"
    description = (
        "Stop a background job: every process it started gets SIGTERM, and SIGKILL a few seconds later "
        "if any is left (its children and those that left its process group included). Answers once "
        "they are all gone, with its last state."
    )
    schema: ClassVar[JsonObject] = {
        "type": "object",
        "properties": {"job_id": {"type": "string", "description": "The job's id (job-...)."}},
        "required": ["job_id"],
        "additionalProperties": False,
    }
    replay_safe = False  # its answer is recorded: a replay says what it said

    async def run(self, args: JsonObject, ctx: Context) -> Result:
        jobs = _jobs(ctx)
        if jobs is None:
            return _NONE
        try:
            return Result(await jobs.kill(str(args["job_id"]), ctx.cancel))
        except Exception as e:
            return Result(str(e), True)


JOB_OUTPUT = JobOutput()
JOB_KILL = JobKill()
