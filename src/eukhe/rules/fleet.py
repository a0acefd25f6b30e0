"""The fleet: executors that share one Postgres store, each holding a lease there.

An executor's own view of its lease (`Lease`): when a beat of it was last confirmed
(its monotonic clock), and whether it is lost. It records a run's step only while
its lease was confirmed within FENCE_S (`may_record`), shorter than LEASE_TTL_S, after
which another executor takes its runs: so two never record steps of one run.

Another executor's lease as the store shows it (`Seen`): gone (`gone`) when it has no
row and its lock is free, when its last beat is older than LEASE_TTL_S, or, on the
same host, when its process is gone and its lock free.

Pure: standard library only, frozen data, total functions.
"""

from __future__ import annotations

from dataclasses import dataclass

BEAT_S = 2.0
"""Seconds between two beats of an executor's lease."""
LEASE_TTL_S = 10.0
"""Seconds after its last beat when another executor takes an executor for gone."""
FENCE_S = 7.0
"""Seconds after its last confirmed beat when an executor records no more (< LEASE_TTL_S)."""
WATCH_S = 2.0
"""Seconds between two looks of an owner at the leases."""
TAKE_BOUND_S = LEASE_TTL_S + 2 * WATCH_S + BEAT_S
"""Seconds within which a dead executor's runs are taken by a live owner."""


@dataclass(frozen=True)
class Lease:
    """An executor's own view of its lease; monotonic clock."""

    confirmed: float | None = None
    lost: bool = False


def held(now: float) -> Lease:
    return Lease(confirmed=now)


def confirmed(lease: Lease, sent_at: float) -> Lease:
    """A beat sent at `sent_at` was confirmed; never moves back; lost stays lost."""
    if lease.lost or (lease.confirmed is not None and sent_at <= lease.confirmed):
        return lease
    return Lease(confirmed=sent_at)


def lost(lease: Lease) -> Lease:
    return Lease(confirmed=lease.confirmed, lost=True)


def may_record(lease: Lease, now: float) -> bool:
    return not lease.lost and lease.confirmed is not None and now - lease.confirmed < FENCE_S


@dataclass(frozen=True)
class Seen:
    """An executor's lease as the store shows it: its last beat (store clock, None: no
    row), whether its lock is held, whether its process is gone (None: another host)."""

    beat_at: float | None
    lock_held: bool
    process_gone: bool | None


def gone(seen: Seen, store_now: float) -> bool:
    if seen.beat_at is None:
        return not seen.lock_held
    if store_now - seen.beat_at > LEASE_TTL_S:
        return True
    return seen.process_gone is True and not seen.lock_held
