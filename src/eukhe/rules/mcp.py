"""MCP servers (issue 27): a server's life, and the end of every call to it.

A server starts (its process spawned or its URL opened), is ready once it has
answered `initialize` and `tools/list`, may die (its process exits, its stream
breaks), and is closed with the run. Every call to it ends exactly once. Time
comes in as inputs (`at`, milliseconds on the run's clock): the runtime keeps
each server's live state as this model's `Server`, asks `step` at every event,
does what the step's `Act`s say, and wakes at `next_due` to tell the model the
time (a `TICK`), so no deadline depends on a library's own timeout.

Phases:
- STARTING: a start under way, bounded by `startup_ms` (its deadline `due`);
- READY: calls are sent to it;
- BACKOFF: a server that was ready died; it starts again at `due`, 0.5, 1, 2,
  then 4 s after the death. More than `reconnects` restarts within
  `window_ms` open the breaker: the server is FAILED;
- FAILED: with its cause, until the user asks again (RECONNECT). A server
  that was never ready and fails to start is FAILED at once: its settings
  are wrong more often than its luck;
- CLOSING: its process is being stopped: stdin closed at `since`, SIGTERM at
  `since + term_ms`, SIGKILL of its process group at `since + kill_ms`;
- CLOSED: nothing left running.

A call ends by its result, an error, its deadline (`tool_ms` after it began,
also while it waits for a starting server), the run's abort (with
`notifications/cancelled` sent when the request was), the server's death
(a call already sent ends at once; one still waiting keeps waiting for the
restart within its deadline), the server's failure, or the close.

Pure: standard library only, frozen data, total functions: an input that does
not apply (a result for a call not in flight, a time before `now`) changes
nothing, or is taken at `now`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from eukhe.rules.states import Choice, replace

STARTUP_MS = 10_000
"""`mcp.startupTimeoutMs`: how long a start may take before it has failed."""
TOOL_MS = 300_000
"""`mcp.toolTimeoutMs`: how long a call may take, waiting for its server included."""
GATE_MS = 500
"""`mcp.startupGateMs`: how long a turn's first request waits for servers still starting."""
BACKOFF_MS = (500, 1_000, 2_000, 4_000)
"""The wait before each restart after a death, by how many restarts the window holds."""
RECONNECTS = 5
"""The breaker opens at a death after this many restarts within `WINDOW_MS`."""
WINDOW_MS = 30_000
TERM_MS = 1_000
"""Closing: SIGTERM this long after stdin was closed."""
KILL_MS = 3_000
"""Closing: SIGKILL of the process group this long after stdin was closed."""
CLOSE_MS = 5_000
"""Closing ends every server process within this bound (`mcp_close_bounded`)."""


class Phase(Choice):
    STARTING = "starting"
    READY = "ready"
    BACKOFF = "backoff"
    FAILED = "failed"
    CLOSING = "closing"
    CLOSED = "closed"


class Kind(Choice):
    """One input."""

    START = "start"  # the first start (from CLOSED, before any)
    READY = "ready"  # initialize and tools/list answered
    DIED = "died"  # the process exited or the stream broke; `cause` says how
    TICK = "tick"  # the clock reached `at`
    CALL = "call"  # a new call; its id is the server's `next_call`
    RESULT = "result"  # the call's result came
    ERROR = "error"  # the call's error came (a JSON-RPC error, a bad result)
    ABORT = "abort"  # the run aborted the call
    CLOSE = "close"  # the run ends: close the server
    RECONNECT = "reconnect"  # the user asks again (`/mcp reconnect NAME`)


@dataclass(frozen=True)
class Ev:
    kind: Kind
    at: int = 0
    call: int = -1  # RESULT, ERROR, ABORT: which call
    cause: str = ""  # DIED: the exit status and the tail of stderr, or the broken stream


class End(Choice):
    """How a call ended."""

    RESULT = "result"
    ERROR = "error"
    TIMEOUT = "timeout"
    ABORTED = "aborted"
    DIED = "died"  # the server died with the call sent
    FAILED = "failed"  # the server is failed: the call never ran (or its start never came)
    CLOSED = "closed"


