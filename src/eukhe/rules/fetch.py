"""A web fetch (issue 44): every fetch ends, by its own end, one of its bounds or the run's
abort, within its total bound; fetches side by side share nothing, so one never holds
another; and an end by a bound comes back as a result that names the bound and its value.

Phases (`Phase`):
- CONNECT: the name resolved, each address checked (`rules.address`), the connection
  opened to a checked one, TLS included; bounded by `connect_ms` from the phase's start;
- WAIT: the request sent, the head of its answer awaited; bounded by `first_byte_ms`
  from the connection;
- READ: the body read, `max_bytes` at most over the whole fetch (`room` says how many
  more the runtime may take);
- ENDED, with its end (`End`).
`total_ms` bounds the whole fetch, every hop of it, from its start, and the conversion of
the body it read (`convert_due`): a page built to take hours to convert ends by it too.

Redirects: one to the same host is followed (a new hop: CONNECT again) while fewer than
`max_redirects` were; the next ends the fetch (`REDIRECTS`). One to another host ends it
(`MOVED`): the result names the new URL, and the model's next call, to that URL, is judged
by the permission rule as a call of its own.

Time comes in as inputs (`at`: milliseconds since the fetch began, on the runtime's clock).
The runtime waits for its next event until `due` at most, then tells the model the time
(`TICK`); any input at or past `due` ends the fetch by the bound whose deadline that is,
whatever the input was. An input from before `now` is taken at `now`; one that does not
apply to the phase changes nothing but the time.

`side`: fetches side by side, an input to one at a time, which steps that one alone.
`said`: how a fetch ended, in the words of its result.

Pure: standard library only, frozen data, total functions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from eukhe.rules.states import Choice, replace

CONNECT_MS = 10_000
"""`webFetch.connectTimeoutMs`: the name resolved and the connection open (TLS too) within this."""
FIRST_BYTE_MS = 30_000
"""`webFetch.firstByteTimeoutMs`: the head of the answer within this after the connection."""
TOTAL_MS = 60_000
"""`webFetch.totalTimeoutMs`: the whole fetch, redirects included, within this."""
MAX_BYTES = 10 * 1024 * 1024
"""`webFetch.maxBytes`: the bytes of a body read at most (before any conversion)."""
MAX_REDIRECTS = 5
"""`webFetch.maxRedirects`: redirects to the same host followed at most."""

KEYS = {
    "connect": "webFetch.connectTimeoutMs",
    "first_byte": "webFetch.firstByteTimeoutMs",
    "total": "webFetch.totalTimeoutMs",
    "bytes": "webFetch.maxBytes",
    "redirects": "webFetch.maxRedirects",
}
"""Each bound's settings key, as a result names it."""


class Phase(Choice):
    CONNECT = "connect"
    WAIT = "wait"
    READ = "read"
    ENDED = "ended"


class End(Choice):
    LIVE = "live"
    DONE = "done"  # the body read to its end
    CONNECT = "connect"  # connectTimeoutMs
    FIRST_BYTE = "first_byte"  # firstByteTimeoutMs
    TOTAL = "total"  # totalTimeoutMs
    MAX_BYTES = "max_bytes"  # maxBytes read: the rest is not
    REDIRECTS = "redirects"  # one redirect more than maxRedirects
    MOVED = "moved"  # a redirect to another host: not followed
    FAILED = "failed"  # the network's error, or an address refused
    ABORTED = "aborted"  # the run's abort


TIMEOUTS = frozenset({End.CONNECT, End.FIRST_BYTE, End.TOTAL})
"""The ends by a time bound."""
ERRORS = frozenset({*TIMEOUTS, End.REDIRECTS, End.FAILED, End.ABORTED})
"""The ends whose result is an error (a cut body and a move are news, not failures)."""


class Kind(Choice):
    """One input."""

    CONNECTED = "connected"  # the connection is open (TLS done)
    ANSWERED = "answered"  # the head of an answer that is not a redirect
    REDIRECT = "redirect"  # a redirect to the same host
    MOVED = "moved"  # a redirect to another host
    BYTES = "bytes"  # `n` bytes of the body read
    EOF = "eof"  # the body's end
    FAILED = "failed"  # the network's error, an address refused, a malformed answer
    TICK = "tick"  # the clock reads `at`
    ABORT = "abort"  # the run's abort


@dataclass(frozen=True)
class Cfg:
    """A fetch's bounds, in milliseconds and bytes (the settings `KEYS` name)."""

    connect_ms: int = CONNECT_MS
    first_byte_ms: int = FIRST_BYTE_MS
    total_ms: int = TOTAL_MS
    max_bytes: int = MAX_BYTES
    max_redirects: int = MAX_REDIRECTS


@dataclass(frozen=True)
class In:
    kind: Kind
    at: int = 0  # milliseconds since the fetch began
    n: int = 0  # BYTES: how many


@dataclass(frozen=True)
class Fetch:
    """One fetch: its phase, the time of its last input (`now`), when its phase began
    (`since`), the body's bytes read, the redirects followed, and its end."""

    phase: Phase
    now: int
    since: int
    read: int
    hops: int
    end: End


