"""The laws of the fleet (issue 53) over `rules.fleet`: executors on 1-2 hosts sharing one
store, their leases, the runs they hold, takes, a clock, partitions and crashes.

The walk's world: 2-3 executors (executor e on host e % hosts), 1-2 runs (run r first held
by executor r % executors), one real clock `t` read as the store's clock and as each
executor's monotonic clock with an offset of its own (the same rate). Every executor starts
holding its lease (`fleet.held`), its row beaten at 0 and its lock held; under a `lag`,
executor 0 is paused: its last beat stamped `lag` seconds before, its reply not come yet.
Inputs, in any order:

- BEAT e: e sends a beat. Over a cut connection it fails; else the store refuses it when e's
  lock is gone (freed by a cut since healed) or its row was marked taken (e learns it has
  lost its lease: `fleet.lost`), or stamps the row with the store's clock and the reply
  confirms it at once (`fleet.confirmed` with its send time);
- SEND e: the same, the reply pending; CONFIRM e: the pending reply comes (`fleet.confirmed`
  with the beat's send time), lost when e's connection is cut meanwhile;
- CRASH e: the process dies; the store frees its lock; its row stays;
- PARTITION e: e's lease connection is cut while it lives (its beats fail, its lock is
  freed), its other connections work: it may still record, so only its fence stops it;
- HEAL e: the connection comes back (its lock stays freed);
- STEP e r: e records a step of a run it believes it holds, when `fleet.may_record` (the
  run's last step ends it);
- WATCH e: e, when `fleet.may_record`, looks at every run another holds and takes each
  whose holder is `fleet.gone` (a store take: atomic, it succeeds only while the holder is
  gone, and marks the gone lease's row taken);
- TICK: time moves to the nearest two edges that matter: a quarter second before and at an
  executor's fence, at and a quarter second past a lease's LEASE_TTL_S, and WATCH_S on.

The liveness laws follow a fair schedule from the state they judge: from a crash, a cut or
a tick that makes a paused executor's last beat older than LEASE_TTL_S, every other live
executor beats, confirms and watches every WATCH_S
(`fleet_dead_runs_taken`); from every state, the live executors beat, confirm, watch and
step each run they hold every WATCH_S (`fleet_run_ends`).

How they are checked: exhaustively within the bounds printed, then sampled (Hypothesis: 2-3
executors, 1-2 hosts, 1-2 runs of 1-4 steps, up to 3 faults, 40 inputs).
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import fleet
from eukhe.rules.fleet import FENCE_S, LEASE_TTL_S, WATCH_S, Lease, Seen
from eukhe.rules.states import Choice, replace


@dataclass(frozen=True)
class Model:
    """The rule's functions the walk asks, and how the runtime uses them; a break swaps one."""

    held: Callable[[float], Lease]
    confirmed: Callable[[Lease, float], Lease]
    lost: Callable[[Lease], Lease]
    may_record: Callable[[Lease, float], bool]
    gone: Callable[[Seen, float], bool]
    take_bound: float = fleet.TAKE_BOUND_S
    atomic: bool = True  # a take commits only while the holder is gone
    marks_taken: bool = True  # a take marks the gone lease's row taken
    resumes: bool = True  # the taker works the run it took
    sent_time: bool = True  # a reply confirms the beat's send time (else its arrival's)
    keeps_fenced: bool = True  # a fenced step keeps its run for later (else drops it)
    # the fair schedule's rounds from a state, remembered for one walk (`cached`)
    drain: Callable[[FCfg, FState, tuple[int, ...], int], bool] | None = None


MODEL = Model(fleet.held, fleet.confirmed, fleet.lost, fleet.may_record, fleet.gone)

STORE = 1000.0
"""The store's clock: real time plus this."""

OFFSETS = (100.0, -37.5, 512.25)
"""Each executor's monotonic clock: real time plus its offset."""

EPS = 0.25
"""A quarter second: a tick just before or just past an edge (exact in binary floats)."""

TICKS = 2
"""The ticks a state offers: to the nearest two edges ahead."""


@dataclass(frozen=True)
class FCfg:
    """A walk's bounds: executors, hosts, runs, steps a run takes to end, faults at most."""

    execs: int
    hosts: int
    runs: int
    steps: int = 2
    faults: int = 1
    lag: float = 0.0  # executor 0's last beat (stamped, its reply pending) this long before the start


def cfg_valid(cfg: FCfg) -> bool:
    execs = 2 <= cfg.execs <= len(OFFSETS)
    return execs & (1 <= cfg.hosts <= cfg.execs) & (cfg.runs >= 1) & (cfg.steps >= 1)


