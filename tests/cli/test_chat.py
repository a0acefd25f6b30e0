"""`eukhe chat ...` as a person runs it: real processes, the home's real store."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from eukhe.memory.tables import ChatStore
from tests.proc import eukhe, start

SESSIONS = Path(__file__).resolve().parents[1] / "fixtures" / "sessions"


def logged(cwd: Path) -> list[tuple[str, str]]:
    store = ChatStore(f"sqlite:///{cwd / 'home' / 'eukhe.sqlite'}")
    try:
        return [(m.kind.value, m.text) for m in store.messages()]
    finally:
        store.close()


def test_import_logs_each_file_once_and_refuses_a_foreign_one(tmp_path: Path) -> None:
    files = sorted(str(p) for p in SESSIONS.rglob("*") if p.is_file() and p.name != "INDEX.md")
    foreign = tmp_path / "notes.txt"
    foreign.write_text("just some notes\n")
    done = eukhe("chat", "import", *files, str(foreign), cwd=tmp_path)
    assert done.returncode == 1, done.stderr  # one file refused; the others are in
    refused = f"eukhe chat import: {foreign}: not a session file of eukhe, Claude Code, Codex or pi"
    assert refused in done.stderr
    first = logged(tmp_path)
    assert len(first) == sum(int(line.split("logged ")[1].split()[0]) for line in done.stdout.splitlines())
    assert {kind for kind, _ in first} == {"user", "talk"} and len(first) > 20
    again = eukhe("chat", "import", "--json", *files, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert all(f["logged"] == 0 for f in json.loads(again.stdout)["files"])
    assert logged(tmp_path) == first  # nothing twice
    got = eukhe("status", "--json", cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    status = json.loads(got.stdout)
    assert status["memory"]["messages"] == len(first) and status["memory"]["writer"]  # the owner logged them


def test_a_malformed_line_is_diagnosed_and_the_rest_imported(tmp_path: Path) -> None:
    good = (SESSIONS / "pi" / "agent-sessions-small.jsonl").read_bytes().splitlines(keepends=True)
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(good[0] + b"{not json\n" + b"".join(good[1:]) + b'{"type": "message", "cut')
    done = eukhe("chat", "import", str(broken), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"{broken}: line 2: not JSON" in done.stderr
    assert "cut short" in done.stderr
    assert len(logged(tmp_path)) == 4  # the file's two user messages and two replies


def test_status_view_zoom_and_browse_read_the_chat_a_run_logged(tmp_path: Path) -> None:
    from eukhe.ai.faux import FauxServer, parse

    with FauxServer(parse(["Hello to you."])) as server:
        run = eukhe("run", "--model", "vllm/m", "--base-url", server.url, "--json", "hello", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    status = eukhe("chat", "status", "--json", cwd=tmp_path)
    assert status.returncode == 0, status.stderr
    got = json.loads(status.stdout)
    assert got["messages"] == 2 and got["viewBudget"] == 128_000 and got["viewBytes"] > 0
    lines = got["lines"]  # two short lines and their merge, built as the run's process ended (or not yet)
    assert lines["built"] + lines["pending"] == 3 and lines["failed"] == 0
    view = eukhe("chat", "view", cwd=tmp_path)
    assert view.stdout == "<chat>\n0+1|user: hello\n1+1|talk: Hello to you.\n</chat>\n"
    assert eukhe("chat", "zoom", "1", "1", cwd=tmp_path).stdout == "talk: Hello to you.\n"
    bad = eukhe("chat", "zoom", "1", "2", cwd=tmp_path)
    assert bad.returncode == 1 and "1+2 is no line of the chat" in bad.stderr
    out = tmp_path / "chat.html"
    browse = eukhe("chat", "browse", "--out", str(out), cwd=tmp_path)
    assert browse.returncode == 0, browse.stderr
    assert "Hello to you." in out.read_text() and out.read_text().startswith("<!DOCTYPE html>")


def test_status_shows_the_calls_running_in_another_process_and_the_last_settle_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A turn in one process waits on a compactor call that never answers (the home's
    owner makes it: the chat's only writer); `eukhe chat status` in another process
    lists that call while it runs, then the wait that ended at its deadline."""
    import time

    # the owner outlives the first run until the second connects, however slow its start
    # (a new owner would not have the first one's call); `eukhe shutdown` ends it below
    monkeypatch.setenv("EUKHE_OWNER_IDLE_MS", "30000")

    from eukhe.ai.faux import FauxServer, parse
    from eukhe.client.client import read_info

    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"memory": {"settleTimeoutMs": 6_000}}))
    long = "The answer, long enough that its line needs the compactor. " * 12
    script = [{"when": "Compress this message", "results": 0, "stallAfter": 0, "stall": 60}, long]
    with FauxServer(parse(script)) as server:
        first = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "--session", "s1", "hi", cwd=tmp_path
        )
        assert first.returncode == 0, first.stderr
        cmd = ["run", "--model", "vllm/m", "--base-url", server.url]
        second = start(*cmd, "--session", "s1", "again", cwd=tmp_path, home=home)
        try:
            seen: list[dict[str, object]] = []
            for _ in range(60):  # the owner of now: the first run's may have ended idle since
                info = read_info(home) or {}
                got = json.loads(eukhe("chat", "status", "--json", cwd=tmp_path).stdout)
                seen = [r for r in got["running"] if r["pid"] == info.get("pid")]
                if seen:
                    break
                time.sleep(0.25)
            assert seen, "the waiting turn's compactor call never showed as running"
            text = eukhe("chat", "status", cwd=tmp_path).stdout
            # the call as a person reads it (the owner that makes it may have changed meanwhile)
            assert re.search(r"compactor calls running: 1: 1\+1 \(\d+ s, pid \d+\)", text), text
            _, err = second.communicate(timeout=120)
        finally:
            second.kill()
        assert second.returncode == 0, err
        assert eukhe("shutdown", cwd=tmp_path).returncode == 0
    got = json.loads(eukhe("chat", "status", "--json", cwd=tmp_path).stdout)
    assert got["running"] == []  # the owner that made it is gone
    last = got["lastWait"]
    assert last["ended"] == "deadline" and last["pending"] >= 1 and 5.5 <= last["waited"] <= 30, last
    assert "the settle deadline passed" in eukhe("chat", "status", cwd=tmp_path).stdout
