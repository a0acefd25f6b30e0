"""The H3 laws: every law is there by its spec name, and every law catches a break of
its own; the exhaustive walk reaches every state within its bounds; and walking
states up to the numbering of their tickets loses nothing. That every law passes and
every break is killed is `eukhe laws`'s to check, once, in `make test`."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from eukhe.laws import admission as laws
from eukhe.laws import areas, engine
from eukhe.rules import admission as a
from eukhe.rules.admission import Kind, Op, State
from tests.laws.reach import reached

SPEC_LAWS = [
    "admission_preempts",
    "admission_background_yields",
    "admission_fifo",
    "admission_no_lost_wakeup",
    "admission_capacity",
    "admission_interactive_step",
    "admission_interactive_bound",
    "admission_ended_stays_ended",
    "admission_end_twice_changes_nothing",
    "admission_every_ticket_ends",
]

ISSUE_BREAKS = [
    "no preemption",
    "a background grant while an interactive request waits",
    "a younger request granted before an older one of its class",
    "a release that grants nothing with a waiter present",
    "a double release",
    "a dropped waiter that leaks its ticket",
    "a grant past the limit",
]


def test_every_law_of_the_spec_is_there_by_its_name() -> None:
    assert areas.AREAS["admission"] is laws.AREA
    assert [law.name for law in laws.AREA.laws] == SPEC_LAWS
    assert [m.name for m in laws.AREA.mutants][: len(ISSUE_BREAKS)] == ISSUE_BREAKS


CATCHES = {
    "admission_preempts": "no preemption",
    "admission_background_yields": "a background grant while an interactive request waits",
    "admission_fifo": "a younger request granted before an older one of its class",
    "admission_no_lost_wakeup": "a release that grants nothing with a waiter present",
    "admission_capacity": "a grant past the limit",
    "admission_interactive_step": "an interactive grant past older interactive waiters",
    "admission_interactive_bound": "a release that grants nothing with a waiter present",
    "admission_ended_stays_ended": "a poll that revives an ended ticket",
    "admission_end_twice_changes_nothing": "a double release",
    "admission_every_ticket_ends": "a dropped waiter that leaks its ticket",
}


def test_every_law_catches_a_break() -> None:
    """A law that no break makes fail is worth nothing: each fails on its own,
    within a few operations of a new controller."""
    mutants = {m.name: m for m in laws.AREA.mutants}
    cfg = next(iter(laws.AREA.cfgs()))
    for law in laws.AREA.laws:
        alone = dataclasses.replace(laws.AREA, laws=(law,), mutants=())
        found = engine.explore(alone, mutants[CATCHES[law.name]].model, cfg, 6, stop_at_first=True)["found"]
        assert law.name in found, f"{law.name} does not catch {CATCHES[law.name]!r}"


def test_the_exhaustive_walk_reaches_every_state_within_its_bounds() -> None:
    """The walk runs out of new states before DEPTH levels: it covers every history of
    any length (10 included) within the bounds, from every start (each one
    new-limits operation from limits 0, 0)."""
    area = laws.AREA
    (cfg,) = list(area.cfgs())
    s0 = area.start(area.model, cfg)
    seen, level = reached(s0, lambda s: area.inputs(cfg, s), lambda s, x: area.next(area.model, cfg, s, x))
    assert level < area.depth, f"still new states after {level} levels"
    assert len(seen) > 10_000
    limits = {(s.limit, s.queue_limit) for s in seen}
    assert limits == {(k, q) for k in range(4) for q in range(4)}
    for k, q in limits:
        assert a.limits(s0, k, q).state == a.start(k, q)
    assert max(laws.live(s) for s in seen) == laws.TICKETS


def _renamed(s: State, x: Op) -> Op:
    """The op on the state renumbered 0, 1, 2, ...: the same ticket, or an ended one."""
    numbers = [t.number for t in a.tickets(s)]
    if x.kind not in (Kind.POLL, Kind.DROP):
        return x
    n = numbers.index(x.ticket) if x.ticket in numbers else len(numbers)
    return x._replace(ticket=n)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10**6), st.lists(st.integers(0, 10**6), max_size=60))
def test_walking_states_up_to_their_numbering_loses_nothing(seed: int, picks: list[int]) -> None:
    """Renumbering a state's tickets in order commutes with every step: the same
    outcome, grants and preemptions (renumbered), and the same state renumbered."""
    cfg = dataclasses.replace(laws.AREA.sample_cfg(seed), canonical=False)
    s = a.start(cfg.limit, cfg.queue_limit)
    for pick in picks:
        xs = laws.inputs(cfg, s)
        x = xs[pick % len(xs)]
        c = laws.canonical(s)
        raw, canon = a.step(s, x), a.step(c, _renamed(s, x))
        assert laws.canonical(raw.state) == laws.canonical(canon.state)
        order = {t.number: i for i, t in enumerate(a.tickets(s))}
        assert raw.outcome is canon.outcome
        assert tuple(order[n] for n in raw.granted) == canon.granted
        assert tuple(order[n] for n in raw.preempted) == canon.preempted
        s = raw.state
