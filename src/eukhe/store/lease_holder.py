"""Who holds the root-turn lease, in the store: written by the owner when it grants
the lease, cleared when the lease is free. An owner that starts after another died
reads it: while the process it names (pid and start time, on this host) still
runs, its turn may still run, and the new owner grants the lease to no one else
(H6.2: two turns never overlap, and nothing waits on a process that is gone).

One record a home (its host and path): homes that share a Postgres store have a
lease each, and never clear or adopt each other's holder."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from eukhe.errors import Code, EukheError
from eukhe.json_types import JsonObject
from eukhe.store.engine import made
from eukhe.store.urls import cause, engine_url, private_store, shown

TURN = "eukhe_turn_holder"

_META = sa.MetaData()
_turn = sa.Table(
    TURN,
    _META,
    sa.Column("home", sa.Text, primary_key=True),  # "host:path" of the home whose lease it is
    sa.Column("host", sa.Text, nullable=False),
    sa.Column("pid", sa.Integer, nullable=False),
    sa.Column("started", sa.Float, nullable=True),
    sa.Column("session", sa.Text, nullable=False),
    sa.Column("run", sa.Text, nullable=False),
    sa.Column("since", sa.Float, nullable=False),
)


class LeaseHolderError(EukheError, RuntimeError):
    """The holder's record cannot be read or written: names the database and why."""

    code = Code.STORE


@dataclass(frozen=True)
class Holder:
    host: str
    pid: int
    started: float | None
    session: str
    run: str
    since: float

    def about(self) -> JsonObject:
        return {"session": self.session, "run": self.run, "pid": self.pid, "since": self.since}


class LeaseHolderStore:
    def __init__(self, url: str, home: str) -> None:
        self.url = url
        self.home = home
        try:
            private_store(url)
            self._engine = sa.create_engine(engine_url(url))
            made(self._engine, _META)
        except Exception as e:
            why = f"cannot open the lease record in the store at {shown(url)}: {cause(e)}"
            raise LeaseHolderError(why) from e

    def hold(self, h: Holder | None) -> None:
        """Record the holder (None: the lease is free)."""
        try:
            with self._engine.begin() as c:
                c.execute(_turn.delete().where(_turn.c.home == self.home))
                if h is not None:
                    c.execute(_turn.insert().values(home=self.home, **h.__dict__))
        except Exception as e:
            raise LeaseHolderError(f"cannot record the lease holder at {shown(self.url)}: {cause(e)}") from e

    def holder(self) -> Holder | None:
        try:
            with self._engine.connect() as c:
                row = c.execute(sa.select(_turn).where(_turn.c.home == self.home)).first()
        except Exception as e:
            raise LeaseHolderError(f"cannot read the lease holder at {shown(self.url)}: {cause(e)}") from e
        if row is None:
            return None
        return Holder(row.host, int(row.pid), row.started, row.session, row.run, float(row.since))

    def close(self) -> None:
        self._engine.dispose()
