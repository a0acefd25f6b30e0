"""The Chat Completions adapter through the real SDK against the faux server on
loopback: each quirk the spec names arrives as data."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from eukhe.ai import Done, FailureKind, Message, OpenAIChat, Reply, Request, Stop
from eukhe.ai.faux import FauxServer, ScriptError
from eukhe.ai.faux.script import load, parse
from eukhe.ai.guard import guard

REQUEST = Request("faux-model", (Message("user", "go"),))


def ask(script: Any, idle: float | None = None, n: int = 1) -> tuple[list[Reply], FauxServer]:
    async def go(url: str) -> list[Reply]:
        p = OpenAIChat("faux", base_url=url, timeout=20)
        out = []
        try:
            for _ in range(n):
                events = p.stream(REQUEST)
                if idle is not None:
                    events = guard(events, "faux", idle=idle)
                got = [e async for e in events]
                assert sum(isinstance(e, Done) for e in got) == 1 and isinstance(got[-1], Done)
                out.append(got[-1].reply)
        finally:
            await p.close()
        return out

    with FauxServer(parse(script)) as server:
        replies = asyncio.run(go(server.url))
    return replies, server


def one(script: Any, idle: float | None = None) -> Reply:
    return ask(script, idle)[0][0]


def test_plain_text() -> None:
    r = one([{"text": "Hello there.", "chunks": 5}])
    assert r.text == ("Hello there.",) and r.stop is Stop.STOP and r.failure is None


def test_a_tool_call_whose_arguments_arrive_in_many_chunks() -> None:
    args = {"path": "src/main.py", "content": "print('hi')\n" * 20}
    r = one([{"calls": [{"name": "write", "arguments": args}], "chunks": 40}])
    assert r.stop is Stop.TOOL_USE and r.calls[0].name == "write" and r.calls[0].arguments == args


def test_two_parallel_calls() -> None:
    r = one(
        [
            {
                "calls": [
                    {"name": "read", "arguments": {"path": "a"}},
                    {"name": "read", "arguments": {"path": "b"}},
                ],
                "chunks": 3,
            }
        ]
    )
    assert [c.arguments for c in r.calls] == [{"path": "a"}, {"path": "b"}]
    assert r.calls[0].id != r.calls[1].id


def test_calls_with_finish_reason_stop_stay_calls() -> None:
    r = one([{"calls": [{"name": "bash", "arguments": {"command": "ls"}}], "stop": "stop"}])
    assert r.stop is Stop.STOP and len(r.calls) == 1


def test_reasoning_deltas_are_thinking() -> None:
    r = one([{"thinking": "Let me see. " * 10, "text": "Done.", "chunks": 6}])
    assert r.thinking[0].text == "Let me see. " * 10 and r.has_text


def test_a_length_stop_with_only_thinking_is_no_answer() -> None:
    r = one([{"thinking": "planning everything", "stop": "length"}])
    assert r.stop is Stop.LENGTH and not r.has_text and not r.calls


def test_429_with_retry_after() -> None:
    r = one([{"error": {"status": 429, "retryAfter": 3}}])
    assert r.failure is not None and r.failure.kind is FailureKind.RATE_LIMITED and r.failure.retry_after == 3


def test_a_dropped_connection() -> None:
    r = one([{"text": "a long answer " * 20, "chunks": 10, "dropAfter": 4}])
    assert r.failure is not None and r.failure.kind is FailureKind.CONNECTION and r.failure.retryable


def test_a_stall_past_the_idle_deadline_is_cut_and_the_server_sees_the_hang_up() -> None:
    (replies, server) = ask([{"text": "slow " * 10, "chunks": 10, "stallAfter": 3, "stall": 20}], idle=0.4)
    f = replies[0].failure
    assert f is not None and f.kind is FailureKind.STALL
    for _ in range(100):  # the handler notices the hang-up within its poll interval
        if server.seen[-1].hung_up:
            break
        asyncio.run(asyncio.sleep(0.05))
    assert server.seen[-1].hung_up


def test_a_repeated_line_is_cut() -> None:
    r = one([{"repeat": {"line": "- r/Bitcoin", "times": 200}, "chunks": 200}], idle=5)
    assert (
        r.failure is not None and r.failure.kind is FailureKind.REPEATING and r.failure.line == "- r/Bitcoin"
    )


def test_replies_follow_the_script_and_its_when() -> None:
    replies, server = ask(["first", {"when": "never said", "text": "skipped"}, "second"], n=3)
    assert [r.all_text for r in replies] == ["first", "second", "second"]
    assert all(s.body["messages"][-1]["content"] == "go" for s in server.seen)


@pytest.mark.parametrize(
    "bad,message",
    [
        ({"replies": [{"stop": "done"}]}, "reply 1: stop='done': must be one of stop, length, toolUse"),
        ({"replies": [{"txt": "x"}]}, "reply 1: unknown field 'txt'"),
        ({"replies": [{"calls": [{"arguments": {}}]}]}, "reply 1: call 1: expected"),
        ({"replies": [{"chunks": -1}]}, "reply 1: chunks=-1: expected a whole number >= 0"),
        ({"nope": 1}, "expected an object with a list 'replies'"),
    ],
)
def test_a_bad_script_is_refused_with_its_place(bad: Any, message: str) -> None:
    with pytest.raises(ScriptError, match="^faux script: " + message.replace("(", r"\(").replace("[", r"\[")):
        parse(bad)


def test_an_unreadable_or_broken_script_file(tmp_path: Any) -> None:
    with pytest.raises(ScriptError, match="cannot read it"):
        load(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text('{"replies": [\n  {"text": "a",}\n]}')
    with pytest.raises(
        ScriptError, match=r"broken.json, line 2 column 16: not JSON: Expecting property name"
    ):
        load(broken)


def test_eukhe_faux_serve_serves_the_sdk(tmp_path: Any) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps(["served over the command line"]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "eukhe", "faux", "serve", "--script", str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")

        async def go() -> Reply:
            p = OpenAIChat("faux", base_url=url, timeout=10)
            try:
                return [e async for e in p.stream(REQUEST)][-1].reply  # type: ignore[union-attr]
            finally:
                await p.close()

        assert asyncio.run(go()).all_text == "served over the command line"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_cancelling_a_stream_closes_its_connection() -> None:
    async def go(url: str) -> None:
        p = OpenAIChat("faux", base_url=url, timeout=20)
        got: list[object] = []

        async def consume() -> None:
            async for e in p.stream(REQUEST):
                got.append(e)

        task = asyncio.create_task(consume())
        while len(got) < 2:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await p.close()

    with FauxServer(parse([{"text": "x" * 50, "chunks": 50, "stallAfter": 5, "stall": 20}])) as server:
        asyncio.run(go(server.url))
        for _ in range(100):
            if server.seen[-1].hung_up:
                break
            asyncio.run(asyncio.sleep(0.05))
        assert server.seen[-1].hung_up


def test_an_error_inside_the_stream() -> None:
    r = one([{"text": "partial answer", "chunks": 5, "streamError": {"after": 3, "type": "server_error"}}])
    assert r.failure is not None and r.stop is Stop.ERROR and r.text


def test_a_stall_ends_once_its_gate_file_exists(tmp_path: Path) -> None:
    """`stallUntil`: the stream goes on, whole, as soon as the file is there, not after `stall`."""
    gate = tmp_path / "go"
    threading.Timer(0.5, gate.touch).start()
    began = time.monotonic()
    (replies, _) = ask(
        [{"text": "abcdef", "chunks": 6, "stallAfter": 2, "stall": 60, "stallUntil": str(gate)}]
    )
    assert replies[0].text == ("abcdef",)
    assert 0.4 < time.monotonic() - began < 30
