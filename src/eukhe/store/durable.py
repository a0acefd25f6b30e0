"""The durable store: DBOS Transact on SQLite under $EUKHE_HOME (nothing to install
or start), or on Postgres when `durable.databaseUrl` names one, with the same code.

Only commands that run work import this module (DBOS takes half a second to
import). DBOS's own log lines go to `$EUKHE_HOME/logs/dbos.log`, never to the
terminal.

Each process is its own DBOS executor, named `eukhe:<host>:<pid>:<start>` (`start`:
the process's start time, so a reused pid is not taken for the same process). A
run is in flight while its workflow is PENDING; when the executor that ran it is
gone, it is re-enqueued (DBOS recovery, which admits one runner even when two
processes recover at once) and finished. Who takes it from that queue is chosen:
DBOS lets any live executor take it, but a terminal whose owner recovers would end
with its own turn and leave the run cut off again, so only a process that
recovers (`takes_recovered`) takes one.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from dbos import DBOS, DBOSClient, DBOSConfig

from eukhe.home import HomeError, open_home, private_dir, private_file
from eukhe.json_types import JsonMapping
from eukhe.settings.load import read
from eukhe.settings.secrets import NO_SECRETS, Redaction
from eukhe.store import guard
from eukhe.store.codec import Codec
from eukhe.store.engine import system_engine
from eukhe.store.executor_lease import VERSION as VERSION
from eukhe.store.executor_lease import ExecutorLease, Fleet, LeaseError, app_name, gone_on, shared
from eukhe.store.migrate import migrate
from eukhe.store.processes import started
from eukhe.store.urls import StoreError, cause, database_url, private_store, shown

APP = "eukhe"
LOG = "logs/dbos.log"
SHARED_POOL = 6
"""Connections DBOS keeps open for a process on a shared (Postgres) store."""


# ---------------------------------------------------------------- executors


def _started(pid: int) -> str | None:
    """A process's start time in clock ticks since boot (Linux), or None if gone."""
    ticks = started(pid)
    return None if ticks is None else str(int(ticks))


def executor_id() -> str:
    pid = os.getpid()
    return f"eukhe:{socket.gethostname()}:{pid}:{_started(pid) or int(time.time())}"


def gone(executor: str | None) -> bool:
    """Whether the process an executor id names has ended, by its pid (a store in SQLite:
    one machine; another host's executor is never taken for gone there: only it can
    tell). On a shared store the leases decide (`Store.gone`)."""
    if not executor:
        return False
    parts = executor.split(":")
    if len(parts) != 4 or parts[0] != "eukhe" or parts[1] != socket.gethostname():
        return False
    try:
        pid = int(parts[2])
    except ValueError:
        return False
    return _started(pid) != parts[3]


# ---------------------------------------------------------------- opening


@dataclass
class Store:
    url: str
    home: Path
    executor: str
    engine: sa.Engine | None = None  # DBOS's engine, eukhe's own on SQLite (DBOS never disposes it)
    lease: ExecutorLease | None = None  # this process's lease, on a shared (Postgres) store
    fleet: Fleet | None = None  # the other executors' leases, read there

    def gone(self, executors: list[str]) -> dict[str, str]:
        """The executors among these that are gone, each with how it went: by their
        leases on a shared store, by their pids on SQLite."""
        if self.fleet is None:
            return {e: f"executor {e}, its process ended" for e in executors if gone(e)}
        return gone_on(self.fleet, [e for e in executors if e != self.executor])

    def cut(self, executor: str) -> None:
        """What is left of a gone executor's connections ended, before its runs are taken."""
        if self.fleet is not None:
            self.fleet.cut(executor)

    def close(self) -> None:
        DBOS.destroy(destroy_registry=False)
        if self.engine is not None:
            self.engine.dispose()
        if self.lease is not None:  # after DBOS: no step of this process is recorded past it
            self.lease.close()
        if self.fleet is not None:
            self.fleet.close()


def _quiet(home: Path) -> None:
    """DBOS logs to a file under $EUKHE_HOME only."""
    path = home / LOG
    private_dir(path.parent)
    private_file(path)  # logging.FileHandler would make it with the umask's mode
    log = logging.getLogger("dbos")
    for h in list(log.handlers):
        log.removeHandler(h)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    log.propagate = False


