"""Executors' leases in a shared Postgres store (`rules.fleet`): every process that
executes runs holds a session-level advisory lock keyed by its executor id on a
connection of its own, and a row in `eukhe_executors` that it beats every BEAT_S.
Postgres frees the lock when that connection ends, however the process ended; a
row whose beat is older than the lease's time to live names an executor that is
gone, on any host: another host's owner then takes its runs up (`Fleet.gone`).

A store in SQLite belongs to one machine: there the rule by pid (`durable.gone`) stays.

Every connection of an executor is named after it (`application_name`), so that a
taker cuts what is left of a gone executor's connections before it takes its runs.
"""

from __future__ import annotations

import hashlib
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from eukhe import __version__
from eukhe.rules import fleet
from eukhe.store.processes import started as started_at
from eukhe.store.urls import cause, engine_url, shown

VERSION = f"eukhe-{__version__}"
"""DBOS's application version: DBOS hands a run only to an executor of its own version."""

TABLE = "eukhe_executors"
MAKE_LOCK = 0x65756B6878  # "eukhx": held by the transaction that makes the table
KEY_SPACE = 0x6575_6B68  # "eukh": the high half of every executor's lock key
CONNECT_S = 5
"""Seconds a lease's connection may take to open."""
STATEMENT_MS = 3000
"""Milliseconds any statement of the lease may take: a beat never blocks for ever."""
NAME_MAX = 63
"""Postgres keeps this many bytes of an `application_name`."""

