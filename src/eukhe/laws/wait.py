"""The laws of H6.1 (every wait has an exit) over the model `rules.wait`, and its breaks."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import wait
from eukhe.rules.wait import End, Step, Tick, Wait


@dataclass(frozen=True)
class Model:
    step: Callable[[Wait, Tick], Step]
    start: Callable[[bool, int], Wait]


MODEL = Model(step=wait.step, start=wait.start)


def cached(m: Model) -> Model:
    return Model(step=functools.lru_cache(maxsize=1 << 14)(m.step), start=m.start)


@dataclass(frozen=True)
class WCfg:
    """How a wait begins: with a deadline `deadline` ticks away, or none."""

    limited: bool
    deadline: int


@dataclass(frozen=True)
class In:
    tick: Tick


INPUTS = [In(t) for t in Tick]


def cfg_valid(cfg: WCfg) -> bool:
    return True


def valid(cfg: WCfg, w: Wait) -> bool:
    return wait.valid(w)


# ---------------------------------------------------------------- history


@dataclass(frozen=True)
class Ghost:
    """How many times the wait has ended so far."""

    ends: int


def ghost_start(cfg: WCfg) -> Ghost:
    return Ghost(1 if wait.start(cfg.limited, cfg.deadline).end is not End.LIVE else 0)


def ghost_next(m: Model, cfg: WCfg, g: Ghost, w: Wait, x: In, t: Wait) -> Ghost:
    return Ghost(g.ends + _ends(m, w, x))


def _ends(m: Model, w: Wait, x: In) -> int:
    return 1 if m.step(w, x.tick).fired else 0


# ---------------------------------------------------------------- laws


def wait_ends_once(m: Model, cfg: WCfg, w: Wait, x: In) -> bool:
    """A step fires the end only from a live wait, on its event, its cancel, or the
    tick that reaches its deadline; and each of those does fire it."""
    t = m.step(w, x.tick)
    if w.end is not End.LIVE:
        return not t.fired
    reached = w.limited & (w.elapsed + 1 >= w.deadline)
    if x.tick is Tick.EVENT:
        return t.fired & (t.wait.end is End.EVENT)
    if x.tick is Tick.CANCEL:
        return t.fired & (t.wait.end is End.CANCEL)
    if reached:
        return t.fired & (t.wait.end is End.DEADLINE)
    return (not t.fired) & (t.wait.end is End.LIVE)


def wait_ends_once_history(m: Model, cfg: WCfg, g: Ghost, w: Wait, x: In, t: Wait) -> bool:
    """Over any history: ended at most once, and ended iff it fired once."""
    fired = g.ends + _ends(m, w, x)
    return (fired <= 1) & ((fired == 1) == (t.end is not End.LIVE))


def wait_end_is_final(m: Model, cfg: WCfg, w: Wait, x: In) -> bool:
    if w.end is End.LIVE:
        return True
    t = m.step(w, x.tick)
    return (t.wait == w) & (not t.fired)


def wait_arrival_wins(m: Model, cfg: WCfg, w: Wait, x: In) -> bool:
    if not (w.end is End.LIVE and x.tick is Tick.EVENT):
        return True
    t = m.step(w, x.tick)
    return (t.wait.end is End.EVENT) & t.fired


def wait_cancel_wins(m: Model, cfg: WCfg, w: Wait, x: In) -> bool:
    if not (w.end is End.LIVE and x.tick is Tick.CANCEL):
        return True
    t = m.step(w, x.tick)
    return (t.wait.end is End.CANCEL) & t.fired


LAWS = (
    Law(
        "wait_ends_once",
        "H6.1",
        "Ends exactly once on event, cancel or deadline; never otherwise.",
        edge=wait_ends_once,
        history=wait_ends_once_history,
    ),
    Law(
        "wait_end_is_final",
        "H6.1",
        "After cancel/deadline: ended; nothing later matters.",
        edge=wait_end_is_final,
        scope=lambda s, x: s["end"] is not End.LIVE,
    ),
    Law(
        "wait_arrival_wins",
        "H6.1",
        "Event first: ends with the event.",
        edge=wait_arrival_wins,
        scope=lambda s, x: s["end"] is End.LIVE and x["tick"] is Tick.EVENT,
    ),
    Law(
        "wait_cancel_wins",
        "H6.1",
        "Cancel first: ends cancelled.",
        edge=wait_cancel_wins,
        scope=lambda s, x: s["end"] is End.LIVE and x["tick"] is Tick.CANCEL,
    ),
)


# ---------------------------------------------------------------- breaks


def _ends_twice(w: Wait, x: Tick) -> Step:
    """A deadline that fires again after the wait has ended."""
    if w.end is not End.LIVE and x is Tick.TICK and w.limited and w.elapsed + 1 >= w.deadline:
        return Step(Wait(w.limited, w.deadline, w.elapsed + 1, End.DEADLINE), True)
    return wait.step(w, x)


def _cancel_loses(w: Wait, x: Tick) -> Step:
    """A cancel that a later event overrides."""
    if w.end is End.CANCEL and x is Tick.EVENT:
        return Step(Wait(w.limited, w.deadline, w.elapsed, End.EVENT), True)
    return wait.step(w, x)


def _no_deadline(w: Wait, x: Tick) -> Step:
    """A deadline that never fires."""
    t = wait.step(w, x)
    if t.wait.end is End.DEADLINE and t.fired:
        return Step(Wait(w.limited, w.deadline, w.elapsed + 1, End.LIVE), False)
    return t


def _tick_ends(w: Wait, x: Tick) -> Step:
    """A tick before the deadline that ends the wait."""
    if w.end is End.LIVE and x is Tick.TICK:
        return Step(Wait(w.limited, w.deadline, w.elapsed + 1, End.DEADLINE), True)
    return wait.step(w, x)


def _event_after_cancel(w: Wait, x: Tick) -> Step:
    """An event that comes after the cancel and is delivered as well."""
    if w.end is End.CANCEL and x is Tick.EVENT:
        return Step(w, True)
    return wait.step(w, x)


MUTANTS = (
    Mutant("a wait that ends twice", "H6.1", Model(step=_ends_twice, start=wait.start)),
    Mutant("a cancel that loses to a later event", "H6.1", Model(step=_cancel_loses, start=wait.start)),
    Mutant("a deadline that never fires", "H6.1", Model(step=_no_deadline, start=wait.start)),
    Mutant("a tick before the deadline that ends the wait", "H6.1", Model(step=_tick_ends, start=wait.start)),
    Mutant(
        "an event after the cancel delivered too", "H6.1", Model(step=_event_after_cancel, start=wait.start)
    ),
)


# ---------------------------------------------------------------- the area


def proof_cases() -> list[tuple[dict[str, Enum], dict[str, Enum]]]:
    return [({"end": e}, {"tick": t}) for e in End for t in Tick]


def cfgs() -> Iterator[WCfg]:
    for limited, deadline in itertools.product((False, True), range(0, 5)):
        yield WCfg(limited, deadline)


def sample_cfg(seed: int) -> WCfg:
    return WCfg(seed % 2 == 1, (seed // 2) % 40)


AREA = Area(
    name="wait",
    model=MODEL,
    cfg_type=WCfg,
    state_type=Wait,
    input_type=In,
    proof_cases=proof_cases,
    valid=valid,
    cfg_valid=cfg_valid,
    start=lambda m, cfg: m.start(cfg.limited, cfg.deadline),
    next=lambda m, cfg, w, x: m.step(w, x.tick).wait,
    inputs=lambda cfg, w: INPUTS,
    cfgs=cfgs,
    bounds="deadline none or 0..4 ticks",
    depth=10,
    sample_cfg=sample_cfg,
    laws=LAWS,
    mutants=MUTANTS,
    ghost_start=ghost_start,
    ghost_next=ghost_next,
    cached=cached,
)
