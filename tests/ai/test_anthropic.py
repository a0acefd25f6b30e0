"""The Anthropic Messages adapter through the real SDK over loopback HTTP, fed the
recorded responses of the real API, and garbage."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from eukhe.ai import Done, FailureKind, Message, Reply, Request, Stop, Tool, ToolCall
from eukhe.ai.anthropic import AnthropicMessages
from tests.ai.replay import recording, serve

REQUEST = Request(
    model="m",
    messages=(Message("user", "hi"),),
    tools=(Tool("get_weather", "weather", {"type": "object"}),),
)
SSE = {"content-type": "text/event-stream"}


def root(url: str) -> str:
    """The SDK's base URL is the server root: it adds `/v1/messages` itself."""
    return url.removesuffix("/v1")


def ask(base_url: str, key: str = "sk-ant-test-not-a-real-key-123456", request: Request = REQUEST) -> Reply:
    async def go() -> Reply:
        p = AnthropicMessages("test", base_url=root(base_url), api_key=key, timeout=10)
        try:
            events = [e async for e in p.stream(request)]
        finally:
            await p.close()
        assert isinstance(events[-1], Done) and sum(isinstance(e, Done) for e in events) == 1
        return events[-1].reply

    return asyncio.run(go())


def replay(name: str, seen: list[dict[str, Any]] | None = None) -> Reply:
    r = recording(name)
    with serve(r["status"], r.get("headers") or SSE, r["sse"].encode(), seen=seen) as url:
        return ask(url)


def sse(*events: dict[str, Any], error: dict[str, Any] | None = None) -> bytes:
    out = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    if error is not None:
        out += f"event: error\ndata: {json.dumps(error)}\n\n"
    return out.encode()


START: dict[str, Any] = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 5, "output_tokens": 1},
    },
}
TEXT: list[dict[str, Any]] = [
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello"}},
]
END: list[dict[str, Any]] = [
    {"type": "content_block_stop", "index": 0},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}},
    {"type": "message_stop"},
]


def test_plain_text() -> None:
    seen: list[dict[str, Any]] = []
    reply = replay("anthropic_text.json", seen)
    assert reply.failure is None and reply.stop is Stop.STOP
    assert reply.text == ("- Captain\n- Scoop",) and not reply.calls and not reply.thinking
    assert (reply.usage.input, reply.usage.output) == (17, 10)
    assert seen[0]["path"] == "/v1/messages"
    headers = {k.lower(): v for k, v in seen[0]["headers"].items()}
    assert headers["authorization"] == "Bearer sk-ant-test-not-a-real-key-123456"  # SDK 2.x: a bearer key


def test_thinking_keeps_its_signature_and_the_text_follows() -> None:
    reply = replay("anthropic_thinking_signature.json")
    assert reply.failure is None and reply.stop is Stop.STOP
    assert len(reply.thinking) == 1
    thinking = reply.thinking[0]
    assert thinking.text.startswith("This is a straightforward question") and thinking.text.endswith(
        "accidents."
    )
    assert thinking.signature is not None and thinking.signature.startswith("EvMCCkYICxgCKkCHP2c")
    assert reply.has_text and reply.all_text.endswith("crossing streets.")
    assert reply.usage.output == 282


def test_text_then_two_tool_calls_with_arguments_split_over_fragments() -> None:
    reply = replay("anthropic_tool_use_two_tools.json")
    assert reply.failure is None and reply.stop is Stop.TOOL_USE
    assert reply.all_text.startswith("Certainly!")
    assert [c.name for c in reply.calls] == ["get_weather", "get_time"]
    weather, clock = reply.calls
    assert weather.id == "toolu_014x5X91kx3fvdhpLvwXZWE2" and clock.id == "toolu_0121kXsENLvoDZ72LCuAnCCz"
    assert weather.arguments == {"location": "San Francisco, CA", "unit": "celsius"}
    assert clock.arguments == {"timezone": "America/Los_Angeles"} and clock.error is None
    assert (reply.usage.input, reply.usage.output) == (506, 153)


