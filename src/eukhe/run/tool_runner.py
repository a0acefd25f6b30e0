"""How a run's tool calls are run (`runner`, `tool_specs`, the leak scanner), for the run's
builder (`run.assemble`), and a coroutine run to its end on a loop of its own (`run_to_end`,
the runtime's). Every face runs a run through the durable workflow (`run.workflow`)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Coroutine
from typing import Any, TypeVar

from eukhe.ai.reply import ToolCall
from eukhe.ai.request import Tool
from eukhe.json_types import JsonMapping
from eukhe.run import leak
from eukhe.run.loop import ABORT_GRACE, Scan, ToolRunner
from eukhe.tools import Context, call

T = TypeVar("T")


def tool_specs(tools: JsonMapping) -> tuple[Tool, ...]:
    return tuple(Tool(t.name, t.description, dict(t.schema)) for t in tools.values())


def runner(tools: JsonMapping, ctx: Context) -> ToolRunner:
    """Each call with the run's context; `outside`: one the permission rule lets run outside
    the sandbox (a person's answer, the user's rule) gets a context whose sandbox is off."""

    async def run_tool(c: ToolCall, outside: bool = False) -> tuple[str, bool]:
        if c.arguments is None:
            return f"the arguments of {c.name} are not a JSON object: {c.error}", True
        here = ctx
        if outside and ctx.sandbox is not None:
            here = dataclasses.replace(ctx, sandbox=ctx.sandbox.outside())
        result = await call(tools, c.name, c.arguments, here)
        return result.content, result.is_error

    return run_tool


def scanner() -> Scan:
    return leak.scan


def run_to_end(work: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to its end on a new loop; tasks left behind (a handler that
    ignored its cancel and was dropped) get ABORT_GRACE to finish and are then left,
    so the process never hangs on them at exit (asyncio.run would wait forever)."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(work)
    finally:
        pending = asyncio.all_tasks(loop)
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.wait(pending, timeout=ABORT_GRACE))
        with contextlib.suppress(Exception):
            loop.run_until_complete(asyncio.wait_for(loop.shutdown_asyncgens(), timeout=ABORT_GRACE))
        loop.close()
