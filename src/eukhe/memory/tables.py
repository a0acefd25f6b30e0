"""The chat's tables in the project's store: the log of messages and the lines of
the tree, in the same database as the durable runs (SQLite under $EUKHE_HOME by
default, Postgres when `durable.databaseUrl` names one), never a second one.

Two `eukhe` processes may write one chat at once, and it stays right:
- an append is idempotent by its key, and ids are given in one statement, with
  writers serialized (SQLite's IMMEDIATE transactions, a Postgres advisory lock);
- a line is written once: the first build wins, a later one reads it back.

Nothing of the log or the lines is ever updated or deleted: the log is never
rewritten. Beside them, what any process may replace: the last view a turn
pinned (so the next process goes on from it instead of folding the whole log
again), and the chat's activity, which every process can read (`eukhe chat
status`): the compactor calls running now, by process, and the last settle
waits of turns and how they ended.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import sqlalchemy as sa

from eukhe.errors import Code, EukheError
from eukhe.json_types import JsonObject
from eukhe.memory.log import Entry, EntryKind, Message
from eukhe.settings.secrets import NO_SECRETS, Redaction
from eukhe.store.engine import made, serialized
from eukhe.store.processes import alive
from eukhe.store.urls import cause, shown

T = TypeVar("T")

MESSAGES = "eukhe_chat_messages"
LINES = "eukhe_chat_lines"
CALLS = "eukhe_chat_calls"
WAITS = "eukhe_chat_waits"
VIEW = "eukhe_chat_view"
INBOX = "eukhe_chat_inbox"  # messages an owner that does not write the chat hands to the one that does
WAITS_KEPT = 20
"""Settle waits kept: the newest ones, for `eukhe chat status`."""
APPEND_LOCK = 0x65756B6865  # "eukhe": the Postgres advisory lock that serializes appends
RACES = 20
"""Appends tried again after losing an id to another writer, before the store gives up."""


class ChatStoreError(EukheError, RuntimeError):
    """The chat's tables cannot be read or written: names the database and why."""

    code = Code.CHAT


_META = sa.MetaData()
_messages = sa.Table(
    MESSAGES,
    _META,
    sa.Column(
        "id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True, autoincrement=False
    ),
    sa.Column("key", sa.Text, nullable=False, unique=True),
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("size", sa.Integer, nullable=False),
    sa.Column("date", sa.Text, nullable=False),
)


