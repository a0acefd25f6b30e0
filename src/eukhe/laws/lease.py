"""The laws of H6.2 (the root-turn lease) over the model `rules.lease`, and its breaks."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import lease
from eukhe.rules.lease import Entry, Kind, Lease, Op, Outcome, Step


@dataclass(frozen=True)
class Model:
    step: Callable[[Lease, Op], Step]
    start: Callable[[], Lease]


MODEL = Model(step=lease.step, start=lease.start)


@dataclass(frozen=True)
class LCfg:
    """A walk's bounds: origins 0..origins-1, at most `asks` asks in all."""

    origins: int
    asks: int


def cfg_valid(cfg: LCfg) -> bool:
    return (cfg.origins >= 1) & (cfg.asks >= 0)


def valid(cfg: LCfg, s: Lease) -> bool:
    return lease.valid(s)


def inputs(cfg: LCfg, s: Lease) -> list[Op]:
    """An ask from every origin while asks are left; a release and a stop of every
    live key and of one that is not live; a crash of every origin."""
    xs = [Op(Kind.ASK, o) for o in range(cfg.origins)] if s.next_key < cfg.asks else []
    keys = [e.key for e in lease.live(s)]
    dead = next((k for k in range(s.next_key) if k not in keys), s.next_key)
    for k in (*keys, dead):
        xs += [Op(Kind.RELEASE, k), Op(Kind.STOP, k)]
    xs += [Op(Kind.CRASH, o) for o in range(cfg.origins)]
    return xs


# ---------------------------------------------------------------- history


@dataclass(frozen=True)
class Ghost:
    """The keys given and stopped so far (a stop of a key not given yet stops nothing)."""

    stopped: frozenset[int]


def ghost_start(cfg: LCfg) -> Ghost:
    return Ghost(frozenset())


def ghost_next(m: Model, cfg: LCfg, g: Ghost, s: Lease, x: Op, t: Lease) -> Ghost:
    if x.kind is Kind.STOP and x.who < s.next_key:
        return Ghost(g.stopped | {x.who})
    return g


# ---------------------------------------------------------------- laws


def _ends(e: Entry, x: Op) -> bool:
    """Whether `x` ends the entry: its own release or stop, or its origin's crash."""
    if x.kind is Kind.CRASH:
        return e.origin == x.who
    return x.kind is not Kind.ASK and e.key == x.who


def lease_fifo(m: Model, cfg: LCfg, s: Lease) -> bool:
    """The holder asked before every waiter, and waiters are in asking order."""
    keys = [e.key for e in lease.live(s)]
    return all(a < b for a, b in itertools.pairwise(keys))


def lease_fifo_step(m: Model, cfg: LCfg, s: Lease, x: Op) -> bool:
    """A step hands the lease only to the oldest waiter left."""
    t = m.step(s, x)
    if t.granted < 0:
        return True
    if x.kind is Kind.ASK:
        return (s.holder is None) & (not s.waiters) & (t.granted == t.key)
    left = [w.key for w in s.waiters if not _ends(w, x)]
    return bool(left) and t.granted == left[0]


def lease_never_idle(m: Model, cfg: LCfg, s: Lease) -> bool:
    """Held, or no live waiter."""
    return (s.holder is not None) | (not s.waiters)


def lease_keeps_waiters(m: Model, cfg: LCfg, s: Lease, x: Op) -> bool:
    """Every live entry that `x` does not end is still live after it; a holder it
    does not end still holds; no entry appears but the new ask's."""
    t = m.step(s, x).lease
    after = {e.key: e for e in lease.live(t)}
    kept = all(e.key in after and after[e.key] == e for e in lease.live(s) if not _ends(e, x))
    holds = s.holder is None or _ends(s.holder, x) or t.holder == s.holder
    before = {e.key for e in lease.live(s)}
    new = {k for k in after if k not in before}
    fresh = new <= ({s.next_key} if x.kind is Kind.ASK else set())
    return kept & holds & fresh


def lease_stop_never_holds(m: Model, cfg: LCfg, s: Lease, x: Op) -> bool:
    """A stopped key is live no more: it neither holds nor waits."""
    if x.kind is not Kind.STOP:
        return True
    return all(e.key != x.who for e in lease.live(m.step(s, x).lease))


def lease_stop_never_holds_history(m: Model, cfg: LCfg, g: Ghost, s: Lease, x: Op, t: Lease) -> bool:
    """Over any history: no key stopped at any time holds later."""
    stopped = g.stopped | ({x.who} if x.kind is Kind.STOP and x.who < s.next_key else set())
    return t.holder is None or t.holder.key not in stopped


def lease_crash_frees(m: Model, cfg: LCfg, s: Lease, x: Op) -> bool:
    """A crash ends every key of its origin, held or awaited."""
    if x.kind is not Kind.CRASH:
        return True
    st = m.step(s, x)
    had = any(e.origin == x.who for e in lease.live(s))
    gone = all(e.origin != x.who for e in lease.live(st.lease))
    return gone & ((st.outcome is Outcome.ENDED) == had)


