"""`eukhe status`, `eukhe abort`, `eukhe shutdown` and `eukhe doctor` with real
processes: two terminals' turns, one holding the lease, one waiting."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from eukhe.ai.faux import FauxServer, parse
from eukhe.client import protocol
from tests.owner.test_processes import ONE_SLOT, run_args, settings
from tests.proc import DEADLINE, Reader, eukhe, start, until


def status(cwd: Path, home: Path) -> dict:
    done = eukhe("status", "--json", cwd=cwd, home=home)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def test_status_shows_the_lease_the_runs_and_the_slots_and_abort_ends_either_run(tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings(home, ONE_SLOT)
    assert status(tmp_path, home)["owner"] is None  # status starts no owner
    script = [{"when": "one", "text": "partial", "stallAfter": 1}, {"when": "two", "text": "never"}]
    with FauxServer(parse(script)) as server:
        first = start(*run_args(server, "one", "--session", "s-one"), cwd=tmp_path, home=home)
        until("the first turn's request", lambda: len(server.seen) >= 1)
        second = start(*run_args(server, "two", "--session", "s-two"), cwd=tmp_path, home=home)
        r2 = Reader(second)
        try:
            until("the second turn's wait", lambda: any("root-turn lease" in x for x in r2.err))
            got = status(tmp_path, home)
            assert got["owner"]["pid"] > 0 and got["owner"]["since"] > 0
            holder, waiters = got["lease"]["holder"], got["lease"]["waiters"]
            assert holder["session"] == "s-one" and [w["session"] for w in waiters] == ["s-two"]
            waits = {r["session"]: r["waits"] for r in got["runs"]}
            assert waits == {"s-one": "nothing (running)", "s-two": "the root-turn lease"}
            assert got["providers"]["vllm"] == {
                "held": 1,
                "queued": {"interactive": 0, "background": 0},
                "limit": 1,
            }
            assert got["memory"]["messages"] == 0 and got["memory"]["unbuilt"] == 0  # opened by the view
            text = eukhe("status", cwd=tmp_path, home=home).stdout
            assert "root-turn lease: run s-one/" in text and "waiting: run s-two/" in text
            assert "chat: 0 messages, 0 lines built" in text
            done = eukhe("abort", waiters[0]["run"], cwd=tmp_path, home=home)
            assert done.returncode == 0, done.stderr
            assert second.wait(timeout=DEADLINE) == 130
            until("the waiting run's outcome", lambda: any(x.startswith("aborted") for x in r2.err))
            assert any("waited for the root-turn lease" in x for x in r2.err), r2.err
            done = eukhe("abort", holder["run"], cwd=tmp_path, home=home)
            assert done.returncode == 0, done.stderr
            assert first.wait(timeout=DEADLINE) == 130
        finally:
            for p in (first, second):
                if p.poll() is None:
                    p.kill()
        assert len(server.seen) == 1  # the second never sent its request
        missing = eukhe("abort", "s-none/1", cwd=tmp_path, home=home)
        assert missing.returncode == 1 and "no live eukhe process runs s-none/1" in missing.stderr
        done = eukhe("shutdown", cwd=tmp_path, home=home)
        assert done.returncode == 0 and "ended" in done.stdout, done.stdout
        assert status(tmp_path, home)["owner"] is None
    shown = eukhe("session", "show", "--json", "s-one", cwd=tmp_path, home=home)
    assert "one" in shown.stdout  # the aborted run's transcript is kept


def test_doctor_says_each_problem_in_one_line_with_its_fix(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    fine = eukhe("doctor", cwd=tmp_path, home=home)
    assert fine.returncode == 0, fine.stdout
    assert "✓ owner: none runs" in fine.stdout and "✓ store:" in fine.stdout
    sock = protocol.socket_path(home)
    sock.parent.mkdir(parents=True, exist_ok=True)
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(sock))  # a socket file no owner listens on
    s.close()
    protocol.info_path(home).write_text(json.dumps({"pid": 2**22 + 7, "since": 1.0}), encoding="utf-8")
    (home / "eukhe.sqlite").write_bytes(b"this is not a database" * 100)
    sick = eukhe("doctor", cwd=tmp_path, home=home)
    assert sick.returncode == 1
    lines = [x for x in sick.stdout.splitlines() if x.startswith("✗")]
    assert len(lines) == 3, sick.stdout
    assert f"stale socket {sock}" in lines[0] and f"fix: `rm {sock}`" in lines[0]
    assert "dead owner" in lines[1] and "not running; fix:" in lines[1]
    assert "store" in lines[2] and "fix:" in lines[2]


def test_abort_names_a_runs_form_and_says_when_nothing_is_in_flight(tmp_path: Path) -> None:
    """Not the owner's socket: what a run id looks like, and that nothing of the home runs."""
    home = tmp_path / "home"
    bad = eukhe("abort", "nosuch", cwd=tmp_path, home=home)
    assert bad.returncode == 2
    assert bad.stderr.startswith("eukhe abort: 'nosuch' is not a run: a run is SESSION/N, or SESSION/N.cK")
    idle = eukhe("abort", "s1/0001.c2", cwd=tmp_path, home=home)
    assert idle.returncode == 1
    assert idle.stderr == "eukhe abort: run s1/0001.c2 is not in flight: no eukhe process of this home runs\n"
