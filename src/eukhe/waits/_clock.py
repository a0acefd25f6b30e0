"""Clocks a wait's deadline runs on: the event loop's, or one a test moves."""

from __future__ import annotations

import asyncio
import heapq
import itertools
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds, on this clock's own scale (only differences mean anything)."""
        ...

    async def sleep_until(self, when: float) -> None:
        """Return once the clock reads `when` or later (at once if it does already)."""
        ...


class LoopClock:
    """The running event loop's monotonic clock."""

    def now(self) -> float:
        return asyncio.get_running_loop().time()

    async def sleep_until(self, when: float) -> None:
        delay = when - self.now()
        if delay > 0:
            await asyncio.sleep(delay)


class ManualClock:
    """A clock that moves only when told (`advance`), waking every sleeper whose time
    has come, oldest deadline first."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def now(self) -> float:
        return self._now

    async def sleep_until(self, when: float) -> None:
        if when <= self._now:
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (when, next(self._order), fut))
        await fut

    def advance(self, seconds: float) -> None:
        """Move the clock on; the sleepers it passes wake (on the loop's next turn)."""
        self._now += max(seconds, 0.0)
        while self._sleepers and self._sleepers[0][0] <= self._now:
            _, _, fut = heapq.heappop(self._sleepers)
            if not fut.done():
                fut.set_result(None)

    @property
    def sleepers(self) -> int:
        """Sleepers still waiting (cancelled ones included until passed)."""
        return sum(not f.done() for _, _, f in self._sleepers)
