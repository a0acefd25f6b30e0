"""A store is looked at before DBOS reads it: DBOS decodes each row by the serializer
name the row itself carries, so a store that holds pickled rows runs their code the
moment DBOS reads them (a listing, a recovery, a session shown), whatever serializer
eukhe gives it.

So before DBOS opens a store, eukhe reads the serializer names of its rows: only its
own JSON (`codec.NAME`), DBOS's portable JSON, or none (the configured serializer:
eukhe's). Pickled rows are read only from the home's own store, which the user's
own eukhe wrote before it wrote JSON (`eukhe store migrate` rewrites them); in any
other store they are refused, and the store is never opened.
"""

from __future__ import annotations

import sqlalchemy as sa

from eukhe.store import codec
from eukhe.store.urls import StoreError, cause, engine_url, shown

PICKLE = "py_pickle"
SAFE = frozenset({codec.NAME, "portable_json"})
"""Serializations DBOS decodes without running code (besides none: eukhe's codec then)."""

SCHEMA = "dbos"
"""Where DBOS keeps its tables on Postgres (on SQLite: the database itself)."""


def _tables(c: sa.Connection) -> list[tuple[str | None, str]]:
    """DBOS's tables that carry a `serialization` column (those it decodes by it), read from
    the database's catalog in one query (SQLAlchemy's reflection took a query a table and
    a tenth of a short run's CPU, each run)."""
    if c.dialect.name == "postgresql":
        q = sa.text(
            "SELECT table_name FROM information_schema.columns"
            " WHERE table_schema = :schema AND column_name = 'serialization' ORDER BY table_name"
        )
        return [(SCHEMA, str(name)) for (name,) in c.execute(q, {"schema": SCHEMA})]
    q = sa.text(
        "SELECT m.name FROM sqlite_master AS m, pragma_table_info(m.name) AS p"
        " WHERE m.type = 'table' AND p.name = 'serialization' ORDER BY m.name"
    )
    return [(None, str(name)) for (name,) in c.execute(q)]


def serializations(url: str) -> dict[str, dict[str, int]]:
    """Each of the store's DBOS tables: how many of its rows each serializer wrote."""
    try:
        engine = sa.create_engine(engine_url(url))
    except Exception as e:
        raise StoreError(f"cannot look at the store at {shown(url)}: {cause(e)}") from e
    try:
        out: dict[str, dict[str, int]] = {}
        with engine.connect() as c:
            for schema, table in _tables(c):
                t = sa.Table(table, sa.MetaData(), sa.Column("serialization", sa.Text), schema=schema)
                rows = c.execute(sa.select(t.c.serialization, sa.func.count()).group_by(t.c.serialization))
                out[table] = {str(name): int(n) for name, n in rows if name is not None}
        return out
    except Exception as e:
        raise StoreError(f"cannot look at the store at {shown(url)}: {cause(e)}") from e
    finally:
        engine.dispose()


def check(url: str, own: bool) -> int:
    """Refuse a store whose rows DBOS would decode by running code: any serializer but
    eukhe's JSON, unless `own` (the home's own store) and it is pickle. How many pickled
    rows the store holds (an own store's, which `eukhe store migrate` rewrites)."""
    pickled = 0
    for table, names in serializations(url).items():
        for name, n in names.items():
            if name in SAFE:
                continue
            if name == PICKLE and own:
                pickled += n
                continue
            why = (
                "a store it did not write (eukhe reads pickled rows only from its home's own store)"
                if name == PICKLE
                else "rows of a serializer it does not know"
            )
            raise StoreError(
                f"refusing the store at {shown(url)}: its table {table} holds {n} rows written by the "
                f"{name!r} serializer, which runs code as it reads them, and eukhe never reads {why}"
            )
    return pickled