class Kind(Choice):
    BEAT = "beat"
    SEND = "send"
    CONFIRM = "confirm"
    CRASH = "crash"
    PARTITION = "partition"
    HEAL = "heal"
    STEP = "step"
    WATCH = "watch"
    TICK = "tick"


@dataclass(frozen=True)
class FIn:
    kind: Kind
    who: int = 0
    run: int = 0
    dt: float = 0.0


@dataclass(frozen=True)
class Ex:
    """One executor: the world (alive, cut, when, its lock and row in the store, whether the
    store refused it) and its own view (its lease, the send time of a beat whose reply is
    pending, the runs it believes it holds)."""

    lease: Lease
    beat_at: float  # its row's last beat, store clock
    works: frozenset[int]
    alive: bool = True
    cut: bool = False
    cut_at: float = 0.0
    lock: bool = True
    taken: bool = False  # its row marked taken: a beat finds its lease lost
    told: bool = False  # the store refused a beat of it: its lease is lost
    pending: float | None = None


@dataclass(frozen=True)
class Run:
    holder: int  # in the store
    prev: int = -1  # the holder before its last take
    steps: int = 0
    ended: bool = False
    by: int = -1  # who recorded its last step


@dataclass(frozen=True)
class FState:
    t: float
    ex: tuple[Ex, ...]
    runs: tuple[Run, ...]
    faults: int = 0


def valid(cfg: FCfg, s: FState) -> bool:
    return (len(s.ex) == cfg.execs) & (len(s.runs) == cfg.runs)


def mono(e: int, t: float) -> float:
    return t + OFFSETS[e]


def start(m: Model, cfg: FCfg) -> FState:
    ex = [
        Ex(m.held(mono(e, 0.0)), STORE, frozenset(r for r in range(cfg.runs) if r % cfg.execs == e))
        for e in range(cfg.execs)
    ]
    if cfg.lag:
        # executor 0 paused: its last beat stamped `lag` ago, its reply not come yet
        at = -cfg.lag
        ex[0] = replace(ex[0], lease=m.held(mono(0, at)), beat_at=at + STORE, pending=mono(0, at))
    return FState(0.0, tuple(ex), tuple(Run(r % cfg.execs) for r in range(cfg.runs)))


def _able(x: Ex) -> bool:
    """Alive, connected, and its lease its own in the store."""
    return x.alive & (not x.cut) & x.lock & (not x.taken) & (not x.told)


def _seen(cfg: FCfg, s: FState, watcher: int, h: int) -> Seen:
    x = s.ex[h]
    same = watcher % cfg.hosts == h % cfg.hosts
    return Seen(x.beat_at, x.lock, (not x.alive) if same else None)


def _set(s: FState, e: int, x: Ex) -> FState:
    return replace(s, ex=(*s.ex[:e], x, *s.ex[e + 1 :]))


def _watch(m: Model, cfg: FCfg, s: FState, e: int) -> FState:
    """e looks at every run another holds and takes each whose holder is gone."""
    me = s.ex[e]
    if not m.may_record(me.lease, mono(e, s.t)):
        return s
    store_now = s.t + STORE
    runs, ex = list(s.runs), list(s.ex)
    for r, run in enumerate(runs):
        if run.ended or run.holder == e:
            continue
        take = m.gone(_seen(cfg, s, e, run.holder), store_now)
        if not m.atomic and run.prev >= 0 and run.prev != e:
            # the watcher read the run before another's take committed, and takes it again
            take = take or m.gone(_seen(cfg, s, e, run.prev), store_now)
        if not take:
            continue
        runs[r] = replace(run, holder=e, prev=run.holder)
        if m.marks_taken:
            ex[run.holder] = replace(ex[run.holder], taken=True)
        if m.resumes:
            ex[e] = replace(ex[e], works=ex[e].works | {r})
    return replace(s, ex=tuple(ex), runs=tuple(runs))


