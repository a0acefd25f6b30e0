"""`ipython`: a cell in the conversation's Python kernel, or a look at (or the end of) a detached job.

The kernel (`ctx.kernel`, an `eukhe.kernel.Kernel`) keeps its variables from call to call and runs
one cell at a time. A cell blocks the call at most the blocking budget; one that runs longer goes
on as a job `N`, which `{"job": N, "action": ...}` looks at (`status`, `tail`), waits for (`wait`,
at most the budget a call) or stops (`kill`), all answered by the host, so they work while the kernel
is busy. A cell sent while a job runs is refused at once, naming the job: never queued behind it.

Not replay-safe: a cell has effects (files, processes, the kernel's state) a second run would repeat.
"""

from __future__ import annotations

from typing import ClassVar

from eukhe.json_types import JsonObject
from eukhe.tools.base import Context, Result

__all__ = ["IPYTHON", "IPython", "bounded"]

ACTIONS = ("status", "tail", "wait", "kill")


class IPython:
    name = "ipython"
    description = (
        "Run Python code in a persistent IPython kernel (variables, imports and the working directory "
        "carry over between calls) and return what it printed and its value, or its traceback. A cell "
        "blocks the call for at most a time budget; a cell still running then goes on as a background "
        'job N: pass {"job": N, "action": "status" | "tail" | "wait" | "kill"} to check it, see its '
        "latest output, wait for it (at most the budget per call) or stop it. The kernel runs one cell "
        "at a time, so a cell sent while a job runs is refused. Inside the kernel, bash(cmd) starts a "
        "shell command in the background and returns a handle: h.wait(timeout) (the exit code, or None "
        "if it still runs; waits are capped at the budget), h.poll(), h.tail(n), h.output(), h.kill(), "
        "h.bytes; `jobs` lists them. Long output keeps its start and end with the middle cut."
    )
    schema: ClassVar[JsonObject] = {
        "type": "object",
        "properties": {
            "code": {"type": "string", "description": "The cell to run (give this or `job`)."},
            "job": {
                "type": "integer",
                "minimum": 1,
                "description": "A job's number, from a cell that outlived the budget (give this or `code`).",
            },
            "action": {
                "type": "string",
                "enum": list(ACTIONS),
                "description": "With `job`: status (default), tail, wait or kill.",
            },
        },
        "additionalProperties": False,
    }
    replay_safe = False

    async def run(self, args: JsonObject, ctx: Context) -> Result:
        kernel = ctx.kernel
        if kernel is None:
            return Result("no Python kernel is offered in this run, so 'ipython' cannot run code here", True)
        code, job = args.get("code"), args.get("job")
        if code is not None and job is not None:
            return Result("give either 'code' (a cell to run) or 'job' (a job to look at), not both", True)
        if code is not None:
            if "action" in args:
                return Result("'action' goes with 'job', not with 'code'", True)
            return bounded(await kernel.execute(code, ctx.cancel), ctx)
        if job is not None:
            return bounded(await kernel.job(job, args.get("action", "status"), ctx.cancel), ctx)
        return Result("missing argument: give 'code' (a cell to run) or 'job' (a job to look at)", True)


def bounded(r: Result, ctx: Context) -> Result:
    """What the model reads of a result: the kernel keeps 512 KiB of each end of a job's
    output, the model gets the tool's own head and tail (as bash's), the middle cut."""
    data = r.content.encode("utf-8", "surrogatepass")
    head, tail = ctx.limits.bash_head, ctx.limits.bash_tail
    if len(data) <= head + tail:
        return r
    cut = len(data) - head - tail
    text = (
        data[:head].decode("utf-8", "ignore")
        + f"\n[... {cut} bytes cut: a job's latest output stays readable with its tail ...]\n"
        + data[-tail:].decode("utf-8", "ignore")
    )
    return Result(text, r.is_error)


IPYTHON = IPython()
