"""The Chat Completions adapter through the real SDK over loopback HTTP, fed the
recorded responses of real providers, and garbage."""

from __future__ import annotations

import asyncio
import time

import pytest

from eukhe.ai import Done, FailureKind, Message, OpenAIChat, Reply, Request, Stop, Tool
from tests.ai.replay import RECORDINGS, recording, serve

REQUEST = Request(
    model="m",
    messages=(Message("user", "hi"),),
    tools=(Tool("get_weather", "weather", {"type": "object"}),),
)


def ask(base_url: str, key: str = "sk-test-not-a-real-key-123456") -> Reply:
    async def go() -> Reply:
        p = OpenAIChat("test", base_url=base_url, api_key=key, timeout=10)
        try:
            events = [e async for e in p.stream(REQUEST)]
        finally:
            await p.close()
        assert isinstance(events[-1], Done) and sum(isinstance(e, Done) for e in events) == 1
        return events[-1].reply

    return asyncio.run(go())


def replay(name: str) -> Reply:
    r = recording(name)
    body = r["sse"].encode()
    with serve(r["status"], r.get("headers") or {"content-type": "text/event-stream"}, body) as url:
        return ask(url)


def test_plain_text() -> None:
    reply = replay("openai_chat_text.json")
    assert reply.failure is None and reply.stop is Stop.STOP
    assert reply.has_text and not reply.calls
    assert reply.usage.output > 0


def test_a_tool_call_whose_arguments_arrive_in_many_chunks() -> None:
    reply = replay("openai_chat_tool_call.json")
    assert reply.stop is Stop.TOOL_USE and len(reply.calls) == 1
    call = reply.calls[0]
    assert call.name == "GetWeatherArgs" and call.arguments is not None
    assert call.arguments["city"] == "Edinburgh"


def test_two_parallel_calls() -> None:
    reply = replay("openai_chat_parallel_tool_calls.json")
    assert [c.name for c in reply.calls] == ["GetWeatherArgs", "get_stock_price"]
    assert all(c.arguments for c in reply.calls) and reply.calls[0].id != reply.calls[1].id


def test_a_length_stop() -> None:
    reply = replay("openai_chat_finish_length.json")
    assert reply.stop is Stop.LENGTH and reply.usage.output == 1


def test_deepseek_reasoning_is_thinking_and_usage_rides_the_finish_chunk() -> None:
    reply = replay("deepseek_reasoner_reasoning_content.json")
    assert reply.thinking and len(reply.thinking[0].text) > 100
    assert reply.has_text and reply.stop is Stop.STOP and reply.usage.reasoning > 0


def test_vllm_and_ollama_tool_calls() -> None:
    vllm = replay("vllm_tool_call_capture.json")
    assert vllm.stop is Stop.TOOL_USE and len(vllm.calls) == 1 and vllm.calls[0].arguments is not None
    ollama = replay("ollama_parallel_tool_calls_capture.json")
    assert len(ollama.calls) == 2 and all(c.arguments is not None for c in ollama.calls)


def test_vllm_text() -> None:
    reply = replay("vllm_crusoe_text_usage.json")
    assert reply.has_text and reply.failure is None and reply.usage.input > 0


def test_an_error_event_mid_stream_is_a_classified_failure() -> None:
    reply = replay("groq_gptoss_reasoning_then_error_event.json")
    assert reply.failure is not None and reply.stop is Stop.ERROR
    assert reply.failure.kind is FailureKind.BAD_REQUEST and not reply.failure.retryable
    assert reply.thinking  # what came before the error is kept
    openrouter = replay("openrouter_reasoning_length_then_error_chunk.json")
    assert openrouter.failure is not None and "Token limit reached" in openrouter.failure.message


def test_429_is_retryable_and_names_the_provider_and_status() -> None:
    reply = replay("openrouter_429_rate_limited.json")
    f = reply.failure
    assert f is not None and f.kind is FailureKind.RATE_LIMITED and f.retryable and f.status == 429
    assert f.message.startswith("test: HTTP 429 (rate_limited): ")


def test_retry_after_is_passed_up() -> None:
    with serve(
        429, {"retry-after": "7", "content-type": "application/json"}, b'{"error":{"message":"slow"}}'
    ) as url:
        f = ask(url).failure
    assert f is not None and f.retry_after == 7.0


@pytest.mark.parametrize(
    "status,kind,retryable",
    [
        (400, FailureKind.BAD_REQUEST, False),
        (401, FailureKind.AUTH, False),
        (403, FailureKind.AUTH, False),
        (404, FailureKind.NOT_FOUND, False),
        (422, FailureKind.UNPROCESSABLE, False),
        (500, FailureKind.SERVER, True),
        (503, FailureKind.SERVER, True),
        (529, FailureKind.OVERLOADED, True),
    ],
)
def test_statuses_are_classified_once(status: int, kind: FailureKind, retryable: bool) -> None:
    with serve(status, {"content-type": "application/json"}, b'{"error":{"message":"no"}}') as url:
        f = ask(url).failure
    assert f is not None and (f.kind, f.retryable, f.status) == (kind, retryable, status)


