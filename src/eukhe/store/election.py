"""Which owner writes the chat, when the owners of several homes (on one host or
many) share one Postgres store: the one whose connection holds a session-level
advisory lock. Postgres frees the lock when that connection ends, however its
process ended, so a killed writer's successor wins it at its next try.

A store in SQLite belongs to one home, whose one owner (the home's `flock`)
always writes it.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from eukhe.store.urls import cause, engine_url, shown

WRITER_LOCK = 0x65756B6863  # "eukhc": held by the connection of the chat's one writer


class Election:
    def __init__(self, url: str) -> None:
        self.url = url
        self.shared = engine_url(url).startswith("postgresql")
        self._engine: sa.Engine | None = None
        self._conn: sa.Connection | None = (
            None  # the connection that holds the lock, while this process writes
        )
        self.why = ""  # why the last try failed, when it failed

    @property
    def won(self) -> bool:
        return not self.shared or self._conn is not None

    def attempt(self) -> bool:
        """Win the lock now, or keep it (a writer whose connection broke has lost it):
        whether this process writes the chat. Never waits for the lock."""
        if not self.shared:
            return True
        try:
            if self._conn is not None:
                self._conn.execute(sa.text("SELECT 1"))  # still ours: the connection lives
                return True
            if self._engine is None:
                self._engine = sa.create_engine(engine_url(self.url), poolclass=NullPool)
            conn = self._engine.connect()
            got = conn.execute(sa.text("SELECT pg_try_advisory_lock(:k)"), {"k": WRITER_LOCK}).scalar()
            conn.commit()
            if got:
                self._conn = conn
            else:
                conn.close()
            self.why = ""
        except Exception as e:  # the store is away: this process does not write until it is back
            self.why = f"the store at {shown(self.url)}: {cause(e)}"
            self._drop()
        return self._conn is not None

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # a broken connection: Postgres frees its lock with it
                self.why = self.why or "the writer's connection broke"

    def close(self) -> None:
        """Give the lock up (the next owner that tries wins it)."""
        self._drop()
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