LAWS = (
    Law(
        "lease_fifo",
        "H6.2",
        "Holder asked before every waiter; waiters in asking order (H6.2).",
        edge=lease_fifo_step,
        node=lease_fifo,
        prove=False,
    ),
    Law(
        "lease_never_idle",
        "H6.2",
        "Held, or no live waiter: release/crash hands on at once (H6.2).",
        node=lease_never_idle,
        prove=False,
    ),
    Law(
        "lease_keeps_waiters",
        "H6.2",
        "Events not ending a live waiter (its release, stop, origin crash) leave it waiting or holding: "
        "none skipped (H6.2).",
        edge=lease_keeps_waiters,
        prove=False,
    ),
    Law(
        "lease_stop_never_holds",
        "H6.2",
        "Stopped waiter never holds (H6.2).",
        edge=lease_stop_never_holds,
        history=lease_stop_never_holds_history,
        prove=False,
    ),
    Law(
        "lease_crash_frees",
        "H6.2",
        "Crash ends every lease of its origin, held or awaited (H6.2).",
        edge=lease_crash_frees,
        prove=False,
    ),
)


# ---------------------------------------------------------------- breaks


def _out_of_order(s: Lease, x: Op) -> Step:
    """A free lease handed to the newest waiter."""
    t = lease.step(s, x)
    if t.granted >= 0 and x.kind is not Kind.ASK and t.lease.waiters:
        holder, *rest = (t.lease.holder, *t.lease.waiters)
        assert holder is not None
        last = rest[-1]
        return Step(Lease(last, (holder, *rest[:-1]), t.lease.next_key), t.outcome, t.key, last.key)
    return t


def _left_idle(s: Lease, x: Op) -> Step:
    """A release that frees the lease and hands it to no one."""
    if x.kind is Kind.RELEASE and s.holder is not None and s.holder.key == x.who:
        return Step(Lease(None, s.waiters, s.next_key), Outcome.ENDED)
    return lease.step(s, x)


def _skips(s: Lease, x: Op) -> Step:
    """A release that ends the oldest waiter along with the holder."""
    if x.kind is Kind.RELEASE and s.holder is not None and s.holder.key == x.who and len(s.waiters) > 1:
        w = s.waiters[1]
        return Step(Lease(w, s.waiters[2:], s.next_key), Outcome.ENDED, granted=w.key)
    return lease.step(s, x)


def _stop_ignored(s: Lease, x: Op) -> Step:
    """A stopped waiter that stays in the line."""
    if x.kind is Kind.STOP and any(w.key == x.who for w in s.waiters):
        return Step(s, Outcome.ENDED)
    return lease.step(s, x)


def _crash_keeps_holder(s: Lease, x: Op) -> Step:
    """A crash that ends its origin's waits but keeps the lease it holds."""
    if x.kind is Kind.CRASH:
        kept = tuple(w for w in s.waiters if w.origin != x.who)
        return Step(Lease(s.holder, kept, s.next_key), Outcome.ENDED)
    return lease.step(s, x)


MUTANTS = (
    Mutant("a waiter served out of order", "H6.2", Model(step=_out_of_order, start=lease.start)),
    Mutant("a free lease left idle", "H6.2", Model(step=_left_idle, start=lease.start)),
    Mutant("an event that skips a live waiter", "H6.2", Model(step=_skips, start=lease.start)),
    Mutant("a stopped waiter served", "H6.2", Model(step=_stop_ignored, start=lease.start)),
    Mutant("a crash that keeps its lease", "H6.2", Model(step=_crash_keeps_holder, start=lease.start)),
)


# ---------------------------------------------------------------- the area


def proof_cases() -> list[tuple[dict[str, Enum], dict[str, Enum]]]:
    return [({}, {"kind": k}) for k in Kind]


def cfgs() -> Iterator[LCfg]:
    for origins, asks in itertools.product((1, 2, 3), (4,)):
        yield LCfg(origins, asks)


def sample_cfg(seed: int) -> LCfg:
    """Up to 5 origins and 40 asks."""
    return LCfg(1 + seed % 5, 5 + (seed // 5) % 36)


AREA = Area(
    name="lease",
    model=MODEL,
    cfg_type=LCfg,
    state_type=Lease,
    input_type=Op,
    proof_cases=proof_cases,
    valid=valid,
    cfg_valid=cfg_valid,
    start=lambda m, cfg: m.start(),
    next=lambda m, cfg, s, x: m.step(s, x).lease,
    inputs=inputs,
    cfgs=cfgs,
    bounds="1..3 origins, 4 asks",
    depth=7,
    sample_cfg=sample_cfg,
    laws=LAWS,
    mutants=MUTANTS,
    ghost_start=ghost_start,
    ghost_next=ghost_next,
)
