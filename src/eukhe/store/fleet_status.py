"""`eukhe status --fleet`: the fleet as the shared store shows it at one moment: each host,
its executors with their leases (the last beat's age, the lock, gone or not by the fleet's
rule), and the runs in flight each holds. Read on a plain connection, not DBOS: a look at
the fleet never opens a run store nor takes a run."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field

from eukhe.json_types import JsonObject
from eukhe.rules import fleet
from eukhe.store.executor_lease import Fleet, host_of, process_gone, shared
from eukhe.store.urls import shown


@dataclass(frozen=True)
class ExecutorView:
    """One executor: its id and pid; how long it has run and since its last beat (s; None:
    no row in the store, an executor that never held a lease or whose row was taken); its
    lock; gone by the fleet's rule; the runs in flight it holds."""

    executor: str
    pid: int | None
    up_s: float | None
    beat_age_s: float | None
    lock_held: bool
    gone: bool
    runs: tuple[str, ...] = ()

    def json(self) -> JsonObject:
        return {
            "executor": self.executor,
            "pid": self.pid,
            "up_s": self.up_s,
            "beat_age_s": self.beat_age_s,
            "lock_held": self.lock_held,
            "gone": self.gone,
            "runs": list(self.runs),
        }


@dataclass(frozen=True)
class HostView:
    host: str
    executors: tuple[ExecutorView, ...] = ()


@dataclass(frozen=True)
class FleetView:
    """The store (as shown, no password), whether it is shared (on SQLite: one machine, no
    fleet), and its hosts, by name."""

    store: str
    shared: bool
    hosts: tuple[HostView, ...] = field(default=())

    def runs(self) -> int:
        return sum(len(e.runs) for h in self.hosts for e in h.executors)

    def json(self) -> JsonObject:
        return {
            "store": self.store,
            "fleet": self.shared,
            "hosts": [{"host": h.host, "executors": [e.json() for e in h.executors]} for h in self.hosts],
        }


def read_fleet(url: str) -> FleetView:
    """The fleet at `url`, read at once (one look at the leases: one store clock)."""
    if not shared(url):
        return FleetView(shown(url), False)
    reader = Fleet(url, f"eukhe-status:{socket.gethostname()}:{os.getpid()}")
    try:
        holding = reader.pending()
        ids = sorted(set(reader.leased()) | set(holding))
        seen = reader.look(ids)
    finally:
        reader.close()
    hosts: dict[str, list[ExecutorView]] = {}
    for e in ids:
        row, lease = seen.rows.get(e), seen.seen(e, process_gone)
        hosts.setdefault(row.host if row is not None else host_of(e), []).append(
            ExecutorView(
                e,
                row.pid if row is not None else None,
                None if row is None else round(seen.store_now - row.began_at, 1),
                None if row is None else round(seen.store_now - row.beat_at, 1),
                lease.lock_held,
                fleet.gone(lease, seen.store_now),
                tuple(sorted(holding.get(e, []))),
            )
        )
    return FleetView(shown(url), True, tuple(HostView(h, tuple(hosts[h])) for h in sorted(hosts)))
