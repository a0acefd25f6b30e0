"""The chat memory in the home's owner, its only writer, with real `eukhe` processes
as its clients: the owner's compactor builds the lines of every session's
messages in background slots, which a terminal's session turn preempts (H3); an
owner killed in the middle of a compactor call loses nothing (H1)."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from eukhe.ai.faux import FauxServer, parse
from eukhe.client.client import alive, read_info
from eukhe.memory.tables import ChatStore
from tests.proc import Reader, eukhe, owner_log, start, until

ONE_SLOT = {"providers": {"vllm": {"concurrency": 1}}}
LONG = "The deploy failed on host three: the disk was full, and the logs say so at length. " * 10
LINE = "The deploy failed: disk full on host three."
STALLS_ONCE = [  # the first turn's long answer; its line's first call stalls, the next one builds it
    {"when": "first", "text": LONG},
    {"when": "Compress this message", "stallAfter": 0, "stall": 60},
    {"when": "Compress this message", "text": LINE},
    {"when": "second", "text": "second answered"},
]


def settings(home: Path, value: dict[str, Any]) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(json.dumps(value), encoding="utf-8")


def run(server: FauxServer, session: str, prompt: str, cwd: Path, home: Path) -> Any:
    return eukhe(
        "run", "--model", "vllm/m", "--base-url", server.url, "--session", session, prompt, cwd=cwd, home=home
    )


def compactor_requests(server: FauxServer) -> list[Any]:
    return [s for s in server.seen if "Compress this message" in json.dumps(s.body)]


def logged(home: Path) -> list[tuple[str, str]]:
    store = ChatStore(f"sqlite:///{home / 'eukhe.sqlite'}")
    try:
        return [(m.kind.value, m.text) for m in store.messages()]
    finally:
        store.close()


def test_a_session_turn_preempts_the_owners_compactor_building_another_sessions_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """H3 across processes, on a one-slot provider: the first session's long answer is
    logged, and the owner's compactor streams its line (background, a minute); a
    turn of another session in another terminal waits out its settle deadline, asks
    the provider, preempts the compactor at the owner, and is answered first; the
    compactor asks again after it."""
    # one owner for both terminals, however slow the second's start (an owner that ended
    # idle meanwhile would take its compactor's stream with it); `eukhe shutdown` ends it
    monkeypatch.setenv("EUKHE_OWNER_IDLE_MS", "60000")
    home = tmp_path / "home"
    settings(home, {**ONE_SLOT, "memory": {"settleTimeoutMs": 1_000}})
    script = [
        {"when": "first", "text": LONG},
        {"when": "Compress this message", "text": "slow " * 1200, "chunks": 1200, "delay": 0.05},
        {"when": "second", "text": "second answered"},
        {"when": "Compress this message", "text": "The deploy failed: disk full on host three."},
    ]
    with FauxServer(parse(script)) as server:
        first = run(server, "s-one", "first", tmp_path, home)
        assert first.returncode == 0, first.stderr
        until("the owner's compactor request", lambda: len(compactor_requests(server)) >= 1)
        began = time.monotonic()
        second = run(server, "s-two", "second", tmp_path, home)
        took = time.monotonic() - began
        assert second.returncode == 0, second.stderr
        assert second.stdout.endswith("\nsecond answered\n"), second.stdout
        until("the compactor's second request", lambda: len(compactor_requests(server)) >= 2)
        seen = list(server.seen)
        assert eukhe("shutdown", cwd=tmp_path, home=home).returncode == 0
    kinds = ["compactor" if "Compress this message" in json.dumps(s.body) else "turn" for s in seen]
    assert kinds[:4] == ["turn", "compactor", "turn", "compactor"], kinds
    assert seen[1].hung_up  # the compactor's stream was preempted in the middle
    assert "second" in json.dumps(seen[2].body["messages"][-1])
    assert took < 30, took  # the turn never waited for the minute-long compactor stream
    assert "memory: the settle deadline passed; the turn goes on with 1 line shown cut" in second.stdout
    # into a pipe the wait is one line at its start and one at its end, and the way out once
    assert second.stdout.count(" pending, ") == 1, second.stdout
    assert second.stdout.count("a smaller auxiliaryModel builds them sooner") == 1, second.stdout


def test_an_owner_killed_in_a_compactor_call_loses_nothing(tmp_path: Path) -> None:
    """SIGKILL the owner while its compactor call for a logged message streams: the log
    keeps every message once, and the next owner (started by the next turn) builds
    that line, which the next turn's view shows."""
    home = tmp_path / "home"
    settings(home, {"memory": {"settleTimeoutMs": 20_000}})
    with FauxServer(parse(STALLS_ONCE)) as server:
        first = run(server, "s-one", "first", tmp_path, home)
        assert first.returncode == 0, first.stderr
        until("the owner's compactor request", lambda: len(compactor_requests(server)) >= 1)
        info = read_info(home)
        assert info is not None
        before = logged(home)
        os.kill(int(info["pid"]), signal.SIGKILL)
        until("the owner's end", lambda: not alive(int(info["pid"])))
        second = run(server, "s-two", "second", tmp_path, home)
        assert second.returncode == 0, second.stderr + owner_log(home)
        seen = list(server.seen)
    assert before == [("user", "first"), ("talk", LONG)]
    assert logged(home) == [*before, ("user", "second"), ("talk", "second answered")]
    [turn] = [s for s in seen if "second" in json.dumps(s.body["messages"][-1])]
    view = turn.body["messages"][0]["content"]
    assert f"1+1|{LINE}" in view, view[-600:]  # the line the new owner built
    assert len(compactor_requests(server)) == 2
    new = read_info(home)
    assert new is not None and new["pid"] != info["pid"]


