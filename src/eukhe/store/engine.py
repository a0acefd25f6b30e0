"""The SQLAlchemy engine of eukhe's own tables in the store: on SQLite, every
transaction IMMEDIATE (writers one at a time, as DBOS has them, so a read-then-write
is atomic) and a busy writer waited for up to 30 s rather than failed."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import ClassVar, TypeVar

import sqlalchemy as sa
from sqlalchemy import event

from eukhe.errors import EukheError
from eukhe.store.urls import cause, engine_url, private_store, shown

T = TypeVar("T")

BUSY_MS = 30_000
"""How long a SQLite writer waits for another to finish."""


def serialized(url: str) -> sa.Engine:
    private_store(url)  # before SQLite makes the file, or its journals, with the umask's mode
    if not url.startswith("sqlite"):
        # one connection kept idle, three more while they work (a burst waits for them): a
        # process opens several of these tables, and a shared server's connections are few
        # (Postgres: 100 in all; 25 runs starting at once in 4 processes filled it, bench/fleet.py)
        return sa.create_engine(engine_url(url), pool_size=1, max_overflow=3)
    engine = sa.create_engine(engine_url(url))
    if engine.dialect.name == "sqlite":

        @event.listens_for(engine, "connect")
        def _sqlite(dbapi: sqlite3.Connection, _record: object) -> None:
            _connected(dbapi)

    return engine


def _connected(dbapi: sqlite3.Connection, foreign_keys: bool = False) -> None:
    """A new SQLite connection of the store: IMMEDIATE transactions, a busy writer waited
    for, and commits that wait for no fsync (the journal is in WAL mode: a kill loses none)."""
    dbapi.isolation_level = "IMMEDIATE"
    dbapi.execute(f"PRAGMA busy_timeout={BUSY_MS}")
    if foreign_keys:
        dbapi.execute("PRAGMA foreign_keys=ON")
    dbapi.execute("PRAGMA synchronous=NORMAL")


MAKE_LOCK = 0x65756B6865  # "eukhe": the advisory lock under which a Postgres store's tables are made
"""The key of the transaction-scoped advisory lock every maker of eukhe's tables takes first on
Postgres (SQLite's is its write lock)."""


def made(engine: sa.Engine, meta: sa.MetaData) -> None:
    """The tables (and indexes) of `meta` made where missing, in one transaction that holds the
    store's lock for making them before it looks: SQLite's write lock (`BEGIN IMMEDIATE`), a
    Postgres advisory lock (DDL is transactional there). Any number of openers, of any
    process or host, may race: one makes what is missing, the others find it made. A store of
    an earlier layout gets its newer tables the same way."""
    with engine.connect() as c:
        if engine.dialect.name == "sqlite":
            c.exec_driver_sql("BEGIN IMMEDIATE")  # pysqlite begins none before DDL by itself
        else:
            c.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": MAKE_LOCK})
        meta.create_all(c, checkfirst=True)
        c.commit()


def system_engine(url: str) -> sa.Engine | None:
    """DBOS's engine on a SQLite store (None elsewhere): what DBOS's own sets (IMMEDIATE
    transactions, its busy timeout, foreign keys), and the store in WAL mode with
    synchronous=NORMAL."""
    if not url.startswith("sqlite"):
        return None
    engine = sa.create_engine(engine_url(url))

    @event.listens_for(engine, "connect")
    def _sqlite(dbapi: sqlite3.Connection, _record: object) -> None:
        _connected(dbapi, foreign_keys=True)  # as DBOS's own engine has it

    with engine.connect() as c:
        c.exec_driver_sql("PRAGMA journal_mode=WAL")
    return engine


class Tables:
    """Some of eukhe's own tables in the store, opened (and made, when missing) at once; every
    transaction's failure is the subclass's `error`, naming what it did, the store and why."""

    error: ClassVar[type[EukheError]]
    what: ClassVar[str]  # what the tables hold, as an error says it
    meta: ClassVar[sa.MetaData]

    def __init__(self, url: str) -> None:
        self.url = url
        try:
            self._engine = serialized(url)
            made(self._engine, self.meta)
        except Exception as e:
            raise self.error(f"cannot open {self.what} in the store at {shown(url)}: {cause(e)}") from e

    def close(self) -> None:
        self._engine.dispose()

    def _tx(self, what: str, work: Callable[[sa.Connection], T]) -> T:
        try:
            with self._engine.begin() as c:
                return work(c)
        except self.error:
            raise
        except Exception as e:
            raise self.error(f"cannot {what} in the store at {shown(self.url)}: {cause(e)}") from e