def nxt(m: Model, cfg: FCfg, s: FState, x: FIn) -> FState:
    k = x.kind
    if k is Kind.TICK:
        return replace(s, t=s.t + x.dt)
    e = x.who
    me = s.ex[e]
    if not me.alive:
        return s
    now = mono(e, s.t)
    if k is Kind.BEAT or k is Kind.SEND:
        if me.cut:
            return _set(s, e, replace(me, pending=None))
        if not me.lock or me.taken:
            return _set(s, e, replace(me, lease=m.lost(me.lease), told=True, pending=None))
        if k is Kind.SEND:
            return _set(s, e, replace(me, beat_at=s.t + STORE, pending=now))
        return _set(s, e, replace(me, beat_at=s.t + STORE, lease=m.confirmed(me.lease, now), pending=None))
    if k is Kind.CONFIRM:
        if me.pending is None or me.cut:
            return _set(s, e, replace(me, pending=None))
        sent = me.pending if m.sent_time else now
        return _set(s, e, replace(me, lease=m.confirmed(me.lease, sent), pending=None))
    if k is Kind.CRASH:
        return replace(_set(s, e, replace(me, alive=False, lock=False, pending=None)), faults=s.faults + 1)
    if k is Kind.PARTITION:
        cut = replace(me, cut=True, cut_at=s.t, lock=False, pending=None)
        return replace(_set(s, e, cut), faults=s.faults + 1)
    if k is Kind.HEAL:
        return _set(s, e, replace(me, cut=False))
    if k is Kind.STEP:
        r = x.run
        run = s.runs[r]
        if r not in me.works:
            return s
        if run.ended:
            return _set(s, e, replace(me, works=me.works - {r}))
        if not m.may_record(me.lease, now):
            return s if m.keeps_fenced else _set(s, e, replace(me, works=me.works - {r}))
        done = replace(run, steps=run.steps + 1, ended=run.steps + 1 >= cfg.steps, by=e)
        return replace(s, runs=(*s.runs[:r], done, *s.runs[r + 1 :]))
    return _watch(m, cfg, s, e)


def inputs(cfg: FCfg, s: FState) -> list[FIn]:
    """Faults first (while the walk has faults left), each live executor's acts, then the
    ticks to the next edges."""
    xs: list[FIn] = []
    for e, x in enumerate(s.ex):
        if not x.alive:
            continue
        if s.faults < cfg.faults:
            xs.append(FIn(Kind.CRASH, e))
            if not x.cut:
                xs.append(FIn(Kind.PARTITION, e))
        if x.cut:
            xs.append(FIn(Kind.HEAL, e))
        if not x.told:
            xs += [FIn(Kind.BEAT, e), FIn(Kind.SEND, e)]
        if x.pending is not None:
            xs.append(FIn(Kind.CONFIRM, e))
        xs += [FIn(Kind.STEP, e, r) for r in sorted(x.works) if not s.runs[r].ended]
        xs.append(FIn(Kind.WATCH, e))
    edges = {s.t + WATCH_S}
    for e, x in enumerate(s.ex):
        if x.alive and x.lease.confirmed is not None and not x.lease.lost:
            fence = x.lease.confirmed - OFFSETS[e] + FENCE_S
            edges |= {fence - EPS, fence}
        stale = x.beat_at - STORE + LEASE_TTL_S
        edges |= {stale, stale + EPS}
    xs += [FIn(Kind.TICK, dt=at - s.t) for at in sorted(at for at in edges if at > s.t)[:TICKS]]
    return xs


# ---------------------------------------------------------------- fair schedules


def _round(m: Model, cfg: FCfg, s: FState, who: list[int], steps: bool) -> FState:
    """Each of `who` still alive beats, has its reply, watches and (`steps`) steps each run
    it believes it holds."""
    for e in who:
        s = nxt(m, cfg, s, FIn(Kind.BEAT, e))
        s = nxt(m, cfg, s, FIn(Kind.CONFIRM, e))
        s = nxt(m, cfg, s, FIn(Kind.WATCH, e))
        if steps:
            for r in sorted(s.ex[e].works):
                s = nxt(m, cfg, s, FIn(Kind.STEP, e, r))
    return s


def _taken_in_time(m: Model, cfg: FCfg, s: FState, down: int) -> bool:
    """From `s`, where `down` has just crashed, been cut or gone stale: with the others live
    beating and watching every WATCH_S, every run `down` holds is taken within the model's
    bound of its last beat the store stamped (or at the first look, past it)."""
    mine = [r for r, run in enumerate(s.runs) if run.holder == down and not run.ended]
    live = [e for e, x in enumerate(s.ex) if e != down and _able(x)]
    if not mine or not live:
        return True
    deadline = max(s.ex[down].beat_at - STORE + m.take_bound, s.t)
    while s.t <= deadline:
        s = _round(m, cfg, s, live, steps=False)
        if all(s.runs[r].holder != down or s.runs[r].ended for r in mine):
            return True
        if not any(_able(s.ex[e]) for e in live):
            return True  # no live watcher is left
        s = nxt(m, cfg, s, FIn(Kind.TICK, dt=WATCH_S))
    return False


