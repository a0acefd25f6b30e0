"""A fresh database on the test machine's Postgres (127.0.0.1:5432, trust auth), for
tests of the store on Postgres; skipped with the reason where no server answers."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

POSTGRES = os.environ.get("EUKHE_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


def fresh_database() -> str:
    """A new, empty database on the test server (dropped by the caller); its name."""
    psycopg = pytest.importorskip("psycopg")
    try:
        conn = psycopg.connect(POSTGRES, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as e:
        pytest.skip(f"no Postgres server answers at {POSTGRES} (set EUKHE_TEST_POSTGRES_URL): {e}")
    name = f"eukhe_{secrets.token_hex(4)}"
    with conn:
        conn.execute(f"CREATE DATABASE {name}")
    return name


def drop(name: str) -> None:
    import psycopg

    with psycopg.connect(POSTGRES, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def url_of(name: str) -> str:
    """The URL of database `name` on the test server."""
    return POSTGRES.rsplit("/", 1)[0] + "/" + name


def fresh_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fixture's body: a fresh store of the kind its param names, "sqlite" (a file in
    `tmp_path`) or "postgres" (a new database, dropped after); its URL."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'eukhe.sqlite'}"
        return
    name = fresh_database()
    try:
        yield url_of(name)
    finally:
        drop(name)
