"""The H2.1 laws over the compactor queue: every law by its spec name, and every law
catches a break on its own (that all pass and every break is killed is `eukhe
laws`'s to check, in `make test`); the exhaustive walk reaches
every queue within its bounds; and walking queues up to the numbering of their
calls loses nothing."""

from __future__ import annotations

import dataclasses
from functools import partial

from hypothesis import given, settings
from hypothesis import strategies as st

from eukhe.laws import areas, engine
from eukhe.laws import queue as laws
from eukhe.rules import queue as q
from tests.laws.reach import reached

SPEC_LAWS = ["need_first", "need_first_running", "wait_keeps_needed", "need_progress"]

ISSUE_BREAKS = [
    "a stop that hits a needed line",
    "an unneeded call not stopped on wait",
    "a queue that idles with a free slot and an unbuilt needed line",
    "a merge started before its first message's line",
]


def test_every_law_of_the_spec_is_there_by_its_name() -> None:
    assert areas.AREAS["queue"] is laws.AREA
    assert [law.name for law in laws.AREA.laws] == SPEC_LAWS
    assert [m.name for m in laws.AREA.mutants][: len(ISSUE_BREAKS)] == ISSUE_BREAKS


CATCHES = {
    "need_first": "a merge started before its first message's line",
    "need_first_running": "an unneeded call not stopped on wait",
    "wait_keeps_needed": "a stop that hits a needed line",
    "need_progress": "a queue that idles with a free slot and an unbuilt needed line",
}


def test_every_law_catches_a_break_on_its_own() -> None:
    mutants = {m.name: m for m in laws.AREA.mutants}
    for law in laws.AREA.laws:
        alone = dataclasses.replace(laws.AREA, laws=(law,), mutants=())
        found = engine.check_exhaustive(alone, mutants[CATCHES[law.name]].model, None, stop_at_first=True)
        assert law.name in found, f"{law.name} does not catch {CATCHES[law.name]!r}"


def test_the_exhaustive_walk_reaches_every_queue_within_its_bounds() -> None:
    """The walk runs out of new queues before DEPTH levels: it covers every history of
    any length within the bounds; it reaches waits, every job slot busy, and lines
    built out of order."""
    for cfg in laws.AREA.cfgs():
        seen, level = reached(q.EMPTY, partial(laws.inputs, cfg), partial(laws.walk_next, laws.MODEL, cfg))
        assert level < laws.DEPTH, f"still new queues after {level} levels"
        assert all(q.valid(cfg, s) for s in seen)
        assert max(s.total for s in seen) == laws.MESSAGES
        assert max(len(s.busy) for s in seen) == cfg.jobs
        assert any(s.waiting and s.cooling for s in seen)
        assert cfg.jobs == 1 or any(any(n.l == 0 and n.i > q.first(s) for n in s.built) for s in seen)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10**6), st.lists(st.integers(0, 10**6), max_size=80))
def test_walking_queues_up_to_their_numbering_loses_nothing(seed: int, picks: list[int]) -> None:
    """Renumbering the running calls in node order commutes with every step: the same
    outcome, starts and stops (renumbered), and the same queue renumbered."""
    cfg = dataclasses.replace(laws.AREA.sample_cfg(seed), canonical=False)
    s = q.EMPTY
    for pick in picks:
        xs = laws.inputs(cfg, s)
        x = xs[pick % len(xs)]
        c = laws.canonical(s)
        number = {j.call: k for k, j in enumerate(s.running)}
        y = x._replace(call=number.get(x.call, c.calls)) if x.kind in (q.Kind.BUILT, q.Kind.FAILED) else x
        raw, canon = q.step(cfg, s, x), q.step(cfg, c, y)
        assert laws.canonical(raw.queue) == laws.canonical(canon.queue)
        assert raw.outcome is canon.outcome
        assert [j.node for j in raw.started] == [j.node for j in canon.started]
        assert [j.node for j in raw.stopped] == [j.node for j in canon.stopped]
        s = raw.queue