def _node() -> tuple[sa.Column[int], sa.Column[int]]:
    """A tree node's key: its level and index."""
    big = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    return (
        sa.Column("l", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("i", big, primary_key=True, autoincrement=False),
    )


_lines = sa.Table(
    LINES,
    _META,
    *_node(),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("size", sa.Integer, nullable=False),
)
_calls = sa.Table(
    CALLS,
    _META,
    *_node(),
    sa.Column("host", sa.Text, nullable=False),
    sa.Column("pid", sa.Integer, nullable=False),
    sa.Column("started", sa.Float, nullable=False),
)
_waits = sa.Table(
    WAITS,
    _META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("host", sa.Text, nullable=False),
    sa.Column("pid", sa.Integer, nullable=False),
    sa.Column("at", sa.Float, nullable=False),  # when it ended (seconds since the epoch)
    sa.Column("waited", sa.Float, nullable=False),
    sa.Column("pending", sa.Integer, nullable=False),  # lines still unbuilt when it ended
    sa.Column("ended", sa.Text, nullable=False),  # "settled", "deadline" or "cancelled"
)


_view = sa.Table(
    VIEW,
    _META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),  # always 0: one view
    sa.Column("total", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
    sa.Column("parts", sa.Text, nullable=False),  # JSON: [[l, i], ...], oldest first
)


_inbox = sa.Table(
    INBOX,
    _META,
    sa.Column("n", sa.Integer, primary_key=True, autoincrement=True),  # the order they came in
    sa.Column("key", sa.Text, nullable=False, unique=True),
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("date", sa.Text, nullable=False),
)


@dataclass(frozen=True)
class Running:
    """A compactor call running now: its node, and the process that makes it."""

    l: int  # noqa: E741
    i: int
    host: str
    pid: int
    started: float


@dataclass(frozen=True)
class Wait:
    """A turn's settle wait, once it ended."""

    at: float
    waited: float
    pending: int
    ended: str
    host: str
    pid: int


_INSERT = sa.text(
    f"INSERT INTO {MESSAGES} (id, key, kind, text, size, date) "
    f"SELECT COALESCE(MAX(id) + 1, 0), :key, :kind, :text, :size, :date FROM {MESSAGES} WHERE TRUE "
    "ON CONFLICT (key) DO NOTHING"
)
"""An append: the next id, or nothing when the key is in the log already."""


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


class ChatStore:
    """The log and the lines. Every method raises ChatStoreError, never a driver's error.
    `redact`: the secret values the process knows, out of every text it writes (a message,
    one handed to the writer, a line), whoever made it."""

    def __init__(self, url: str, redact: Redaction = NO_SECRETS) -> None:
        self.url = url
        self.redact = redact
        try:
            self._engine = serialized(url)
            made(self._engine, _META)
        except Exception as e:
            raise ChatStoreError(f"cannot open the chat in the store at {shown(url)}: {cause(e)}") from e

    def close(self) -> None:
        self._engine.dispose()

    # ---------------------------------------------------------------- the log

    def append(self, entries: Sequence[Entry]) -> list[Message]:
        """Log the entries in order, in one transaction; each one's message (the one
        logged before under the same key, if any). Text is stored as given."""
        for _ in range(RACES):
            try:
                with self._engine.begin() as c:
                    return self._append(c, entries) if entries else []
            except sa.exc.IntegrityError:
                continue  # another writer took the id first: read again and retry
            except Exception as e:
                raise ChatStoreError(f"cannot log to the chat at {shown(self.url)}: {cause(e)}") from e
        raise ChatStoreError(f"cannot log to the chat at {shown(self.url)}: {RACES} lost races for an id")

    def _append(self, c: sa.Connection, entries: Sequence[Entry]) -> list[Message]:
        # one statement an entry gives it the next id, or skips a key logged before; then
        # one read of every entry's message (its own, or the first logged under its key)
        if c.dialect.name == "postgresql":  # writers one at a time, as SQLite's IMMEDIATE has them
            c.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": APPEND_LOCK})
        for e in entries:
            text = self.redact(e.text)
            row = {"key": e.key, "kind": e.kind.value, "text": text, "size": _size(text), "date": e.date}
            c.execute(_INSERT, row)
        keys = [e.key for e in entries]
        rows = {r.key: _message(r) for r in c.execute(sa.select(_messages).where(_messages.c.key.in_(keys)))}
        return [rows[k] for k in keys]

    # ---------------------------------------------------------------- the inbox

    def send(self, entries: Sequence[Entry]) -> None:
        """Hand entries to the chat's writer (from an owner that does not write it): kept
        in order, each key once, until the writer logs them."""

        def work(c: sa.Connection) -> None:
            for e in entries:
                row = {"key": e.key, "kind": e.kind.value, "text": self.redact(e.text), "date": e.date}
                if c.execute(sa.select(_inbox.c.n).where(_inbox.c.key == e.key)).first() is None:
                    c.execute(_inbox.insert().values(**row))

        self._write("hand messages to the chat's writer", work)

    def inbox(self) -> list[Entry]:
        """The entries handed to the writer and not logged yet, in the order they came."""

        def work(c: sa.Connection) -> list[Entry]:
            q = sa.select(_inbox).order_by(_inbox.c.n)
            return [Entry(str(r.key), EntryKind(r.kind), str(r.text), str(r.date)) for r in c.execute(q)]

        got: list[Entry] = self._read(work)
        return got

    def delivered(self, keys: Sequence[str]) -> None:
        """The writer logged these: out of the inbox."""
        self._write(
            "empty the chat's inbox", lambda c: c.execute(_inbox.delete().where(_inbox.c.key.in_(list(keys))))
        )

    def count(self) -> int:
        return int(
            self._read(lambda c: c.execute(sa.select(sa.func.count()).select_from(_messages)).scalar_one())
        )

    def messages(self, start: int = 0, end: int | None = None) -> list[Message]:
        """Messages [start, end) in id order."""
        q = sa.select(_messages).where(_messages.c.id >= start).order_by(_messages.c.id)
        if end is not None:
            q = q.where(_messages.c.id < end)
        got: list[Message] = self._read(lambda c: [_message(r) for r in c.execute(q)])
        return got

    def message(self, id: int) -> Message | None:
        got = self.messages(id, id + 1)
        return got[0] if got else None

    def metas(self) -> Iterator[tuple[EntryKind, int]]:
        """Every message's kind and size, in id order (what the view needs, not the texts)."""
        q = sa.select(_messages.c.kind, _messages.c.size).order_by(_messages.c.id)
        rows = self._read(lambda c: c.execute(q).all())
        return ((EntryKind(k), int(n)) for k, n in rows)

    # ---------------------------------------------------------------- the lines

    def save_line(self, l: int, i: int, text: str) -> str:  # noqa: E741 (the tree's own names)
        """Write node (l, i)'s line once; the line the store holds (the first build's)."""
        text = self.redact(text)
        try:
            with self._engine.begin() as c:
                row = c.execute(sa.select(_lines.c.text).where((_lines.c.l == l) & (_lines.c.i == i))).first()
                if row is not None:
                    return str(row[0])
                c.execute(_lines.insert().values(l=l, i=i, text=text, size=_size(text)))
                return text
        except sa.exc.IntegrityError:  # another writer built it first: its line wins
            got = self.lines([(l, i)])
            if (l, i) in got:
                return got[(l, i)]
            raise ChatStoreError(f"cannot save line {l}/{i} of the chat at {shown(self.url)}") from None
        except Exception as e:
            raise ChatStoreError(f"cannot save a line of the chat at {shown(self.url)}: {cause(e)}") from e

    def sized_lines(self) -> list[tuple[int, int, str, int]]:
        """Every built line as (level, index, text, UTF-8 bytes): what a chat loads."""
        q = sa.select(_lines.c.l, _lines.c.i, _lines.c.text, _lines.c.size)
        return [(int(l), int(i), str(t), int(n)) for l, i, t, n in self._read(lambda c: c.execute(q).all())]  # noqa: E741

    def lines(self, only: Iterable[tuple[int, int]] | None = None) -> dict[tuple[int, int], str]:
        """Every built line by (level, index), or only those asked for."""
        q = sa.select(_lines.c.l, _lines.c.i, _lines.c.text)
        rows = self._read(lambda c: c.execute(q).all())
        want = None if only is None else set(only)
        return {(int(l), int(i)): str(t) for l, i, t in rows if want is None or (int(l), int(i)) in want}  # noqa: E741

    # ---------------------------------------------------------------- the view

    def save_view(self, total: int, parts: Sequence[tuple[int, int]]) -> None:
        """The view a turn pinned, for the next process to go on from."""
        row = {"id": 0, "total": total, "parts": json.dumps([[l, i] for l, i in parts])}  # noqa: E741

        def work(c: sa.Connection) -> None:
            c.execute(_view.delete().where(_view.c.id == 0))
            c.execute(_view.insert().values(**row))

        self._write("save the view", work)

    def saved_view(self) -> tuple[int, list[tuple[int, int]]] | None:
        """The last view saved: its messages and its parts (None: none, or unreadable)."""
        r = self._read(lambda c: c.execute(sa.select(_view).where(_view.c.id == 0)).first())
        if r is None:
            return None
        try:
            parts = [(int(l), int(i)) for l, i in json.loads(r.parts)]  # noqa: E741
        except (ValueError, TypeError):
            return None  # a broken row: the view is folded from the log instead
        return int(r.total), parts

    # ---------------------------------------------------------------- the activity

    def call_started(self, l: int, i: int) -> None:  # noqa: E741
        """This process makes a compactor call for node (l, i) now."""
        row = {"l": l, "i": i, "host": socket.gethostname(), "pid": os.getpid(), "started": time.time()}
        self._write(f"record a compactor call of line {l}/{i}", lambda c: self._replace_call(c, row))

    def call_ended(self, l: int, i: int) -> None:  # noqa: E741
        where = (_calls.c.l == l) & (_calls.c.i == i) & (_calls.c.pid == os.getpid())
        self._write(
            f"record the end of a compactor call of line {l}/{i}",
            lambda c: c.execute(_calls.delete().where(where)),
        )

    def running(self) -> list[Running]:
        """The compactor calls running now: a row of a process on this host that is gone
        is a call that ended with it, and is not shown."""
        rows = self._read(lambda c: c.execute(sa.select(_calls).order_by(_calls.c.started)).all())
        here = socket.gethostname()
        out = [Running(int(r.l), int(r.i), str(r.host), int(r.pid), float(r.started)) for r in rows]
        return [r for r in out if r.host != here or alive(r.pid)]

    def waited(self, waited: float, pending: int, ended: str) -> None:
        """A turn's settle wait ended: keep it (the newest WAITS_KEPT are kept)."""
        row = {"host": socket.gethostname(), "pid": os.getpid(), "at": time.time(), "waited": waited,
               "pending": pending, "ended": ended}  # fmt: skip

        def work(c: sa.Connection) -> None:
            c.execute(_waits.insert().values(**row))
            newest = sa.select(_waits.c.id).order_by(_waits.c.id.desc()).limit(WAITS_KEPT).subquery()
            c.execute(_waits.delete().where(_waits.c.id.not_in(sa.select(newest.c.id))))

        self._write("record a settle wait", work)

    def last_wait(self) -> Wait | None:
        q = sa.select(_waits).order_by(_waits.c.id.desc()).limit(1)
        r = self._read(lambda c: c.execute(q).first())
        if r is None:
            return None
        return Wait(float(r.at), float(r.waited), int(r.pending), str(r.ended), str(r.host), int(r.pid))

    def _replace_call(self, c: sa.Connection, row: JsonObject) -> None:
        c.execute(_calls.delete().where((_calls.c.l == row["l"]) & (_calls.c.i == row["i"])))
        c.execute(_calls.insert().values(**row))

    def _write(self, what: str, work: Callable[[sa.Connection], object]) -> None:
        try:
            with self._engine.begin() as c:
                work(c)
        except Exception as e:
            raise ChatStoreError(f"cannot {what} in the chat at {shown(self.url)}: {cause(e)}") from e

    def _read(self, work: Callable[[sa.Connection], T]) -> T:
        try:
            with self._engine.connect() as c:
                return work(c)
        except Exception as e:
            raise ChatStoreError(f"cannot read the chat at {shown(self.url)}: {cause(e)}") from e


def _message(row: sa.Row[Any]) -> Message:
    return Message(int(row.id), EntryKind(row.kind), str(row.text), int(row.size), str(row.date))