def _drained(m: Model, cfg: FCfg, s: FState) -> bool:
    """From `s`, with the live executors beating, watching and stepping every WATCH_S, every
    run ends (vacuous when none is live)."""
    live = tuple(e for e, x in enumerate(s.ex) if _able(x))
    if not live:
        return True
    return _rounds(m, cfg, s, live, math.ceil(fleet.TAKE_BOUND_S / WATCH_S) + cfg.steps + 2)


def _rounds(m: Model, cfg: FCfg, s: FState, live: tuple[int, ...], left: int) -> bool:
    """Every run ends within `left` rounds of the fair schedule of `live` from `s`."""
    if all(run.ended for run in s.runs):
        return True
    if not left:
        return False
    t = nxt(m, cfg, _round(m, cfg, s, list(live), steps=True), FIn(Kind.TICK, dt=WATCH_S))
    return (m.drain or functools.partial(_rounds, m))(cfg, t, live, left - 1)


def cached(m: Model) -> Model:
    """The model as one walk runs it: the fair schedule's rounds from each state taken once
    (the schedules from the walk's states meet after a round or two: they were most of its
    time)."""

    def drain(cfg: FCfg, s: FState, live: tuple[int, ...], left: int) -> bool:
        return _rounds(fast, cfg, s, live, left)

    fast = replace(m, drain=functools.lru_cache(maxsize=1 << 16)(drain))
    return fast


# ---------------------------------------------------------------- laws


def _recorded(s: FState, x: FIn, t: FState) -> bool:
    return x.kind is Kind.STEP and t.runs[x.run].steps > s.runs[x.run].steps


def fleet_dead_runs_taken(m: Model, cfg: FCfg, g: None, s: FState, x: FIn, t: FState) -> bool:
    """An executor crashed or cut, or one whose last beat this tick made older than
    LEASE_TTL_S (paused, it beats no more): its runs are taken by a live one within the bound."""
    if x.kind is Kind.TICK:
        ttl = LEASE_TTL_S - STORE
        stale = [e for e, h in enumerate(t.ex) if s.t - h.beat_at <= ttl < t.t - h.beat_at]
        return all(_taken_in_time(m, cfg, t, e) for e in stale)
    if x.kind not in (Kind.CRASH, Kind.PARTITION) or not s.ex[x.who].alive:
        return True
    return _taken_in_time(m, cfg, t, x.who)


def fleet_one_worker(m: Model, cfg: FCfg, g: None, s: FState, x: FIn, t: FState) -> bool:
    """A step is recorded only by its run's holder in the store: once taken, the run's
    former holder records no more of it."""
    return not _recorded(s, x, t) or s.runs[x.run].holder == x.who


def fleet_partitioned_stops(m: Model, cfg: FCfg, g: None, s: FState, x: FIn, t: FState) -> bool:
    """No step is recorded by an executor the store refused, nor by one whose lock was freed
    (its connection cut) FENCE_S or more ago."""
    if not _recorded(s, x, t):
        return True
    me = s.ex[x.who]
    return (not me.told) & (me.lock or s.t - me.cut_at < FENCE_S)


def fleet_run_ends(m: Model, cfg: FCfg, s: FState) -> bool:
    """With a live executor, every run ends."""
    return _drained(m, cfg, s)


LAWS = (
    Law(
        "fleet_dead_runs_taken",
        "issue 53",
        "Every run of an executor whose lease is gone is taken by a live executor within "
        "TAKE_BOUND_S of its last beat, while one lives and watches every WATCH_S (issue 53).",
        history=fleet_dead_runs_taken,
        prove=False,
    ),
    Law(
        "fleet_one_worker",
        "issue 53",
        "At no time do two executors both record steps of one run: only its holder in the store "
        "records (issue 53).",
        history=fleet_one_worker,
        prove=False,
    ),
    Law(
        "fleet_partitioned_stops",
        "issue 53",
        "An executor without its lease (cut past FENCE_S, or lost) records nothing more (issue 53).",
        history=fleet_partitioned_stops,
        prove=False,
    ),
    Law(
        "fleet_run_ends",
        "H4",
        "With at least one live executor, every run ends, across the fleet (H4, issue 53).",
        node=fleet_run_ends,
        prove=False,
    ),
)


# ---------------------------------------------------------------- breaks


def _fence_past_ttl(lease: Lease, now: float) -> bool:
    """The fence at LEASE_TTL_S + 2: an executor records after its runs may be taken."""
    return not lease.lost and lease.confirmed is not None and now - lease.confirmed < LEASE_TTL_S + 2.0


def _gone_on_a_freed_lock(seen: Seen, store_now: float) -> bool:
    """A freed lock taken for gone on another host, where the executor may live behind a cut."""
    return fleet.gone(seen, store_now) or (seen.process_gone is None and not seen.lock_held)


