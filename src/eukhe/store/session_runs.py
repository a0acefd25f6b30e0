"""Sessions: a session is the runs made under its id, in order; its transcript is
the messages their steps recorded (see `eukhe.run.workflow`), append-only by construction.

A run's workflow id is `<session>/<n>` with n counted from 1, zero-padded so ids
sort in run order. A session's next run starts only once its last run has ended,
so the context a run reads from the runs before it never changes (and a replay
reads the same).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from dbos import DBOS, DBOSClient, WorkflowStatus

from eukhe.ai.request import Message
from eukhe.json_types import JsonMapping, JsonObject

WORKFLOW = "eukhe.run"
"""The DBOS name of a session's run (these names are in every store: they never change)."""
CHILD_RUN = "eukhe.child.run"
"""A subagent's run: a run of its own session, one level below its parent's."""
CHILD_TASK = "eukhe.child.task"
"""A subagent's task: its parent's watch of it, then its report."""
NAMES = [WORKFLOW, CHILD_RUN, CHILD_TASK]

IN_FLIGHT = ("PENDING", "ENQUEUED")
ENDED = {"SUCCESS", "ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"}

Workflows = type[DBOS] | DBOSClient
"""Where the runs are read: this process's DBOS, or a client of the store (`eukhe` commands)."""


async def runs(session: str, db: Workflows = DBOS) -> list[WorkflowStatus]:
    """The session's runs (DBOS workflow statuses), oldest first. `db`: DBOS in a
    process that runs work, or a DBOSClient in one that only reads."""
    found = await db.list_workflows_async(workflow_id_prefix=f"{session}/", name=WORKFLOW)
    return sorted(found, key=lambda w: w.workflow_id)


@dataclass(frozen=True)
class Carried:
    """A step's output with the messages the run logged since its last step, which ride
    on it instead of a `message` step each (runs of step layout 3, `run.spec.STEPS`)."""

    value: Any
    messages: tuple[Message, ...]


def value_of(output: Any) -> Any:
    """What a step returned, whether or not messages rode on it."""
    return output.value if isinstance(output, Carried) else output


def messages_of(steps: Iterable[JsonMapping]) -> list[Message]:
    """A run's messages from its recorded steps, in order: a `message` step's own (the
    layouts before 3), and those carried by any step."""
    out: list[Message] = []
    for s in sorted(steps, key=lambda s: s["function_id"]):
        if s["function_name"] == "message":
            out.append(s["output"])
        elif isinstance(s["output"], Carried):
            out.extend(s["output"].messages)
    return out


async def transcript(run: str, db: Workflows = DBOS) -> list[Message]:
    return messages_of(await db.list_workflow_steps_async(run))


async def shown(w: WorkflowStatus, db: Workflows = DBOS) -> list[Message]:
    """A run's transcript as a face shows it (`w`: its workflow status): a run in flight
    whose messages have not yet been recorded (they ride on the step after them) shows
    its prompt, from its input."""
    got = await transcript(w.workflow_id, db)
    prompt = prompt_of(w)
    if not got and w.status in IN_FLIGHT and prompt and prompt != FOLLOWUP:
        return [Message("user", prompt)]
    return got


@dataclass(frozen=True)
class Row:
    session: str
    started: datetime.datetime | None
    runs: int
    last_prompt: str
    outcome: str  # answered, failed, aborted, in flight, or the workflow's status


FOLLOWUP = "(the reports of its subagents)"
"""What a follow-up run (its prompt: the reports waiting for the session) shows as its prompt."""


def inputs(shown: Sequence[WorkflowStatus]) -> Iterator[JsonObject]:
    """The inputs a session's shown runs started with (`w.input`'s first argument: the run's
    spec as the store holds it; a fork with no run of its own: its parent's), the last first.
    A session opened again runs where it ran (its model, base URL and API): the agent's
    `--session` takes the latest spec it reads, `eukhe run --session` the latest input."""
    for w in reversed(shown):
        args = w.input.get("args") if isinstance(w.input, dict) else None
        if args and isinstance(args[0], dict):
            yield dict(args[0])


def last_input(shown: Sequence[WorkflowStatus]) -> JsonObject | None:
    """The input the last of a session's shown runs started with, or None when none holds one."""
    return next(inputs(shown), None)


def outcome_of(w: WorkflowStatus) -> str:
    if w.status == "SUCCESS" and isinstance(w.output, dict):
        return str(w.output.get("outcome", "ended"))
    if w.status in ("PENDING", "ENQUEUED"):
        return "in flight"
    return str(w.status).lower()


def prompt_of(w: WorkflowStatus) -> str:
    if w.input is None:
        return ""
    try:
        prompt = w.input["args"][0]["prompt"]
    except (AttributeError, IndexError, KeyError, TypeError):
        return ""
    return FOLLOWUP if prompt is None else str(prompt)


def _time(ms: int | None) -> datetime.datetime | None:
    return datetime.datetime.fromtimestamp(ms / 1000) if ms else None


async def rows(db: Workflows = DBOS) -> list[Row]:
    """Every session, the most recently started last."""
    by: dict[str, list[WorkflowStatus]] = {}
    for w in await db.list_workflows_async(name=WORKFLOW):
        by.setdefault(w.workflow_id.rpartition("/")[0], []).append(w)
    out = []
    for session, ws in by.items():
        ws.sort(key=lambda w: w.workflow_id)
        out.append(Row(session, _time(ws[0].created_at), len(ws), prompt_of(ws[-1]), outcome_of(ws[-1])))
    return sorted(out, key=lambda r: r.started or datetime.datetime.min)


async def latest_in(cwd: str, db: Workflows = DBOS) -> str | None:
    """The session whose newest root run started in the folder `cwd` (`eukhe -c`), or None."""
    newest: tuple[int, str] | None = None
    for w in await db.list_workflows_async(name=WORKFLOW):
        args = w.input.get("args") if isinstance(w.input, dict) else None
        spec = args[0] if args and isinstance(args[0], dict) else {}
        if spec.get("cwd") != cwd or spec.get("child"):
            continue
        at = int(w.created_at or 0)
        if newest is None or at >= newest[0]:
            newest = (at, w.workflow_id.rpartition("/")[0])
    return newest[1] if newest else None


async def subagents(db: Workflows = DBOS) -> list[JsonObject]:
    """Every subagent whose task has not ended (watched, or owing its report), with what
    its watch last published: its phase, quiet seconds, ms left, failed polls."""
    found = await db.list_workflows_async(
        status=list(IN_FLIGHT), name=CHILD_TASK, load_input=True, load_output=False
    )
    out = []
    for w in sorted(found, key=lambda w: w.workflow_id):
        spec = (w.input or {}).get("args", [{}])[0] if isinstance(w.input, dict) else {}
        state = await db.get_event_async(w.workflow_id, "watch", timeout_seconds=0)
        out.append(
            {
                "child": str(spec.get("child") or w.workflow_id.removesuffix(".task")),
                "name": spec.get("name"),
                "session": spec.get("session"),
                "stallMs": spec.get("stallMs"),
                "status": str(w.status).lower(),
                "watch": state if isinstance(state, dict) else None,
            }
        )
    return out
