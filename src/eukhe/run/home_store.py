"""The home's store as a face uses it outside a run: the session service reading it as a
client (no run started, recovered or picked up), the chat's tables opened to read, other
agents' sessions imported through the owner, the store migrated. The store, its client and
the chat's tables stay behind this module and `Sessions`; this is the faces' one heavy
import of them (DBOS, SQLAlchemy), loaded only by the command that needs it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from eukhe.client.client import Client
from eukhe.client.protocol import RequestKind
from eukhe.client.remote_chat import batches
from eukhe.home import open_home
from eukhe.memory.chat import Chat
from eukhe.memory.log import Entry
from eukhe.memory.tables import ChatStore, ChatStoreError
from eukhe.run.session_service import Sessions
from eukhe.store import durable
from eukhe.store.fleet_status import FleetView, read_fleet
from eukhe.store.lineage import LineageError
from eukhe.store.migrate import Migrated, migrate
from eukhe.store.reports import FOLLOWUP, STEER
from eukhe.store.session_runs import Row as SessionRow
from eukhe.store.urls import shown, sqlite_path

__all__ = [
    "FOLLOWUP",
    "STEER",
    "Chat",
    "ChatStore",
    "ChatStoreError",
    "FleetView",
    "LineageError",
    "Migrated",
    "SessionRow",
    "import_entries",
    "migrate_home",
    "open_chat",
    "open_chat_store",
    "read_fleet",
    "reading",
]


@asynccontextmanager
async def reading(url: str, home: Path) -> AsyncIterator[Sessions]:
    """The session service over the store at `url`, read as a client; its client is let go
    on the way out."""
    client = durable.client(url, home)
    try:
        yield Sessions(url, home, client)
    finally:
        client.destroy()


def open_chat_store(url: str, home: Path) -> ChatStore:
    """The chat's tables in the home's store at `url` (the home made if it is not yet)."""
    open_home(home)
    return ChatStore(url)


def open_chat(store: ChatStore, budget: int) -> Chat:
    """The chat as loaded from `store`, to read (no compactor), its view within `budget` bytes."""
    return Chat(store, budget=budget)


async def import_entries(where: Path, entries: list[Entry]) -> tuple[int, int, int]:
    """The entries through the owner, in batches; how many are in the log, how many of
    them are new, and how many were handed to another owner that writes the chat."""
    logged = new = handed = 0
    client = await Client.connect(where, spawn=True)
    try:
        for batch in batches(entries):  # a long session goes in several requests, in order
            got = await client.request(RequestKind.IMPORT, entries=[e.json() for e in batch])
            logged += int(got["logged"])
            new += int(got["new"])
            handed += len(batch) if got.get("handed") else 0
    finally:
        await client.close()
    return logged, new, handed


def migrate_home(home: Path) -> tuple[str, Migrated | None, str]:
    """Migrate the home's store (`store.migrate`): its URL as shown, what was done
    (None: the store does not exist yet), and the version its runs in flight went to."""
    url = durable.own_url(home)
    file = sqlite_path(url)
    if file is not None and not Path(file).exists():
        return shown(url), None, durable.VERSION
    return shown(url), migrate(url, durable.VERSION), durable.VERSION
