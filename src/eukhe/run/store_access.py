"""The home's store as a face names it before it opens it: its URL (as shown, with no
password), the file of a SQLite one, and its errors in words. Light: the URL is read, no
store is loaded."""

from __future__ import annotations

from eukhe.store.urls import StoreError, cause, database_url, shown, sqlite_path

__all__ = ["StoreError", "cause", "database_url", "shown", "sqlite_path"]