def test_max_tokens_mid_tool_input_is_a_length_stop_with_an_unparsed_call() -> None:
    reply = replay("anthropic_max_tokens_mid_tool_input.json")
    assert reply.failure is None and reply.stop is Stop.LENGTH
    assert reply.has_text and len(reply.calls) == 1
    call = reply.calls[0]
    assert call.name == "make_file" and call.arguments is None and call.error
    assert call.raw.startswith('{"filename": "taxes.txt"') and call.raw.endswith("Filing taxes")
    assert reply.usage.output == 124


def test_events_stream_before_the_reply() -> None:
    from eukhe.ai import CallDelta, TextDelta, ThinkingDelta, UsageEvent

    async def go(url: str) -> list[Any]:
        p = AnthropicMessages("test", base_url=root(url), api_key="k", timeout=10)
        try:
            return [e async for e in p.stream(REQUEST)]
        finally:
            await p.close()

    for name, kind in [
        ("anthropic_text.json", TextDelta),
        ("anthropic_thinking_signature.json", ThinkingDelta),
        ("anthropic_tool_use_two_tools.json", CallDelta),
    ]:
        r = recording(name)
        with serve(200, SSE, r["sse"].encode()) as url:
            events = asyncio.run(go(url))
        assert any(isinstance(e, kind) for e in events) and any(isinstance(e, UsageEvent) for e in events)
    calls = [e for e in events if isinstance(e, CallDelta)]
    assert {e.index for e in calls} == {0, 1}
    assert "".join(e.arguments for e in calls if e.index == 1) == '{"timezone": "America/Los_Angeles"}'


def test_the_request_is_mapped_to_messages_api_params() -> None:
    request = Request(
        model="claude-x",
        system="be brief",
        max_tokens=77,
        tools=(
            Tool("get_weather", "weather", {"type": "object", "properties": {"city": {"type": "string"}}}),
        ),
        messages=(
            Message("user", "weather?"),
            Message(
                "assistant",
                "checking",
                calls=(
                    ToolCall("toolu_a", "get_weather", '{"city":"Oslo"}', {"city": "Oslo"}),
                    ToolCall("toolu_b", "get_weather", "{bad", None, "not JSON"),
                ),
            ),
            Message("tool", "rain", call_id="toolu_a"),
            Message("tool", "sun", call_id="toolu_b"),
            Message("user", "thanks"),
        ),
    )
    seen: list[dict[str, Any]] = []
    r = recording("anthropic_text.json")
    with serve(200, SSE, r["sse"].encode(), seen=seen) as url:
        reply = ask(url, request=request)
    assert reply.failure is None
    body = json.loads(seen[0]["body"])
    assert body["model"] == "claude-x" and body["max_tokens"] == 77 and body["stream"] is True
    assert body["system"] == "be brief"
    assert body["tools"] == [
        {
            "name": "get_weather",
            "description": "weather",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
        }
    ]
    assert body["messages"] == [
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "checking"},
                {"type": "tool_use", "id": "toolu_a", "name": "get_weather", "input": {"city": "Oslo"}},
                {"type": "tool_use", "id": "toolu_b", "name": "get_weather", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_a", "content": "rain"},
                {"type": "tool_result", "tool_use_id": "toolu_b", "content": "sun"},
            ],
        },
        {"role": "user", "content": "thanks"},
    ]


def test_defaults_without_system_tools_or_max_tokens() -> None:
    seen: list[dict[str, Any]] = []
    r = recording("anthropic_text.json")
    with serve(200, SSE, r["sse"].encode(), seen=seen) as url:
        ask(url, request=Request(model="m", messages=(Message("user", "hi"),)))
    body = json.loads(seen[0]["body"])
    assert body["max_tokens"] == 8192 and "system" not in body and "tools" not in body


