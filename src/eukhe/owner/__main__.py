"""`python -m eukhe.owner`: the owner of the home `EUKHE_HOME` names (started by the
first client that finds none; it ends when idle). Lean on purpose: it imports no
provider and no CLI, so it listens soon after it starts."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from eukhe.client import protocol
from eukhe.home import HomeError, home, private_write
from eukhe.jobs import sweep
from eukhe.owner.fleet_watch import FleetWatch
from eukhe.owner.log import logged
from eukhe.owner.recovery import Recovery, Runs
from eukhe.owner.server import IDLE, Owner, Taken
from eukhe.settings import SettingsError
from eukhe.settings.load import load
from eukhe.store.executor_lease import shared
from eukhe.store.lease_holder import LeaseHolderError, LeaseHolderStore
from eukhe.store.urls import StoreError, database_url

if TYPE_CHECKING:  # the owner listens before it loads the run's machinery
    from eukhe.run.sink import RunSink

CLOSE_GRACE = 5.0
"""Seconds the run store has to close when the owner ends."""


async def _runtime(where: Path, sink: RunSink) -> Runs:
    """The runtime of the runs this owner takes up, opened in a thread (DBOS's launch
    blocks). Loaded here, on a recovery's first need, not above: the owner listens
    before it imports DBOS and the providers."""
    from eukhe.runtime import open_runtime

    return await asyncio.to_thread(open_runtime, where, load(where), sink, user=False, recovers=True)


async def _ready() -> None:
    """The run's machinery imported (in a thread: the owner goes on answering), before a
    take needs it: on a fleet's store, once a run is in flight somewhere (`FleetWatch`)."""
    await asyncio.to_thread(importlib.import_module, "eukhe.runtime")


def _warm(where: Path) -> subprocess.Popen[bytes] | None:
    """The home's warm template (`warm/__main__.py`), started beside the owner: the next
    `eukhe run`s are forked from it, their imports done. None with `EUKHE_WARM=0`. Its
    output goes to the owner's log; `-P` and the home as its folder keep every project's
    folder off its path."""
    if os.environ.get("EUKHE_WARM") == "0":
        return None
    try:
        return subprocess.Popen(
            [sys.executable, "-P", "-m", "eukhe.warm", str(protocol.warm_path(where))],
            cwd=where.absolute(),
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as e:
        logged(f"no warm template: {e}")
        return None


def _swept(where: Path) -> None:
    try:
        for line in sweep(where):
            logged(line)
    except Exception as e:  # said, with its cause; the next start sweeps again
        logged(f"the background jobs' sweep broke: {type(e).__name__}: {e}")


def main() -> int:
    try:
        idle = float(os.environ.get("EUKHE_OWNER_IDLE_MS", "")) / 1000
    except ValueError:
        idle = IDLE
    where = home()
    recovery = Recovery(where, _runtime)
    owner = Owner(
        where,
        idle=idle,
        orphans=recovery.orphans,
        recover=recovery.now,
        busy=recovery.working,
        taken=lambda: dict(recovery.running),
    )
    try:
        owner.claim()
    except Taken as e:  # another client's owner won the home: it answers
        logged(str(e))
        return 0
    except HomeError as e:  # the client that started it shows this line
        logged(str(e))
        return 1
    watch: FleetWatch | None = None
    try:  # the lease holder's record, beside the runs (durable.databaseUrl, else SQLite in the home)
        url = database_url(where, load(where))
        if shared(url):  # a fleet's store: the runs of executors gone on any host are taken up here
            watch = FleetWatch(url, recovery.now, _ready)
        owner.lease_holders = LeaseHolderStore(url, f"{socket.gethostname()}:{where.resolve()}")
    except (SettingsError, StoreError, LeaseHolderError) as e:
        logged(f"the lease holder is kept in memory only: {e}")

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, owner.stop)
        over = asyncio.Event()
        watching = asyncio.ensure_future(watch.run(over)) if watch is not None else None
        try:
            await owner.serve()
        finally:
            over.set()
            if watching is not None:
                watching.cancel()

    logged(f"pid {os.getpid()} owns {owner.home}")
    # the background jobs whose holder died are ended now (rules.job.at_owner_start), beside
    # the owner's work: a sweep takes the rule's grace and a look, GIVE_UP_S at most
    threading.Thread(target=_swept, args=(where,), name="eukhe-jobs-sweep", daemon=True).start()
    warm = _warm(where)
    try:  # what a run that finds no template listening yet waits for (`client.handoff.warmed`)
        about = {"pid": None if warm is None else warm.pid, "owner": os.getpid()}
        private_write(protocol.warm_info_path(where), json.dumps(about))
    except HomeError as e:
        logged(f"the warm template's record is not written: {e}")
    code = 0
    try:
        asyncio.run(serve())
    except Exception as e:  # said in the log, with its cause
        logged(f"broke: {type(e).__name__}: {e}")
        code = 1
    # the run store's threads end with it; one stuck on a store that is gone (retrying
    # a dropped database, say) is not waited for past a grace
    if watch is not None:
        watch.close()
    closing = threading.Thread(target=recovery.close, daemon=True)
    closing.start()
    closing.join(CLOSE_GRACE)
    if warm is not None:  # it ends once its last run has (warm/__main__.py)
        with contextlib.suppress(OSError):
            warm.terminate()
    logged(f"pid {os.getpid()} ended")
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
