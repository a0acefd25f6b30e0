"""The H3 model: scripted controllers read as the runtime drives them, and the
persistent ticket line against a plain sorted set."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from eukhe.rules import admission as a
from eukhe.rules.admission import Class, Outcome, State, Status

INTER, BACK = Class.INTERACTIVE, Class.BACKGROUND


def admit(s: State, cls: Class) -> tuple[State, int, Outcome]:
    st = a.admit(s, cls)
    assert a.valid(st.state)
    return st.state, st.ticket, st.outcome


def statuses(s: State) -> dict[int, tuple[str, str]]:
    return {t.number: (t.cls.value, t.status.value) for t in a.tickets(s)}


def test_a_free_slot_is_taken_at_once_and_released_to_the_oldest_waiter() -> None:
    s = a.start(1, 5)
    s, t0, out = admit(s, INTER)
    assert (t0, out) == (0, Outcome.HELD)
    s, t1, out = admit(s, INTER)
    s, t2, _ = admit(s, INTER)
    assert out is Outcome.QUEUED and a.ahead(s, t1) == 1 and a.ahead(s, t2) == 2
    st = a.drop(s, t0)
    assert st.granted == (t1,) and st.outcome is Outcome.ENDED
    assert statuses(st.state) == {1: ("interactive", "granted"), 2: ("interactive", "queued")}
    assert a.poll(st.state, t1).outcome is Outcome.HELD
    assert a.status(a.poll(st.state, t1).state, t1) is Status.HELD


def test_a_queued_ticket_is_told_its_place_in_its_class_and_who_holds_the_slots() -> None:
    s = a.start(1, 5)
    s, held, _ = admit(s, INTER)
    s, b0, _ = admit(s, BACK)
    s, i1, _ = admit(s, INTER)
    s, i2, _ = admit(s, INTER)
    assert a.waiting(s, held) is None and a.waiting(s, 99) is None  # held, never given: not queued
    full, yields = a.Why.FULL, a.Why.YIELDS
    assert a.waiting(s, i1) == a.Waiting(INTER, 1, full, 1, 0, 2, 1)
    assert a.waiting(s, i2) == a.Waiting(INTER, 2, full, 1, 0, 2, 1)
    assert a.waiting(s, b0) == a.Waiting(BACK, 1, yields, 1, 0, 2, 1)
    s = a.drop(s, held).state  # i1 granted: i2 is next of its class
    assert a.waiting(s, i1) is None and a.waiting(s, i2) == a.Waiting(INTER, 1, full, 1, 0, 1, 1)
    s = a.drop(a.drop(s, i1).state, i2).state  # no session request left: b0 is granted
    assert a.waiting(s, b0) is None
    s, b1, _ = admit(s, BACK)
    assert a.waiting(s, b1) == a.Waiting(BACK, 1, full, 0, 1, 0, 1)  # behind background work only


def test_a_session_request_preempts_every_background_request_of_its_provider() -> None:
    s = a.start(2, 5)
    s, b0, _ = admit(s, BACK)
    s, b1, _ = admit(s, BACK)
    s, b2, _ = admit(s, BACK)  # waits
    st = a.admit(s, INTER)
    assert st.outcome is Outcome.HELD and st.preempted == (b0, b1)
    assert statuses(st.state) == {
        b0: ("background", "preempted"),
        b1: ("background", "preempted"),
        b2: ("background", "queued"),
        st.ticket: ("interactive", "held"),
    }
    # the preempted holders' drops free nothing: the background waiter still yields
    s = a.drop(a.drop(st.state, b0).state, b1).state
    assert a.status(s, b2) is Status.QUEUED and a.held(s) == 1
    # the session request ends: the background waiter gets a slot
    st = a.drop(s, st.ticket)
    assert st.granted == (b2,)


def test_an_uncollected_background_grant_goes_back_to_its_place_in_the_queue() -> None:
    s = a.start(1, 5)
    s, b0, _ = admit(s, BACK)
    s, b1, _ = admit(s, BACK)
    s = a.drop(s, b0).state  # b1 granted, not collected yet
    assert a.status(s, b1) is Status.GRANTED
    s, b2, _ = admit(s, BACK)
    st = a.admit(s, INTER)
    assert st.preempted == () and st.outcome is Outcome.HELD
    assert list(st.state.background) == [b1, b2]
    assert a.poll(st.state, b1).outcome is Outcome.QUEUED


def test_background_waits_while_an_interactive_request_holds_even_with_free_slots() -> None:
    s = a.start(3, 5)
    s, i0, _ = admit(s, INTER)
    s, b1, out = admit(s, BACK)
    assert out is Outcome.QUEUED and a.held(s) == 1
    st = a.drop(s, i0)
    assert st.granted == (b1,)


def test_a_lowered_limit_drains_and_a_raised_one_grants_at_once() -> None:
    s = a.start(2, 5)
    s, i0, _ = admit(s, INTER)
    s, i1, _ = admit(s, INTER)
    s, i2, _ = admit(s, INTER)
    st = a.limits(s, 1, 5)
    assert st.granted == () and a.held(st.state) == 2  # nothing taken away
    st = a.drop(st.state, i0)
    assert st.granted == ()  # still at the limit
    st = a.limits(st.state, 3, 5)
    assert st.granted == (i2,) and st.outcome is Outcome.SET
    assert a.status(st.state, i1) is Status.HELD


def test_limit_zero_queues_everyone_and_no_one_is_granted() -> None:
    s = a.start(0, 2)
    s, i0, out = admit(s, INTER)
    assert out is Outcome.QUEUED and a.held(s) == 0
    assert a.limits(s, 1, 2).granted == (i0,)


def test_a_full_queue_refuses_its_class_only() -> None:
    s = a.start(1, 1)
    s, _, _ = admit(s, INTER)
    s, _, _ = admit(s, BACK)
    st = a.admit(s, BACK)
    assert (st.outcome, st.ticket, st.state) == (Outcome.FULL, -1, s)
    s, _, out = admit(s, INTER)
    assert out is Outcome.QUEUED  # background waiters never fill the session queue
    assert a.admit(s, INTER).outcome is Outcome.FULL
    assert a.admit(a.start(0, 0), INTER).outcome is Outcome.FULL


def test_a_refused_session_request_still_preempts_background_slots() -> None:
    """A limit lowered to 0 drains the background holders; a session request that
    finds no slot and a full queue is refused, and the background slots are given
    up all the same (after an interactive admit no background slot is held)."""
    s = a.start(1, 0)
    s, b0, _ = admit(s, BACK)
    s = a.limits(s, 0, 0).state
    st = a.admit(s, INTER)
    assert (st.outcome, st.preempted) == (Outcome.FULL, (b0,))
    assert a.status(st.state, b0) is Status.PREEMPTED


def test_dropping_an_ended_or_unknown_ticket_changes_nothing() -> None:
    s = a.start(1, 3)
    s, t, _ = admit(s, INTER)
    s = a.drop(s, t).state
    for n in (t, 99, -1):
        st = a.drop(s, n)
        assert st.state is s and st.granted == () and st.outcome is Outcome.ENDED
        assert a.poll(s, n).outcome is Outcome.ENDED


def test_negative_limits_are_an_outcome_not_an_exception() -> None:
    s = a.start(-2, -1)
    assert (s.limit, s.queue_limit) == (0, 0)
    st = a.limits(s, -1, 3)
    assert st.outcome is Outcome.INVALID and st.state is s


def test_step_dispatches_every_kind() -> None:
    s = a.start(1, 1)
    assert a.step(s, a.admit_op(INTER)).outcome is Outcome.HELD
    assert a.step(s, a.poll_op(0)).outcome is Outcome.ENDED
    assert a.step(s, a.drop_op(0)).outcome is Outcome.ENDED
    assert a.step(s, a.limits_op(2, 2)).state.limit == 2


def test_valid_rejects_malformed_states() -> None:
    s = a.start(1, 1)
    assert a.valid(s)
    assert not a.valid(State(1, 1, 1, a.line(0), a.line(0), ()))  # one ticket queued twice
    assert not a.valid(State(1, 1, 1, a.line(5), a.EMPTY, ()))  # a ticket not given yet
    assert not a.valid(State(1, 1, 1, a.EMPTY, a.EMPTY, (a.Holder(0, INTER, Status.PREEMPTED),)))
    assert not a.valid(State(-1, 1, 0, a.EMPTY, a.EMPTY, ()))


def test_a_line_spans_chunks() -> None:
    q = a.line(*range(0, 1000, 7))
    assert len(q) == len(range(0, 1000, 7)) and len(q.keys) > 1
    assert q.first() == 0 and q.below(700) == 100 and 693 in q and 694 not in q
    assert a.line(3, 1, 2) == a.line(1, 2, 3) and hash(a.line(3, 1)) == hash(a.line(1, 3))
    assert q.add(7) is q and q.remove(8) is q


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 700)), max_size=120))
def test_a_line_is_a_sorted_set(ops: list[tuple[bool, int]]) -> None:
    q, model = a.EMPTY, set()
    for add, t in ops:
        q, _ = (q.add(t), model.add(t)) if add else (q.remove(t), model.discard(t))
        assert list(q) == sorted(model) and len(q) == len(model)
        assert q.first() == (min(model) if model else -1)
        assert all((n in q) == (n in model) for n in (t, t + 1, t - 1))
        assert q.below(t) == sum(1 for n in model if n < t)
        assert q == a.line(*model)  # one representation per set