def test_an_overloaded_error_event_mid_stream_is_retryable_and_keeps_the_text() -> None:
    body = sse(
        START, *TEXT, error={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    )
    with serve(200, SSE, body) as url:
        reply = ask(url)
    f = reply.failure
    assert f is not None and f.kind is FailureKind.OVERLOADED and f.retryable and reply.stop is Stop.ERROR
    assert reply.text == ("Hello",) and "Overloaded" in f.message and f.message.startswith("test: ")


@pytest.mark.parametrize(
    "error_type,kind,retryable",
    [
        ("api_error", FailureKind.SERVER, True),
        ("rate_limit_error", FailureKind.RATE_LIMITED, True),
        ("invalid_request_error", FailureKind.BAD_REQUEST, False),
        ("something_new", FailureKind.STREAM_ERROR, False),
    ],
)
def test_other_error_events_are_classified_by_type(
    error_type: str, kind: FailureKind, retryable: bool
) -> None:
    body = sse(START, *TEXT, error={"type": "error", "error": {"type": error_type, "message": "no"}})
    with serve(200, SSE, body) as url:
        f = ask(url).failure
    assert f is not None and (f.kind, f.retryable) == (kind, retryable)


def test_529_is_overloaded_and_retryable() -> None:
    body = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    with serve(529, {"content-type": "application/json"}, body) as url:
        f = ask(url).failure
    assert f is not None and f.kind is FailureKind.OVERLOADED and f.retryable and f.status == 529
    assert f.message.startswith("test: HTTP 529 (overloaded): ")


def test_an_overloaded_body_under_another_status_is_overloaded() -> None:
    body = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    with serve(503, {"content-type": "application/json"}, body) as url:
        f = ask(url).failure
    assert f is not None and f.kind is FailureKind.OVERLOADED and f.retryable


def test_429_with_retry_after_is_rate_limited_and_passes_the_wait_up() -> None:
    body = b'{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}'
    with serve(429, {"retry-after": "7", "content-type": "application/json"}, body) as url:
        f = ask(url).failure
    assert f is not None and f.kind is FailureKind.RATE_LIMITED and f.retryable and f.retry_after == 7.0


@pytest.mark.parametrize(
    "status,kind,retryable",
    [
        (400, FailureKind.BAD_REQUEST, False),
        (401, FailureKind.AUTH, False),
        (403, FailureKind.AUTH, False),
        (404, FailureKind.NOT_FOUND, False),
        (500, FailureKind.SERVER, True),
    ],
)
def test_statuses_are_classified_once(status: int, kind: FailureKind, retryable: bool) -> None:
    body = b'{"type":"error","error":{"type":"x","message":"no"}}'
    with serve(status, {"content-type": "application/json"}, body) as url:
        reply = ask(url)
    f = reply.failure
    assert f is not None and (f.kind, f.retryable, f.status) == (kind, retryable, status)
    assert reply.stop is Stop.ERROR


def test_a_dropped_connection_is_retryable() -> None:
    body = recording("anthropic_text.json")["sse"].encode()
    with serve(200, SSE, body, cut_after=900) as url:
        reply = ask(url)
    assert (
        reply.failure is not None and reply.failure.kind is FailureKind.CONNECTION and reply.failure.retryable
    )


def test_a_connection_refused_is_retryable() -> None:
    with serve(200, SSE, b"") as url:
        pass  # the server is gone: its port now refuses
    reply = ask(url)
    assert (
        reply.failure is not None and reply.failure.kind is FailureKind.CONNECTION and reply.failure.retryable
    )


def test_refusal_is_a_refused_failure() -> None:
    end: list[dict[str, Any]] = [
        {"type": "message_delta", "delta": {"stop_reason": "refusal"}, "usage": {}},
        {"type": "message_stop"},
    ]
    with serve(200, SSE, sse(START, *TEXT, *end)) as url:
        reply = ask(url)
    assert (
        reply.failure is not None
        and reply.failure.kind is FailureKind.REFUSED
        and not reply.failure.retryable
    )
    assert reply.text == ("Hello",)


def test_unknown_events_and_blocks_are_ignored() -> None:
    body = (
        sse(START, *TEXT)
        + b'event: surprise\ndata: {"type":"surprise","x":1}\n\n'
        + sse(
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "redacted_thinking", "data": "x"},
            },
            {"type": "content_block_delta", "index": 1, "delta": {"type": "new_delta"}},
            {"type": "content_block_stop", "index": 1},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "citations_delta", "citation": {}}},
            *END,
        )
    )
    with serve(200, SSE, body) as url:
        reply = ask(url)
    assert reply.failure is None and reply.text == ("Hello",) and reply.stop is Stop.STOP


