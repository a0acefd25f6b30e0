"""A run's MCP servers: started together when the run starts, offered at its first request
after the startup gate (`mcp_gate_bounded`), closed with it (`mcp_close_bounded`).

Each server is a `RunningServer` (its state the model's); this module only gathers them, waits
the gate, names their tools, and puts their instructions in the system prompt.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path

from eukhe import waits
from eukhe.mcp.config import ServerConfig
from eukhe.mcp.live import RunningServer, Shown, write_cache
from eukhe.mcp.tools import McpTool, tools_of
from eukhe.rules import mcp as model
from eukhe.rules.mcp import Offer

INSTRUCTIONS_MAX = 2_000
"""Bytes of one server's instructions the system prompt holds; the rest is cut, and said."""


def _clip(text: str, limit: int = INSTRUCTIONS_MAX) -> str:
    data = text.encode()
    if len(data) <= limit:
        return text
    return data[:limit].decode(errors="ignore") + " … [cut]"


class Servers:
    """The servers of one run."""

    def __init__(
        self,
        configs: Sequence[ServerConfig],
        outer: Mapping[str, str],
        cache: Path | None,
        clock: waits.Clock | None = None,
        show: Shown = lambda kind, text: None,
    ) -> None:
        self.clock = clock or waits.LoopClock()
        self.show = show
        self.live = [RunningServer(c, outer, cache, self.clock, show) for c in configs]
        self._began = 0.0
        self._users = 1  # the run that started them; each subagent that shares them adds one

    def share(self) -> Servers:
        """One more run (a subagent) uses these servers: they close when the last lets go."""
        self._users += 1
        return self

    async def release(self) -> None:
        """A run that used them is done; the last one closes them (`aclose`)."""
        self._users -= 1
        if self._users <= 0:
            await self.aclose()

    def start(self) -> None:
        self._began = self.clock.now()
        for s in self.live:
            s.start()

    async def offered(
        self, gate_ms: int, cancel: asyncio.Event | None = None
    ) -> tuple[dict[str, McpTool], list[str], str]:
        """The tools a turn offers, the notices it shows, and the instructions' section of the
        system prompt: a ready or cached server's tools at once; one still starting with no
        cache is waited for until `gate_ms` after the start, and no longer (nor past `cancel`,
        the run's abort)."""
        until = self._began + gate_ms / 1000
        waiting = [s for s in self.live if model.offer(s.state, 0, gate_ms) is Offer.WAIT]
        if waiting:
            await asyncio.gather(*(s.settled(until, cancel) for s in waiting))
        waited = int((self.clock.now() - self._began) * 1000)
        tools: dict[str, McpTool] = {}
        notices: list[str] = []
        parts: list[str] = []
        for s in self.live:
            o = model.offer(s.state, waited, gate_ms)
            if o is Offer.NONE:
                notices.append(
                    f"MCP server '{s.cfg.name}' is not offered: {s.state.cause or s.state.phase.value}"
                )
                continue
            if o in (Offer.LATER, Offer.WAIT):
                s.late = True
                notices.append(
                    f"MCP server '{s.cfg.name}' is still starting after the startup gate "
                    f"({gate_ms} ms, mcp.startupGateMs); its tools are listed for the next run"
                )
                continue
            mine, refused = tools_of(s)
            notices += refused
            for t in mine:
                if t.name in tools:
                    notices.append(
                        f"MCP server '{s.cfg.name}': tool '{t.info.name}' not offered: {t.name} is taken"
                    )
                    continue
                tools[t.name] = t
            if s.joined:  # its tools were not offered at the last turn: the model is told once
                s.joined = False
                notices.append(f"MCP server '{s.cfg.name}' joined: its tools are offered from this turn")
                parts.append(f"## MCP server {s.cfg.name}\n\nIt joined at this turn: its tools are new.")
                if s.listed is not None:
                    write_cache(s.cache, s.cfg, s.listed)
            if s.listed is not None and s.listed.instructions.strip():
                parts.append(f"## MCP server {s.cfg.name}\n\n{_clip(s.listed.instructions.strip())}")
        return tools, notices, "\n\n".join(parts)

    async def aclose(self) -> None:
        """Close every server at once, each within `rules.mcp.CLOSE_MS`."""
        await asyncio.gather(*(s.close() for s in self.live), return_exceptions=True)