class Do(Choice):
    """What the runtime does after a step."""

    SPAWN = "spawn"  # start the server: its process, its session, initialize, tools/list
    SEND = "send"  # send the call's request
    CANCEL = "cancel"  # send notifications/cancelled for the call
    STOP = "stop"  # end the server's process now (its group, SIGKILL), if it still runs
    CLOSE_STDIN = "close_stdin"  # the first step of a close
    TERM = "term"  # SIGTERM its process group
    KILL = "kill"  # SIGKILL its process group


@dataclass(frozen=True)
class Act:
    do: Do
    call: int = -1


@dataclass(frozen=True)
class Limits:
    startup_ms: int = STARTUP_MS
    tool_ms: int = TOOL_MS
    backoff_ms: tuple[int, ...] = BACKOFF_MS
    reconnects: int = RECONNECTS
    window_ms: int = WINDOW_MS
    term_ms: int = TERM_MS
    kill_ms: int = KILL_MS


@dataclass(frozen=True)
class Call:
    """A call in flight: `due`, its deadline; `sent`, its request went to a ready server
    (False: it waits for the server to be ready)."""

    id: int
    due: int
    sent: bool


@dataclass(frozen=True)
class Server:
    """One server's state. `due`: STARTING's deadline, BACKOFF's restart time; `since`:
    when CLOSING began; `signalled`: 0 none, 1 SIGTERM sent, 2 SIGKILL sent; `restarts`:
    the times of the restarts within the window; `was_ready`: ready once since the
    last START or RECONNECT; `cached`: its tool list is known (from the home's cache, or
    its start)."""

    limits: Limits = Limits()
    phase: Phase = Phase.CLOSED
    now: int = 0
    due: int = 0
    since: int = 0
    signalled: int = 0
    calls: tuple[Call, ...] = ()
    next_call: int = 0
    restarts: tuple[int, ...] = ()
    was_ready: bool = False
    cached: bool = False
    cause: str = ""
    begun: bool = False  # a START came: a CLOSED server that was never started is not closed


@dataclass(frozen=True)
class Step:
    """The server after one input: the calls it ended (each once, in order) and what the
    runtime does now."""

    server: Server
    ended: tuple[tuple[int, End], ...] = ()
    acts: tuple[Act, ...] = ()


class Offer(Choice):
    """What a turn offers of a server's tools (`offer`)."""

    LIVE = "live"  # ready: its tools as it listed them
    CACHED = "cached"  # starting, with a tool list cached from its last start: offered at once
    WAIT = "wait"  # starting, no cache, within the gate: the turn's first request waits
    LATER = "later"  # starting, no cache, past the gate: it joins at a later turn
    NONE = "none"  # failed or closed: not offered


def start(limits: Limits = Limits(), cached: bool = False) -> Server:
    """A server not yet started; `cached`: its tool list is in the home's cache."""
    return Server(limits=limits, cached=cached)


def _end(calls: tuple[Call, ...], how: End) -> tuple[tuple[int, End], ...]:
    return tuple((c.id, how) for c in calls)


def _cancels(calls: tuple[Call, ...]) -> tuple[Act, ...]:
    return tuple(Act(Do.CANCEL, c.id) for c in calls if c.sent)


def _spawn(s: Server, at: int) -> Server:
    return replace(s, phase=Phase.STARTING, due=at + max(s.limits.startup_ms, 0), cause="")


def _failed(s: Server, cause: str) -> Step:
    """The server FAILED: its calls end, its process (if any) is stopped."""
    t = replace(s, phase=Phase.FAILED, calls=(), cause=cause)
    return Step(t, _end(s.calls, End.FAILED), (Act(Do.STOP),))


