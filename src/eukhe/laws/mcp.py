"""The laws of issue 27 (an MCP server's life, and the end of every call to it) over the
model `rules.mcp`, and its breaks.

How they are checked. A server holds its limits and tuples of calls and restart
times, which the prover's cases (numbers, flags and enums) do not range over, so no
law here is proven by CrossHair (`prove=False`). Each is checked exhaustively, then
sampled:

- exhaustive: every server reached from one not yet started, under a few small
  limits (`cfgs`), each law on every such server and every input from it: a TICK
  just before `now`, at `now`, one after, at the next deadline (`next_due`), past
  the restart window and, closing, at the SIGKILL; a START, a RECONNECT, and an
  ERROR of every call in flight and of one that is not, at `now`; a READY, a DIED,
  a CLOSE, a CALL while calls are left, and a RESULT and an ABORT of every call in
  flight and of one that is not, at `now` and at the next deadline, so a deadline
  is hit both by a tick and by an input that finds it passed. Servers are walked
  up to the time: the model only compares times with each other, so a server with
  every time moved back by `now` answers every input alike, a restart older than
  the window counts no more, and a field its phase never reads again is zeroed
  (`canonical`). The walk runs until no new server appears, well within `DEPTH`
  levels (13 at most), so it covers histories of any length.
- sampled: Hypothesis draws larger limits and histories of 60 inputs on the run's
  own clock (not moved back).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import mcp
from eukhe.rules.mcp import Act, Call, Do, End, Ev, Kind, Limits, Offer, Phase, Server, Step
from eukhe.rules.states import replace


@dataclass(frozen=True)
class Model:
    """The functions of the model the laws call; a break swaps one."""

    step: Callable[[Server, Ev], Step]
    start: Callable[[Limits, bool], Server]
    offer: Callable[[Server, int, int], Offer]
    next_due: Callable[[Server], int | None]


MODEL = Model(step=mcp.step, start=mcp.start, offer=mcp.offer, next_due=mcp.next_due)


@dataclass(frozen=True)
class MCfg:
    """A walk's bounds: the server's limits; the startup gate a turn waits at most; its
    tool list cached before its first start; calls at most; whether servers are walked
    up to the time (`canonical`)."""

    limits: Limits
    gate_ms: int
    cached: bool
    calls: int
    canonical: bool


def cfg_valid(cfg: MCfg) -> bool:
    return (cfg.gate_ms >= 0) & (cfg.calls >= 0)


def valid(cfg: MCfg, s: Server) -> bool:
    return mcp.valid(s)


def canonical(s: Server) -> Server:
    """The server with every time moved back by `now` (now 0), the restarts older than
    the window dropped, and the fields its phase never reads (nor any phase it can come
    to) zeroed: a close's start once its group is killed; a server failed, closing or
    closed forgets its restarts and whether it was ready (a RECONNECT starts afresh), one
    closing or closed its cache too, and only a failed one keeps its cause."""
    n, ph = s.now, s.phase
    lives = ph in (Phase.STARTING, Phase.READY, Phase.BACKOFF)
    return Server(
        limits=s.limits,
        phase=ph,
        now=0,
        due=s.due - n if ph in (Phase.STARTING, Phase.BACKOFF) else 0,
        since=s.since - n if ph is Phase.CLOSING and s.signalled < 2 else 0,
        signalled=s.signalled if ph is Phase.CLOSING else 0,
        calls=tuple(Call(c.id, c.due - n, c.sent) for c in s.calls) if n else s.calls,
        next_call=s.next_call,
        restarts=tuple(r - n for r in s.restarts if r > n - s.limits.window_ms) if lives else (),
        was_ready=s.was_ready and lives,
        cached=s.cached and (lives or ph is Phase.FAILED or not s.begun),
        cause=s.cause if ph is Phase.FAILED else "",
        begun=s.begun,
    )


def start(m: Model, cfg: MCfg) -> Server:
    return m.start(cfg.limits, cfg.cached)


_LAST: list[object] = [None, None, None, None]
_TICKED: list[object] = [None, None, None, None]


def stepped(m: Model, s: Server, x: Ev) -> Step:
    """One step; the walk takes it first and the engine then asks the ghost and every law
    about it in a row, so the last one is kept by identity."""
    last = _LAST
    if last[0] is m and last[1] is s and last[2] is x:
        st: Step = last[3]  # type: ignore[assignment]
        return st
    st = m.step(s, x)
    _LAST[:] = [m, s, x, st]
    return st


def _ticked(m: Model, s: Server, x: Ev) -> Server:
    """The server once the input's time has come (every input first tells the time), kept
    by identity as `stepped` is."""
    last = _TICKED
    if last[0] is m and last[1] is s and last[2] is x:
        t: Server = last[3]  # type: ignore[assignment]
        return t
    t = m.step(s, Ev(Kind.TICK, x.at)).server
    _TICKED[:] = [m, s, x, t]
    return t


def walk_next(m: Model, cfg: MCfg, s: Server, x: Ev) -> Server:
    t = stepped(m, s, x).server
    return canonical(t) if cfg.canonical else t


# ---------------------------------------------------------------- inputs


CAUSE = "exit 1"


def inputs(cfg: MCfg, s: Server) -> list[Ev]:
    now, due = s.now, mcp.next_due(s)
    ticks = {now - 1, now, now + 1, now + cfg.limits.window_ms}
    if due is not None:
        ticks.add(due)
    if s.phase is Phase.CLOSING:
        ticks.add(s.since + cfg.limits.kill_ms)
    xs = [Ev(Kind.TICK, at) for at in sorted(ticks)]
    live = [c.id for c in s.calls]
    dead = max((i for i in range(s.next_call) if i not in live), default=s.next_call)
    xs += [Ev(Kind.START, now), Ev(Kind.RECONNECT, now), Ev(Kind.ERROR, now, -1), Ev(Kind.ERROR, now, dead)]
    xs += [Ev(k, now, i) for i in live for k in (Kind.RESULT, Kind.ERROR)]
    for at in sorted({now} | ({due} if due is not None else set())):
        xs += [Ev(Kind.READY, at), Ev(Kind.DIED, at, cause=CAUSE), Ev(Kind.CLOSE, at)]
        if s.next_call < cfg.calls:
            xs.append(Ev(Kind.CALL, at))
        xs += [Ev(Kind.RESULT, at, dead), Ev(Kind.ABORT, at, dead)]
        xs += [Ev(Kind.RESULT, at, i) for i in live if at != now] + [Ev(Kind.ABORT, at, i) for i in live]
    return xs


# ---------------------------------------------------------------- history


@dataclass(frozen=True)
class Ghost:
    """The ids of the calls ended so far."""

    ended: frozenset[int]


def ghost_start(cfg: MCfg) -> Ghost:
    return Ghost(frozenset())


def ghost_next(m: Model, cfg: MCfg, g: Ghost, s: Server, x: Ev, t: Server) -> Ghost:
    return Ghost(g.ended | {i for i, _ in stepped(m, s, x).ended})


# ---------------------------------------------------------------- laws


def _at(s: Server, x: Ev) -> int:
    """When the input is taken: never before `now`."""
    return max(x.at, s.now)


def mcp_call_ends(m: Model, cfg: MCfg, s: Server, x: Ev) -> bool:
    """A step ends only calls in flight before it (or the one its CALL made), each once,
    and every call it does not end stays in flight; none left is past its deadline. A
    death of a ready server ends its sent calls at once; an abort of a sent call cancels
    it; a close leaves no call in flight."""
    st = stepped(m, s, x)
    t = st.server
    ids = [i for i, _ in st.ended]
    before = {c.id for c in s.calls}
    new = {s.next_call} if x.kind is Kind.CALL else set()
    after = {c.id for c in t.calls}
    once = len(ids) == len(set(ids))
    only = set(ids) <= before | new
    gone = not set(ids) & after
    kept = (before | new) - set(ids) == after
    numbered = t.next_call == s.next_call + len(new)
    timely = mcp.valid(t) & all(c.due > t.now for c in t.calls) & (t.now == _at(s, x))
    cancels = {a.call for a in st.acts if a.do is Do.CANCEL} <= set(ids)
    ok = once & only & gone & kept & numbered & timely & cancels
    f = _ticked(m, s, x)
    if x.kind is Kind.DIED and f.phase is Phase.READY:
        ok &= all((c.id, End.DIED) in st.ended for c in f.calls if c.sent)
    if x.kind is Kind.ABORT:
        hit = [c for c in f.calls if c.id == x.call]
        if hit:
            ok &= ((x.call, End.ABORTED) in st.ended) & ((Act(Do.CANCEL, x.call) in st.acts) == hit[0].sent)
    if x.kind is Kind.CLOSE:
        ok &= not t.calls
    return ok


def mcp_call_ends_node(m: Model, cfg: MCfg, s: Server) -> bool:
    """A valid server, and whenever a call is in flight the runtime wakes by its
    deadline: `next_due` is at or before every call's due."""
    due = m.next_due(s)
    wakes = not s.calls or (due is not None and all(due <= c.due for c in s.calls))
    return mcp.valid(s) & wakes


