"""`eukhe mcp list`, `eukhe mcp test NAME` and the agent's `/mcp`: each server started for
real and closed (`mcp/trial.py`), and its row as a person reads it. Light: the MCP SDK loads
with the first check (`trial`), never for a command that only edits settings, nor for an
agent that never asks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from eukhe.humanize import seconds
from eukhe.mcp.config import ServerConfig
from eukhe.rules.mcp import Phase

if TYPE_CHECKING:  # the trial loads the SDK; its rows are named here for the type checker
    from eukhe.mcp.trial import Row


async def check(configs: Sequence[ServerConfig]) -> list[Row]:
    """Start every server, wait for each until it is ready or failed (its start deadline
    bounds it), then close them all; a row for each, no secret in it."""
    from eukhe.mcp.trial import started

    return await started(configs)


def listing(rows: Sequence[Row]) -> list[str]:
    out = []
    for r in rows:
        state = f"ready, {len(r.tools)} tools" if r.state == Phase.READY.value else r.state
        cause = f": {r.cause}" if r.cause and r.state != Phase.READY.value else ""
        out.append(f"{r.name}  {state}{cause}  ({r.what})")
    return out


def tested(r: Row) -> list[str]:
    if r.state != Phase.READY.value:
        return [f"{r.name}: {r.state} after {seconds(r.took)}: {r.cause}", f"closed in {seconds(r.closed)}"]
    tools = ", ".join(r.tools) or "none"
    return [
        f"{r.name}: started and listed {len(r.tools)} tools in {seconds(r.took)}: {tools}",
        f"closed in {seconds(r.closed)}",
    ]
