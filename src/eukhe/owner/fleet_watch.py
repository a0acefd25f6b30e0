"""The owner's watch over a shared (Postgres) store: every WATCH_S while it is up, it
looks at the runs in flight and their executors' leases (a cheap query on a plain
connection, not DBOS); when an executor's lease is gone (`rules.fleet.gone`), on any
host, the owner cuts what is left of its connections and takes its runs up
(`Recovery.now`: its runtime opened, the runs re-enqueued and finished here). DBOS's
recovery queue admits one runner for each, even when two owners take them at once.

On SQLite (one machine) there is no watch: a dead client's runs come to the owner
when its connection closes (`Recovery.orphans`).
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Awaitable, Callable

from eukhe import waits
from eukhe.json_types import JsonObject
from eukhe.owner.log import logged
from eukhe.rules.fleet import WATCH_S
from eukhe.store.executor_lease import Fleet, gone_on, watcher_name

START_S = 5.0
"""Seconds a survivor takes, past the rule's TAKE_BOUND_S (when its watch finds the
lease gone), to start a run it takes: its runtime opened (DBOS launched, on its first
take) and the run taken from DBOS's recovery queue (polled every second). A dead host's
run is at work again within TAKE_BOUND_S + START_S."""


class FleetWatch:
    def __init__(
        self,
        url: str,
        take: Callable[[list[str]], Awaitable[JsonObject]],
        ready: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.fleet = Fleet(url, watcher_name(socket.gethostname(), os.getpid()))
        self.take = take  # the owner's recovery: the runs it is given, and any other cut off
        # made ready to take runs (the run's machinery imported), once some run is in flight in
        # the fleet: a take then starts within START_S
        self.ready = ready
        self.why = ""  # why the last look failed (said once, until a look succeeds)
        self.taking: list[str] = []  # the runs of gone executors it last took up

    def look(self) -> tuple[list[str], list[str], bool]:
        """The runs in flight whose executor is gone, how each executor went, and whether
        any run is in flight in the fleet."""
        by = self.fleet.pending()
        self.fleet.prune(by)  # the rows of processes that ended with no run in flight
        if not by:
            return [], [], False
        dead = gone_on(self.fleet, sorted(by))
        for executor in dead:  # what is left of its connections ends now: it writes no more
            self.fleet.cut(executor)
        return sorted(w for e in dead for w in by[e]), [dead[e] for e in sorted(dead)], True

    async def run(self, done: asyncio.Event) -> None:
        """Watch until `done`."""
        clock = waits.LoopClock()
        while not done.is_set():
            try:
                runs, how, some = await asyncio.to_thread(self.look)
                self.why = ""
                if some and self.ready is not None:
                    ready, self.ready = self.ready, None
                    await ready()
                if runs:
                    if runs != self.taking:  # said once: a run DBOS will not hand over stays so
                        logged(f"runs in flight of a gone executor ({'; '.join(how)}): taking them up")
                    self.taking = runs
                    await self.take(runs)
            except Exception as e:  # the store away, a recovery that broke: said once, tried again
                why = f"the fleet's watch: {type(e).__name__}: {e}"
                if why != self.why:
                    logged(why)
                self.why = why
            await waits.race(done.wait(), clock.now() + WATCH_S, None, clock)

    def close(self) -> None:
        self.fleet.close()
