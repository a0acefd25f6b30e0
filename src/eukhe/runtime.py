"""The one composition root: what a process puts together before it runs anything
durable. The command line (`eukhe run`, `eukhe resume`), the interactive agent and
the owner's recovery all open their runtime here, so the sequence is written once:

1. the secret values the process knows gathered once (`run.secrets.redaction`): every
   row it writes to the store (`store.codec`) and every line its runs show pass them;
2. the store opened (`store.durable`: DBOS launched, the run workflows registered);
3. this process's `ProcessContext` begun (`run.context`), the one object its runs find;
4. its slots from the home's owner (`client.admission.RemoteRegistry`), and, for a
   user's process, the root-turn lease through the same connection
   (`client.lease.RootTurnLease`), and `eukhe abort` from another process reaching the
   run's cancel through the process's run table (`run.handles.RunTable`, which the
   registry knows as `client.admission.Aborts`): every part given at construction, none
   assigned after, no callback.

The owner's own recovered runs take slots from the owner like any client's, but hold
no lease: no user waits on them."""

from __future__ import annotations

from pathlib import Path

from eukhe.client.admission import RemoteRegistry
from eukhe.client.lease import RootTurnLease
from eukhe.json_types import JsonObject
from eukhe.process_exit import leave
from eukhe.run import fence
from eukhe.run.context import ProcessContext, begin
from eukhe.run.handles import RunTable
from eukhe.run.permit import Asker
from eukhe.run.runtime import Busy, Runtime
from eukhe.run.secrets import redaction
from eukhe.run.sink import RunSink
from eukhe.store import durable

__all__ = ["Busy", "Runtime", "leave", "open_runtime"]


def open_runtime(
    home: Path,
    settings: JsonObject,
    sink: RunSink,
    *,
    user: bool = True,
    asker: Asker | None = None,
    recovers: bool = False,
) -> Runtime:
    """Open the store and begin this process's `ProcessContext`, its slots from the owner of
    `home`; what its runs show goes to `sink` (the face's, or the owner's log), through the
    process's secrets. `user`: a user's process (its runs hold the root-turn lease, and
    `eukhe abort` reaches them); else the owner's, which runs what dead processes left.
    `asker`: who answers its runs' permission asks (None: nobody, headless).
    `recovers`: whether the process takes re-enqueued runs (`store.durable`).
    Raises `store.durable.StoreError` when the store cannot be opened."""
    redact = redaction(settings)  # the last line of defence: made once, for every row and every line
    store = durable.open_store(home, settings, recovers=recovers, redact=redact)
    runs = RunTable()  # the process's runs: `eukhe abort` from another process reaches a user's
    registry = RemoteRegistry(home, aborts=runs if user else None)
    process = ProcessContext(
        sink=sink,
        chat_url=store.url,  # the chat beside the runs
        admission=registry,
        owner=registry.client,
        lease=RootTurnLease(registry) if user else None,
        runs=runs,
        asker=asker,
        redact=redact,
        executor=store.lease,
    )
    fence.watch(process)  # a process whose lease on a shared store is gone stops (none on SQLite)
    return Runtime(home, store, begin(process))
