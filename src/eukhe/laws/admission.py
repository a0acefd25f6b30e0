"""The laws of H3 (a user's request never waits behind background work) over the
model `rules.admission`, and its breaks.

The laws read a state only through its live tickets in ticket order
(`rules.admission.tickets`), as the spec states them, so a break in how the
model keeps its queues shows as a break in what the tickets are.

How they are checked. A state holds tuples of tickets, which the prover's cases
(numbers, flags and enums) do not range over, so no law here is proven by
CrossHair. Each is checked exhaustively, then sampled:

- exhaustive: every state a new controller reaches within the bounds (limits
  and queue limits 0..3, up to 5 live tickets), each law on every such state and
  every operation from it. The walk starts at limits 0, 0 (every other start is
  one new-limits operation away: `limits(start(0, 0), l, q) == start(l, q)`) and
  runs until no new state appears, which it does well within `DEPTH` levels
  (a test pins that), so it covers histories of any length, 10 included.
  States are walked up to the numbering of their tickets: the model only
  compares ticket numbers and gives each new ticket a number above all
  before it, so a state and its tickets renumbered 0, 1, 2, ... in order
  answer every operation alike (`canonical`).
- sampled: Hypothesis draws limits up to 6, queue limits up to 8, up to 40
  live tickets and histories of 80 operations, with the tickets' own numbers.

Every law is a step law or an invariant. The history laws of the spec are
checked in their inductive form: `admission_interactive_bound` as "a waiting
interactive request has ahead ≥ 1" (an invariant) and "no operation raises
ahead, and each interactive slot freed lowers it" (every step keeps it), which
together bound the releases before the grant; `admission_every_ticket_ends` as
"a step ends exactly the ticket it drops and adds exactly the ticket it
admits", which keeps "live tickets = admitted less dropped" from the start.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Any

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import admission
from eukhe.rules.admission import TAKES_A_SLOT, Class, Holder, Kind, Op, State, Status, Step, Ticket
from eukhe.rules.states import replace

INTER, BACK = Class.INTERACTIVE, Class.BACKGROUND
QUEUED, GRANTED, HELD, PREEMPTED, ENDED = (
    Status.QUEUED,
    Status.GRANTED,
    Status.HELD,
    Status.PREEMPTED,
    Status.ENDED,
)


@dataclass(frozen=True)
class Model:
    """The functions of the H3 model the laws call; a break swaps one."""

    step: Callable[[State, Op], Step]
    start: Callable[[int, int], State]


MODEL = Model(step=admission.step, start=admission.start)


def cached(m: Model) -> Model:
    """The model as the walk runs it: each state is met once (the walk keeps every
    state it has seen), and the laws share each step (`_stepped`)."""
    return m


@dataclass(frozen=True)
class ACfg:
    """A walk's bounds: the limits a new controller starts with; how many live
    tickets it may have (no admit beyond); the largest limit and queue limit a
    new-limits operation sets; whether states are walked up to their numbering."""

    limit: int
    queue_limit: int
    tickets: int
    top: int
    canonical: bool


def cfg_valid(cfg: ACfg) -> bool:
    return (cfg.limit >= 0) & (cfg.queue_limit >= 0) & (cfg.tickets >= 0) & (cfg.top >= 0)


def valid(cfg: ACfg, s: State) -> bool:
    return admission.valid(s)


def live(s: State) -> int:
    return len(s.interactive) + len(s.background) + len(s.holders)


def canonical(s: State) -> State:
    """The state with its live tickets renumbered 0, 1, 2, ... in ticket order."""
    n = live(s)
    if s.next_ticket == n:
        return s
    number = {t.number: i for i, t in enumerate(admission.tickets(s))}
    return State(
        s.limit,
        s.queue_limit,
        n,
        admission.line(*(number[t] for t in s.interactive)),
        admission.line(*(number[t] for t in s.background)),
        tuple(Holder(number[h.ticket], h.cls, h.status) for h in s.holders),
    )


# ---------------------------------------------------------------- reading a state


@dataclass(frozen=True)
class View:
    """A state as the laws read it: its live tickets, by number."""

    tickets: tuple[Ticket, ...]
    by_number: dict[int, Ticket]
    takes_inter: frozenset[int]  # interactive tickets that take a slot (granted or held)
    takes_back: frozenset[int]
    waiting_inter: tuple[int, ...]  # queued interactive tickets, oldest first
    waiting_back: tuple[int, ...]

    def status(self, n: int) -> Status:
        t = self.by_number.get(n)
        return ENDED if t is None else t.status

    @property
    def takes(self) -> frozenset[int]:
        return self.takes_inter | self.takes_back

    def ahead(self, w: int) -> int:
        """Interactive slots taken and interactive waiters older than `w`."""
        return len(self.takes_inter) + sum(1 for n in self.waiting_inter if n < w)


@functools.lru_cache(maxsize=1 << 19)
def _view(s: State) -> View:
    ts = admission.tickets(s)

    def pick(cls: Class, statuses: tuple[Status, ...]) -> list[int]:
        return [t.number for t in ts if t.cls is cls and t.status in statuses]

    return View(
        ts,
        {t.number: t for t in ts},
        frozenset(pick(INTER, TAKES_A_SLOT)),
        frozenset(pick(BACK, TAKES_A_SLOT)),
        tuple(pick(INTER, (QUEUED,))),
        tuple(pick(BACK, (QUEUED,))),
    )


_LAST_VIEW: list[Any] = [None, None]


def view(s: State) -> View:
    """The view of a state; the engine asks every law about one state in a row, so the
    last one is kept by identity (states are immutable), the rest by value."""
    if _LAST_VIEW[0] is not s:
        _LAST_VIEW[:] = [s, _view(s)]
    v: View = _LAST_VIEW[1]
    return v


_LAST_STEP: list[Any] = [None, None, None, None]


def _stepped(m: Model, s: State, x: Op) -> tuple[Step, View, View]:
    """One step, and the views before and after it. The walk takes the step first and
    the engine then asks every law about it in a row: the last one is kept."""
    last = _LAST_STEP
    if last[0] is m and last[1] is s and last[2] is x:
        r: tuple[Step, View, View] = last[3]
        return r
    st = m.step(s, x)
    r = (st, _view(s), _view(st.state))
    _LAST_STEP[:] = [m, s, x, r]
    return r


# ---------------------------------------------------------------- inputs


ADMITS = (admission.admit_op(INTER), admission.admit_op(BACK))


def inputs(cfg: ACfg, s: State) -> list[Op]:
    """Admit of either class while fewer than `cfg.tickets` tickets live; poll and
    drop of every live ticket, and of an ended one (the number below `next_ticket`
    that is not live, else `next_ticket`, which no ticket has yet); any new limit
    up to `cfg.top` with the same queue limit and any new queue limit with the same
    limit; and a negative limit."""
    v = view(s)
    xs: list[Op] = list(ADMITS) if live(s) < cfg.tickets else []
    ended = next((n for n in range(s.next_ticket) if n not in v.by_number), s.next_ticket)
    for n in (*v.by_number, ended):
        xs += [admission.poll_op(n), admission.drop_op(n)]
    for k in range(cfg.top + 1):
        if k != s.limit:
            xs.append(admission.limits_op(k, s.queue_limit))
        if k != s.queue_limit:
            xs.append(admission.limits_op(s.limit, k))
    xs.append(admission.limits_op(-1, s.queue_limit))
    return xs


def walk_next(m: Model, cfg: ACfg, s: State, x: Op) -> State:
    t = _stepped(m, s, x)[0].state
    return canonical(t) if cfg.canonical else t


# ---------------------------------------------------------------- laws


def admission_preempts(m: Model, cfg: ACfg, s: State, x: Op) -> bool:
    """After an interactive admit no background ticket takes a slot. The step names
    every held background ticket it preempted (the runtime cancels exactly those)."""
    st, v, w = _stepped(m, s, x)
    went = tuple(sorted(n for n in v.takes_back if v.status(n) is HELD and w.status(n) is PREEMPTED))
    if st.preempted != went:
        return False
    return not (x.kind is Kind.ADMIT and x.cls is INTER and w.takes_back)


def admission_background_yields(m: Model, cfg: ACfg, s: State) -> bool:
    """A background ticket takes a slot only while no interactive one takes a slot or waits."""
    v = view(s)
    return not (v.takes_back and (v.takes_inter or v.waiting_inter))


def admission_fifo(m: Model, cfg: ACfg, s: State) -> bool:
    """No ticket takes a slot while an older one of its class waits."""
    v = view(s)
    return not (
        (v.waiting_inter and any(n > v.waiting_inter[0] for n in v.takes_inter))
        or (v.waiting_back and any(n > v.waiting_back[0] for n in v.takes_back))
    )


def admission_no_lost_wakeup(m: Model, cfg: ACfg, s: State) -> bool:
    """No free slot while an interactive request waits, or a background one waits with
    no interactive request taking a slot or waiting."""
    v = view(s)
    if len(v.takes) >= s.limit:
        return True
    return not v.waiting_inter and not (v.waiting_back and not v.takes_inter)


def admission_no_lost_wakeup_edge(m: Model, cfg: ACfg, s: State, x: Op) -> bool:
    """The step names every ticket it granted, oldest first (the runtime wakes exactly
    those), and only drop and new limits grant a waiter."""
    st, v, w = _stepped(m, s, x)
    granted = tuple(sorted(n for n in w.takes if w.status(n) is GRANTED and v.status(n) is QUEUED))
    return st.granted == granted and (not granted or x.kind in (Kind.DROP, Kind.LIMITS))


def admission_capacity(m: Model, cfg: ACfg, s: State, x: Op) -> bool:
    """After a step, slots taken ≤ limit, or ≤ slots taken before less those the step freed."""
    st, v, w = _stepped(m, s, x)
    before, after = v.takes, w.takes
    freed = before - after
    return (len(after) <= st.state.limit) | (len(after) <= len(before) - len(freed))


def _freed_inter(v: View, w: View) -> int:
    """Interactive slots a step freed: tickets that took one and have ended."""
    return sum(1 for n in v.takes_inter if w.status(n) is ENDED)


def admission_interactive_step(m: Model, cfg: ACfg, s: State, x: Op) -> bool:
    """While interactive w waits, no step raises ahead(w); a step that frees an
    interactive slot (a release, a granted waiter leaving) lowers it by one."""
    _, v, w = _stepped(m, s, x)
    freed = _freed_inter(v, w)
    for n in v.waiting_inter:
        if w.status(n) is not QUEUED:
            continue
        after, before = w.ahead(n), v.ahead(n)
        if after > before or (freed and after != before - freed):
            return False
    return True


def admission_interactive_bound_node(m: Model, cfg: ACfg, s: State) -> bool:
    """With a limit of at least 1, a waiting interactive request has ahead ≥ 1: it
    waits for something that ends. (With no slot at all, only its deadline ends its wait.)"""
    v = view(s)
    return s.limit < 1 or all(v.ahead(n) >= 1 for n in v.waiting_inter)


def admission_interactive_bound_edge(m: Model, cfg: ACfg, s: State, x: Op) -> bool:
    """For a request w still waiting after a step: ahead(w) after ≤ ahead(w) before less
    the interactive slots the step freed, whatever background requests do. With the
    invariant (ahead ≥ 1 while waiting): w is granted after at most ahead(w) releases."""
    _, v, w = _stepped(m, s, x)
    freed = _freed_inter(v, w)
    return all(w.ahead(n) <= v.ahead(n) - freed for n in v.waiting_inter if w.status(n) is QUEUED)


def admission_ended_stays_ended(m: Model, cfg: ACfg, s: State, x: Op) -> bool:
    """An ended ticket (or a number no ticket has had) stays ended, but for the new
    ticket an admit gives: numbers are never given twice."""
    st, v, w = _stepped(m, s, x)
    t = st.state
    new = st.ticket if x.kind is Kind.ADMIT and st.outcome is not admission.Outcome.FULL else None
    if new is not None and not (new >= s.next_ticket and t.next_ticket > new):
        return False
    if t.next_ticket < s.next_ticket:
        return False
    return all(n in v.by_number or n == new for n in w.by_number)


def admission_end_twice_changes_nothing(m: Model, cfg: ACfg, s: State, x: Op) -> bool:
    """Dropping an ended ticket changes nothing: no second release, no grant."""
    if not (x.kind is Kind.DROP and view(s).status(x.ticket) is ENDED):
        return True
    st = _stepped(m, s, x)[0]
    return (st.state == s) & (st.granted == ()) & (st.preempted == ())


def admission_every_ticket_ends(m: Model, cfg: ACfg, s: State, x: Op) -> bool:
    """Dropping a live ticket (a waiter leaving, a permit released) ends it, and a step
    ends no other ticket: so from a new controller on, the live tickets are those
    admitted and not dropped (no leak, nothing ends by itself)."""
    _, v, w = _stepped(m, s, x)
    ended = {n for n in v.by_number if w.status(n) is ENDED}
    dropped = {x.ticket} if x.kind is Kind.DROP and x.ticket in v.by_number else set()
    return ended == dropped


LAWS = (
    Law(
        "admission_preempts",
        "H3.1",
        "After an interactive admit no background slot held.",
        edge=admission_preempts,
        prove=False,
    ),
    Law(
        "admission_background_yields",
        "H3.1",
        "Background slot held only while no interactive holds or waits.",
        node=admission_background_yields,
        prove=False,
    ),
    Law(
        "admission_fifo",
        "H3.2",
        "No holder while an older same-class request waits.",
        node=admission_fifo,
        prove=False,
    ),
    Law(
        "admission_no_lost_wakeup",
        "H3.3",
        "No free slot while interactive waits, or background waits with no interactive holding/waiting.",
        node=admission_no_lost_wakeup,
        edge=admission_no_lost_wakeup_edge,
        prove=False,
    ),
    Law(
        "admission_capacity",
        "H3",
        "Grants only into free slots: held ≤ limit, or ≤ before minus slots the op freed.",
        edge=admission_capacity,
        prove=False,
    ),
    Law(
        "admission_interactive_step",
        "H3.4",
        "While interactive w waits no op raises ahead(s, w); freeing an interactive slot lowers it by one.",
        edge=admission_interactive_step,
        prove=False,
    ),
    Law(
        "admission_interactive_bound",
        "H3.4",
        "w granted after ≤ ahead(s, w) interactive releases, whatever background does.",
        node=admission_interactive_bound_node,
        edge=admission_interactive_bound_edge,
        prove=False,
    ),
    Law(
        "admission_ended_stays_ended",
        "H3",
        "Ended stays ended.",
        edge=admission_ended_stays_ended,
        prove=False,
    ),
    Law(
        "admission_end_twice_changes_nothing",
        "H3",
        "Re-ending is a no-op: no double release.",
        edge=admission_end_twice_changes_nothing,
        prove=False,
    ),
    Law(
        "admission_every_ticket_ends",
        "H3",
        "Holder drop (waiter leaves, permit released) ends the ticket: no leak.",
        edge=admission_every_ticket_ends,
        prove=False,
    ),
)


# ---------------------------------------------------------------- breaks


_real_step = admission.step
"""The model's step as imported: a break wraps this one, even where a test puts the
break in the model's place."""


