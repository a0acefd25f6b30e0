"""A configured MCP server, live. Its state IS the model's (`rules.mcp.Server`): every
report of its connection, every call, abort, tick and close is one `rules.mcp.step`, and
this class only does what the step's acts say. A timer wakes at the model's `next_due`,
on a clock the tests control, so every deadline (the start's, each call's, the restart's,
the close's signals) is the model's and none is a library's.

Its tool list comes from its start, or at once from the home's cache of its last
successful start (`cache`): a slow server is offered from the cache, and a call to it
waits for it within the call's own deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeAlias

from eukhe import waits
from eukhe.home import HomeError, private_dir, private_write
from eukhe.json_types import JsonObject
from eukhe.mcp.client import Answer, Connection, Listed, dumps, loads
from eukhe.mcp.config import ServerConfig
from eukhe.rules import mcp as model
from eukhe.rules.mcp import Do, End, Ev, Kind, Phase

Got: TypeAlias = Answer | str | None
"""What a call ended with: the server's answer, a cause in words (an error, a death), or nothing."""

Shown = Callable[[str, str], None]  # (kind, text): "mcp" and "mcp_state" (events.TYPES)


def cache_key(cfg: ServerConfig) -> str:
    """What the cache of a server's tools is good for: its transport and what it runs or
    opens (a changed command lists afresh)."""
    what = json.dumps([cfg.transport, cfg.command, list(cfg.args), cfg.url, str(cfg.cwd or "")])
    return hashlib.sha256(what.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Cached:
    """A server's tools as its last successful start listed them; `joined`: that start
    came after a turn's gate, so the next turn that offers them says it joined."""

    listed: Listed
    joined: bool = False


def read_cache(folder: Path | None, cfg: ServerConfig) -> Cached | None:
    if folder is None:
        return None
    try:
        d = json.loads((folder / f"{cfg.name}.json").read_text())
        if d.get("key") != cache_key(cfg):
            return None
        return Cached(loads(json.dumps(d["listed"])), bool(d.get("joined")))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # no cache, or an unreadable one: the server lists afresh


def write_cache(folder: Path | None, cfg: ServerConfig, listed: Listed, joined: bool = False) -> None:
    if folder is None:
        return
    with contextlib.suppress(OSError, HomeError):
        private_dir(folder)
        data = {"key": cache_key(cfg), "listed": json.loads(dumps(listed)), "joined": joined}
        private_write(folder / f"{cfg.name}.json", json.dumps(data))


class RunningServer:
    """One server of a run: start it, call its tools, close it; see the module."""

    def __init__(
        self,
        cfg: ServerConfig,
        outer: Mapping[str, str],
        cache: Path | None = None,
        clock: waits.Clock | None = None,
        show: Shown = lambda kind, text: None,
    ) -> None:
        self.cfg, self.outer, self.cache, self.show = cfg, outer, cache, show
        self.clock = clock or waits.LoopClock()
        cached = read_cache(cache, cfg)
        self.listed = cached.listed if cached else None
        self.joined = bool(cached and cached.joined)  # it joins at this turn: say so once
        self.late = False  # a turn's gate passed it by: its tools join at the next turn
        limits = model.Limits(startup_ms=cfg.startup_ms, tool_ms=cfg.tool_ms)
        self.state = model.start(limits, cached=self.listed is not None)
        self._t0: float | None = None
        self.gen = 0
        self.conn: Connection | None = None
        self._all: list[Connection] = []
        self._waiters: dict[int, asyncio.Future[tuple[End, Got]]] = {}
        self._asked: dict[int, tuple[str, JsonObject]] = {}
        self._got: dict[int, Got] = {}
        self._progressed: dict[int, Callable[[str, float], object]] = {}
        self._timer: asyncio.Task[None] | None = None
        self._timer_due: int | None = None
        self._moved = asyncio.Event()

    # --- the model's time and steps ------------------------------------------------------------

    def _ms(self) -> int:
        if self._t0 is None:
            self._t0 = self.clock.now()
        return int((self.clock.now() - self._t0) * 1000)

    def apply(self, ev: Ev) -> model.Step:
        before = self.state.phase
        st = model.step(self.state, ev)
        lost = st.server.phase in (Phase.FAILED, Phase.BACKOFF) and ev.kind is not Kind.DIED
        if before is Phase.STARTING and lost and self.conn is not None and (heard := self.conn.heard()):
            # a start past its deadline: what the server said instead of answering, said too
            st = replace(st, server=replace(st.server, cause=f"{st.server.cause}; {heard}"))
        self.state = st.server
        for act in st.acts:
            self._do(act)
        for cid, end in st.ended:
            fut = self._waiters.pop(cid, None)
            got = self._got.pop(cid, None)
            self._asked.pop(cid, None)
            self._progressed.pop(cid, None)
            if fut is not None and not fut.done():
                fut.set_result((end, got if end in (End.RESULT, End.ERROR) else self.state.cause))
        for cid in [c for c in self._got if c not in self._waiters]:
            self._got.pop(cid)  # an answer that came after its call ended
        if self.state.phase is not before:  # ready, restarting, failed are news; the rest routine
            notable = self.state.phase in (Phase.READY, Phase.BACKOFF, Phase.FAILED)
            self.show("mcp" if notable else "mcp_state", self.describe())
        self._arm()
        moved, self._moved = self._moved, asyncio.Event()
        moved.set()
        return st

    def _arm(self) -> None:
        due = model.next_due(self.state)
        if due == self._timer_due and self._timer is not None and not self._timer.done():
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._timer_due = None, due
        if due is not None:
            self._timer = asyncio.get_running_loop().create_task(self._wake(due))

    async def _wake(self, due: int) -> None:
        assert self._t0 is not None
        await self.clock.sleep_until(self._t0 + due / 1000)
        self._timer = None
        self.apply(Ev(Kind.TICK, max(self._ms(), due)))

    def _do(self, act: model.Act) -> None:
        conn = self.conn
        if act.do is Do.SPAWN:
            self.gen += 1
            self.conn = Connection(self.cfg, self.gen, self, self.outer)
            self._all.append(self.conn)
            self.conn.open()
        elif conn is None:
            return
        elif act.do is Do.SEND:
            tool, arguments = self._asked.get(act.call, ("", {}))
            conn.send(act.call, tool, arguments)
        elif act.do is Do.CANCEL:
            conn.cancel(act.call)
        elif act.do is Do.STOP:
            conn.stop()
        elif act.do is Do.CLOSE_STDIN:
            conn.close_stdin()
        elif act.do is Do.TERM:
            conn.signal(signal.SIGTERM)
        elif act.do is Do.KILL:  # its reader then sees the end and tells the death: CLOSED
            conn.signal(signal.SIGKILL)

    # --- what the connection reports (a report of an earlier start is stale) ------------------

    def ready(self, gen: int, listed: Listed) -> None:
        if gen == self.gen:
            self.listed = listed
            if self.state.phase is Phase.STARTING:
                write_cache(self.cache, self.cfg, listed, joined=self.late)
            self.apply(Ev(Kind.READY, self._ms()))

    def died(self, gen: int, cause: str) -> None:
        if gen == self.gen:
            self.apply(Ev(Kind.DIED, self._ms(), cause=cause))

    def result(self, gen: int, call: int, answer: Answer) -> None:
        if gen == self.gen:
            self._got[call] = answer
            self.apply(Ev(Kind.RESULT, self._ms(), call=call))

    def error(self, gen: int, call: int, cause: str) -> None:
        if gen == self.gen:
            self._got[call] = cause
            self.apply(Ev(Kind.ERROR, self._ms(), call=call))

    def progress(
        self, gen: int, call: int, progress: float, total: float | None, message: str | None
    ) -> None:
        if gen == self.gen and call in self._waiters:
            of = f"/{total:g}" if total else ""
            self.show("mcp", f"{self.cfg.name}: {message or ''} {progress:g}{of}".replace("  ", " "))
            self._progressed[call](f"mcp:{self.cfg.name}:{gen}:{call}", progress)

    # --- the run's side -----------------------------------------------------------------------------

    def start(self) -> None:
        self.apply(Ev(Kind.START, self._ms()))

    async def call(
        self,
        tool: str,
        arguments: JsonObject,
        cancel: asyncio.Event | None = None,
        progressed: Callable[[str, float], object] = lambda call, value: None,
    ) -> tuple[End, Got]:
        """Call `tool`: how the call ended (each call ends exactly once, as the model says)
        and its answer (`Answer` for a result, the cause for the rest). `progressed`: each
        progress notification of the call (which call, how far), for the caller's ledger."""
        cid = self.state.next_call
        fut: asyncio.Future[tuple[End, Got]] = asyncio.get_running_loop().create_future()
        self._waiters[cid] = fut
        self._asked[cid] = (tool, arguments)
        self._progressed[cid] = progressed
        self.apply(Ev(Kind.CALL, self._ms(), call=cid))
        # the model's deadline ends the call; this wait's own is a backstop a second later
        backstop = self.clock.now() + self.state.limits.tool_ms / 1000 + 1
        await waits.race(asyncio.shield(fut), deadline=backstop, cancel=cancel, clock=self.clock)
        if not fut.done():  # the run's abort (or the backstop): the model ends it, cancel sent
            self.apply(Ev(Kind.ABORT, self._ms(), call=cid))
        return fut.result() if fut.done() else (End.ABORTED, "")

    async def settled(self, until: float, cancel: asyncio.Event | None = None) -> None:
        """Wait until the server is no longer starting, the clock reads `until`, or `cancel`."""
        while self.state.phase in (Phase.STARTING, Phase.BACKOFF) and self.clock.now() < until:
            if cancel is not None and cancel.is_set():
                return
            await waits.race(self._moved.wait(), deadline=until, cancel=cancel, clock=self.clock)

    async def close(self) -> None:
        """Close it (`mcp_close_bounded`): stdin, then SIGTERM, then SIGKILL of its group, as
        the model's clock says; then every start's leftovers are ended, bounded."""
        self.apply(Ev(Kind.CLOSE, self._ms()))
        until = self.clock.now() + model.CLOSE_MS / 1000
        while self.state.phase is Phase.CLOSING and self.clock.now() < until:
            await waits.race(self._moved.wait(), deadline=until, clock=self.clock)
        if self._timer is not None:
            self._timer.cancel()
        await asyncio.gather(*(c.aclose() for c in self._all), return_exceptions=True)

    def describe(self) -> str:
        s = self.state
        tools = len(self.listed.tools) if self.listed else 0
        if s.phase is Phase.FAILED:
            return f"{self.cfg.name}: failed: {s.cause}"
        if s.phase is Phase.BACKOFF:
            return f"{self.cfg.name}: restarting after: {s.cause}"
        return f"{self.cfg.name}: {s.phase.value}, {tools} tools"