def mcp_call_ends_history(m: Model, cfg: MCfg, g: Ghost, s: Server, x: Ev, t: Server) -> bool:
    """Over any history: no call ends twice."""
    ids = [i for i, _ in stepped(m, s, x).ended]
    return len(ids) == len(set(ids)) and not set(ids) & g.ended


def _waits_for_a_start(s: Server) -> bool:
    """Starting, backing off, or not started yet: a turn may wait for its tools."""
    return s.phase in (Phase.STARTING, Phase.BACKOFF) or (s.phase is Phase.CLOSED and not s.begun)


def mcp_gate_bounded(m: Model, cfg: MCfg, s: Server, x: Ev) -> bool:
    """A call to a server that is starting waits within its own deadline: it is in flight,
    not sent, due `tool_ms` after it came (a deadline of 0 ends it at once). A start
    that begins is due `startup_ms` after it."""
    st = stepped(m, s, x)
    t = st.server
    at = _at(s, x)
    lim = s.limits
    ok = True
    if x.kind is Kind.CALL and _waits_for_a_start(_ticked(m, s, x)):
        c = [c for c in t.calls if c.id == s.next_call]
        if lim.tool_ms > 0:
            ok &= c == [Call(s.next_call, at + lim.tool_ms, False)]
            ok &= Act(Do.SEND, s.next_call) not in st.acts
        else:
            ok &= (not c) & ((s.next_call, End.TIMEOUT) in st.ended)
    if t.phase is Phase.STARTING and s.phase is not Phase.STARTING:
        ok &= t.due == at + max(lim.startup_ms, 0)
    return ok


