"""The runs of this process, each reached through one handle (`RunHandle`): the loop it runs
on, its cancel, its permission gate and MCP servers once they are made, whether it is the
user's own, and its end, told to whoever waits for it. The process keeps them in one table
(`RunTable`, in its `ProcessContext`), which every thread reaches: Ctrl-C, a person's mode
change, `eukhe abort` from another process (the owner's connection, which knows the table only
as `client.admission.Aborts`) and a face waiting for a run's end.

Another thread reaches a loop one way only, `call_soon`: a run's loop (its cancel, its gate)
and a waiter's loop (the run's end) alike."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from eukhe.run.permit import Gate

if TYPE_CHECKING:  # its SDK loads only for a run with servers (`run.assemble._servers`)
    from eukhe.mcp.servers import Servers


def call_soon(loop: asyncio.AbstractEventLoop, work: Callable[..., object], *args: object) -> None:
    """`work(*args)` on `loop`, from any thread; nothing once the loop has closed (what ran on
    it has ended: there is no one left to tell)."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(work, *args)


@dataclass(frozen=True)
class Running:
    """A run's side of its handle, made as it begins on its loop: its cancel (Ctrl-C, `eukhe
    abort`, its deadline set it), then its gate and servers once its parts are made."""

    loop: asyncio.AbstractEventLoop
    cancel: asyncio.Event
    gate: Gate | None = None
    servers: Servers | None = None


class RunHandle:
    """One run, as this process reaches it from any thread. It is made by whichever comes
    first: its start here (`RunTable.open`: the user's own), its beginning on its loop
    (`RunTable.begin`), or a face that waits for its end (`RunTable.handle`)."""

    def __init__(self, run: str, own: bool = False) -> None:
        self.run = run
        self.own = own  # the user's own: Ctrl-C aborts it, and it holds the root-turn lease
        self._lock = threading.Lock()  # its threads: the run's loop, a face's, the owner's connection
        self._running: Running | None = None  # None: it has not begun here (or runs elsewhere)
        self._ended = False
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    @property
    def running(self) -> Running | None:
        return self._running

    @property
    def cancel(self) -> asyncio.Event:
        """Its cancel, once it has begun here."""
        running = self._running
        if running is None:
            raise RuntimeError(f"run {self.run} has not begun in this process: it has no cancel here")
        return running.cancel

    @property
    def servers(self) -> Servers | None:
        """Its MCP servers, once its parts are made here (its subagents share them)."""
        running = self._running
        return running.servers if running is not None else None

    def began(self, cancel: asyncio.Event) -> None:
        """The run begins here, on the running loop, with its cancel."""
        with self._lock:
            self._running = Running(asyncio.get_running_loop(), cancel)

    def assembled(self, gate: Gate, servers: Servers | None) -> None:
        """Its parts are made (`run.assemble`): a person's mode change reaches its gate, and its
        subagents share its servers."""
        with self._lock:
            if self._running is not None:
                self._running = dataclasses.replace(self._running, gate=gate, servers=servers)

    def released(self) -> None:
        """Its parts are let go: its servers are no more to share, its gate no more to reach."""
        with self._lock:
            if self._running is not None:
                self._running = dataclasses.replace(self._running, gate=None, servers=None)

    def abort(self) -> bool:
        """Its cancel, set on its loop (it ends aborted within its grace); whether it runs here."""
        running = self._running
        if running is not None:
            call_soon(running.loop, running.cancel.set)
        return running is not None

    def plan(self, on: bool) -> None:
        """Plan mode on or off from its next call (`Gate.plan`), on its loop."""
        running = self._running
        if running is not None and running.gate is not None:
            call_soon(running.loop, running.gate.plan, on)

    def ending(self) -> asyncio.Event:
        """An event of the running loop (a face's), set once the run has returned here."""
        seen = asyncio.Event()
        with self._lock:
            if self._ended:
                seen.set()
            else:
                self._waiters.append((asyncio.get_running_loop(), seen))
        return seen

    def ended(self) -> None:
        """The run returns: whoever waits for it is told, each on its own loop."""
        with self._lock:
            self._ended = True
            waiters, self._waiters = self._waiters, []
        for loop, seen in waiters:
            call_soon(loop, seen.set)


class RunTable:
    """run -> its `RunHandle`, for the runs this process starts, runs or waits for; any thread
    reads it. A handle leaves it as its run returns, or as its waiter leaves a run that never
    began here."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._handles: dict[str, RunHandle] = {}

    def open(self, run: str) -> RunHandle:
        """The user's own run, about to start here (`run.runtime.Runtime.start`)."""
        with self._lock:
            made = self._handles[run] = RunHandle(run, own=True)
        return made

    def handle(self, run: str) -> RunHandle:
        """The run's handle, made now when it has none yet."""
        with self._lock:
            got = self._handles.get(run)
            if got is None:
                got = self._handles[run] = RunHandle(run)
        return got

    def get(self, run: str) -> RunHandle | None:
        with self._lock:
            return self._handles.get(run)

    def begin(self, run: str, cancel: asyncio.Event) -> RunHandle:
        """The run begins here, on the running loop (`run.workflow`)."""
        got = self.handle(run)
        got.began(cancel)
        return got

    def end(self, run: str) -> None:
        """The run returns here: its waiters are told, and it leaves the table."""
        with self._lock:
            got = self._handles.pop(run, None)
        if got is not None:
            got.ended()

    def forget(self, run: str) -> None:
        """A face stops waiting for a run, or a start that did not take: its handle leaves the
        table unless the run has begun here (its end removes it then)."""
        with self._lock:
            got = self._handles.get(run)
            if got is not None and got.running is None:
                del self._handles[run]

    def handles(self) -> list[RunHandle]:
        with self._lock:
            return list(self._handles.values())

    def abort(self, run: str) -> bool:
        """`eukhe abort RUN` from another process (`client.admission.Aborts`), or a subagent's
        stop: the run's cancel; whether it runs here."""
        got = self.get(run)
        return got is not None and got.abort()