def test_an_owner_killed_while_a_turn_waits_for_its_view_hands_the_turn_to_the_next(tmp_path: Path) -> None:
    """SIGKILL the owner while a turn of another terminal waits for its view (the
    line it needs is in a stalled compactor call): the turn asks the next owner, which
    its asking starts, and that one builds the line; the turn is answered, within its
    settle deadline, with the line in its view."""
    home = tmp_path / "home"
    settings(home, {"memory": {"settleTimeoutMs": 30_000}})
    with FauxServer(parse(STALLS_ONCE)) as server:
        first = run(server, "s-one", "first", tmp_path, home)
        assert first.returncode == 0, first.stderr
        args = ["run", "--model", "vllm/m", "--base-url", server.url, "--session", "s-two", "second"]
        second = start(*args, cwd=tmp_path, home=home)
        r = Reader(second)
        try:
            until("the turn's wait for its view", lambda: any(" pending, " in x for x in r.out))
            info = read_info(home)
            assert info is not None
            began = time.monotonic()
            os.kill(int(info["pid"]), signal.SIGKILL)
            assert second.wait(timeout=60) == 0, "".join(r.err) + owner_log(home)
            took = time.monotonic() - began
        finally:
            if second.poll() is None:
                second.kill()
        seen = list(server.seen)
    assert "second answered\n" in r.to_end().out
    [turn] = [x for x in seen if "second" in json.dumps(x.body["messages"][-1])]
    assert f"1+1|{LINE}" in turn.body["messages"][0]["content"]
    assert len(compactor_requests(server)) == 2 and took < 30
    assert logged(home) == [
        ("user", "first"),
        ("talk", LONG),
        ("user", "second"),
        ("talk", "second answered"),
    ]


def test_owners_sharing_a_postgres_store_elect_one_writer_and_a_survivor_takes_over(tmp_path: Path) -> None:
    """Two homes on one Postgres store, an owner each: the first to open the chat
    writes it; the other writes none of it (its turn's messages reach the log
    through the writer, in order, once). SIGKILL the writer: the survivor takes over
    at its next try, logs its next turn itself and gives it a view with them all."""
    from tests.store.postgres import drop, fresh_database, url_of

    name = fresh_database()
    url = url_of(name)
    homes = [tmp_path / "one", tmp_path / "two"]
    extra = {"EUKHE_OWNER_IDLE_MS": "120000"}  # both owners live through the whole test
    for h in homes:
        settings(h, {"durable": {"databaseUrl": url}})

    def turn(server: FauxServer, home: Path, session: str, prompt: str) -> Any:
        args = ["run", "--model", "vllm/m", "--base-url", server.url, "--session", session, prompt]
        done = eukhe(*args, cwd=tmp_path, home=home, extra=extra)
        assert done.returncode == 0, done.stderr + owner_log(home)
        return done

    def memory(home: Path) -> dict[str, Any]:
        done = eukhe("status", "--json", cwd=tmp_path, home=home, extra=extra)
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout)["memory"] or {})

    def log() -> list[tuple[str, str]]:
        store = ChatStore(url)
        try:
            return [(m.kind.value, m.text) for m in store.messages()]
        finally:
            store.close()

    script = [
        {"when": "one", "text": "first answer"},
        {"when": "two", "text": "second answer"},
        {"when": "three", "text": "third answer"},
    ]
    try:
        with FauxServer(parse(script)) as server:
            turn(server, homes[0], "s-one", "one")
            turn(server, homes[1], "s-two", "two")
            both = [("user", "one"), ("talk", "first answer"), ("user", "two"), ("talk", "second answer")]
            until("the writer to log the other owner's messages", lambda: log() == both)
            for _ in range(3):  # never both
                assert [memory(h)["writer"] for h in homes] == [True, False]
            info = read_info(homes[0])
            assert info is not None
            os.kill(int(info["pid"]), signal.SIGKILL)
            until(
                "the survivor to write",
                lambda: memory(homes[1])["writer"] is True,
                about=lambda: owner_log(homes[1]),
            )
            turn(server, homes[1], "s-two", "three")
            seen = list(server.seen)
        assert log() == [*both, ("user", "three"), ("talk", "third answer")]
        [last] = [s for s in seen if s.body["messages"][-1]["content"] == "three"]
        view = last.body["messages"][0]["content"]
        assert "0+1|user: one" in view and "3+1|talk: second answer" in view, view[-400:]
        assert "this owner writes the chat now" in owner_log(homes[1])
    finally:
        for h in homes:
            eukhe("shutdown", cwd=tmp_path, home=h, extra=extra)
        drop(name)
