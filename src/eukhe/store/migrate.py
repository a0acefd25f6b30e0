"""The home's own store, as an earlier eukhe left it, brought up to this one: its
pickled rows rewritten as eukhe's JSON (`codec`), and its runs in flight handed to this
version, so that every session stays readable and every cut-off run resumable.

Pickle runs code as it reads, so this reads pickled rows only from the home's own
store, which the user's own eukhe wrote (`guard`); `eukhe store migrate` runs it, and
so does the opening of that store. It is one transaction: a crash leaves the store as
it was or wholly rewritten, and a second run finds nothing left.
"""

from __future__ import annotations

import base64
import pickle
from dataclasses import dataclass

import sqlalchemy as sa

from eukhe.store import codec
from eukhe.store.guard import PICKLE, SCHEMA
from eukhe.store.session_runs import IN_FLIGHT
from eukhe.store.urls import StoreError, cause, engine_url, shown

# the columns DBOS serializes, by table; where a table has no serialization column of its
# own, its rows are its workflow's (workflow_status.serialization)
COLUMNS: dict[str, tuple[str, ...]] = {
    "workflow_input": ("inputs",),  # before workflow_status, whose serialization says which are pickled
    "workflow_output": ("output", "error"),
    "workflow_status": ("inputs", "output", "error"),
    "operation_outputs": ("output", "error"),
    "notifications": ("message",),
    "workflow_events": ("value",),
    "workflow_events_history": ("value",),
    "streams": ("value",),
}
BY_WORKFLOW = ("workflow_input", "workflow_output")


@dataclass(frozen=True)
class Migrated:
    rows: int  # rows rewritten as JSON
    runs: int  # runs in flight handed to this version


def _json(text: str | None) -> str | None:
    if text is None:
        return None
    value = pickle.loads(base64.b64decode(text))  # the home's own store only (see the module)
    return codec.Codec().serialize(value)


def migrate(url: str, version: str) -> Migrated:
    """Rewrite the store's pickled rows as JSON, and give its runs in flight `version`
    (DBOS hands a run only to an executor of its own version)."""
    try:
        engine = sa.create_engine(engine_url(url))
    except Exception as e:
        raise StoreError(f"cannot migrate the store at {shown(url)}: {cause(e)}") from e
    schema = SCHEMA if engine.dialect.name == "postgresql" else None
    rows = runs = 0
    try:
        look = sa.inspect(engine)
        if schema is not None and schema not in look.get_schema_names():
            return Migrated(0, 0)
        tables = set(look.get_table_names(schema=schema))
        meta = sa.MetaData()
        if "workflow_status" not in tables:
            return Migrated(0, 0)
        status = sa.Table("workflow_status", meta, autoload_with=engine, schema=schema)
        pickled = sa.select(status.c.workflow_uuid).where(status.c.serialization == PICKLE)
        with engine.begin() as c:
            for name, columns in COLUMNS.items():
                if name not in tables:
                    continue
                t = (
                    status
                    if name == "workflow_status"
                    else sa.Table(name, meta, autoload_with=engine, schema=schema)
                )
                cols = [x for x in columns if x in t.c]
                keys = list(t.primary_key.columns)
                if not cols or not keys:
                    continue
                where = t.c.workflow_uuid.in_(pickled) if name in BY_WORKFLOW else t.c.serialization == PICKLE
                found = c.execute(sa.select(*keys, *[t.c[x] for x in cols]).where(where)).all()
                for row in found:
                    new = {x: _json(v) for x, v in zip(cols, row[len(keys) :], strict=True)}
                    if name not in BY_WORKFLOW:
                        new["serialization"] = codec.NAME
                    match = sa.and_(*[k == v for k, v in zip(keys, row[: len(keys)], strict=True)])
                    c.execute(t.update().where(match).values(**new))
                rows += len(found)
            handed = c.execute(
                status.update()
                .where(status.c.status.in_(IN_FLIGHT) & (status.c.application_version != version))
                .values(application_version=version)
            )
            runs = int(handed.rowcount or 0)
        return Migrated(rows, runs)
    except StoreError:
        raise
    except Exception as e:
        raise StoreError(f"cannot migrate the store at {shown(url)}: {cause(e)}") from e
    finally:
        engine.dispose()