def _with_holders(s: State, holders: list[Holder]) -> State:
    return replace(s, holders=tuple(sorted(holders)))


def _one_more_slot(s: State) -> State:
    """The state after a grant loop with one slot more than the limit (the limit kept)."""
    return replace(admission.limits(s, s.limit + 1, s.queue_limit).state, limit=s.limit)


def _no_preemption(s: State, x: Op) -> Step:
    """An interactive admit that leaves the background slots as they were."""
    st = _real_step(s, x)
    if not st.preempted and st.state.background == s.background:
        return st
    t = st.state
    kept = [h for h in t.holders if h.cls is INTER]
    kept += [h for h in s.holders if h.cls is BACK]
    return Step(replace(t, holders=tuple(sorted(kept)), background=s.background), st.outcome, st.ticket)


def _background_first(s: State, x: Op) -> Step:
    """A grant loop that serves a waiting background request before an interactive one."""
    st = _real_step(s, x)
    t = st.state
    if not st.granted or len(t.background) == 0 or x.kind is Kind.ADMIT:
        return st
    g = st.granted[0]
    h = next(h for h in t.holders if h.ticket == g)
    if h.cls is not INTER:
        return st
    b = t.background.first()
    holders = [k for k in t.holders if k.ticket != g] + [Holder(b, BACK, GRANTED)]
    t = replace(
        _with_holders(t, holders), interactive=t.interactive.add(g), background=t.background.remove(b)
    )
    return Step(t, st.outcome, st.ticket, (b, *st.granted[1:]), st.preempted)


