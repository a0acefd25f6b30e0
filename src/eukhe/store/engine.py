"""The SQLAlchemy engine of eukhe's own tables in the store: on SQLite, every
transaction IMMEDIATE (writers one at a time, as DBOS has them, so a read-then-write
is atomic) and a busy writer waited for up to 30 s rather than failed."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

from eukhe.store.urls import engine_url, private_store

BUSY_MS = 30_000
"""How long a SQLite writer waits for another to finish."""


def serialized(url: str) -> sa.Engine:
    private_store(url)  # before SQLite makes the file, or its journals, with the umask's mode
    engine = sa.create_engine(engine_url(url))
    if engine.dialect.name == "sqlite":

        @event.listens_for(engine, "connect")
        def _sqlite(dbapi: Any, _record: Any) -> None:
            dbapi.isolation_level = "IMMEDIATE"
            dbapi.execute(f"PRAGMA busy_timeout={BUSY_MS}")

    return engine
