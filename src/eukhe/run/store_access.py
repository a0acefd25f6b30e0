"""The home's store as a face names it before it opens it: its URL (as shown, with no
password), the file of a SQLite one, its errors in words, and `eukhe doctor`'s probe of it.
Light: the URL is read, no store is loaded (the probe loads SQLAlchemy when it runs)."""

from __future__ import annotations

from eukhe.store.probe import read_problem
from eukhe.store.urls import StoreError, cause, database_url, shown, sqlite_path

__all__ = ["StoreError", "cause", "database_url", "read_problem", "shown", "sqlite_path"]
