"""`eukhe run --control`: requests on standard input, one JSON object a line, each answered
by exactly one `response` event; the runs through the real process against the faux model
on loopback: a prompt, a steer that reaches the run at work, a follow-up, an abort, the
state, lines that are no request, and standard input closing."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from eukhe.ai.faux import FauxServer, parse
from eukhe.cli.control import BadRequest, Request, request
from tests.proc import Reader, start, until

ONE_OF = "prompt, steer, follow_up, abort, state"


def test_a_request_is_read_or_refused_with_why() -> None:
    assert request(b'{"type": "prompt", "message": "go", "id": "r1"}\n', 1) == Request("prompt", "r1", "go")
    assert request(b'{"type": "state"}', 2) == Request("state")
    for line, why, command, rid in (
        (b"not json\n", "line 3: not JSON: Expecting value at character 0", None, None),
        (b"\xff\n", "line 3: not UTF-8: byte 0xff at byte 0", None, None),
        (b"[1, 2]\n", "line 3: a request is a JSON object, not an array", None, None),
        (b'{"type": 3, "id": 1}', f"line 3: type is a string, one of {ONE_OF}; got 3", None, 1),
        (b'{"type": "nope", "id": "x"}', f"line 3: no request is of type 'nope'; one of {ONE_OF}", "nope",
         "x"),
        (b'{"type": "steer", "message": 3}', "line 3: steer takes a message, a string; got 3", "steer", None),
        (b'{"type": "prompt"}', "line 3: prompt takes a message, a string; got null", "prompt", None),
        (b'{"type": "prompt", "message": " "}', "line 3: prompt: the prompt is empty", "prompt", None),
        (b'{"type": "state", "id": {"a": 1}}', "line 3: id is a string or a number, not an object", "state",
         {"a": 1}),
        (b'{"type": "state", "id": true}', "line 3: id is a string or a number, not true", "state", True),
    ):  # fmt: skip
        with pytest.raises(BadRequest, match=f"^{re.escape(why)}$") as got:
            request(line, 3)
        assert (got.value.command, got.value.id) == (command, rid)


class Session:
    """A control session's process: requests written, its output lines read as they come."""

    def __init__(self, tmp_path: Path, server: FauxServer, *args: str) -> None:
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        self.p = start(
            "run", "--model", "vllm/m", "--base-url", server.url, "--control", *args,
            cwd=tmp_path, home=home, stdin=True,
        )  # fmt: skip
        self.out = Reader(self.p)
        self.sent = 0

    def send(self, *lines: Any) -> None:
        assert self.p.stdin is not None
        for line in lines:
            self.p.stdin.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
            self.sent += 1
        self.p.stdin.flush()

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(x) for x in list(self.out.out)]

    def response(self, rid: Any) -> dict[str, Any]:
        def got() -> bool:
            return any(e["type"] == "response" and e["id"] == rid for e in self.events())

        until(f"the response to {rid!r}", got, about=lambda: "".join(self.out.err))
        return next(e for e in self.events() if e["type"] == "response" and e["id"] == rid)

    def wait_for(self, what: str, ok: Any) -> None:
        until(what, lambda: any(ok(e) for e in self.events()), about=lambda: "".join(self.out.err))

    def close(self, timeout: float = 60) -> int:
        assert self.p.stdin is not None
        self.p.stdin.close()
        code = self.p.wait(timeout=timeout)
        self.out.to_end()
        return code


def test_prompt_steer_follow_up_state_and_garbage_then_standard_input_closes(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    script = [
        {"when": "first task", "calls": [{"name": "read", "arguments": {"path": "a.txt"}}], "chunks": 4,
         "delay": 0.3},
        {"when": "STEERED", "text": "steered done"},
        {"when": "second task", "text": "second done"},
    ]  # fmt: skip
    with FauxServer(parse(script)) as server:
        s = Session(tmp_path, server)
        s.send("not json", {"type": "nope", "id": "x"}, {"type": "prompt", "message": 3, "id": "m"})
        s.send({"type": "state", "id": 1}, {"type": "steer", "message": "too soon", "id": 2})
        s.send({"type": "prompt", "message": "first task", "id": 3})
        run = s.response(3)["data"]["run"]
        s.send(
            {"type": "steer", "message": "STEERED", "id": 4},
            {"type": "follow_up", "message": "second task", "id": 5},
        )
        s.send({"type": "state", "id": 6})
        s.response(6)
        assert s.close() == 0, "".join(s.out.err)
        asked = [
            [m.get("content") for m in seen.body["messages"] if m["role"] == "user"] for seen in server.seen
        ]
    events = s.events()
    responses = [e for e in events if e["type"] == "response"]
    assert len(responses) == s.sent  # one a line, whatever the line
    by_id = {e["id"]: e for e in responses}
    assert [e["success"] for e in responses[:3]] == [False, False, False]
    assert responses[0]["error"] == "line 1: not JSON: Expecting value at character 0"
    assert (
        by_id["x"]["command"] == "nope"
        and by_id["m"]["error"] == "line 3: prompt takes a message, a string; got 3"
    )
    assert by_id[1]["data"] == {"session": run.rpartition("/")[0], "working": False, "run": None}
    assert by_id[2]["error"] == "no run is at work to steer: send it as a prompt"
    assert by_id[4]["data"] == {"queued": "steer"} and by_id[5]["data"] == {"queued": "follow_up"}
    assert by_id[6]["data"] == {"session": run.rpartition("/")[0], "working": True, "run": run}
    # the steer reached the run at work, after its tool's result; the follow-up is the next run's prompt
    assert asked == [["first task"], ["first task", "STEERED"], ["second task"]], asked
    outcomes = [e for e in events if e["type"] == "outcome"]
    assert [o["answer"] for o in outcomes] == ["steered done", "second done"]
    assert events[-1]["type"] == "outcome"


def test_abort_ends_the_run_at_work_and_closing_standard_input_then_ends_the_session(tmp_path: Path) -> None:
    script = [{"text": "one two three four five six seven eight nine ten", "chunks": 10, "delay": 1.0}]
    with FauxServer(parse(script)) as server:
        s = Session(tmp_path, server)
        s.send({"type": "abort", "id": 1}, {"type": "prompt", "message": "count", "id": 2})
        s.response(2)
        s.wait_for("the stream", lambda e: e["type"] == "stream")
        began = time.monotonic()
        s.send({"type": "abort", "id": 3})
        assert s.close() == 130, "".join(s.out.err)
        took = time.monotonic() - began
    events = s.events()
    assert s.response(1)["error"] == "no run is at work to abort"
    assert s.response(3)["success"] is True
    assert events[-1]["type"] == "outcome" and events[-1]["outcome"] == "aborted", events[-1]
    assert took < 5, took  # within its grace, not the eight seconds of stream left


def test_a_pipe_that_never_closes_ends_by_the_timeout(tmp_path: Path) -> None:
    with FauxServer(parse(["unused"])) as server:
        s = Session(tmp_path, server, "--timeout", "2s")
        try:
            code = s.p.wait(timeout=30)
        except subprocess.TimeoutExpired:  # pragma: no cover - the failure this test is for
            s.p.kill()
            raise
        s.out.to_end()
    assert code == 124, "".join(s.out.err)
    last = s.events()[-1]
    assert last["type"] == "outcome" and last["error"]["kind"] == "timeout", last
    assert last["error"]["message"] == "timed out after 2 seconds: no run was at work; the session ends"
    assert s.p.stdin is not None
    s.p.stdin.close()