def _youngest_first(s: State, x: Op) -> Step:
    """A grant loop that serves the youngest waiter of a class first."""
    st = _real_step(s, x)
    t = st.state
    if not st.granted:
        return st
    g = st.granted[0]
    cls = next(h.cls for h in t.holders if h.ticket == g)
    q = t.queue(cls)
    if len(q) == 0:
        return st
    y = list(q)[-1]
    holders = [k for k in t.holders if k.ticket != g] + [Holder(y, cls, GRANTED)]
    t = _with_holders(t, holders)
    t = (
        replace(t, interactive=q.remove(y).add(g))
        if cls is INTER
        else replace(t, background=q.remove(y).add(g))
    )
    return Step(t, st.outcome, st.ticket, (y, *st.granted[1:]), st.preempted)


def _release_grants_nothing(s: State, x: Op) -> Step:
    """A release that frees the slot and wakes no waiter."""
    st = _real_step(s, x)
    if x.kind is not Kind.DROP or not st.granted:
        return st
    t = st.state
    holders = [h for h in t.holders if h.ticket not in st.granted]
    interactive, background = t.interactive, t.background
    for h in t.holders:
        if h.ticket in st.granted:
            if h.cls is INTER:
                interactive = interactive.add(h.ticket)
            else:
                background = background.add(h.ticket)
    return Step(
        replace(_with_holders(t, holders), interactive=interactive, background=background),
        st.outcome,
        x.ticket,
    )


