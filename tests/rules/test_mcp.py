"""The issue 27 model of an MCP server's life and the end of every call to it."""

from __future__ import annotations

from functools import partial

from eukhe.laws import mcp as laws
from eukhe.rules import mcp
from eukhe.rules.mcp import Act, Do, End, Ev, Kind, Limits, Offer, Phase, Server, Step
from tests.laws.reach import reached


def run(s: Server, *xs: Ev) -> tuple[Server, list[Step]]:
    steps = []
    for x in xs:
        st = mcp.step(s, x)
        steps.append(st)
        s = st.server
    return s, steps


def ready(limits: Limits | None = None) -> Server:
    """A server started and ready at 0."""
    s, _ = run(mcp.start(limits or Limits()), Ev(Kind.START, 0), Ev(Kind.READY, 0))
    assert s.phase is Phase.READY
    return s


def test_a_ready_server_that_dies_ends_its_sent_calls_at_once() -> None:
    s, steps = run(ready(), Ev(Kind.CALL, 1), Ev(Kind.CALL, 2))
    assert [a for st in steps for a in st.acts] == [Act(Do.SEND, 0), Act(Do.SEND, 1)]
    died = mcp.step(s, Ev(Kind.DIED, 10, cause="exit 1"))
    assert died.ended == ((0, End.DIED), (1, End.DIED))
    assert died.server.phase is Phase.BACKOFF and not died.server.calls
    assert died.server.due == 10 + mcp.BACKOFF_MS[0] and died.acts == (Act(Do.STOP),)
    # a call made while it backs off waits for the restart, and goes once it is ready
    s, steps = run(died.server, Ev(Kind.CALL, 20), Ev(Kind.TICK, died.server.due), Ev(Kind.READY, 600))
    assert steps[1].acts == (Act(Do.SPAWN),) and steps[1].server.phase is Phase.STARTING
    assert steps[2].acts == (Act(Do.SEND, 2),) and s.calls == (mcp.Call(2, 20 + mcp.TOOL_MS, True),)


def test_the_breaker_opens_after_five_restarts_in_thirty_seconds() -> None:
    s, now, waits = ready(), 0, []
    for _ in range(mcp.RECONNECTS):
        now += 100
        s = mcp.step(s, Ev(Kind.DIED, now, cause="exit 1")).server
        assert s.phase is Phase.BACKOFF
        waits.append(s.due - now)
        now = s.due
        s, _ = run(s, Ev(Kind.TICK, now), Ev(Kind.READY, now))
    assert waits == [500, 1_000, 2_000, 4_000, 4_000] and now < mcp.WINDOW_MS
    st = mcp.step(s, Ev(Kind.DIED, now + 100, cause="exit 1"))
    assert st.server.phase is Phase.FAILED and st.acts == (Act(Do.STOP),)
    assert st.server.cause == "5 restarts within 30 s; the last: exit 1"
    # failed it stays, whatever comes, until the user asks again
    s, steps = run(st.server, Ev(Kind.TICK, 10**6), Ev(Kind.READY, 10**6), Ev(Kind.CALL, 10**6))
    assert s.phase is Phase.FAILED and steps[2].ended == ((0, End.FAILED),)
    st = mcp.step(s, Ev(Kind.RECONNECT, 10**6))
    assert st.server.phase is Phase.STARTING and st.acts == (Act(Do.SPAWN),) and st.server.restarts == ()


def test_restarts_older_than_the_window_do_not_open_the_breaker() -> None:
    lim = Limits(reconnects=1)
    s, _ = run(ready(lim), Ev(Kind.DIED, 0), Ev(Kind.TICK, 500), Ev(Kind.READY, 500))
    assert s.restarts == (500,)
    assert mcp.step(s, Ev(Kind.DIED, 1_000)).server.phase is Phase.FAILED
    later = mcp.step(s, Ev(Kind.DIED, 500 + mcp.WINDOW_MS)).server
    assert later.phase is Phase.BACKOFF and later.restarts == ()


def test_a_server_never_ready_fails_at_once_with_its_cause() -> None:
    s, steps = run(mcp.start(), Ev(Kind.START, 0), Ev(Kind.CALL, 1), Ev(Kind.DIED, 5, cause="exit 127"))
    assert s.phase is Phase.FAILED and s.cause == "exit 127" and steps[2].ended == ((0, End.FAILED),)
    s, _ = run(mcp.start(), Ev(Kind.START, 0), Ev(Kind.TICK, mcp.STARTUP_MS))
    assert s.phase is Phase.FAILED and s.cause == f"the start took longer than {mcp.STARTUP_MS} ms"


