"""eukhe's own tables in the store are made once, whoever opens it (issue 56): 50 openers
started together on a fresh store, and on one of the previous layout (its older tables
there, the newer ones not yet), each open every table set of eukhe's at once, on SQLite
and on Postgres, and none fails."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
import sqlalchemy as sa

from eukhe.memory.tables import ChatStore
from eukhe.store.hook_answers import HookAnswers
from eukhe.store.images import Images
from eukhe.store.lease_holder import LeaseHolderStore
from eukhe.store.lineage import Lineages
from eukhe.store.reports import Reports
from tests.store.postgres import fresh_store

OPENERS = 50

# fifty connections at once on Postgres: never beside the fleet's tests and bench, which take
# many too (the server's 100 are shared by every test of the suite)
pytestmark = pytest.mark.xdist_group("postgres-heavy")

OPENS: tuple[Callable[[str], object], ...] = (
    Lineages,
    Images,
    HookAnswers,
    Reports,
    ChatStore,
    lambda url: LeaseHolderStore(url, "a home"),
)


def _opened(url: str) -> list[str]:
    """Every opener's failures (none: each opened every table set)."""
    gate = threading.Barrier(OPENERS)
    failed: list[str] = []

    def open_all() -> None:
        gate.wait()
        for opener in OPENS:
            try:
                got = opener(url)
            except Exception as e:
                failed.append(f"{type(e).__name__}: {e}")
                continue
            close = getattr(got, "close", None)
            if close is not None:
                close()

    threads = [threading.Thread(target=open_all) for _ in range(OPENERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return failed


def _older(url: str) -> None:
    """The store as the previous layout left it: one table of each set made, not the rest."""
    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    try:
        with engine.begin() as c:
            c.exec_driver_sql(
                "CREATE TABLE eukhe_session_forks (session TEXT PRIMARY KEY, parent TEXT NOT NULL, "
                'upto INTEGER NOT NULL, "at" FLOAT NOT NULL)'
            )
    finally:
        engine.dispose()


store = pytest.fixture(params=["sqlite", "postgres"], name="store")(fresh_store)


def test_fifty_openers_at_once_on_a_fresh_store_all_open(store: str) -> None:
    assert _opened(store) == []


def test_fifty_openers_at_once_on_a_store_of_the_previous_layout_all_open(store: str) -> None:
    _older(store)
    assert _opened(store) == []