def mcp_gate_bounded_node(m: Model, cfg: MCfg, s: Server) -> bool:
    """A turn waits for a server only within the gate: WAIT only while waited < gate; a
    cached server not ready is offered CACHED at once; a ready one LIVE; a failed,
    closing or closed one not at all. A start under way is due within `startup_ms`, and
    the runtime wakes for it."""
    ok = True
    for gate in sorted({0, cfg.gate_ms}):
        for waited in sorted({0, gate - 1, gate, gate + 1} - {-1}):
            o = m.offer(s, waited, gate)
            if s.phase is Phase.READY:
                ok &= o is Offer.LIVE
            elif _waits_for_a_start(s):
                if s.cached:
                    ok &= o is Offer.CACHED
                else:
                    ok &= o is (Offer.WAIT if waited < gate else Offer.LATER)
            else:
                ok &= o is Offer.NONE
    if s.phase is Phase.STARTING:
        due = m.next_due(s)
        ok &= (s.due <= s.now + max(s.limits.startup_ms, 0)) & (due is not None and due <= s.due)
    return ok


def _in_window(restarts: tuple[int, ...], at: int, lim: Limits) -> int:
    return sum(1 for r in restarts if r > at - lim.window_ms)


def mcp_reconnects_capped(m: Model, cfg: MCfg, s: Server, x: Ev) -> bool:
    """A death (of a ready server, or a restart that timed out) with k restarts in the
    window backs off `backoff_ms[min(k, len - 1)]`, or opens the breaker when k is at
    `reconnects` (FAILED, the cause naming the restarts); a server never ready fails at
    once. FAILED stays FAILED under every input but RECONNECT and CLOSE."""
    st = stepped(m, s, x)
    t = st.server
    at = _at(s, x)
    lim = s.limits
    if s.phase is Phase.FAILED:
        return x.kind in (Kind.RECONNECT, Kind.CLOSE) or t.phase is Phase.FAILED
    timed_out = (s.phase is Phase.STARTING) & (s.due <= at)
    died = (x.kind is Kind.DIED) & (s.phase in (Phase.STARTING, Phase.READY))
    if not ((timed_out & (x.kind in (Kind.TICK, Kind.DIED))) | died):
        return True
    if not s.was_ready:
        return t.phase is Phase.FAILED
    k = _in_window(s.restarts, at, lim)
    if k >= lim.reconnects:
        return (t.phase is Phase.FAILED) & (f"{k} restarts" in t.cause)
    wait = lim.backoff_ms[min(k, len(lim.backoff_ms) - 1)] if lim.backoff_ms else 0
    return (t.phase is Phase.BACKOFF) & (t.due == at + max(wait, 0))