_MAKE = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    executor text PRIMARY KEY,
    host text NOT NULL,
    pid int NOT NULL,
    started text NOT NULL,
    backend int NOT NULL,
    beat_at timestamptz NOT NULL,
    began_at timestamptz NOT NULL
)"""


def shared(url: str) -> bool:
    """Whether the store is one executors share (Postgres), where they hold leases."""
    return engine_url(url).startswith("postgresql")


def lock_key(executor: str) -> int:
    """The executor's advisory lock: KEY_SPACE in its high half, a hash of its id in the
    low one (as `pg_locks` shows it: classid, objid)."""
    low = int.from_bytes(hashlib.blake2b(executor.encode(), digest_size=4).digest(), "big")
    return (KEY_SPACE << 32) | low


def app_name(executor: str) -> str:
    return executor.encode()[:NAME_MAX].decode(errors="ignore")


def watcher_name(host: str, pid: int) -> str:
    """The name of a watcher's connections (an owner's, `owner.fleet_watch`)."""
    return f"eukhe-watch:{host}:{pid}"


def connect_args(name: str) -> dict[str, object]:
    """What every connection of an executor or a watcher is opened with: its name (an
    executor's id), and deadlines on its opening and on each statement."""
    return {
        "connect_timeout": CONNECT_S,
        "options": f"-c statement_timeout={STATEMENT_MS}",  # the server's deadline on each statement
        # and the client's, when the network itself is cut: unacknowledged data, a silent peer
        "tcp_user_timeout": STATEMENT_MS,
        "keepalives": 1,
        "keepalives_idle": CONNECT_S,
        "keepalives_interval": 1,
        "keepalives_count": 3,
        "application_name": app_name(name),
    }


def make_table(conn: sa.Connection) -> None:
    """The table, made once, whoever makes it first (two at once would both try)."""
    with conn.begin():
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": MAKE_LOCK})
        conn.execute(sa.text(_MAKE))


class LeaseError(RuntimeError):
    pass


class ExecutorLease:
    """This process's lease, held from its start to `close`, beaten from a daemon
    thread. `state` is its own view (`rules.fleet.Lease`), which `may_record` asks."""

    def __init__(
        self,
        url: str,
        executor: str,
        host: str,
        pid: int,
        started: str,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url
        self.executor = executor
        self.clock = clock
        self.why = ""  # the cause of the lease's loss, or of its last failed beat
        self._guard = threading.Lock()
        self._stop = threading.Event()
        self._engine = sa.create_engine(
            engine_url(url), poolclass=NullPool, connect_args=connect_args(executor)
        )
        try:
            conn = self._engine.connect()
            try:
                make_table(conn)
                conn.execution_options(isolation_level="AUTOCOMMIT")  # each beat its own
                got = conn.execute(sa.text("SELECT pg_try_advisory_lock(:k)"), {"k": lock_key(executor)})
                if not got.scalar():
                    raise LeaseError(f"executor {executor} holds its lease in another process")
                conn.execute(
                    sa.text(
                        f"INSERT INTO {TABLE} (executor, host, pid, started, backend, beat_at, began_at) "
                        "VALUES (:e, :h, :p, :s, pg_backend_pid(), now(), now()) "
                        "ON CONFLICT (executor) DO UPDATE SET backend = pg_backend_pid(), beat_at = now()"
                    ),
                    {"e": executor, "h": host, "p": pid, "s": started},
                )
            except BaseException:
                conn.close()
                raise
        except LeaseError:
            self._engine.dispose()
            raise
        except Exception as e:
            self._engine.dispose()
            raise LeaseError(f"cannot take executor {executor}'s lease in {shown(url)}: {cause(e)}") from e
        self._conn = conn
        self.state = fleet.held(clock())
        self._beats = threading.Thread(target=self._beat_on, name="eukhe-lease", daemon=True)
        self._beats.start()

    def closed(self, within: float) -> bool:
        """Whether the lease is closed, waiting up to `within` seconds for it."""
        return self._stop.wait(within)

    def may_record(self) -> bool:
        with self._guard:
            return fleet.may_record(self.state, self.clock())

    def beat(self) -> None:
        """One beat: confirmed when the row is this connection's still; lost when it is not
        (0 rows) or the connection broke (its lock went with it); a statement that fails on
        a live connection confirms nothing (the fence comes when beats stay away)."""
        sent = self.clock()
        try:
            done = self._conn.execute(
                sa.text(
                    f"UPDATE {TABLE} SET beat_at = now() WHERE executor = :e AND backend = pg_backend_pid()"
                ),
                {"e": self.executor},
            )
            rows = done.rowcount
        except Exception as e:
            broken = self._conn.invalidated or self._conn.closed or _disconnect(e)
            with self._guard:
                self.why = f"its beat failed: {cause(e)}"
                if broken:
                    self.state = fleet.lost(self.state)
            return
        with self._guard:
            if rows == 1:
                self.state = fleet.confirmed(self.state, sent)
                self.why = "" if not self.state.lost else self.why
            else:
                self.why = "its row in the store is gone or another connection's"
                self.state = fleet.lost(self.state)

    def _beat_on(self) -> None:
        while not self._stop.wait(fleet.BEAT_S):
            self.beat()
            with self._guard:
                if self.state.lost:
                    return

    def close(self) -> None:
        """Row deleted, lock released (with the connection, whatever happens)."""
        self._stop.set()
        self._beats.join(STATEMENT_MS / 1000 * 2)
        try:
            if not self.state.lost:
                self._conn.execute(
                    sa.text(f"DELETE FROM {TABLE} WHERE executor = :e AND backend = pg_backend_pid()"),
                    {"e": self.executor},
                )
                self._conn.execute(sa.text("SELECT pg_advisory_unlock(:k)"), {"k": lock_key(self.executor)})
        except Exception as e:  # the lock goes with the connection, closed next
            self.why = self.why or f"its close failed: {cause(e)}"
        finally:
            try:
                self._conn.close()
            finally:
                self._engine.dispose()


def _disconnect(e: Exception) -> bool:
    return isinstance(e, sa.exc.DBAPIError) and bool(e.connection_invalidated)


@dataclass(frozen=True)
class Row:
    host: str
    pid: int
    started: str
    beat_at: float
    began_at: float


@dataclass(frozen=True)
class Look:
    """The executors' leases as the store shows them at one moment (`store_now`)."""

    store_now: float
    rows: dict[str, Row]
    locked: frozenset[int]  # the advisory lock keys held in the database

    def seen(self, executor: str, process_gone: Callable[[Row], bool | None]) -> fleet.Seen:
        row = self.rows.get(executor)
        held = lock_key(executor) in self.locked
        if row is None:
            return fleet.Seen(None, held, None)
        return fleet.Seen(row.beat_at, held, process_gone(row))


def look(conn: sa.Connection, executors: Iterable[str]) -> Look:
    """The rows of `executors` and the locks held, read at once (the table made if missing)."""
    ids = sorted(set(executors))
    with conn.begin():
        now = float(conn.execute(sa.text("SELECT extract(epoch from clock_timestamp())")).scalar_one())
        rows = conn.execute(
            sa.text(
                "SELECT executor, host, pid, started, extract(epoch from beat_at), "
                f"extract(epoch from began_at) FROM {TABLE} WHERE executor = ANY(:ids)"
            ),
            {"ids": ids},
        ).all()
        locks = conn.execute(
            sa.text(
                "SELECT (classid::bigint << 32) | objid::bigint FROM pg_locks "
                "WHERE locktype = 'advisory' AND objsubid = 1 AND granted AND classid = :space "
                "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            ),
            {"space": KEY_SPACE},
        ).all()
    return Look(
        now,
        {str(r[0]): Row(str(r[1]), int(r[2]), str(r[3]), float(r[4]), float(r[5])) for r in rows},
        frozenset(int(k[0]) for k in locks),
    )


def cut(conn: sa.Connection, executor: str) -> int:
    """End what is left of a gone executor's connections (a partitioned process's, which
    would write again once it is back); how many."""
    with conn.begin():
        got = conn.execute(
            sa.text(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE application_name = :n AND pid <> pg_backend_pid()"
            ),
            {"n": app_name(executor)},
        ).scalar_one()
        conn.execute(sa.text(f"DELETE FROM {TABLE} WHERE executor = :e"), {"e": executor})
    return int(got)


class Fleet:
    """A reader of the executors' leases (the taker's side), on a plain connection."""

    def __init__(self, url: str, name: str) -> None:
        """`name`: its connections' (an executor's id, or a watcher's `watcher_name`)."""
        self.url = url
        self._engine = sa.create_engine(engine_url(url), poolclass=NullPool, connect_args=connect_args(name))
        self._made = False

    def look(self, executors: Iterable[str]) -> Look:
        with self._engine.connect() as conn:
            self._make(conn)
            return look(conn, executors)

    def _make(self, conn: sa.Connection) -> None:
        if not self._made:  # a store no executor of this eukhe opened yet has none
            make_table(conn)
            self._made = True

    def cut(self, executor: str) -> int:
        with self._engine.connect() as conn:
            return cut(conn, executor)

    def prune(self, busy: Iterable[str]) -> list[str]:
        """The rows of gone executors with no run in flight (`busy`: those with some),
        deleted: a process that ended without closing its lease (`process_exit.leave`)
        leaves its row behind. Their ids."""
        with self._engine.connect() as conn:
            self._make(conn)
            ids = [str(r[0]) for r in conn.execute(sa.text(f"SELECT executor FROM {TABLE}")).all()]
        keep = set(busy)
        dead = sorted(gone_on(self, [e for e in ids if e not in keep]))
        if dead:
            with self._engine.begin() as conn:
                conn.execute(sa.text(f"DELETE FROM {TABLE} WHERE executor = ANY(:ids)"), {"ids": dead})
        return dead

    def pending(self) -> dict[str, list[str]]:
        """The workflows in flight (PENDING) of this eukhe's version, by executor."""
        with self._engine.connect() as conn:
            if conn.execute(sa.text("SELECT to_regclass('dbos.workflow_status')")).scalar() is None:
                return {}  # a store no run has used yet
            rows = conn.execute(
                sa.text(
                    "SELECT executor_id, workflow_uuid FROM dbos.workflow_status "
                    "WHERE status = 'PENDING' AND application_version = :v AND executor_id IS NOT NULL"
                ),
                {"v": VERSION},
            ).all()
        out: dict[str, list[str]] = {}
        for executor, wid in rows:
            out.setdefault(str(executor), []).append(str(wid))
        return out

    def close(self) -> None:
        self._engine.dispose()


def host_of(executor: str) -> str:
    """The host an executor id names (`eukhe:<host>:<pid>:<start>`)."""
    parts = executor.split(":")
    return parts[1] if len(parts) == 4 and parts[0] == "eukhe" else "?"


def process_gone(row: Row) -> bool | None:
    """Whether an executor's process is gone (None: another host's, which no one here sees)."""
    if row.host != socket.gethostname():
        return None
    ticks = started_at(row.pid)
    return ticks is None or str(int(ticks)) != row.started


def gone_on(fleet_: Fleet, executors: list[str]) -> dict[str, str]:
    """The executors among `executors` whose lease is gone (`rules.fleet.gone`), each with
    how it went, as a taker says it."""
    seen = fleet_.look(executors)
    out: dict[str, str] = {}
    for e in executors:
        if fleet.gone(seen.seen(e, process_gone), seen.store_now):
            row = seen.rows.get(e)
            since = (
                "with no lease in the store"
                if row is None
                else f"gone since {time.strftime('%H:%M:%S', time.gmtime(row.beat_at))} UTC "
                f"({seen.store_now - row.beat_at:.0f} s without a beat)"
            )
            out[e] = f"host {host_of(e)}'s executor {e}, {since}"
    return out
