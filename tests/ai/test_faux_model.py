"""The faux model in process plays the same script as the server, with the same
stalls, drops, errors and background jobs."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

from eukhe.ai import Done, Event, FailureKind, Job, Message, PollFailed, Reply, Request, Stop, TextDelta
from eukhe.ai.faux import FauxModel, parse
from eukhe.ai.guard import guard

REQUEST = Request("faux", (Message("user", "go"),))


def play(script: Any, idle: float | None = None, request: Request = REQUEST) -> tuple[list[Event], FauxModel]:
    model = FauxModel(parse(script))

    async def go() -> list[Event]:
        events = model.stream(request)
        if idle is not None:
            events = guard(events, "faux", idle=idle)
        return [e async for e in events]

    return asyncio.run(go()), model


def reply(script: Any, idle: float | None = None, request: Request = REQUEST) -> Reply:
    events, _ = play(script, idle, request)
    assert sum(isinstance(e, Done) for e in events) == 1 and isinstance(events[-1], Done)
    return events[-1].reply


def test_text_calls_thinking_and_stops() -> None:
    r = reply([{"text": "hi there", "thinking": "hmm", "chunks": 3}])
    assert r.all_text == "hi there" and r.thinking[0].text == "hmm" and r.stop is Stop.STOP
    r = reply([{"calls": [{"name": "read", "arguments": {"path": "a"}}], "stop": "stop"}])
    assert r.calls[0].arguments == {"path": "a"} and r.stop is Stop.STOP
    assert reply([{"thinking": "x", "stop": "length"}]).stop is Stop.LENGTH


def test_events_come_in_pieces() -> None:
    events, _ = play([{"text": "abcdef", "chunks": 3}])
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["ab", "cd", "ef"]


def test_errors_drops_stalls_and_repeats() -> None:
    f = reply([{"error": {"status": 429, "retryAfter": 2}}]).failure
    assert f is not None and f.kind is FailureKind.RATE_LIMITED and f.retry_after == 2
    f = reply([{"text": "abcdef", "chunks": 6, "dropAfter": 2}]).failure
    assert f is not None and f.kind is FailureKind.CONNECTION
    f = reply([{"text": "abcdef", "chunks": 6, "streamError": {"after": 2}}]).failure
    assert f is not None and f.kind is FailureKind.OVERLOADED and f.retryable
    f = reply([{"text": "abcdef", "chunks": 6, "stallAfter": 2}], idle=0.2).failure
    assert f is not None and f.kind is FailureKind.STALL
    f = reply([{"repeat": {"line": "- r/Bitcoin", "times": 200}, "chunks": 200}], idle=5).failure
    assert f is not None and f.kind is FailureKind.REPEATING


def test_a_reply_can_wait_for_the_note() -> None:
    script = [
        {"repeat": {"line": "- r/Bitcoin", "times": 50}},
        {"when": "Harness note", "text": "Three coins."},
    ]
    model = FauxModel(parse(script))
    noted = Request("faux", (Message("user", "go"), Message("user", "Harness note, attempt 2: ...")))

    async def go() -> list[Reply]:
        out = []
        for req in (REQUEST, noted):
            events = [e async for e in model.stream(req)]
            assert isinstance(events[-1], Done)
            out.append(events[-1].reply)
        return out

    first, second = asyncio.run(go())
    assert first.all_text.count("- r/Bitcoin") == 50 and second.all_text == "Three coins."


def test_background_jobs_poll_and_cancel() -> None:
    model = FauxModel(
        parse([{"text": "ready", "deferred": {"polls": 2}}, {"text": "never", "deferred": {"polls": 9}}])
    )

    async def go() -> list[Any]:
        job = await model.start(REQUEST)
        assert isinstance(job, Job)
        seen: list[Any] = [await model.poll(job), await model.poll(job), await model.poll(job)]
        other = await model.start(REQUEST)
        assert isinstance(other, Job)
        seen.append(await model.cancel(other))
        seen.append(await model.poll(other))
        seen.append(await model.poll(Job("nope", "queued", None, None)))
        return seen

    seen = asyncio.run(go())
    assert [type(x).__name__ for x in seen[:3]] == ["Job", "Job", "Reply"] and seen[2].all_text == "ready"
    assert seen[3] is None and seen[4].failure is not None
    assert isinstance(seen[5], PollFailed) and seen[5].failure.kind is FailureKind.NOT_FOUND


def test_a_stall_ends_once_its_gate_file_exists(tmp_path: Path) -> None:
    gate = tmp_path / "go"
    threading.Timer(0.5, gate.touch).start()
    began = time.monotonic()
    r = reply([{"text": "abcdef", "chunks": 6, "stallAfter": 2, "stall": 60, "stallUntil": str(gate)}])
    assert r.text == ("abcdef",) and r.failure is None
    assert 0.4 < time.monotonic() - began < 30