def _double_release(s: State, x: Op) -> Step:
    """A permit dropped twice: the second drop frees a slot again."""
    st = _real_step(s, x)
    if x.kind is not Kind.DROP or view(s).status(x.ticket) is not ENDED:
        return st
    t = _one_more_slot(s)
    granted = tuple(h.ticket for h in t.holders if h.status is GRANTED and view(s).status(h.ticket) is QUEUED)
    return Step(t, st.outcome, x.ticket, granted)


def _waiter_leaks(s: State, x: Op) -> Step:
    """A waiter that leaves (cancelled, timed out) and keeps its ticket."""
    if x.kind is Kind.DROP and view(s).status(x.ticket) in (QUEUED, GRANTED):
        return Step(s, admission.Outcome.ENDED, x.ticket)
    return _real_step(s, x)


def _grant_past_the_limit(s: State, x: Op) -> Step:
    """A grant loop that grants while slots taken ≤ limit (one past it)."""
    st = _real_step(s, x)
    if x.kind not in (Kind.DROP, Kind.LIMITS) or st.outcome is admission.Outcome.INVALID:
        return st
    before = view(st.state)
    t = _one_more_slot(st.state)
    more = tuple(h.ticket for h in t.holders if h.status is GRANTED and before.status(h.ticket) is QUEUED)
    return Step(t, st.outcome, st.ticket, tuple(sorted((*st.granted, *more))), st.preempted)