def test_a_call_to_a_starting_server_waits_within_its_own_deadline() -> None:
    lim = Limits(tool_ms=3_000)
    s, steps = run(mcp.start(lim), Ev(Kind.START, 0), Ev(Kind.CALL, 100))
    assert s.phase is Phase.STARTING and s.calls == (mcp.Call(0, 3_100, False),) and steps[1].acts == ()
    assert mcp.next_due(s) == 3_100  # the runtime wakes for the call before the start's own deadline
    st = mcp.step(s, Ev(Kind.TICK, 3_100))
    assert st.ended == ((0, End.TIMEOUT),) and st.acts == ()  # never sent: nothing to cancel
    assert st.server.phase is Phase.STARTING


def test_a_call_due_at_once_before_the_start_ends_at_once() -> None:
    st = mcp.step(mcp.start(Limits(tool_ms=0)), Ev(Kind.CALL, 5))
    assert st.ended == ((0, End.TIMEOUT),) and not st.server.calls and mcp.valid(st.server)


def test_a_result_after_its_deadline_finds_the_call_ended() -> None:
    s, _ = run(ready(Limits(tool_ms=1_000)), Ev(Kind.CALL, 0), Ev(Kind.CALL, 10))
    st = mcp.step(s, Ev(Kind.RESULT, 1_000, call=0))
    assert st.ended == ((0, End.TIMEOUT),) and st.acts == (Act(Do.CANCEL, 0),)
    again = mcp.step(st.server, Ev(Kind.RESULT, 1_001, call=0))
    assert again.ended == () and again.server.calls == st.server.calls
    aborted = mcp.step(st.server, Ev(Kind.ABORT, 1_002, call=1))
    assert aborted.ended == ((1, End.ABORTED),) and aborted.acts == (Act(Do.CANCEL, 1),)


def test_closing_kills_the_group_within_the_bound() -> None:
    s, _ = run(ready(), Ev(Kind.CALL, 500))
    st = mcp.step(s, Ev(Kind.CLOSE, 1_000))
    assert st.ended == ((0, End.CLOSED),) and st.acts == (Act(Do.CANCEL, 0), Act(Do.CLOSE_STDIN))
    s, signals = st.server, []
    while (due := mcp.next_due(s)) is not None:
        st = mcp.step(s, Ev(Kind.TICK, due))
        signals += [(a.do, due - 1_000) for a in st.acts]
        s = st.server
    assert signals == [(Do.TERM, mcp.TERM_MS), (Do.KILL, mcp.KILL_MS)] and mcp.KILL_MS <= mcp.CLOSE_MS
    assert mcp.step(s, Ev(Kind.DIED, 4_500)).server.phase is Phase.CLOSED


def test_a_close_of_a_server_with_no_process_is_closed_at_once() -> None:
    backoff = mcp.step(ready(), Ev(Kind.DIED, 0)).server
    for s in (mcp.start(), backoff):
        st = mcp.step(s, Ev(Kind.CLOSE, 1))
        assert st.server.phase is Phase.CLOSED and st.acts == (Act(Do.STOP),)
        assert mcp.offer(st.server, 0, mcp.GATE_MS) is Offer.NONE


def test_a_turn_waits_at_the_gate_only_for_a_server_with_no_cached_tools() -> None:
    starting = mcp.step(mcp.start(), Ev(Kind.START, 0)).server
    assert mcp.offer(starting, 0, mcp.GATE_MS) is Offer.WAIT
    assert mcp.offer(starting, mcp.GATE_MS, mcp.GATE_MS) is Offer.LATER
    cached = mcp.step(mcp.start(cached=True), Ev(Kind.START, 0)).server
    assert mcp.offer(cached, 0, mcp.GATE_MS) is Offer.CACHED
    assert mcp.offer(mcp.start(cached=True), 0, mcp.GATE_MS) is Offer.CACHED
    assert mcp.offer(ready(), 0, mcp.GATE_MS) is Offer.LIVE


def test_the_law_walk_reaches_every_server_within_its_depth() -> None:
    """The laws' exhaustive walk runs out of new servers before DEPTH levels: it covers
    every history of any length within its bounds, deaths, the breaker and closes among them."""
    phases: set[Phase] = set()
    for cfg in laws.cfgs():
        s0 = laws.start(laws.MODEL, cfg)
        seen, level = reached(s0, partial(laws.inputs, cfg), partial(laws.walk_next, laws.MODEL, cfg))
        assert level < laws.DEPTH, f"still new servers after {level} levels"
        assert all(mcp.valid(s) for s in seen)
        assert any("restarts" in s.cause for s in seen) and any(s.signalled == 2 for s in seen)
        phases |= {s.phase for s in seen}
    assert phases == set(Phase)