def open_store(
    home: Path, settings: JsonMapping, recovers: bool = True, redact: Redaction = NO_SECRETS
) -> Store:
    """Launch DBOS on the store; the run workflow is registered on import of
    `eukhe.run.workflow`, which this module's caller imports first. `recovers`:
    whether this process takes re-enqueued runs (the owner does; its clients do only
    once they recover themselves, see `takes_recovered`). `redact`: the secret values
    the process knows, out of every row it writes (`codec.Codec`)."""
    url = database_url(home, settings)
    me = executor_id()
    config: DBOSConfig = {
        "name": APP,
        "system_database_url": url,
        "executor_id": me,
        "application_version": VERSION,
        "log_level": "INFO",
        # JSON: a row eukhe writes never holds code, nor a secret value it knows (store/codec.py)
        "serializer": Codec(redact),
    }
    if shared(url):
        # DBOS keeps up to 20 connections open a process; a fleet's processes share one
        # server (Postgres's default: 100 in all), which 5 such processes filled
        config["sys_db_pool_size"] = SHARED_POOL
    try:
        open_home(home)  # made private, or tightened with a notice, before anything is written in it
    except HomeError as e:
        raise StoreError(str(e)) from e
    engine: sa.Engine | None = None
    lease: ExecutorLease | None = None
    look: Fleet | None = None
    try:
        private_store(url)
        _quiet(home)  # before DBOS(): it adds a console handler only to a logger with none
        if guard.check(url, own=url == own_url(home)):  # before DBOS reads a row; pickle: our own only
            migrate(url, VERSION)  # an earlier eukhe's store: its rows as JSON, its runs in flight ours
        engine = system_engine(url)  # WAL, synchronous=NORMAL: a commit costs no fsync
        if engine is not None:
            config["system_database_engine"] = engine
        if shared(url):  # a shared store: this executor's lease, before it can take any run
            pid = os.getpid()
            lease = ExecutorLease(url, me, socket.gethostname(), pid, me.rsplit(":", 1)[1])
            look = Fleet(url, me)
            # DBOS's connections named too: a taker cuts them
            config["db_engine_kwargs"] = {"connect_args": {"application_name": app_name(me)}}
        DBOS(config=config)
        takes_recovered(recovers)
        DBOS.launch()
        _quiet(home)
    except Exception as e:
        if engine is not None:
            engine.dispose()
        for part in (lease, look):
            if part is not None:
                part.close()
        if isinstance(e, StoreError):
            raise
        if isinstance(e, LeaseError):
            raise StoreError(str(e)) from e
        raise StoreError(f"cannot open the run store at {shown(url)}: {cause(e)}") from e
    return Store(url, home, me, engine, lease, look)


def takes_recovered(on: bool) -> None:
    """Whether this process takes runs from DBOS's recovery queue: none (a worker
    limit of 0 on that queue, which its poller reads at every poll) or as many as
    come. DBOS has no public switch for its own queue; a DBOS without this one is
    refused by name rather than left to take runs it would drop."""
    from dbos._dbos import _get_dbos_instance

    queue = _get_dbos_instance()._registry.get_internal_queue()
    if not hasattr(queue, "_worker_concurrency"):
        raise StoreError("this DBOS has no worker limit on its recovery queue: eukhe needs dbos 3.4")
    queue._worker_concurrency = None if on else 0


def own_url(home: Path) -> str:
    """The home's own store: the one its own settings name (a project's never counts)."""
    return database_url(home, read(home / "settings.json"))


def client(url: str, home: Path | None = None) -> DBOSClient:
    """A reader of the store that runs nothing; checked first (`guard`: pickled rows are
    read from the home's own store only)."""
    guard.check(url, own=home is not None and url == own_url(home))
    try:
        private_store(url)
        return DBOSClient(system_database_url=url, serializer=Codec())
    except Exception as e:
        raise StoreError(f"cannot read the run store at {shown(url)}: {cause(e)}") from e