def _interactive_jumps_the_queue(s: State, x: Op) -> Step:
    """An interactive admit that takes a slot from an older interactive holder's
    count: granted at once past older interactive waiters when the limit allows one more."""
    if x.kind is Kind.ADMIT and x.cls is INTER and len(s.interactive) > 0:
        st = _real_step(replace(s, interactive=admission.EMPTY, limit=s.limit + 1), x)
        t = replace(st.state, interactive=s.interactive, limit=s.limit)
        return Step(t, st.outcome, st.ticket, st.granted, st.preempted)
    return _real_step(s, x)


def _poll_revives(s: State, x: Op) -> Step:
    """A poll of an ended ticket that makes it a waiter again."""
    if x.kind is Kind.POLL and view(s).status(x.ticket) is ENDED and x.ticket >= 0:
        t = replace(s, background=s.background.add(x.ticket))
        return Step(t, admission.Outcome.QUEUED, x.ticket)
    return _real_step(s, x)


def _mutant(name: str, rule: str, step: Callable[[State, Op], Step]) -> Mutant:
    return Mutant(name, rule, Model(step=step, start=admission.start))


MUTANTS = (
    _mutant("no preemption", "H3.1", _no_preemption),
    _mutant("a background grant while an interactive request waits", "H3.1", _background_first),
    _mutant("a younger request granted before an older one of its class", "H3.2", _youngest_first),
    _mutant("a release that grants nothing with a waiter present", "H3.3", _release_grants_nothing),
    _mutant("a double release", "H3", _double_release),
    _mutant("a dropped waiter that leaks its ticket", "H3", _waiter_leaks),
    _mutant("a grant past the limit", "H3", _grant_past_the_limit),
    _mutant("an interactive grant past older interactive waiters", "H3.4", _interactive_jumps_the_queue),
    _mutant("a poll that revives an ended ticket", "H3", _poll_revives),
)


