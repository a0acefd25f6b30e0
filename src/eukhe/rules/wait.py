"""H6.1: every wait has an exit.

One wait races its event against a deadline and a cancel; the first to come
ends it, exactly once, and nothing after that matters. Inputs come one at a
time in any order: the event, a tick of the clock, a cancel. The deadline
is a number of ticks, or none (a wait that only its event or a cancel can
end, such as the root-turn lease).

`step` answers the wait after one input and whether that input ended it:
the runtime (`waits.race`) hands the waiter its result on that answer only.

Pure: standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass

from eukhe.rules.states import Choice


class End(Choice):
    LIVE = "live"
    EVENT = "event"
    CANCEL = "cancel"
    DEADLINE = "deadline"


class Tick(Choice):
    """One input to a wait."""

    EVENT = "event"
    TICK = "tick"
    CANCEL = "cancel"


@dataclass(frozen=True)
class Wait:
    """limited: the wait has a deadline, `deadline` ticks after it began; elapsed: ticks so far."""

    limited: bool
    deadline: int
    elapsed: int
    end: End


@dataclass(frozen=True)
class Step:
    """The wait after one input; `fired`: this input ended it."""

    wait: Wait
    fired: bool


def start(limited: bool, deadline: int) -> Wait:
    """A new wait; a deadline of 0 ticks (or less) has passed already."""
    ended = limited & (deadline <= 0)
    return Wait(limited, deadline, 0, End.DEADLINE if ended else End.LIVE)


def step(w: Wait, x: Tick) -> Step:
    if w.end is not End.LIVE:
        return Step(w, False)
    if x is Tick.EVENT:
        return Step(Wait(w.limited, w.deadline, w.elapsed, End.EVENT), True)
    if x is Tick.CANCEL:
        return Step(Wait(w.limited, w.deadline, w.elapsed, End.CANCEL), True)
    elapsed = w.elapsed + 1
    if w.limited & (elapsed >= w.deadline):
        return Step(Wait(w.limited, w.deadline, elapsed, End.DEADLINE), True)
    return Step(Wait(w.limited, w.deadline, elapsed, End.LIVE), False)


def valid(w: Wait) -> bool:
    """A live wait has ticks left before its deadline."""
    live = w.end is End.LIVE
    return (w.elapsed >= 0) & ((not live) | (not w.limited) | (w.elapsed < w.deadline))