def mcp_reconnects_capped_node(m: Model, cfg: MCfg, s: Server) -> bool:
    """At most `reconnects` restarts within the window, ever."""
    return _in_window(s.restarts, s.now, s.limits) <= s.limits.reconnects


def mcp_close_bounded(m: Model, cfg: MCfg, s: Server, x: Ev) -> bool:
    """A close leaves no call in flight: a server with a process (starting, ready) closes
    its stdin and is CLOSING from now; one with none (backing off, failed, not started)
    is CLOSED at once with its process stopped. Closing, a tick at `since + term_ms`
    has sent SIGTERM, at `since + kill_ms` SIGKILL."""
    st = stepped(m, s, x)
    t = st.server
    at = _at(s, x)
    lim = s.limits
    if x.kind is Kind.CLOSE:
        f = _ticked(m, s, x)
        ok = not t.calls
        if f.phase in (Phase.STARTING, Phase.READY):
            ok &= (t.phase is Phase.CLOSING) & (t.since == at) & (Act(Do.CLOSE_STDIN) in st.acts)
        elif f.phase is not Phase.CLOSING:
            ok &= (t.phase is Phase.CLOSED) & (Act(Do.STOP) in st.acts)
        return ok
    if s.phase is Phase.CLOSING and x.kind is Kind.TICK:
        if at >= s.since + lim.kill_ms:
            return (t.signalled == 2) & ((s.signalled == 2) | (Act(Do.KILL) in st.acts))
        if at >= s.since + lim.term_ms:
            return (t.signalled >= 1) & ((s.signalled >= 1) | (Act(Do.TERM) in st.acts))
    return True


def mcp_close_bounded_node(m: Model, cfg: MCfg, s: Server) -> bool:
    """Closing, no call is in flight and the runtime wakes by the SIGKILL."""
    if s.phase is not Phase.CLOSING:
        return True
    due = m.next_due(s)
    return (not s.calls) & (s.signalled == 2 or (due is not None and due <= s.since + s.limits.kill_ms))


def mcp_close_bounded_default(m: Model, cfg: MCfg) -> str | None:
    """Under the default limits, a ready server closed at 0, woken at each `next_due`, has
    its group killed by `CLOSE_MS`."""
    d = Limits()
    if not 0 <= d.term_ms <= d.kill_ms <= mcp.CLOSE_MS:
        return f"default term_ms {d.term_ms}, kill_ms {d.kill_ms} not within CLOSE_MS {mcp.CLOSE_MS}"
    s = m.start(d, False)
    for x in (Ev(Kind.START, 0), Ev(Kind.READY, 0), Ev(Kind.CALL, 0), Ev(Kind.CLOSE, 0)):
        s = m.step(s, x).server
    for _ in range(4):
        due = m.next_due(s)
        if s.signalled == 2 or due is None:
            break
        st = m.step(s, Ev(Kind.TICK, due))
        s = st.server
        if Act(Do.KILL) in st.acts and due > mcp.CLOSE_MS:
            return f"SIGKILL at {due} ms, past CLOSE_MS {mcp.CLOSE_MS}"
    if s.signalled != 2 or s.calls:
        return f"a closed ready server under the default limits is never killed: {s!r}"
    return None


