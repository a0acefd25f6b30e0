"""Every adapter through its real SDK against the faux server on loopback HTTP:
the scenarios of the providers issue, one reply each, exactly one Done."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from eukhe.ai import Done, FailureKind, Message, Reply, Request, Stop
from eukhe.ai.anthropic import AnthropicMessages
from eukhe.ai.faux import FauxServer
from eukhe.ai.faux.script import parse
from eukhe.ai.guard import guard
from eukhe.ai.openai_chat import OpenAIChat
from eukhe.ai.openai_responses import Job, OpenAIResponses, PollFailed

REQUEST = Request("faux-model", (Message("user", "go"),))

ADAPTERS: dict[str, Callable[[str], Any]] = {
    "openai-chat": lambda url: OpenAIChat("faux", base_url=url, timeout=20),
    "openai-responses": lambda url: OpenAIResponses("faux", base_url=url, timeout=20),
    "anthropic": lambda url: AnthropicMessages("faux", base_url=url.removesuffix("/v1"), timeout=20),
}


@pytest.fixture(params=sorted(ADAPTERS))
def api(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def one(api: str, script: Any, idle: float | None = None) -> Reply:
    async def go(url: str) -> Reply:
        p = ADAPTERS[api](url)
        try:
            events = p.stream(REQUEST)
            if idle is not None:
                events = guard(events, "faux", idle=idle)
            got = [e async for e in events]
        finally:
            await p.close()
        assert sum(isinstance(e, Done) for e in got) == 1 and isinstance(got[-1], Done)
        return got[-1].reply

    with FauxServer(parse(script)) as server:
        return asyncio.run(go(server.url))


def test_plain_text(api: str) -> None:
    r = one(api, [{"text": "Hello there.", "chunks": 5}])
    assert r.all_text == "Hello there." and r.stop is Stop.STOP and r.failure is None


def test_a_tool_call_whose_arguments_arrive_in_many_chunks(api: str) -> None:
    args = {"path": "src/main.py", "content": "print('hi')\n" * 20}
    r = one(api, [{"calls": [{"name": "write", "arguments": args}], "chunks": 40}])
    assert r.stop is Stop.TOOL_USE and r.calls[0].name == "write" and r.calls[0].arguments == args


def test_two_parallel_calls(api: str) -> None:
    calls = [{"name": "read", "arguments": {"path": "a"}}, {"name": "read", "arguments": {"path": "b"}}]
    r = one(api, [{"calls": calls, "chunks": 3}])
    assert [c.arguments for c in r.calls] == [{"path": "a"}, {"path": "b"}] and r.calls[0].id != r.calls[1].id


def test_calls_with_finish_reason_stop_stay_calls(api: str) -> None:
    r = one(api, [{"calls": [{"name": "bash", "arguments": {"command": "ls"}}], "stop": "stop"}])
    assert len(r.calls) == 1 and r.calls[0].arguments == {"command": "ls"}


def test_reasoning_is_thinking(api: str) -> None:
    r = one(api, [{"thinking": "Let me see. " * 10, "text": "Done.", "chunks": 6}])
    assert r.thinking and "".join(t.text for t in r.thinking) == "Let me see. " * 10 and r.has_text


def test_a_length_stop(api: str) -> None:
    r = one(api, [{"thinking": "planning everything", "stop": "length"}])
    assert r.stop is Stop.LENGTH and not r.has_text and not r.calls


def test_429_with_retry_after(api: str) -> None:
    r = one(api, [{"error": {"status": 429, "retryAfter": 3}}])
    assert r.failure is not None and r.failure.kind is FailureKind.RATE_LIMITED and r.failure.retry_after == 3


def test_overloaded_mid_stream(api: str) -> None:
    r = one(api, [{"text": "partial answer", "chunks": 5, "streamError": {"after": 3}}])
    assert r.failure is not None and r.stop is Stop.ERROR
    if api == "anthropic":
        assert r.failure.kind is FailureKind.OVERLOADED and r.failure.retryable


def test_a_dropped_connection(api: str) -> None:
    r = one(api, [{"text": "a long answer " * 20, "chunks": 10, "dropAfter": 4}])
    assert r.failure is not None and r.failure.kind is FailureKind.CONNECTION and r.failure.retryable


def test_a_stall_past_the_idle_deadline(api: str) -> None:
    r = one(api, [{"text": "slow " * 10, "chunks": 10, "stallAfter": 3, "stall": 20}], idle=0.4)
    assert r.failure is not None and r.failure.kind is FailureKind.STALL


def test_a_repeated_line(api: str) -> None:
    r = one(api, [{"repeat": {"line": "- r/Bitcoin", "times": 200}, "chunks": 200}], idle=5)
    assert (
        r.failure is not None and r.failure.kind is FailureKind.REPEATING and r.failure.line == "- r/Bitcoin"
    )


def background(script: Any, flow: Callable[[OpenAIResponses], Any]) -> tuple[Any, FauxServer]:
    async def go(url: str) -> Any:
        p = OpenAIResponses("faux", base_url=url, timeout=20)
        try:
            return await flow(p)
        finally:
            await p.close()

    with FauxServer(parse(script)) as server:
        return asyncio.run(go(server.url)), server


def test_a_background_job_polled_to_completion() -> None:
    async def flow(p: OpenAIResponses) -> list[Any]:
        job = await p.start(REQUEST, window="1h")
        assert isinstance(job, Job)
        seen: list[Any] = [job]
        while isinstance(seen[-1], Job | PollFailed):
            seen.append(await p.poll(job))
        return seen

    seen, server = background([{"text": "ready", "deferred": {"polls": 3}}], flow)
    assert [type(x).__name__ for x in seen] == ["Job", "Job", "Job", "Job", "Reply"]
    assert seen[-1].all_text == "ready"
    assert [s.method for s in server.seen] == ["POST", "GET", "GET", "GET", "GET"]


def test_a_background_job_cancelled() -> None:
    async def flow(p: OpenAIResponses) -> Any:
        job = await p.start(REQUEST)
        assert isinstance(job, Job)
        await p.poll(job)
        failure = await p.cancel(job)
        return failure, await p.poll(job)

    (failure, after), server = background([{"text": "never", "deferred": {"polls": 100}}], flow)
    assert failure is None
    assert server.seen[2].method == "POST" and server.seen[2].path.endswith("/cancel")
    assert isinstance(after, Reply) and after.failure is not None


def test_no_output_or_log_line_holds_the_key(
    api: str, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    import logging

    key = "sk-ant-SECRETSECRETSECRET1234" if api == "anthropic" else "sk-proj-SECRETSECRETSECRET1234"
    caplog.set_level(logging.DEBUG)
    make = {
        "openai-chat": lambda url: OpenAIChat("faux", base_url=url, api_key=key),
        "openai-responses": lambda url: OpenAIResponses("faux", base_url=url, api_key=key),
        "anthropic": lambda url: AnthropicMessages("faux", base_url=url.removesuffix("/v1"), api_key=key),
    }[api]

    async def go(url: str) -> list[Reply]:
        p = make(url)
        out = []
        try:
            for _ in range(3):
                got = [e async for e in p.stream(REQUEST)]
                assert isinstance(got[-1], Done)
                out.append(got[-1].reply)
        finally:
            await p.close()
        return out

    body = {"error": {"message": f"Incorrect API key provided: {key}. Authorization: Bearer {key}"}}
    script = parse(
        [{"error": {"status": 401, "body": body}}, {"error": {"status": 500, "body": key}}, "fine"]
    )
    with FauxServer(script) as server:
        replies = asyncio.run(go(server.url))
    out, err = capfd.readouterr()
    for text in (repr(replies), caplog.text, out, err):
        assert key not in text
    assert replies[0].failure is not None and replies[2].all_text == "fine"


@pytest.mark.parametrize("temperature", [None, 0.0, 0.7])
def test_the_temperature_goes_in_the_body_only_when_set(api: str, temperature: float | None) -> None:
    import dataclasses

    async def go(url: str) -> None:
        p = ADAPTERS[api](url)
        try:
            [_ async for _ in p.stream(dataclasses.replace(REQUEST, temperature=temperature))]
        finally:
            await p.close()

    with FauxServer(parse(["ok"])) as server:
        asyncio.run(go(server.url))
        body = server.seen[0].body
    assert body.get("temperature") == temperature and ("temperature" in body) is (temperature is not None)
