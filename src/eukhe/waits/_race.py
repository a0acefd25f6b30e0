"""race(work, deadline, cancel, clock): the wait of `rules.wait`, live."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from eukhe.rules import wait as model
from eukhe.rules.run import ABORT_GRACE
from eukhe.waits._clock import Clock, LoopClock

T = TypeVar("T")

ORDER = (model.Tick.EVENT, model.Tick.CANCEL, model.Tick.TICK)
"""The order of inputs that came at once."""

GRACE = ABORT_GRACE
"""Real seconds a losing work is given to honour its cancel before it is left: the spec's
ABORT_GRACE (H4.6), one value for every wait."""


@dataclass(frozen=True)
class Raced(Generic[T]):
    """How a wait ended (`model.End`: EVENT, DEADLINE or CANCEL) and, for EVENT, the
    work's result. A work that raised ended the wait too: `error` holds it."""

    end: model.End
    value: T | None = None
    error: BaseException | None = None

    def result(self) -> T:
        """The work's result; its exception re-raised; LookupError when it lost."""
        if self.error is not None:
            raise self.error
        if self.end is not model.End.EVENT:
            raise LookupError(f"the wait ended by {self.end.value}, not its event")
        return self.value  # type: ignore[return-value]


async def race(
    work: Awaitable[T],
    deadline: float | None = None,
    cancel: asyncio.Event | None = None,
    clock: Clock | None = None,
    grace: float = GRACE,
    watch: asyncio.Future[object] | None = None,
) -> Raced[T]:
    """Wait for `work` until the clock reads `deadline` (None: no deadline) or `cancel`
    is set, whichever comes first: the wait ends exactly once, as `rules.wait` steps
    it, and the losers are cancelled (a work deaf to its cancel is left after
    `grace` real seconds, never awaited longer). If the caller is cancelled, every
    part is cancelled and the CancelledError goes on: a cancel stays a cancel.

    `watch`: a waiter on `cancel` shared by many races (a run's, one for all its
    phases), used instead of a new one and left running."""
    clock = clock or LoopClock()
    limited = deadline is not None
    w = model.start(limited, 1 if deadline is None or deadline > clock.now() else 0)
    if w.end is not model.End.LIVE or (cancel is not None and cancel.is_set()):
        if asyncio.iscoroutine(work):
            work.close()
        if w.end is model.End.LIVE:  # the cancel came first
            w = model.step(w, model.Tick.CANCEL).wait
        return Raced(w.end)
    task = asyncio.ensure_future(work)
    parts: dict[asyncio.Future[Any], model.Tick] = {task: model.Tick.EVENT}
    if deadline is not None:
        parts[asyncio.ensure_future(clock.sleep_until(deadline))] = model.Tick.TICK
    if cancel is not None:
        parts[watch if watch is not None else asyncio.ensure_future(cancel.wait())] = model.Tick.CANCEL
    shared = {watch} if watch is not None else set()
    try:
        while w.end is model.End.LIVE:
            done, _ = await asyncio.wait(parts, return_when=asyncio.FIRST_COMPLETED)
            # inputs in a fixed order when several came at once: the event, then a cancel
            for fut in sorted(done, key=lambda f: ORDER.index(parts[f])):
                w = model.step(w, parts[fut]).wait
                if w.end is not model.End.LIVE:
                    break
    except BaseException:
        await _drop({f: t for f, t in parts.items() if f not in shared}, grace)
        raise
    kept = shared | ({task} if w.end is model.End.EVENT else set())
    await _drop({f: t for f, t in parts.items() if f not in kept}, grace)
    if w.end is model.End.EVENT:
        if task.cancelled():
            return Raced(model.End.CANCEL)
        error = task.exception()
        return Raced(w.end, None if error else task.result(), error)
    return Raced(w.end)


async def _drop(parts: dict[asyncio.Future[object], model.Tick], grace: float) -> None:
    """Cancel what is still running and give it `grace` to end."""
    live = [f for f in parts if not f.done()]
    for f in live:
        f.cancel()
    if live:
        with contextlib.suppress(BaseException):
            await asyncio.wait(live, timeout=grace)
    for f in parts:  # a part that ended on its own with an error is not left unread
        if f.done() and not f.cancelled():
            f.exception()