# ---------------------------------------------------------------- the area


TICKETS = 5
"""Live tickets at most in the exhaustive walk."""
TOP = 3
"""Largest limit and queue limit in the exhaustive walk."""
DEPTH = 40
"""Levels the exhaustive walk may take; it runs out of new states well before."""


def proof_cases() -> list[tuple[dict[str, Enum], dict[str, Enum]]]:
    return []


def cfgs() -> Iterator[ACfg]:
    yield ACfg(0, 0, TICKETS, TOP, canonical=True)


def sample_cfg(seed: int) -> ACfg:
    """Limits 0..6, queue limits 0..8, up to 6..40 live tickets, new limits up to 6."""
    return ACfg(seed % 7, (seed // 7) % 9, 6 + (seed // 63) % 35, 6, canonical=False)


AREA = Area(
    name="admission",
    model=MODEL,
    cfg_type=ACfg,
    state_type=State,
    input_type=Op,
    proof_cases=proof_cases,
    valid=valid,
    cfg_valid=cfg_valid,
    start=lambda m, cfg: m.start(cfg.limit, cfg.queue_limit),
    next=walk_next,
    inputs=inputs,
    cfgs=cfgs,
    bounds=(
        f"every state reached from a new controller: limits 0..{TOP}, queue limits 0..{TOP}, "
        f"up to {TICKETS} live tickets, tickets renumbered in order"
    ),
    depth=DEPTH,
    sample_cfg=sample_cfg,
    laws=LAWS,
    mutants=MUTANTS,
    cached=cached,
    sample_length=80,
    walk_first=True,  # one state-space walk, not histories by limit: it cannot be dealt in parts
)