def _records_when_lost(lease: Lease, now: float) -> bool:
    return fleet.may_record(Lease(lease.confirmed), now)


def _never_gone(seen: Seen, store_now: float) -> bool:
    """A watcher that never takes."""
    return False


def _no_fence(lease: Lease, now: float) -> bool:
    """A cut executor that keeps recording: only a lost lease stops it."""
    return not lease.lost and lease.confirmed is not None


def _gone_late(seen: Seen, store_now: float) -> bool:
    """A lease gone only at twice LEASE_TTL_S."""
    if seen.beat_at is None:
        return not seen.lock_held
    return store_now - seen.beat_at > 2 * LEASE_TTL_S


MUTANTS = (
    Mutant("a watcher that never takes", "issue 53", replace(MODEL, gone=_never_gone)),
    Mutant("a lease gone only at twice its TTL", "issue 53", replace(MODEL, gone=_gone_late)),
    Mutant("TAKE_BOUND_S of LEASE_TTL_S alone", "issue 53", replace(MODEL, take_bound=LEASE_TTL_S)),
    Mutant(
        "gone on a freed lock alone on another host", "issue 53", replace(MODEL, gone=_gone_on_a_freed_lock)
    ),
    Mutant("a take that is not atomic (two takers)", "issue 53", replace(MODEL, atomic=False)),
    Mutant("a take that leaves the gone lease its own", "issue 53", replace(MODEL, marks_taken=False)),
    Mutant("a beat confirmed at its reply's arrival", "issue 53", replace(MODEL, sent_time=False)),
    Mutant("FENCE_S not below LEASE_TTL_S", "issue 53", replace(MODEL, may_record=_fence_past_ttl)),
    Mutant("may_record ignoring lost", "issue 53", replace(MODEL, may_record=_records_when_lost)),
    Mutant("a partitioned executor that keeps recording", "issue 53", replace(MODEL, may_record=_no_fence)),
    Mutant("a taken run not resumed", "issue 53", replace(MODEL, resumes=False)),
    Mutant("a fenced step that drops its run", "issue 53", replace(MODEL, keeps_fenced=False)),
)

MEANT = {
    "a watcher that never takes": "fleet_dead_runs_taken",
    "a lease gone only at twice its TTL": "fleet_dead_runs_taken",
    "TAKE_BOUND_S of LEASE_TTL_S alone": "fleet_dead_runs_taken",
    "gone on a freed lock alone on another host": "fleet_one_worker",
    "a take that is not atomic (two takers)": "fleet_one_worker",
    "a take that leaves the gone lease its own": "fleet_one_worker",
    "a beat confirmed at its reply's arrival": "fleet_one_worker",
    "FENCE_S not below LEASE_TTL_S": "fleet_partitioned_stops",
    "may_record ignoring lost": "fleet_partitioned_stops",
    "a partitioned executor that keeps recording": "fleet_partitioned_stops",
    "a taken run not resumed": "fleet_run_ends",
    "a fenced step that drops its run": "fleet_run_ends",
}
"""Each break and the law meant to kill it: `eukhe laws` fails one killed first by another."""


# ---------------------------------------------------------------- the area


def cfgs() -> Iterator[FCfg]:
    yield FCfg(2, 1, 1)  # one host: a crash seen by its pid at once
    yield FCfg(2, 2, 1, lag=8.0)  # two hosts, executor 0 paused past its fence
    yield FCfg(3, 1, 1, faults=0, lag=8.0)  # two watchers of one paused executor


def sample_cfg(seed: int) -> FCfg:
    r = random.Random(seed)
    execs = r.randint(2, 3)
    return FCfg(execs, r.randint(1, 2), r.randint(1, 2), steps=r.randint(1, 4), faults=r.randint(1, 3))


AREA = Area(
    name="fleet",
    model=MODEL,
    cfg_type=FCfg,
    state_type=FState,
    input_type=FIn,
    proof_cases=lambda: [],
    valid=valid,
    cfg_valid=cfg_valid,
    start=start,
    next=nxt,
    inputs=inputs,
    cfgs=cfgs,
    bounds=(
        "a run of 2 steps; 2 executors on 1 host, or on 2 with one paused 8 s, with 1 crash or cut; "
        "3 on 1 host with one paused 8 s; ticks to the nearest 2 edges"
    ),
    depth=4,
    sample_cfg=sample_cfg,
    laws=LAWS,
    mutants=MUTANTS,
    meant=MEANT,
    samples=80,
    sample_length=40,
    cached=cached,
)