def cfg_valid(cfg: Cfg) -> bool:
    """Every time bound and the bytes bound at least 1; the redirects at least 0."""
    return (
        (cfg.connect_ms >= 1)
        & (cfg.first_byte_ms >= 1)
        & (cfg.total_ms >= 1)
        & (cfg.max_bytes >= 1)
        & (cfg.max_redirects >= 0)
    )


def start() -> Fetch:
    """A fetch as it begins: connecting, at 0."""
    return Fetch(Phase.CONNECT, 0, 0, 0, 0, End.LIVE)


def bound(cfg: Cfg, f: Fetch) -> tuple[int, End]:
    """The deadline a live fetch waits under, and the end it brings: its phase's bound when
    that comes first (or with the total), else the total."""
    if f.phase is Phase.CONNECT:
        mine = (f.since + cfg.connect_ms, End.CONNECT)
    elif f.phase is Phase.WAIT:
        mine = (f.since + cfg.first_byte_ms, End.FIRST_BYTE)
    else:
        return cfg.total_ms, End.TOTAL
    return mine if mine[0] <= cfg.total_ms else (cfg.total_ms, End.TOTAL)


def due(cfg: Cfg, f: Fetch) -> int:
    """When the runtime tells the model the time at the latest (ms since the fetch began);
    an ended fetch waits for nothing: its `now`."""
    return bound(cfg, f)[0] if f.end is End.LIVE else f.now


def convert_due(cfg: Cfg) -> int:
    """When the body a fetch read must be converted by (ms since the fetch began): the total
    bound, which bounds the whole fetch, its conversion included."""
    return cfg.total_ms


def unconverted(cfg: Cfg, read: int) -> str:
    """What the result says of a body read whole (or to maxBytes) whose conversion did not
    end by `convert_due`."""
    return (
        f"{read:,} bytes read, but not converted within {KEYS['total']} = {cfg.total_ms} ms "
        "(the whole fetch, its conversion included)"
    )


def room(cfg: Cfg, f: Fetch) -> int:
    """How many more bytes of the body the runtime may take (0 once ended)."""
    return max(cfg.max_bytes - f.read, 0) if f.end is End.LIVE else 0


def _ended(f: Fetch, at: int, end: End) -> Fetch:
    return Fetch(Phase.ENDED, at, f.since, f.read, f.hops, end)


def step(cfg: Cfg, f: Fetch, x: In) -> Fetch:
    """The fetch after one input."""
    if f.end is not End.LIVE:
        return f
    at = max(f.now, x.at)
    deadline, by = bound(cfg, f)
    if at >= deadline:  # the bound came first, whatever the input is
        return _ended(f, at, by)
    f = replace(f, now=at)
    k = x.kind
    if k is Kind.ABORT:
        return _ended(f, at, End.ABORTED)
    if k is Kind.FAILED:
        return _ended(f, at, End.FAILED)
    if f.phase is Phase.CONNECT and k is Kind.CONNECTED:
        return Fetch(Phase.WAIT, at, at, f.read, f.hops, End.LIVE)
    if f.phase is Phase.WAIT:
        if k is Kind.ANSWERED:
            return Fetch(Phase.READ, at, at, f.read, f.hops, End.LIVE)
        if k is Kind.MOVED:
            return _ended(f, at, End.MOVED)
        if k is Kind.REDIRECT:
            if f.hops < cfg.max_redirects:
                return Fetch(Phase.CONNECT, at, at, f.read, f.hops + 1, End.LIVE)
            return _ended(f, at, End.REDIRECTS)
    if f.phase is Phase.READ:
        if k is Kind.EOF:
            return _ended(f, at, End.DONE)
        if k is Kind.BYTES:
            read = min(f.read + max(x.n, 0), cfg.max_bytes)
            got = replace(f, read=read)
            return _ended(got, at, End.MAX_BYTES) if read >= cfg.max_bytes else got
    return f


Step = Callable[[Cfg, Fetch, In], Fetch]


def side(cfg: Cfg, fetches: tuple[Fetch, ...], i: int, x: In, stepped: Step = step) -> tuple[Fetch, ...]:
    """Fetches side by side after an input to the `i`-th: it alone steps (`stepped`); an
    `i` out of range changes nothing."""
    if not 0 <= i < len(fetches):
        return fetches
    return (*fetches[:i], stepped(cfg, fetches[i], x), *fetches[i + 1 :])


def said(cfg: Cfg, f: Fetch) -> str:
    """How the fetch ended, as its result says it ("" for a body read whole, a move or a
    failure: the runtime names the URL or the error): the bound by its key and value."""
    e = f.end
    if e is End.CONNECT:
        return f"no connection within {KEYS['connect']} = {cfg.connect_ms} ms"
    if e is End.FIRST_BYTE:
        return f"connected, but no answer within {KEYS['first_byte']} = {cfg.first_byte_ms} ms"
    if e is End.TOTAL:
        return f"not done within {KEYS['total']} = {cfg.total_ms} ms ({f.read} bytes of the body read)"
    if e is End.MAX_BYTES:
        return f"cut at {KEYS['bytes']} = {cfg.max_bytes} bytes: the rest was not read"
    if e is End.REDIRECTS:
        return f"redirected more than {KEYS['redirects']} = {cfg.max_redirects} times"
    if e is End.ABORTED:
        return "the run was aborted"
    return ""