def _lost(s: Server, at: int, cause: str) -> Step:
    """A start that failed or a ready server that died: sent calls end DIED; a server that
    was ready backs off and restarts (waiting calls keep waiting), unless the breaker
    opens; one never ready fails."""
    sent = tuple(c for c in s.calls if c.sent)
    waiting = tuple(c for c in s.calls if not c.sent)
    died = _end(sent, End.DIED)
    if not s.was_ready:
        out = _failed(replace(s, calls=waiting), cause)
        return Step(out.server, died + out.ended, out.acts)
    lim = s.limits
    window = tuple(r for r in s.restarts if r > at - lim.window_ms)
    if len(window) >= lim.reconnects:
        why = f"{len(window)} restarts within {lim.window_ms / 1000:g} s; the last: {cause}"
        out = _failed(replace(s, calls=waiting), why)
        return Step(out.server, died + out.ended, out.acts)
    wait = lim.backoff_ms[min(len(window), len(lim.backoff_ms) - 1)] if lim.backoff_ms else 0
    t = replace(s, phase=Phase.BACKOFF, due=at + max(wait, 0), calls=waiting, restarts=window, cause=cause)
    return Step(t, died, (Act(Do.STOP),))


def _tick(s: Server, at: int) -> Step:
    late = tuple(c for c in s.calls if c.due <= at)
    s = replace(s, calls=tuple(c for c in s.calls if c.due > at))
    ended, acts = _end(late, End.TIMEOUT), _cancels(late)
    if s.phase is Phase.STARTING and s.due <= at:
        out = _lost(s, at, f"the start took longer than {s.limits.startup_ms} ms")
        return Step(out.server, ended + out.ended, acts + out.acts)
    if s.phase is Phase.BACKOFF and s.due <= at:
        t = replace(_spawn(s, at), restarts=(*s.restarts, at))
        return Step(t, ended, (*acts, Act(Do.SPAWN)))
    if s.phase is Phase.CLOSING:
        lim = s.limits
        if s.signalled < 2 and at >= s.since + lim.kill_ms:
            return Step(replace(s, signalled=2), ended, (*acts, Act(Do.KILL)))
        if s.signalled < 1 and at >= s.since + lim.term_ms:
            return Step(replace(s, signalled=1), ended, (*acts, Act(Do.TERM)))
    return Step(s, ended, acts)


def _call(s: Server, at: int) -> Step:
    c = Call(s.next_call, at + max(s.limits.tool_ms, 0), s.phase is Phase.READY)
    s = replace(s, next_call=s.next_call + 1)
    early = s.phase is Phase.CLOSED and not s.begun  # a call before the start waits for it
    if (s.phase in (Phase.READY, Phase.STARTING, Phase.BACKOFF) or early) and c.due > at:
        acts = (Act(Do.SEND, c.id),) if c.sent else ()
        return Step(replace(s, calls=(*s.calls, c)), (), acts)
    if s.phase in (Phase.READY, Phase.STARTING, Phase.BACKOFF) or early:  # a deadline of 0: late at once
        return Step(s, ((c.id, End.TIMEOUT),))
    return Step(s, ((c.id, End.CLOSED if s.phase in (Phase.CLOSING, Phase.CLOSED) else End.FAILED),))


def _finish(s: Server, x: Ev, how: End) -> Step:
    hit = tuple(c for c in s.calls if c.id == x.call)
    if not hit:
        return Step(s)
    if how is not End.ABORTED and not hit[0].sent:  # no answer comes to a request never sent
        return Step(s)
    kept = tuple(c for c in s.calls if c.id != x.call)
    acts = _cancels(hit) if how is End.ABORTED else ()
    return Step(replace(s, calls=kept), ((x.call, how),), acts)


def _close(s: Server, at: int) -> Step:
    ended = _end(s.calls, End.CLOSED)
    acts = _cancels(s.calls)
    if s.phase in (Phase.STARTING, Phase.READY):  # a process may run: stop it within the bound
        t = replace(s, phase=Phase.CLOSING, since=at, signalled=0, calls=())
        return Step(t, ended, (*acts, Act(Do.CLOSE_STDIN)))
    if s.phase is Phase.CLOSING:
        return Step(s)
    return Step(replace(s, phase=Phase.CLOSED, calls=(), begun=True), ended, (*acts, Act(Do.STOP)))


