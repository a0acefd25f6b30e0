"""Issue 53: the fleet, executors on several machines sharing one Postgres store.

Every process that executes runs (an executor) holds a lease in the store: a row
(executor, host, pid, beat_at in the store's clock) beaten every BEAT_S on a connection of
its own that also holds a session-level advisory lock (the store frees it when that
connection ends, however the process died). The rule has two sides:

- the executor's own view of its lease (`Lease`): when the last beat the store confirmed
  was sent, on its own monotonic clock, and whether the store said the lease is not its own
  any more. It records a step of a run only while `may_record`: not lost, and its last
  confirmed beat sent less than FENCE_S ago.
- a watcher's view of another executor's lease in the store (`Seen`): it is `gone` when the
  store says so (no row and no lock; a beat older than LEASE_TTL_S in the store's clock) or,
  on the watcher's own host, when its process is gone and its lock free.

Why it is safe: the store stamps a beat no earlier than it was sent, and every clock runs
at the same rate, so an executor whose last confirmed beat was sent at `c` stops recording
by `c + FENCE_S`, while no watcher finds its lease gone before `c + LEASE_TTL_S`
(FENCE_S < LEASE_TTL_S). A lock freed on another host says nothing more: the executor may
be alive behind a cut connection, and records until its fence.

Which live executor takes a gone executor's run is decided in the store (one take commits:
it succeeds only while the run's holder is gone, and it deletes the gone lease's row, so a
late beat of that executor finds its lease lost).

Pure: standard library only, frozen data, total functions.
"""

from __future__ import annotations

from dataclasses import dataclass

BEAT_S: float = 2.0
"""An executor beats its lease this often."""

LEASE_TTL_S: float = 10.0
"""A lease whose last beat is older than this, in the store's clock, is gone."""

FENCE_S: float = 7.0
"""An executor whose last confirmed beat was sent longer ago than this (its own monotonic
clock) records nothing more: below LEASE_TTL_S, so it has stopped before anyone may take
its runs (3 s of margin: a beat's round trip, a step's write under way)."""

WATCH_S: float = 2.0
"""A live owner looks for gone leases this often."""

TAKE_BOUND_S: float = LEASE_TTL_S + WATCH_S
"""The bound within which a gone executor's runs are taken by a live one, from its last
beat the store stamped: its lease is gone once that beat is older than LEASE_TTL_S (at
once, on its own host, when its process died), and a live owner looks at least every
WATCH_S, so the first look after that takes them: LEASE_TTL_S + WATCH_S, 12 s."""


@dataclass(frozen=True)
class Lease:
    """An executor's own view of its lease.

    confirmed: when (its monotonic clock) the last beat the store confirmed was sent;
        None: never held.
    lost: the store said it is not its own any more (row gone or taken, lock gone): for good.
    """

    confirmed: float | None = None
    lost: bool = False


def held(now: float) -> Lease:
    """Just acquired: the row written and the lock taken, confirmed at `now`."""
    return Lease(confirmed=now)


def confirmed(lease: Lease, sent_at: float) -> Lease:
    """A beat sent at `sent_at` came back confirmed. Never moves back (a late reply of an
    older beat says nothing newer), and a lost lease stays lost."""
    if lease.lost:
        return lease
    if lease.confirmed is not None and sent_at <= lease.confirmed:
        return lease
    return Lease(confirmed=sent_at)


def lost(lease: Lease) -> Lease:
    """The store said the lease is not its own any more."""
    return Lease(confirmed=lease.confirmed, lost=True)


def may_record(lease: Lease, now: float) -> bool:
    """The fence: not lost, and its last confirmed beat sent less than FENCE_S ago."""
    if lease.lost or lease.confirmed is None:
        return False
    return now - lease.confirmed < FENCE_S


@dataclass(frozen=True)
class Seen:
    """What a watcher sees of another executor's lease in the store.

    beat_at: the row's last beat, in the store's clock; None: no row.
    lock_held: its advisory lock is held by some connection.
    process_gone: on the watcher's own host, whether its pid is gone; None: on another
        host (the watcher cannot tell).
    """

    beat_at: float | None
    lock_held: bool
    process_gone: bool | None


def gone(seen: Seen, store_now: float) -> bool:
    """Whether the executor's lease is gone, so its runs may be taken: no row and no lock;
    or its last beat older than LEASE_TTL_S; or, on the watcher's own host, its process gone
    and its lock free. A lock freed while the beat is fresh on another host is not yet gone:
    a partitioned but live executor may still record until its fence."""
    if seen.beat_at is None:
        return not seen.lock_held
    if store_now - seen.beat_at > LEASE_TTL_S:
        return True
    return seen.process_gone is True and not seen.lock_held