LAWS = (
    Law(
        "mcp_call_ends",
        "MCP",
        "Every call to an MCP server ends exactly once (result, error, its deadline, abort with a cancel, "
        "death, failure, close), never past its deadline; the runtime wakes by every deadline (issue 27).",
        edge=mcp_call_ends,
        node=mcp_call_ends_node,
        history=mcp_call_ends_history,
        prove=False,
    ),
    Law(
        "mcp_gate_bounded",
        "MCP",
        "A turn waits for a starting server only within the startup gate (cached or ready: at once); a call "
        "waiting for a start and the start itself within their own deadlines (issue 27).",
        edge=mcp_gate_bounded,
        node=mcp_gate_bounded_node,
        prove=False,
    ),
    Law(
        "mcp_reconnects_capped",
        "MCP",
        "At most `reconnects` restarts within the window, with growing backoff; one more death opens the "
        "breaker (FAILED, with the cause), which stays open until RECONNECT (issue 27).",
        edge=mcp_reconnects_capped,
        node=mcp_reconnects_capped_node,
        prove=False,
    ),
    Law(
        "mcp_close_bounded",
        "MCP",
        "A close ends every call at once and the server's process within the bound: stdin, SIGTERM, SIGKILL "
        "of its group by CLOSE_MS (issue 27).",
        edge=mcp_close_bounded,
        node=mcp_close_bounded_node,
        extra=mcp_close_bounded_default,
        prove=False,
    ),
)


# ---------------------------------------------------------------- breaks


_real_step = mcp.step
"""The model's step as imported: a break wraps this one."""


def _with_limits(s: Server, x: Ev, **kw: object) -> Step:
    """The real step under other limits, the server's own put back."""
    st = _real_step(replace(s, limits=replace(s.limits, **kw)), x)  # type: ignore[arg-type]
    return replace(st, server=replace(st.server, limits=s.limits))


def _death_keeps_sent(s: Server, x: Ev) -> Step:
    """A death of a ready server that keeps its sent calls in flight, waiting for the restart."""
    st = _real_step(s, x)
    f = _real_step(s, Ev(Kind.TICK, x.at)).server
    if x.kind is not Kind.DIED or f.phase is not Phase.READY:
        return st
    sent = tuple(replace(c, sent=False) for c in f.calls if c.sent)
    calls = tuple(sorted((*st.server.calls, *sent), key=lambda c: c.id))
    ended = tuple(e for e in st.ended if e[1] is not End.DIED)
    return Step(replace(st.server, calls=calls), ended, st.acts)


def _abort_sends_no_cancel(s: Server, x: Ev) -> Step:
    """An abort that ends the call but sends no notifications/cancelled."""
    st = _real_step(s, x)
    if x.kind is not Kind.ABORT:
        return st
    return replace(st, acts=tuple(a for a in st.acts if not (a.do is Do.CANCEL and a.call == x.call)))


def _result_after_timeout(s: Server, x: Ev) -> Step:
    """A result that comes after its call ended (by its deadline, say) ends it again."""
    st = _real_step(s, x)
    f = _real_step(s, Ev(Kind.TICK, x.at)).server
    if x.kind is not Kind.RESULT or not 0 <= x.call < s.next_call or any(c.id == x.call for c in f.calls):
        return st
    return replace(st, ended=(*st.ended, (x.call, End.RESULT)))


def _start_without_deadline(s: Server, x: Ev) -> Step:
    """A start with no deadline: it may take for ever."""
    st = _real_step(s, x)
    if st.server.phase is not Phase.STARTING or s.phase is Phase.STARTING:
        return st
    return replace(st, server=replace(st.server, due=st.server.due + 10**9))


