"""`eukhe run` in scripts and CI, through a real `eukhe` process against the faux model on
loopback: `--timeout` ends the run by its deadline (failed, kind timeout, exit 124);
standard input is read only for `-` or `--stdin`, so an inherited pipe that never closes
holds nothing; `--events` prints each event as it happens and ends with an outcome, even
when the deadline cuts the wait for a subagent."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from eukhe.ai.faux import FauxServer, parse
from tests.children.test_spawn import bash, home_with, spawn
from tests.proc import Reader, eukhe, start, until

SLOW = {"text": "one two three four five six seven eight nine ten", "chunks": 20, "delay": 0.5}
"""A reply that streams for ten seconds."""


def model(server: FauxServer) -> tuple[str, ...]:
    return ("run", "--model", "vllm/m", "--base-url", server.url)


def lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_a_timeout_cuts_a_slow_stream_whose_events_flush_as_they_come_and_a_run_in_time_is_untouched(
    tmp_path: Path,
) -> None:
    home = home_with(tmp_path)
    with FauxServer(parse([{"when": "count", **SLOW}, {"when": "quick", "text": "done"}])) as server:
        began = time.monotonic()
        p = start(*model(server), "--events", "--timeout", "3s", "count", cwd=tmp_path, home=home)
        out = Reader(p)
        # into a pipe, each event is on its line as it happens: a piece of the answer, mid-stream
        until("the first piece of text", lambda: any('"type": "text"' in x for x in out.out))
        assert p.poll() is None
        assert p.wait(timeout=60) == 124, "".join(out.err)
        took = time.monotonic() - began
        quick = eukhe(*model(server), "--timeout", "1m", "--json", "quick", cwd=tmp_path, home=home)
    got = lines("".join(out.to_end().out))
    # the outcome as the run's workflow recorded it (`eukhe run` reads it back from the store):
    # the durable record says what happened
    assert got[-1]["type"] == "outcome" and got[-1]["outcome"] == "failed", got[-1]
    assert got[-1]["error"] == {"kind": "timeout", "message": "timed out after 3 seconds"}
    assert 0 < len([e for e in got if e["type"] == "text"]) < 20  # cut mid-stream
    assert took < 9, took  # the stream had seconds to go
    assert quick.returncode == 0, quick.stderr
    assert json.loads(quick.stdout.splitlines()[-1])["answer"] == "done"


def test_a_timeout_that_cannot_be_read_is_one_line_and_exit_2(tmp_path: Path) -> None:
    for given, said in (
        ("5x", "--timeout '5x': give a number and its unit, s, m or h, or several (90s, 5m, 1h30m, 2.5s)"),
        ("0s", "--timeout '0s': a timeout is longer than 0 s"),
    ):
        done = eukhe("run", "--model", "vllm/m", "--timeout", given, "task", cwd=tmp_path)
        assert (done.returncode, done.stderr) == (2, f"eukhe run: {said}\n")


def test_standard_input_is_read_only_when_asked_and_a_pipe_never_closed_holds_nothing(tmp_path: Path) -> None:
    home = home_with(tmp_path)
    with FauxServer(parse([{"when": "explain", "text": "explained"}, "done"])) as server:
        # an inherited pipe that never closes: a prompt as an argument never reads it
        held = start(*model(server), "--json", "task", cwd=tmp_path, home=home, stdin=True)
        assert held.wait(timeout=60) == 0, held.stderr.read() if held.stderr else ""
        out, _ = held.communicate(timeout=10)
        assert json.loads(out.splitlines()[-1])["answer"] == "done"
        # no prompt: an error, whether or not standard input is a terminal, never a read
        none = start(*model(server), cwd=tmp_path, home=home, stdin=True)
        _, err = none.communicate(timeout=30)
        assert none.returncode == 2
        assert err == (
            'eukhe run: no prompt: give it as an argument (eukhe run "task"), '
            "or `-` or --stdin to read it from standard input\n"
        )
        p = start(*model(server), "--json", "--stdin", "explain", cwd=tmp_path, home=home, stdin=True)
        assert p.stdin is not None
        p.stdin.write("line 1 of the log\n")
        p.stdin.close()
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        asked = [[m["content"] for m in s.body["messages"] if m["role"] == "user"][-1] for s in server.seen]
    assert asked[-1] == "explain\n\nline 1 of the log\n"  # standard input's text after the argument
    if held.stdin is not None:
        held.stdin.close()
    if none.stdin is not None:
        none.stdin.close()


def test_the_deadline_cuts_the_wait_for_a_subagent_and_an_outcome_is_still_last(tmp_path: Path) -> None:
    """The parent answers while its subagent works; the deadline comes before the report:
    the subagent's run ends by the same deadline, no follow-up run starts, and the last
    line is the session's outcome, failed, kind timeout (the answer kept)."""
    home = home_with(tmp_path)
    script = [
        {"when": "take a while", "results": 0, **bash("sleep 30")},
        {"when": "go", "results": 0, **spawn("take a while")},
        {"when": "go", "results": 1, "text": "spawned"},
    ]
    with FauxServer(parse(script)) as server:
        done = eukhe(*model(server), "--events", "--timeout", "5s", "go", cwd=tmp_path, home=home, timeout=60)
    assert done.returncode == 124, done.stderr
    got = lines(done.stdout)
    said = [e["text"] for e in got if e["type"] == "say"]
    assert any(s.startswith("waiting for 1 subagent") for s in said), said
    last = got[-1]
    assert last["type"] == "outcome" and last["answer"] == "spawned", last
    assert last["error"]["kind"] == "timeout" and last["error"]["message"].startswith(
        "timed out after 5 seconds"
    )


def test_a_wrong_flag_with_control_or_events_is_refused_before_any_run(tmp_path: Path) -> None:
    for args, said in (
        (("--json", "--events", "x"), "--json and --events both print to stdout: choose one"),
        (("--control", "x"), "--control takes its prompts as requests on standard input: give no PROMPT"),
    ):
        done = eukhe("run", "--model", "vllm/m", *args, cwd=tmp_path)
        assert done.returncode == 2 and said in done.stderr, done.stderr
