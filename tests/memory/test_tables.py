"""The chat's tables: appends idempotent by key, ids in order with nothing lost or
doubled when two processes write at once, a line written once (the first build
wins), on SQLite and on Postgres."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from eukhe.memory.log import Entry, EntryKind
from eukhe.memory.tables import ChatStore, ChatStoreError
from tests.store.postgres import fresh_store

url = pytest.fixture(params=["sqlite", "postgres"], name="url")(fresh_store)


def entry(key: str, text: str = "hi", kind: EntryKind = EntryKind.USER) -> Entry:
    return Entry(key, kind, text, "2026-12-01T00:00:00Z")


def test_appends_get_ids_in_order_and_a_key_logs_once(url: str) -> None:
    store = ChatStore(url)
    try:
        first = store.append([entry("r/1", "a"), entry("r/2", "bé", EntryKind.TALK)])
        again = store.append([entry("r/2", "other text"), entry("r/3", "c")])
        assert [(m.id, m.text, m.size) for m in first] == [(0, "a", 1), (1, "bé", 3)]
        assert [(m.id, m.text) for m in again] == [(1, "bé"), (2, "c")]  # the key's first message
        assert [m.text for m in store.messages()] == ["a", "bé", "c"]
        assert [m.text for m in store.messages(1, 2)] == ["bé"] and store.count() == 3
        assert list(store.metas()) == [(EntryKind.USER, 1), (EntryKind.TALK, 3), (EntryKind.USER, 1)]
    finally:
        store.close()


def test_a_line_is_written_once_and_the_first_build_wins(url: str) -> None:
    store = ChatStore(url)
    try:
        assert store.save_line(0, 0, "user: a") == "user: a"
        assert store.save_line(0, 0, "user: another build") == "user: a"
        assert store.save_line(1, 0, "both") == "both"
        assert store.lines() == {(0, 0): "user: a", (1, 0): "both"}
    finally:
        store.close()


def _writer(url: str, who: int, n: int) -> None:
    store = ChatStore(url)
    try:
        for k in range(n):
            store.append([entry(f"w{who}/{k}", f"{who}:{k}")])
            store.append([entry(f"shared/{k}", f"shared {k}")])  # both writers log the same keys
    finally:
        store.close()


def test_two_processes_writing_at_once_lose_nothing_and_double_nothing(url: str) -> None:
    ChatStore(url).close()  # the tables exist before the writers race
    n = 60
    ctx = multiprocessing.get_context("spawn")
    writers = [ctx.Process(target=_writer, args=(url, who, n)) for who in (1, 2)]
    for w in writers:
        w.start()
    for w in writers:
        w.join(timeout=120)
        assert w.exitcode == 0
    store = ChatStore(url)
    try:
        got = store.messages()
    finally:
        store.close()
    assert [m.id for m in got] == list(range(3 * n))
    texts = [m.text for m in got]
    assert sorted(texts) == sorted(
        [f"{w}:{k}" for w in (1, 2) for k in range(n)] + [f"shared {k}" for k in range(n)]
    )
    for w in (1, 2):  # each writer's own messages keep their order
        mine = [t for t in texts if t.startswith(f"{w}:")]
        assert mine == [f"{w}:{k}" for k in range(n)]


def test_a_store_that_cannot_be_opened_is_one_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "not-a-db.sqlite"
    bad.write_bytes(b"this is not a database\x00" * 100)
    with pytest.raises(
        ChatStoreError, match=r"^cannot open the chat in the store at sqlite:///.*: DatabaseError: "
    ):
        ChatStore(f"sqlite:///{bad}")
    assert bad.read_bytes() == b"this is not a database\x00" * 100  # left as it was