def _no_breaker(s: Server, x: Ev) -> Step:
    """A server restarted after every death, however many restarts the window holds."""
    return _with_limits(s, x, reconnects=10**9)


def _flat_backoff(s: Server, x: Ev) -> Step:
    """A backoff that does not grow: every restart waits the first delay."""
    return _with_limits(s, x, backoff_ms=s.limits.backoff_ms[:1])


def _failed_restarts_itself(s: Server, x: Ev) -> Step:
    """A failed server started again by the clock, without a RECONNECT."""
    if s.phase is Phase.FAILED and x.kind is Kind.TICK:
        return _real_step(s, Ev(Kind.RECONNECT, x.at))
    return _real_step(s, x)


def _close_leaves_waiting(s: Server, x: Ev) -> Step:
    """A close that ends the sent calls but leaves the waiting ones in flight."""
    st = _real_step(s, x)
    if x.kind is not Kind.CLOSE:
        return st
    waiting = tuple(c for c in _real_step(s, Ev(Kind.TICK, x.at)).server.calls if not c.sent)
    left = {c.id for c in waiting}
    ended = tuple(e for e in st.ended if e[0] not in left)
    return Step(replace(st.server, calls=waiting), ended, st.acts)


def _never_kills(s: Server, x: Ev) -> Step:
    """A close that sends SIGTERM and never SIGKILL."""
    st = _real_step(s, x)
    if Act(Do.KILL) not in st.acts:
        return st
    acts = tuple(a for a in st.acts if a.do is not Do.KILL)
    return Step(replace(st.server, signalled=s.signalled), st.ended, acts)


def _close_of_backoff_lingers(s: Server, x: Ev) -> Step:
    """A close of a server backing off that waits for a process that is not there."""
    st = _real_step(s, x)
    f = _real_step(s, Ev(Kind.TICK, x.at)).server
    if x.kind is not Kind.CLOSE or f.phase is not Phase.BACKOFF:
        return st
    at = max(x.at, s.now)
    return Step(
        replace(st.server, phase=Phase.CLOSING, since=at, signalled=0), st.ended, (Act(Do.CLOSE_STDIN),)
    )


def _late_by_one(s: Server, x: Ev) -> Step:
    """A call timed out only after its deadline has passed, not at it."""
    at = max(x.at, s.now)
    due = {c.id for c in s.calls if c.due == at}
    later = replace(s, calls=tuple(replace(c, due=c.due + 1) if c.id in due else c for c in s.calls))
    st = _real_step(later, x)
    calls = tuple(replace(c, due=c.due - 1) if c.id in due else c for c in st.server.calls)
    return replace(st, server=replace(st.server, calls=calls))


def _next_due_forgets_calls(s: Server) -> int | None:
    """A wake-up time that counts the server's own deadlines but not its calls'."""
    return mcp.next_due(replace(s, calls=()))


def _gate_past_bound(s: Server, waited: int, gate: int) -> Offer:
    """A gate that still waits when the wait has reached it."""
    o = mcp.offer(s, waited, gate)
    return Offer.WAIT if o is Offer.LATER and waited <= gate else o


def _cached_waits(s: Server, waited: int, gate: int) -> Offer:
    """A server with a cached tool list made to wait at the gate like one without."""
    return mcp.offer(replace(s, cached=False), waited, gate)


def _steps(step: Callable[[Server, Ev], Step]) -> Model:
    return replace(MODEL, step=step)


