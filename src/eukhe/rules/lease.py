"""H6.2: the root-turn lease, first come, first served.

One root turn runs at a time per eukhe home: a turn asks for the lease and waits
for it, with no deadline (it waits for another window's turn), until it holds it
or its wait is stopped (the run's cancel). Every ask gets a key, in arrival
order, and comes from an origin (a client's connection to the owner).

Operations, in any order:
- ask(origin): a new key; the asker holds the lease at once when it is free, else
  it waits behind every earlier waiter;
- release(key): the holder gives the lease up (a waiter that releases leaves);
- stop(key): a waiter's wait is stopped; it leaves and never holds (a stopped
  holder gives the lease up);
- crash(origin): the origin is gone; every key of it ends, held or awaited.

A free lease goes to the oldest live waiter in the same step (never idle), so
the holder asked before every waiter, and waiters are served in asking order.
A key that is not live (ended, or never given) changes nothing.

Pure: standard library only, frozen data, total functions.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from eukhe.rules.states import Choice


class Kind(Choice):
    ASK = "ask"
    RELEASE = "release"
    STOP = "stop"
    CRASH = "crash"


@dataclass(frozen=True)
class Op:
    """One operation; `who` is the origin for ASK and CRASH, the key otherwise."""

    kind: Kind
    who: int


@dataclass(frozen=True)
class Entry:
    key: int
    origin: int


@dataclass(frozen=True)
class Lease:
    """holder: the entry holding the lease, or None; waiters: in key order."""

    holder: Entry | None = None
    waiters: tuple[Entry, ...] = ()
    next_key: int = 0


class Outcome(Choice):
    HELD = "held"  # the ask holds the lease at once
    QUEUED = "queued"  # the ask waits
    ENDED = "ended"  # the key (release, stop) or the origin's keys (crash) ended
    UNKNOWN = "unknown"  # no live key or origin of that number: nothing changed


@dataclass(frozen=True)
class Step:
    """The lease after one operation. key: the new key of an ask (else -1);
    granted: the key this step handed the lease to (else -1)."""

    lease: Lease
    outcome: Outcome
    key: int = -1
    granted: int = -1


def start() -> Lease:
    return Lease()


def ask(s: Lease, origin: int) -> Step:
    e = Entry(s.next_key, origin)
    if s.holder is None and not s.waiters:
        return Step(Lease(e, (), s.next_key + 1), Outcome.HELD, e.key, e.key)
    return Step(Lease(s.holder, (*s.waiters, e), s.next_key + 1), Outcome.QUEUED, e.key)


def _hand_on(holder: Entry | None, waiters: tuple[Entry, ...], next_key: int) -> tuple[Lease, int]:
    """The lease with a free slot given to the oldest waiter; the key it went to."""
    if holder is None and waiters:
        return Lease(waiters[0], waiters[1:], next_key), waiters[0].key
    return Lease(holder, waiters, next_key), -1


def end(s: Lease, key: int) -> Step:
    """Release or stop: the key ends, wherever it is."""
    if s.holder is not None and s.holder.key == key:
        lease, granted = _hand_on(None, s.waiters, s.next_key)
        return Step(lease, Outcome.ENDED, granted=granted)
    kept = tuple(w for w in s.waiters if w.key != key)
    if len(kept) == len(s.waiters):
        return Step(s, Outcome.UNKNOWN)
    return Step(Lease(s.holder, kept, s.next_key), Outcome.ENDED)


def crash(s: Lease, origin: int) -> Step:
    holder = None if s.holder is not None and s.holder.origin == origin else s.holder
    kept = tuple(w for w in s.waiters if w.origin != origin)
    if holder is s.holder and len(kept) == len(s.waiters):
        return Step(s, Outcome.UNKNOWN)
    lease, granted = _hand_on(holder, kept, s.next_key)
    return Step(lease, Outcome.ENDED, granted=granted)


def step(s: Lease, x: Op) -> Step:
    if x.kind is Kind.ASK:
        return ask(s, x.who)
    if x.kind is Kind.CRASH:
        return crash(s, x.who)
    return end(s, x.who)


def live(s: Lease) -> tuple[Entry, ...]:
    """Every live entry, the holder first."""
    return s.waiters if s.holder is None else (s.holder, *s.waiters)


def valid(s: Lease) -> bool:
    """Keys below next_key, ascending from the holder through the waiters, and the
    lease held whenever someone waits."""
    keys = [e.key for e in live(s)]
    ordered = all(a < b for a, b in itertools.pairwise(keys))
    in_range = all(0 <= k < s.next_key for k in keys)
    return ordered & in_range & ((s.holder is not None) | (not s.waiters))
