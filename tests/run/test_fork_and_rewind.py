"""`eukhe session fork` and `eukhe rewind --conversation`: a fork's transcript begins with its
parent's runs up to its point, and both sessions go on apart; a rewind ends the later runs in
the transcript, leaves the runs' records and the chat's log whole, and notes itself in the chat."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
from pathlib import Path

from eukhe.ai.faux import FauxServer, parse
from eukhe.rules.rewind import rewindable
from eukhe.store.lineage import Lineage, Rewind, shown_runs
from tests.proc import eukhe


def session_of(done: subprocess.CompletedProcess[str]) -> str:
    line = next(x for x in done.stderr.splitlines() if x.startswith("session "))
    return line.split()[1].rstrip(",")


def prompts(cwd: Path, session: str) -> list[str]:
    shown = eukhe("session", "show", session, "--json", cwd=cwd)
    assert shown.returncode == 0, shown.stderr
    runs = json.loads(shown.stdout)["runs"]
    return [m["content"] for r in runs for m in r["messages"] if m["role"] == "user"]


def test_a_fork_begins_with_its_parents_runs_and_both_go_on_apart(tmp_path: Path) -> None:
    with FauxServer(parse([f"answer {i}" for i in range(6)])) as server:

        def ask(prompt: str, *session: str) -> subprocess.CompletedProcess[str]:
            done = eukhe("run", "--model", "vllm/m", "--base-url", server.url, *session, prompt, cwd=tmp_path)
            assert done.returncode == 0, done.stderr
            return done

        s = session_of(ask("one"))
        ask("two", "--session", s)
        forked = eukhe("session", "fork", s, "--at", "1", cwd=tmp_path)
        assert forked.returncode == 0, forked.stderr
        f = forked.stdout.split("session ")[-1].split()[0]
        assert f"forked session {s} after its run 1: session {f}" in forked.stdout
        ask("three in the fork", "--session", f)
        ask("four in the parent", "--session", s)
        assert prompts(tmp_path, f) == ["one", "three in the fork"]
        assert prompts(tmp_path, s) == ["one", "two", "four in the parent"]
        ask("five in the fork", "--session", f)
    assert prompts(tmp_path, f) == ["one", "three in the fork", "five in the fork"]
    missing = eukhe("session", "fork", s, "--at", "9", cwd=tmp_path)
    assert missing.returncode == 2 and f"session {s} has no run 9 (its runs: 1 to 3)" in missing.stderr


def test_a_conversation_rewind_ends_the_later_runs_and_leaves_the_log_whole(tmp_path: Path) -> None:
    with FauxServer(parse([f"answer {i}" for i in range(4)])) as server:
        first = eukhe("run", "--model", "vllm/m", "--base-url", server.url, "alpha", cwd=tmp_path)
        s = session_of(first)
        for p in ("beta", "gamma"):
            done = eukhe(
                "run", "--model", "vllm/m", "--base-url", server.url, "--session", s, p, cwd=tmp_path
            )
            assert done.returncode == 0, done.stderr
    planned = eukhe("rewind", s, "--to", "2", "--conversation", cwd=tmp_path)  # no terminal, no --yes
    assert "  run 2: beta" in planned.stdout and "  run 3: gamma" in planned.stdout
    assert "not applied" in planned.stdout and prompts(tmp_path, s) == ["alpha", "beta", "gamma"]
    done = eukhe("rewind", s, "--to", "2", "--conversation", "--yes", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "runs 2 to 3 ended in the transcript; the chat's log notes it" in done.stdout, done.stdout
    assert prompts(tmp_path, s) == ["alpha"]
    shown = eukhe("session", "show", s, cwd=tmp_path).stdout
    assert "runs 2-3 rewound at" in shown
    with sqlite3.connect(tmp_path / "home" / "eukhe.sqlite") as db:
        workflows = db.execute("select count(*) from workflow_status where workflow_uuid like ?", (f"{s}/%",))
        assert workflows.fetchone()[0] == 3  # the runs' records are whole
        texts = " ".join(str(c) for r in db.execute("select * from eukhe_chat_messages") for c in r)
    assert "beta" in texts and "gamma" in texts  # the chat's log keeps what they said
    assert f"The user rewound session {s} to before its run 2" in texts


def test_a_forks_transcript_follows_its_parents_rewinds_and_point() -> None:
    class W:
        def __init__(self, rid: str) -> None:
            self.workflow_id = rid

    runs = {"p": [W(f"p/{k:04d}") for k in (1, 2, 3)], "f": [W("f/0001"), W("f/0002")]}
    rows = {"p": Lineage(None, (Rewind(2, 2, 0.0),)), "f": Lineage(("p", 3), (Rewind(2, 2, 0.0),))}

    async def of(s: str) -> list[W]:
        return runs[s]

    async def lineage(s: str) -> Lineage:
        return rows[s]

    got, notes = asyncio.run(shown_runs("f", of, lineage))
    assert [(x.session, x.number) for x in got] == [("p", 1), ("p", 3), ("f", 1)]
    assert len(notes) == 1 and notes[0].startswith("run 2 rewound at")


def test_a_rewind_never_ends_a_run_in_flight_nor_one_that_is_not_there() -> None:
    assert rewindable("s", 2, [(1, False), (2, False), (3, False)]) == (3, None)
    assert rewindable("s", 2, [(1, False), (2, False), (3, True)]) == (
        3,
        "run 3 of session s is in flight: rewind once it ends",
    )
    assert rewindable("s", 4, [(1, False), (2, False)]) == (2, "session s has no run 4 (its last is run 2)")
    assert rewindable("s", 1, []) == (0, "session s has no run 1")