MUTANTS = (
    Mutant("a death that keeps sent calls in flight", "MCP", _steps(_death_keeps_sent)),
    Mutant("an abort that sends no cancel", "MCP", _steps(_abort_sends_no_cancel)),
    Mutant("a call ended twice (a result after its timeout)", "MCP", _steps(_result_after_timeout)),
    Mutant("a call timed out a step after its deadline", "MCP", _steps(_late_by_one)),
    Mutant(
        "a wake-up that forgets the calls' deadlines", "MCP", replace(MODEL, next_due=_next_due_forgets_calls)
    ),
    Mutant("a start with no deadline", "MCP", _steps(_start_without_deadline)),
    Mutant("a gate that waits past its bound", "MCP", replace(MODEL, offer=_gate_past_bound)),
    Mutant("a cached server made to wait", "MCP", replace(MODEL, offer=_cached_waits)),
    Mutant("no breaker: restarts unbounded", "MCP", _steps(_no_breaker)),
    Mutant("a backoff that does not grow", "MCP", _steps(_flat_backoff)),
    Mutant("a failed server restarted by the clock", "MCP", _steps(_failed_restarts_itself)),
    Mutant("a close that leaves calls in flight", "MCP", _steps(_close_leaves_waiting)),
    Mutant("a close that never kills", "MCP", _steps(_never_kills)),
    Mutant(
        "a close of a server backing off that waits for no process", "MCP", _steps(_close_of_backoff_lingers)
    ),
)


# ---------------------------------------------------------------- the area


DEPTH = 24
"""Levels the exhaustive walk may take; it runs out of new servers well before."""

SMALL = Limits(startup_ms=2, tool_ms=3, backoff_ms=(1, 2), reconnects=2, window_ms=6, term_ms=1, kill_ms=2)
"""The exhaustive walk's limits; `cfgs` varies `reconnects` and `tool_ms`."""


def proof_cases() -> list[tuple[dict[str, Enum], dict[str, Enum]]]:
    return []


def cfgs() -> Iterator[MCfg]:
    """Two restarts in the window with one call (the backoff grows, then the breaker);
    one restart with two calls (waiting and sent calls across a death); no restart
    with a cached tool list and calls due before the start is; calls due at once."""
    yield MCfg(SMALL, gate_ms=2, cached=False, calls=1, canonical=True)
    yield MCfg(replace(SMALL, reconnects=1), gate_ms=2, cached=False, calls=2, canonical=True)
    yield MCfg(replace(SMALL, reconnects=0, tool_ms=1), gate_ms=2, cached=True, calls=2, canonical=True)
    yield MCfg(replace(SMALL, reconnects=1, tool_ms=0), gate_ms=0, cached=False, calls=1, canonical=True)


def sample_cfg(seed: int) -> MCfg:
    """Startup 0..20 ms, tool 0..40 ms, backoff of 1..4 steps, reconnects 0..5 in a window of
    5..60 ms, SIGTERM 0..5 and SIGKILL 0..10 ms after stdin, a gate of 0..5 ms, up to 6 calls."""
    r = random.Random(seed)
    term = r.randint(0, 5)
    lim = Limits(
        startup_ms=r.randint(0, 20),
        tool_ms=r.randint(0, 40),
        backoff_ms=tuple(sorted(r.randint(0, 8) for _ in range(r.randint(1, 4)))),
        reconnects=r.randint(0, 5),
        window_ms=r.randint(5, 60),
        term_ms=term,
        kill_ms=term + r.randint(0, 5),
    )
    return MCfg(lim, gate_ms=r.randint(0, 5), cached=r.random() < 0.3, calls=6, canonical=False)


AREA = Area(
    name="mcp",
    model=MODEL,
    cfg_type=MCfg,
    state_type=Server,
    input_type=Ev,
    proof_cases=proof_cases,
    valid=valid,
    cfg_valid=cfg_valid,
    start=start,
    next=walk_next,
    inputs=inputs,
    cfgs=cfgs,
    bounds=(
        "every server reached from one not started, times from now: startup 2 ms, backoff 1, 2 ms, "
        "window 6 ms, SIGTERM 1 ms, SIGKILL 2 ms; reconnects 2 with 1 call of 3 ms, 1 with 2 calls of "
        "3 ms, 0 with 2 calls of 1 ms and a cached tool list, 1 with 1 call of 0 ms; gate 2 ms (0 with "
        "the last)"
    ),
    depth=DEPTH,
    sample_cfg=sample_cfg,
    laws=LAWS,
    mutants=MUTANTS,
    ghost_start=ghost_start,
    ghost_next=ghost_next,
)