@pytest.mark.parametrize(
    "garbage,kind",
    [
        # an event that is not JSON
        (sse(START, *TEXT) + b"event: content_block_delta\ndata: {not json\n\n", FailureKind.MALFORMED),
        # a delta for a block never started
        (
            sse(
                START,
                {"type": "content_block_delta", "index": 3, "delta": {"type": "text_delta", "text": "x"}},
            ),
            FailureKind.MALFORMED,
        ),
        # a delta of the wrong kind for its block
        (
            sse(
                START,
                TEXT[0],
                {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta"}},
            ),
            FailureKind.MALFORMED,
        ),
        # an event without a type
        (sse(START) + b"event: content_block_delta\ndata: {}\n\n", FailureKind.MALFORMED),
        # truncated: no message_delta, no message_stop
        (sse(START, *TEXT), FailureKind.CONNECTION),
        # cut in the middle of an event (the unfinished event is never decoded)
        (
            sse(START, *TEXT) + b'event: content_block_delta\ndata: {"type":"content_bl',
            FailureKind.CONNECTION,
        ),
        # no message at all
        (b"event: message_stop\ndata: {}\n\n", FailureKind.MALFORMED),
        # not an event stream
        (b'{"hello": "world"}', FailureKind.MALFORMED),
        # not UTF-8
        (sse(START) + b"event: content_block_start\ndata: \xff\xfe\n\n", FailureKind.MALFORMED),
    ],
)
def test_garbage_from_a_server_ends_in_a_reply_never_an_exception(garbage: bytes, kind: FailureKind) -> None:
    with serve(200, SSE, garbage) as url:
        reply = ask(url)
    assert isinstance(reply, Reply)
    assert reply.failure is not None and reply.stop is Stop.ERROR
    assert reply.failure.kind is kind
    assert reply.failure.message.startswith("test: ")


def test_text_before_garbage_is_kept() -> None:
    with serve(200, SSE, sse(START, *TEXT) + b"event: content_block_delta\ndata: {not json\n\n") as url:
        reply = ask(url)
    assert reply.text == ("Hello",) and reply.usage.input == 5


def test_no_message_holds_the_key() -> None:
    key = "sk-ant-api03-SECRET-abcdefghijklmnop"
    body = (
        '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key ' + key + '"}}'
    ).encode()
    with serve(401, {"content-type": "application/json"}, body) as url:
        reply = ask(url, key=key)
    assert (
        reply.failure is not None and reply.failure.kind is FailureKind.AUTH and not reply.failure.retryable
    )
    assert key not in repr(reply) and "[redacted]" in reply.failure.message


def test_a_key_echoed_in_an_error_event_is_redacted() -> None:
    key = "plainsecretvalue"
    body = sse(START, error={"type": "error", "error": {"type": "api_error", "message": "bad key " + key}})
    with serve(200, SSE, body) as url:
        reply = ask(url, key=key)
    assert reply.failure is not None and key not in repr(reply)


def test_a_cancel_propagates_and_hangs_up() -> None:
    body = recording("anthropic_text.json")["sse"].encode()
    seen: list[dict[str, Any]] = []

    async def go(url: str) -> None:
        p = AnthropicMessages("test", base_url=root(url), api_key="k", timeout=30)
        got: list[Any] = []

        async def consume() -> None:
            async for e in p.stream(REQUEST):
                got.append(e)

        task = asyncio.create_task(consume())
        while not seen:
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await p.close()
        assert not any(isinstance(e, Done) for e in got)

    with serve(200, SSE, body, pause_after=700, pause=10, seen=seen) as url:
        asyncio.run(go(url))
        for _ in range(100):
            if seen[-1].get("hung_up"):
                break
            time.sleep(0.05)
    assert seen[-1].get("hung_up") is True


def test_a_stall_past_the_idle_deadline_ends_the_reply_and_hangs_up() -> None:
    from eukhe.ai.guard import guard

    body = recording("anthropic_text.json")["sse"].encode()
    seen: list[dict[str, Any]] = []

    async def go(url: str) -> Reply:
        p = AnthropicMessages("test", base_url=root(url), timeout=30)
        try:
            events = [e async for e in guard(p.stream(REQUEST), "test", idle=0.5)]
        finally:
            await p.close()
        assert isinstance(events[-1], Done)
        return events[-1].reply

    with serve(200, SSE, body, pause_after=700, pause=10, seen=seen) as url:
        reply = asyncio.run(go(url))
        for _ in range(100):
            if seen and seen[-1].get("hung_up"):
                break
            time.sleep(0.05)
    assert reply.failure is not None and reply.failure.kind is FailureKind.STALL
    assert seen[-1].get("hung_up") is True
