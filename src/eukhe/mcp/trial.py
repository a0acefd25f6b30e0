"""The servers started for real (`mcp/check.py` asks), each within its own start deadline,
then closed within `rules.mcp.CLOSE_MS`: a row for each. The MCP SDK loads with this module,
only when a check is asked."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from dataclasses import dataclass

from eukhe.mcp.client import hidden_values
from eukhe.mcp.config import ServerConfig
from eukhe.mcp.live import RunningServer
from eukhe.mcp.servers import Servers
from eukhe.rules.mcp import Phase
from eukhe.settings import home
from eukhe.settings.secrets import redact


@dataclass(frozen=True)
class Row:
    name: str
    state: str  # ready, failed, starting (still, at its deadline)
    tools: tuple[str, ...]
    cause: str
    what: str  # what it runs or opens, and where it is configured
    took: float  # seconds to ready or failure
    closed: float  # seconds to close


def _what(c: ServerConfig) -> str:
    runs = " ".join([c.command, *c.args]) if c.transport == "stdio" else c.url
    return f"{c.transport}: {runs} ({c.source})"


async def started(configs: Sequence[ServerConfig]) -> list[Row]:
    """Start every server, wait for each until it is ready or failed (its start deadline
    bounds it), then close them all; a row for each, no secret in it."""
    loop = asyncio.get_running_loop()
    servers = Servers(configs, os.environ, home() / "mcp")
    began = loop.time()
    servers.start()
    took: dict[str, float] = {}

    async def settle(live: RunningServer) -> None:
        await live.settled(loop.time() + live.cfg.startup_ms / 1000 + 1)
        took[live.cfg.name] = loop.time() - began

    await asyncio.gather(*(settle(live) for live in servers.live))
    seen = []  # each as it settled, before the close
    for live in servers.live:
        ready = live.state.phase is Phase.READY
        names = tuple(t.name for t in live.listed.tools) if ready and live.listed else ()
        what = redact(_what(live.cfg), hidden_values(live.cfg, os.environ))  # its cause is, at the source
        seen.append(
            (live.cfg.name, live.state.phase.value, names, live.state.cause, what, took[live.cfg.name])
        )
    closing = loop.time()
    await servers.aclose()
    closed = loop.time() - closing
    rows = [Row(*row, closed) for row in seen]
    return rows