def test_a_dropped_connection_is_retryable() -> None:
    body = recording("openai_chat_text.json")["sse"].encode()
    with serve(200, {"content-type": "text/event-stream"}, body, cut_after=300) as url:
        reply = ask(url)
    assert (
        reply.failure is not None and reply.failure.kind is FailureKind.CONNECTION and reply.failure.retryable
    )


@pytest.mark.parametrize(
    "garbage",
    [
        b'data: {"id":"x","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\ndata: {not json\n\n',
        b'data: {"id":"x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a",'
        b'"function":{"arguments":"{}"}}]},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n',
        b'event: surprise\ndata: {"id":"x","choices":[]}\n\ndata: [DONE]\n\n',
        b'data: {"id":"x","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\ndata: {"id":"x","cho',
    ],
)
def test_garbage_from_a_server_ends_in_a_reply_never_an_exception(garbage: bytes) -> None:
    with serve(200, {"content-type": "text/event-stream"}, garbage) as url:
        reply = ask(url)
    assert isinstance(reply, Reply)
    assert reply.failure is not None and reply.stop is Stop.ERROR
    assert reply.failure.kind in (FailureKind.MALFORMED, FailureKind.CONNECTION)
    assert reply.failure.message.startswith("test: ")


def test_no_message_holds_the_key() -> None:
    key = "sk-live-SECRET-abcdefghijklmnop"
    body = ('{"error":{"message":"Incorrect API key provided: ' + key + '"}}').encode()
    with serve(401, {"content-type": "application/json"}, body) as url:
        reply = ask(url, key=key)
    assert reply.failure is not None and key not in repr(reply)
    assert "[redacted]" in reply.failure.message


def test_a_stall_past_the_idle_deadline_ends_the_reply_and_hangs_up() -> None:
    from eukhe.ai.guard import guard

    body = recording("openai_chat_text.json")["sse"].encode()
    seen: list[dict[str, object]] = []

    async def go(url: str) -> Reply:
        p = OpenAIChat("test", base_url=url, timeout=30)
        try:
            events = [e async for e in guard(p.stream(REQUEST), "test", idle=0.5)]
        finally:
            await p.close()
        assert isinstance(events[-1], Done)
        return events[-1].reply

    with serve(200, {"content-type": "text/event-stream"}, body, pause_after=400, pause=10, seen=seen) as url:
        reply = asyncio.run(go(url))
        for _ in range(100):
            if seen and seen[-1].get("hung_up"):
                break
            time.sleep(0.05)
    assert reply.failure is not None and reply.failure.kind is FailureKind.STALL
    assert seen[-1].get("hung_up") is True


def test_a_tool_call_then_the_text_answer_with_obfuscation_padding() -> None:
    r = recording("openai_chat_tool_call_then_text_obfuscation.json")
    first = replay("openai_chat_tool_call_then_text_obfuscation.json")
    assert first.stop is Stop.TOOL_USE and first.calls[0].name == "get_capital"
    assert first.calls[0].arguments is not None and first.usage.input > 0
    answer = r["exchanges"][1]
    with serve(answer["status"], answer.get("headers") or {}, answer["body"].encode()) as url:
        second = ask(url)
    assert second.failure is None and second.stop is Stop.STOP and second.has_text


def test_every_chat_recording_is_replayed() -> None:
    chat = {"openai-chat", "deepseek", "vllm", "ollama", "groq", "openrouter"}
    names = sorted(p.name for p in RECORDINGS.glob("*.json") if recording(p.name)["provider"] in chat)
    assert len(names) == 12
    for name in names:
        assert isinstance(replay(name), Reply)


@pytest.mark.parametrize(
    "name", ["llamacpp_tool_parse_error_500.json", "llamacpp_tool_parse_error_stream.json"]
)
def test_output_llama_cpps_tool_call_parser_rejects_is_read_as_rejected_both_ways(name: str) -> None:
    """llama.cpp's parse failure, an HTTP 500 unstreamed and an error event inside a 200
    stream: the model's output failing the server's parser, not an outage (never a
    transient retry: the same request gets the same output)."""
    reply = replay(name)
    assert reply.failure is not None and reply.stop is Stop.ERROR
    assert reply.failure.kind is FailureKind.REJECTED and not reply.failure.retryable
    assert reply.failure.status == 500
    assert "does not match the expected peg-native format" in reply.failure.message
