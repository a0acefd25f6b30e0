"""The laws of H2.1 (a waiting turn's lines go first, and always have a call when a slot
is free) over the compactor queue `rules.queue`, and its breaks.

How they are checked. A queue holds sets of nodes, which the prover's cases
(numbers, flags and enums) do not range over, so no law here is proven by
CrossHair. Each is checked exhaustively, then sampled:

- exhaustive: every queue reached from an empty chat within the bounds (up to
  `MESSAGES` messages, `jobs` 1..`JOBS_UP_TO`), each law on every such queue
  and every operation from it: a new message; each running call built or
  failed, and a stale result (a call number no running call has); each cooling
  node's retry, and one for a node that is not cooling; a turn that waits for
  the unbuilt lines of its view (with its own message's line, or only the
  lines before it), one that names lines that are no view lines, and the end
  of the wait. The walk runs until no new queue appears, which it does well
  within `DEPTH` levels (a test pins that), so it covers histories of any
  length. Queues are walked up to the numbering of their calls: the model
  only compares call numbers and gives each new call a number above all
  before it, so a queue and its running calls renumbered 0, 1, 2, ... in node
  order answer every operation alike (`canonical`).
- sampled: Hypothesis draws up to 40 messages, jobs 1..8 and histories of 120
  operations, with the calls' own numbers.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import queue
from eukhe.rules.queue import Cfg, Job, Kind, Node, Op, Queue, Step
from eukhe.rules.states import replace


@dataclass(frozen=True)
class Model:
    """The functions of the H2.1 model the laws call; a break swaps one."""

    step: Callable[[Cfg, Queue, Op], Step]


MODEL = Model(step=queue.step)


def cached(m: Model) -> Model:
    return Model(step=functools.lru_cache(maxsize=1 << 18)(m.step))


@dataclass(frozen=True)
class QCfg(Cfg):
    """A walk's bounds: the job slots; messages at most; whether queues are walked up to
    the numbering of their calls."""

    messages: int
    canonical: bool


def cfg_valid(cfg: QCfg) -> bool:
    return (cfg.jobs >= 0) & (cfg.messages >= 0)


def valid(cfg: QCfg, q: Queue) -> bool:
    return queue.valid(cfg, q)


def canonical(q: Queue) -> Queue:
    """The queue with its running calls renumbered 0, 1, 2, ... in node order."""
    jobs = tuple(Job(j.node, k) for k, j in enumerate(q.running))
    return replace(q, running=jobs, calls=len(jobs))


_LAST: list[object] = [None, None, None, None, None]


def stepped(m: Model, cfg: QCfg, q: Queue, x: Op) -> Step:
    """One step; the walk takes it first and the engine then asks every law about it in a
    row, so the last one is kept by identity."""
    last = _LAST
    if last[0] is m and last[1] is cfg and last[2] is q and last[3] is x:
        st: Step = last[4]  # type: ignore[assignment]
        return st
    st = m.step(cfg, q, x)
    _LAST[:] = [m, cfg, q, x, st]
    return st


def walk_next(m: Model, cfg: QCfg, q: Queue, x: Op) -> Queue:
    t = stepped(m, cfg, q, x).queue
    return canonical(t) if cfg.canonical else t


# ---------------------------------------------------------------- inputs


def inputs(cfg: QCfg, q: Queue) -> list[Op]:
    xs: list[Op] = [queue.ADD] if q.total < cfg.messages else []
    for j in q.running:
        xs += [queue.built_op(j.node, j.call), queue.failed_op(j.node, j.call)]
    stale = q.running[0].node if q.running else Node(0, queue.first(q))
    xs += [queue.built_op(stale, q.calls), queue.failed_op(stale, q.calls)]
    xs += [queue.retry_op(n) for n in sorted(q.cooling)]
    xs.append(queue.retry_op(Node(0, q.total)))
    xs.append(queue.wait_op(queue.unbuilt_view_lines(q, q.total)))
    if q.total >= 1:
        xs.append(queue.wait_op(queue.unbuilt_view_lines(q, q.total - 1)))
    xs.append(queue.wait_op({Node(1, 0), Node(0, q.total), Node(-1, 0)}))
    if q.waiting:
        xs.append(queue.UNWAIT)
    return xs


# ---------------------------------------------------------------- laws


def _ends(x: Op, j: Job) -> bool:
    """Whether the operation reports the end of running call j."""
    return x.kind in (Kind.BUILT, Kind.FAILED) and (x.node, x.call) == j


def need_first(m: Model, cfg: QCfg, q: Queue, x: Op) -> bool:
    """During a wait every node started is an unbuilt view line the wait needs."""
    st = stepped(m, cfg, q, x)
    t = st.queue
    if not t.waiting:
        return True
    return all(j.node in t.needed and j.node not in t.built for j in st.started)


def need_first_running(m: Model, cfg: QCfg, q: Queue) -> bool:
    """Invariant: while a turn waits, every busy node is a line it needs: every running
    call, and every node cooling after a failure, which holds its job slot until RETRY
    passes (the spec's "failed line busy until retry")."""
    return not q.waiting or all(n in q.needed for n in q.busy)


def wait_keeps_needed(m: Model, cfg: QCfg, q: Queue, x: Op) -> bool:
    """No step stops a call of an unbuilt line a wait needs (before the step or after it):
    it runs on, under its call number, until its own result comes. Only a wait's start
    stops calls."""
    st = stepped(m, cfg, q, x)
    t = st.queue
    needed = (q.needed | t.needed) - t.built
    if st.stopped and x.kind is not Kind.WAIT:
        return False
    if any(j.node in needed for j in st.stopped):
        return False
    return all(j in t.running for j in q.running if j.node in needed and not _ends(x, j))


def need_progress(m: Model, cfg: QCfg, q: Queue) -> bool:
    """Invariant: with fewer than `jobs` nodes busy, no needed line of a wait is idle
    (neither built nor busy); outside a wait, nor is the first unbuilt message's line."""
    if len(q.running) + len(q.cooling) >= cfg.jobs:
        return True
    if q.waiting:
        return not any(queue.idle(q, n) for n in q.needed)
    f = queue.first(q)
    return f >= q.total or not queue.idle(q, Node(0, f))


LAWS = (
    Law(
        "need_first",
        "H2.1",
        "During a wait every started node is an unbuilt view line.",
        edge=need_first,
        prove=False,
    ),
    Law(
        "need_first_running",
        "H2.1",
        "From St.wait on, every running/started call is for an unbuilt view line.",
        node=need_first_running,
        prove=False,
    ),
    Law(
        "wait_keeps_needed",
        "H2.1",
        "St.wait stops no unbuilt view line's call.",
        edge=wait_keeps_needed,
        prove=False,
    ),
    Law(
        "need_progress",
        "H2.1",
        "< jobs calls running and a view line neither built nor busy: queue starts a node.",
        node=need_progress,
        prove=False,
    ),
)


# ---------------------------------------------------------------- breaks


_real_step = queue.step
"""The model's step as imported: a break wraps this one."""


def _pump(
    cfg: Cfg, st: Step, change: Callable[[Queue], Queue], cands: Callable[[Cfg, Queue], list[Node]]
) -> Step:
    """The step with its starts undone, the queue changed, then `cands` started."""
    t = st.queue
    t = replace(
        t, running=tuple(j for j in t.running if j not in st.started), calls=t.calls - len(st.started)
    )
    t = change(t)
    jobs = tuple(Job(n, t.calls + k) for k, n in enumerate(cands(cfg, t)))
    t = replace(t, running=tuple(sorted(t.running + jobs)), calls=t.calls + len(jobs))
    return Step(t, st.outcome, jobs, st.stopped)


def _repump(cands: Callable[[Cfg, Queue], list[Node]]) -> Callable[[Cfg, Queue, Op], Step]:
    """The real operation with another pump."""

    def step(cfg: Cfg, q: Queue, x: Op) -> Step:
        return _pump(cfg, _real_step(cfg, q, x), lambda t: t, cands)

    return step


def _in_order_while_waiting(cfg: Cfg, q: Queue) -> list[Node]:
    """The in-order rule kept during a wait: only the first unbuilt message's line starts."""
    if not q.waiting or queue.room(cfg, q) == 0:
        return queue.candidates(cfg, q)
    f = queue.first(q)
    n = Node(0, f)
    return [n] if n in q.needed and queue.idle(q, n) else []


def _merges_first(cfg: Cfg, q: Queue) -> list[Node]:
    """During a wait, ready merges start before the needed lines."""
    if not q.waiting:
        return queue.candidates(cfg, q)
    merges = [n for n in queue.ready(q, queue.first(q)) if queue.idle(q, n)]
    return (merges + queue.candidates(cfg, q))[: queue.room(cfg, q)]


def _stops_needed_too(cfg: Cfg, q: Queue, x: Op) -> Step:
    """A wait that stops every running call, needed ones too (the pump restarts them)."""
    if x.kind is not Kind.WAIT or not q.running:
        return _real_step(cfg, q, x)
    bare = replace(q, running=())
    st = _real_step(cfg, bare, x)
    return Step(st.queue, st.outcome, st.started, q.running)


def _stops_nothing(cfg: Cfg, q: Queue, x: Op) -> Step:
    """A wait that stops no call."""
    if x.kind is not Kind.WAIT:
        return _real_step(cfg, q, x)
    st = _real_step(cfg, q, x)
    t = st.queue
    kept = tuple(sorted(set(t.running) | set(st.stopped)))
    cooling = t.cooling | (q.cooling - t.built)
    return Step(replace(t, running=kept, cooling=cooling), st.outcome, st.started, ())


def _keeps_cooling(cfg: Cfg, q: Queue, x: Op) -> Step:
    """A wait that stops the unneeded calls but leaves unneeded nodes cooling in their slots."""
    st = _real_step(cfg, q, x)
    kept = q.cooling - st.queue.cooling - st.queue.built
    if x.kind is not Kind.WAIT or not kept:
        return st
    return _pump(cfg, st, lambda t: replace(t, cooling=t.cooling | kept), queue.candidates)


def _replaces_the_wait(cfg: Cfg, q: Queue, x: Op) -> Step:
    """A second waiter whose lines replace the first one's (a union belongs)."""
    if x.kind is not Kind.WAIT or not q.waiting:
        return _real_step(cfg, q, x)
    return _real_step(cfg, replace(q, needed=frozenset()), x)


MUTANTS = (
    Mutant("a stop that hits a needed line", "H2.1", Model(step=_stops_needed_too)),
    Mutant("an unneeded call not stopped on wait", "H2.1", Model(step=_stops_nothing)),
    Mutant(
        "a queue that idles with a free slot and an unbuilt needed line",
        "H2.1",
        Model(step=_repump(_in_order_while_waiting)),
    ),
    Mutant("a merge started before its first message's line", "H2.1", Model(step=_repump(_merges_first))),
    Mutant("an unneeded node left cooling in a waiting turn's slot", "H2.1", Model(step=_keeps_cooling)),
    Mutant("a second waiter whose lines replace the first one's", "H2.1", Model(step=_replaces_the_wait)),
)


# ---------------------------------------------------------------- the area


MESSAGES = 8
"""Messages at most in the exhaustive walk."""
JOBS_UP_TO = 3
"""Job slots 1..JOBS_UP_TO in the exhaustive walk."""
DEPTH = 60
"""Levels the exhaustive walk may take; it runs out of new queues well before."""


def proof_cases() -> list[tuple[dict[str, Enum], dict[str, Enum]]]:
    return []


def cfgs() -> Iterator[QCfg]:
    for jobs in range(1, JOBS_UP_TO + 1):
        yield QCfg(jobs, MESSAGES, canonical=True)


def sample_cfg(seed: int) -> QCfg:
    """Jobs 1..8, up to 8..40 messages."""
    return QCfg(1 + seed % 8, 8 + (seed // 8) % 33, canonical=False)


AREA = Area(
    name="queue",
    model=MODEL,
    cfg_type=QCfg,
    state_type=Queue,
    input_type=Op,
    proof_cases=proof_cases,
    valid=valid,
    cfg_valid=cfg_valid,
    start=lambda m, cfg: queue.EMPTY,
    next=walk_next,
    inputs=inputs,
    cfgs=cfgs,
    bounds=(
        f"every queue reached from an empty chat: up to {MESSAGES} messages, jobs 1..{JOBS_UP_TO}, "
        "calls renumbered in order"
    ),
    depth=DEPTH,
    sample_cfg=sample_cfg,
    laws=LAWS,
    mutants=MUTANTS,
    cached=cached,
    sample_length=120,
)
