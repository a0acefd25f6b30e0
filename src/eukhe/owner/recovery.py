"""The runs a dead client left, finished by the owner: when a client's connection
closes while it said runs were in flight, the owner opens the run store (DBOS, in
this process, on first need), re-enqueues every run whose process is gone, and
runs them to their end. Killing a client kills only its runs, and only until the
owner takes them up: nothing is lost, and no one has to run `eukhe resume`.

The recovered runs hold no root-turn lease (the user's turns never wait for
them); their model requests are session requests (H3), with slots from this
owner like any client's (over its socket, from DBOS's event loop).
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from eukhe import waits
from eukhe.events import QUIET, Event
from eukhe.json_types import JsonMapping, JsonObject
from eukhe.owner.log import logged
from eukhe.store.processes import same

if TYPE_CHECKING:  # the owner listens before it loads the run's machinery
    from eukhe.run.outcome import RunOutcome
    from eukhe.run.sink import RunSink

GONE_POLL = 0.1
"""Seconds between two looks for a closed client's process to be gone."""

GONE_WAIT = 30.0
"""Seconds a client's process may outlive its connection (closing its store joins
DBOS's threads, up to 10 s each) before its runs are left to it."""


UNTOLD_KEEP = 10.0
"""Seconds an owner with no client stays up to tell a `eukhe resume` how it ended the
runs it took up (what it says is kept in memory only: an owner that ended idle at once
would leave the resume to say nothing)."""


class Runs(Protocol):
    """What a recovery asks of the owner's runtime (`eukhe.runtime.Runtime`)."""

    async def recover(self, say: Callable[[str], None]) -> list[str]: ...

    async def finish(self, ids: list[str], say: Callable[[str], None]) -> bool: ...

    def close(self) -> None: ...


Opener = Callable[[Path, "RunSink"], Awaitable[Runs]]
"""Opens the owner's runtime for the home, its runs' events to the given sink: given
by the owner's entry, which loads the run's machinery (DBOS, the providers) only when
a recovery first needs it, so the owner listens soon."""


class Recovery:
    def __init__(self, home: Path, opener: Opener, gone_wait: float = GONE_WAIT) -> None:
        self.home = home
        self.opener = opener
        self.gone_wait = gone_wait
        self.busy = 0  # recoveries under way: the owner does not end while there is one
        self.running: dict[str, str] = {}  # runs this owner recovered, not ended yet: what it said
        self.untold: list[str] = []  # what it said of the runs it finished, not yet told to a client
        self.untold_at = 0.0  # when the last of them was said (monotonic seconds)
        self._runtime: Runs | None = None  # once a recovery opened it
        self._lock = asyncio.Lock()
        self._finishing: set[asyncio.Task[None]] = set()

    def working(self) -> bool:
        """Whether the owner has work that keeps it up with no client: a recovery under
        way, or what it has to tell of runs it finished, for UNTOLD_KEEP seconds."""
        telling = bool(self.untold) and time.monotonic() - self.untold_at < UNTOLD_KEEP
        return self.busy > 0 or telling

    # ---------------------------------------------------------------- its runs' sink (`run.sink.RunSink`)

    def say(self, line: str) -> None:
        logged(line)

    def event(self, e: Event) -> None:
        """A recovered run's line in the log: not its streamed text, nor the quiet kinds."""
        if e.type != "text" and e.type not in QUIET:
            self.say(f"[{e.run}] {e.type}: {e.text}")

    def started(self, run: str, prompt: str | None) -> None:
        pass  # the owner starts no run: it finishes the ones it took up

    def ended(self, run: str | None, outcome: RunOutcome) -> None:
        pass  # said by `Runtime.finish`, which ends every run it takes up

    async def orphans(self, runs: list[str], about: JsonMapping) -> None:
        """A client (`about`: its greeting) closed with `runs` in flight: once its
        process is gone (the connection closes before a process that exits is gone,
        and a run whose process still runs is not taken from it), take up every run
        whose process is gone (theirs, and any other left so)."""
        self.busy += 1
        try:
            if not await self._gone(about):
                left, pid = ", ".join(runs), about.get("pid")
                self.say(f"client pid {pid} closed with {left} in flight and still runs: left to it")
                return
        finally:
            self.busy -= 1
        self.say(f"a client died with {', '.join(runs)} in flight: recovering")
        try:
            await self.now(runs)
        except Exception as e:  # the store cannot be opened, or recovery broke: said, never fatal
            self.say(f"recovery failed: {type(e).__name__}: {e}; `eukhe resume` finishes those runs")

    async def _gone(self, about: JsonMapping) -> bool:
        """Whether the client's process is gone, within `gone_wait` (another host's
        process cannot be looked at: taken for gone, and its runs' executors say)."""
        if about.get("host") not in (None, socket.gethostname()):
            return True
        pid, start = int(about.get("pid") or 0), about.get("started")
        clock = waits.LoopClock()
        end = clock.now() + self.gone_wait
        while same(pid, start):
            if clock.now() >= end:
                return False
            await clock.sleep_until(min(end, clock.now() + GONE_POLL))
        return True

    async def now(self, cut: list[str]) -> JsonObject:
        """Re-enqueue every run a dead process left and run it here to its end, in the
        background; every run this owner is finishing, and what it said of each, after
        what it said of the runs it finished since a client last asked (told once: a
        `eukhe resume` just after a crash shows how the owner ended its run). With
        nothing `cut` off and nothing recovered before, the store is not even opened."""
        self.busy += 1
        try:
            async with self._lock:  # one recovery at a time: the next finds what is left
                told, self.untold = self.untold, []
                if not cut and self._runtime is None:
                    return {"runs": [], "said": told}
                runtime = await self._open()

                said: list[str] = []

                def say(line: str) -> None:
                    said.append(line)
                    self.say(line)

                ids = await runtime.recover(say)
                for run in ids:
                    if run not in self.running:
                        self.running[run] = next((x for x in said if run in x), f"resuming run {run}")
                        task = asyncio.ensure_future(self._finish(run))
                        self._finishing.add(task)
                        task.add_done_callback(self._finishing.discard)
                runs = sorted(self.running)
                return {"runs": runs, "said": told + [self.running[r] for r in runs]}
        finally:
            self.busy -= 1

    async def _finish(self, run: str) -> None:
        self.busy += 1
        lines: list[str] = []

        def say(line: str) -> None:
            lines.append(line)
            self.say(line)

        try:
            await (await self._open()).finish([run], say)
        finally:
            began = self.running.pop(run, None)
            self.untold.extend([*([began] if began else []), *lines])
            self.untold_at = time.monotonic()
            self.busy -= 1

    async def _open(self) -> Runs:
        """The owner's runtime, opened on first need: its runs' slots from this owner, as
        a client's; no lease (no user waits on them)."""
        if self._runtime is None:
            self._runtime = await self.opener(self.home, self)
        return self._runtime

    def close(self) -> None:
        if self._runtime is not None:
            self._runtime.close()
            self._store = None
