"""A run whose context outgrows the model's window, through the real `eukhe run`:
the provider's overflow error (the faux server's `window`, in OpenAI's words)
makes the run compact into the chat and go on from the newly pinned view, and
every message is logged once (H4's overflow phase with the memory of H1/H2)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from eukhe.ai.faux import FauxServer, parse
from tests.proc import eukhe

BIG = "the same line of the big file, again and again\n" * 200  # ~9 600 bytes
WINDOW = 30_000  # the first request fits (the tools take ~13 KB); the one that carries BIG twice does not


def script() -> dict[str, Any]:
    read = {"name": "read", "arguments": {"path": "big.txt"}}
    return {
        "window": WINDOW,
        "replies": [
            {"when": "Compress this message", "results": 0, "text": "a short summary line."},
            {"when": "Merge these two", "results": 0, "text": "a merged summary line."},
            {"when": "moved into the chat", "results": 0, "text": "big.txt repeats one line."},
            {"when": "summarise big.txt", "results": 0, "calls": [{**read, "id": "c1"}]},
            {"when": "summarise big.txt", "results": 1, "calls": [{**read, "id": "c2"}]},
        ],
    }


def test_a_run_past_the_window_compacts_into_the_chat_and_answers(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    settings = {"memory": {"viewBytes": 3_000, "settleTimeoutMs": 5_000}}
    (home / "settings.json").write_text(json.dumps(settings))
    (tmp_path / "big.txt").write_text(BIG)
    with FauxServer(parse(script())) as server:
        run = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "--json", "summarise big.txt",
            cwd=tmp_path, home=home,
        )  # fmt: skip
        seen = [s for s in server.seen if s.method == "POST"]
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["outcome"] == "answered" and out["answer"] == "big.txt repeats one line.", out
    assert "compact: the provider said the context is too long" in run.stderr
    turns = [s.body for s in seen if s.body.get("tools")]  # the run's (the compactor's offer no tools)
    sizes = [len(json.dumps(b)) for b in turns]
    # the call, the second call (one result), the request with two results that overflowed,
    # and the request from the newly pinned view, which fits the window again
    assert len(turns) == 4 and sizes[2] > WINDOW > sizes[3], sizes
    before, after = turns[1]["messages"][0]["content"], turns[3]["messages"][0]["content"]
    assert before != after  # a newer view: the run's messages are in it
    assert "read" in after[after.rindex("<chat>") :]
    assert [m["role"] for m in turns[3]["messages"]] == ["system", "user"]
    status = eukhe("chat", "status", "--json", cwd=tmp_path, home=home)
    assert status.returncode == 0, status.stderr
    # the user's words, two calls, two results, the answer: each once, though the
    # compaction logged the first four before the run's end logged them all
    assert json.loads(status.stdout)["messages"] == 6


def compacted_run(
    tmp_path: Path, settings: dict[str, Any]
) -> tuple[subprocess.CompletedProcess[str], list[Any]]:
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "big.txt").write_text(BIG)
    with FauxServer(parse(script())) as server:
        given = {"memory": {"viewBytes": 3_000, "settleTimeoutMs": 5_000}, **settings}
        given["providers"] = {"vllm": {"baseUrl": server.url}}
        (home / "settings.json").write_text(json.dumps(given))
        run = eukhe("run", "--model", "vllm/m", "--json", "summarise big.txt", cwd=tmp_path, home=home)
        seen = [s.body for s in server.seen if s.method == "POST"]
    assert run.returncode == 0, run.stderr
    return run, seen


def compactor_models(seen: list[Any]) -> set[str]:
    asks = [
        b for b in seen if "Compress this message" in json.dumps(b) and "</chat>" not in json.dumps(b)[-40:]
    ]
    assert asks, "the compactor made no request"
    return {b["model"] for b in asks}


def test_the_compactor_runs_on_the_auxiliary_model(tmp_path: Path) -> None:
    run, seen = compacted_run(tmp_path, {"auxiliaryModel": "vllm/small"})
    assert compactor_models(seen) == {"small"}
    assert {b["model"] for b in seen if b.get("tools")} == {"m"}
    assert "notice" not in run.stderr


def test_an_unusable_auxiliary_model_shows_its_notice_once_in_the_waiting_session(tmp_path: Path) -> None:
    run, seen = compacted_run(tmp_path, {"auxiliaryModel": "nosuch/x"})
    assert compactor_models(seen) == {"m"}  # the session model runs the pass
    row = (
        "auxiliaryModel nosuch/x is not used for compaction: no model with a configured key has this name. "
        "The session model vllm/m runs it."
    )
    assert run.stderr.count(row) == 1, run.stderr


def test_a_run_killed_while_it_compacts_goes_on_from_its_memory_after_resume(tmp_path: Path) -> None:
    """Killed while its compaction waits on a compactor that never answers; `eukhe
    resume` replays what was recorded, compacts again (the log takes nothing twice),
    goes on from the view at the settle deadline, and answers."""
    from tests.proc import kill, start, until

    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(
        json.dumps({"memory": {"viewBytes": 3_000, "settleTimeoutMs": 3_000}})
    )
    (tmp_path / "big.txt").write_text(BIG)
    stalled = script()
    stalled["replies"][0] = {"when": "Compress this message", "results": 0, "stallAfter": 0, "stall": 30}
    with FauxServer(parse(stalled)) as server:
        args = ["run", "--model", "vllm/m", "--base-url", server.url, "--json", "summarise big.txt"]
        p = start(*args, cwd=tmp_path, home=home)
        until(
            "a compactor call",
            lambda: any("Compress this message" in json.dumps(s.body) for s in server.seen),
        )
        kill(p)
        done = eukhe("resume", cwd=tmp_path, home=home)
        assert done.returncode == 0, done.stderr
        assert "ended answered" in done.stderr, done.stderr
        status = eukhe("chat", "status", "--json", cwd=tmp_path, home=home)
    assert json.loads(status.stdout)["messages"] == 6  # every message once, across the kill
