"""The endless chat as a face reads it: its entries, a page of its log, its status and a
zoom into it, another agent's session read for import. Light: the chat's tables (SQLAlchemy)
load only with `run/home_store.py`, which opens them and names their types."""

from __future__ import annotations

from eukhe.memory.browse import page
from eukhe.memory.imports import read_session
from eukhe.memory.log import Entry, EntryKind, now
from eukhe.memory.report import status_json, status_lines, zoomed

__all__ = [
    "Entry",
    "EntryKind",
    "now",
    "page",
    "read_session",
    "status_json",
    "status_lines",
    "zoomed",
]