def step(s: Server, x: Ev) -> Step:
    """The server after `x`. Every input first tells the time: the deadlines up to `at`
    fire before the input itself is taken (a result that comes after its call's deadline
    finds the call ended)."""
    at = max(x.at, s.now)
    first = _tick(replace(s, now=at), at)
    if x.kind is Kind.TICK:
        return first
    then = _event(first.server, x, at)
    return Step(then.server, first.ended + then.ended, first.acts + then.acts)


def _event(s: Server, x: Ev, at: int) -> Step:
    k = x.kind
    if k is Kind.CALL:
        return _call(s, at)
    if k in (Kind.RESULT, Kind.ERROR, Kind.ABORT):
        how = {Kind.RESULT: End.RESULT, Kind.ERROR: End.ERROR, Kind.ABORT: End.ABORTED}[k]
        return _finish(s, x, how)
    if k is Kind.CLOSE:
        return _close(s, at)
    if k is Kind.START and s.phase is Phase.CLOSED and not s.begun:
        return Step(replace(_spawn(s, at), begun=True, was_ready=False), (), (Act(Do.SPAWN),))
    if k is Kind.RECONNECT and s.phase is Phase.FAILED:
        return Step(replace(_spawn(s, at), restarts=(), was_ready=False), (), (Act(Do.SPAWN),))
    if k is Kind.READY and s.phase is Phase.STARTING:
        sent = tuple(replace(c, sent=True) for c in s.calls)
        t = replace(s, phase=Phase.READY, calls=sent, was_ready=True, cached=True, cause="")
        return Step(t, (), tuple(Act(Do.SEND, c.id) for c in sent))
    if k is Kind.DIED and s.phase in (Phase.STARTING, Phase.READY):
        return _lost(s, at, x.cause or "the server ended")
    if k is Kind.DIED and s.phase is Phase.CLOSING:
        return Step(replace(s, phase=Phase.CLOSED))
    return Step(s)


def next_due(s: Server) -> int | None:
    """The earliest time a TICK changes something (a call's deadline, the start's, the
    restart, a signal of the close); None: nothing waits on the clock."""
    times = [c.due for c in s.calls]
    if s.phase in (Phase.STARTING, Phase.BACKOFF):
        times.append(s.due)
    if s.phase is Phase.CLOSING and s.signalled < 2:
        times.append(s.since + (s.limits.term_ms if s.signalled == 0 else s.limits.kill_ms))
    return min(times) if times else None


def offer(s: Server, waited_ms: int, gate_ms: int) -> Offer:
    """What a turn's first request offers of this server after waiting `waited_ms` for
    it: never WAIT past the gate (`mcp_gate_bounded`)."""
    if s.phase is Phase.READY:
        return Offer.LIVE
    if s.phase in (Phase.STARTING, Phase.BACKOFF) or (s.phase is Phase.CLOSED and not s.begun):
        if s.cached:
            return Offer.CACHED
        return Offer.WAIT if waited_ms < gate_ms else Offer.LATER
    return Offer.NONE


def valid(s: Server) -> bool:
    """Calls in id order below `next_call`, each due after `now` (every input ends the
    late ones first); a call is sent only to a ready server; none in flight where none
    can run."""
    ids = [c.id for c in s.calls]
    timely = all(c.due > s.now for c in s.calls)
    ordered = all(a < b for a, b in itertools.pairwise(ids)) & all(0 <= i < s.next_call for i in ids)
    sent_ok = all((not c.sent) | (s.phase is Phase.READY) for c in s.calls)
    idle = s.phase not in (Phase.FAILED, Phase.CLOSING) or not s.calls
    closed_ok = not (s.phase is Phase.CLOSED and s.begun and s.calls)
    return ordered & timely & sent_ok & idle & closed_ok & (0 <= s.signalled <= 2)
