"""Where the store is, and how it is named: `durable.databaseUrl` or SQLite in the
home, the URL as SQLAlchemy takes it, as it is shown (no password), and a driver
error's cause. Light on purpose (no DBOS): the owner opens the store with it."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path

from eukhe.errors import Code, EukheError
from eukhe.home import HomeError, private_file
from eukhe.json_types import JsonMapping

__all__ = ["StoreError", "cause", "database_url", "engine_url", "private_store", "shown", "sqlite_path"]


class StoreError(EukheError, RuntimeError):
    """The durable store cannot be opened: names the database and why."""

    code = Code.STORE


def database_url(home: Path, settings: JsonMapping) -> str:
    """`durable.databaseUrl`, else SQLite at `$EUKHE_HOME/eukhe.sqlite`."""
    durable = settings.get("durable")
    url = durable.get("databaseUrl") if isinstance(durable, Mapping) else None
    if url is not None and (not isinstance(url, str) or not url.strip()):
        raise StoreError(f"setting durable.databaseUrl={url!r}: expected a database URL string")
    return url or f"sqlite:///{home / 'eukhe.sqlite'}"


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL (None: another database, or SQLite in memory)."""
    if not url.startswith("sqlite:///"):
        return None
    path = url.removeprefix("sqlite:///").partition("?")[0]
    return Path(path) if path and path != ":memory:" else None


def private_store(url: str) -> None:
    """A SQLite store's file made 0600 before SQLite opens it (made empty if missing,
    which SQLite takes as a new database): SQLite makes its journal, `-wal` and `-shm`
    with the main file's mode, so they are private too. Other databases: nothing."""
    path = sqlite_path(url)
    if path is None or not path.parent.is_dir():
        return  # no folder: SQLite's own error says so
    with contextlib.suppress(OSError):
        st = os.lstat(path)
        if stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077:
            # private already: not opened here. Closing any descriptor of a file drops every
            # POSIX lock this process holds on it, SQLite's own included (a writer's, or the
            # one that tells other processes a WAL is in use, which then may remove it)
            return
    try:
        private_file(path)
    except HomeError as e:
        raise StoreError(f"the store {path}: {e}") from e


def engine_url(url: str) -> str:
    """The URL as SQLAlchemy takes it: Postgres through psycopg 3 (what DBOS uses)."""
    for scheme in ("postgresql://", "postgres://"):
        if url.startswith(scheme):
            return "postgresql+psycopg://" + url[len(scheme) :]
    return url


def shown(url: str) -> str:
    """The URL with any password hidden."""
    scheme, sep, rest = url.partition("://")
    creds, at, host = rest.rpartition("@")
    if not at or ":" not in creds:
        return url
    return f"{scheme}{sep}{creds.partition(':')[0]}:***@{host}"


def cause(e: BaseException) -> str:
    """An error's kind and first line (the database driver's own: not the SQL it ran,
    nor the links to its documentation that SQLAlchemy appends)."""
    inner = getattr(e, "orig", None) or e
    first = (str(inner).strip().splitlines() or [""])[0]
    return f"{type(inner).__name__}: {first}" if first else type(inner).__name__
