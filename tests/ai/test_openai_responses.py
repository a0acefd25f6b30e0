"""The Responses adapter through the real SDK over loopback HTTP: streamed and in
background mode (start, poll, cancel), fed the recorded responses of the real
API, and garbage."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any, TypeVar

import pytest

from eukhe.ai import (
    CallDelta,
    Done,
    Event,
    FailureKind,
    Message,
    Reply,
    Request,
    Stop,
    TextDelta,
    Tool,
    ToolCall,
)
from eukhe.ai.jobs import Job, PollFailed, deadline
from eukhe.ai.openai_responses import OpenAIResponses, inputs
from tests.ai.replay import HOP, recording, serve, serving

KEY = "sk-test-not-a-real-key-123456"
REQUEST = Request(
    model="m",
    messages=(Message("user", "What is the capital of PotatoLand?"),),
    tools=(Tool("get_capital", "capital of a country", {"type": "object"}),),
    system="Be brief.",
)
SSE = {"content-type": "text/event-stream"}
JSON = {"content-type": "application/json"}
T = TypeVar("T")

# (status, headers, body, delay before answering)
Answer = tuple[int, dict[str, Any], bytes, float]


@contextmanager
def serve_in_turn(answers: list[Answer], seen: list[dict[str, Any]]) -> Iterator[str]:
    """Answer each request with the next answer; `seen` gets method, path and body."""
    queue = list(answers)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            n = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(n)
            with lock:
                seen.append({"method": self.command, "path": self.path, "body": body})
                answer = queue.pop(0) if queue else (500, JSON, b'{"error":{"message":"no more"}}', 0.0)
            status, headers, payload, delay = answer
            time.sleep(delay)
            self.send_response(status)
            for k, v in headers.items():
                if k.lower() not in HOP:
                    self.send_header(k, v)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST

    yield from serving(Handler)


def run(base_url: str, use: Callable[[OpenAIResponses], Awaitable[T]], key: str = KEY) -> T:
    async def go() -> T:
        p = OpenAIResponses("test", base_url=base_url, api_key=key, timeout=10)
        try:
            return await use(p)
        finally:
            await p.close()

    return asyncio.run(go())


def events_of(base_url: str, key: str = KEY) -> list[Event]:
    async def use(p: OpenAIResponses) -> list[Event]:
        return [e async for e in p.stream(REQUEST)]

    events = run(base_url, use, key)
    assert isinstance(events[-1], Done) and sum(isinstance(e, Done) for e in events) == 1
    return events


def ask(base_url: str, key: str = KEY) -> Reply:
    last = events_of(base_url, key)[-1]
    assert isinstance(last, Done)
    return last.reply


def replay(name: str, seen: list[dict[str, Any]] | None = None) -> list[Event]:
    r = recording(name)
    headers = {k: v for k, v in (r.get("headers") or SSE).items() if isinstance(v, str)}
    with serve(r["status"], headers, r["sse"].encode(), seen=seen) as url:
        return events_of(url)


def sse(*events: dict[str, Any]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def answer(body: str | bytes, status: int = 200, delay: float = 0.0) -> Answer:
    return (status, JSON, body.encode() if isinstance(body, str) else body, delay)


# ---------------------------------------------------------------- streamed


def test_text_then_a_function_call_whose_arguments_arrive_in_deltas() -> None:
    seen: list[dict[str, Any]] = []
    events = replay("openai_responses_text_and_function_call.json", seen)
    reply = events[-1].reply  # type: ignore[union-attr]
    assert reply.failure is None and reply.stop is Stop.TOOL_USE
    assert reply.all_text == "I’ll check the capital lookup tool for “PotatoLand.”"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == reply.all_text
    assert reply.calls == (
        ToolCall(
            "call_LabG58Uhrq9kZvR52BYKjToD",
            "get_capital",
            '{"country":"PotatoLand"}',
            {"country": "PotatoLand"},
        ),
    )
    deltas = [e for e in events if isinstance(e, CallDelta)]
    assert deltas[0].id == "call_LabG58Uhrq9kZvR52BYKjToD" and deltas[0].name == "get_capital"
    assert "".join(d.arguments for d in deltas) == '{"country":"PotatoLand"}'
    assert (reply.usage.input, reply.usage.output, reply.usage.reasoning, reply.usage.cache_read) == (
        63,
        69,
        26,
        0,
    )
    body = json.loads(seen[0]["body"])
    assert seen[0]["path"] == "/v1/responses" and body["stream"] is True
    assert body["instructions"] == "Be brief."
    assert body["input"] == [{"role": "user", "content": "What is the capital of PotatoLand?"}]
    assert body["tools"] == [
        {
            "type": "function",
            "name": "get_capital",
            "description": "capital of a country",
            "parameters": {"type": "object"},
            "strict": False,
        }
    ]


def test_a_background_stream_is_text_and_usage() -> None:
    reply = replay("openai_responses_background_stream_and_resume.json")[-1].reply  # type: ignore[union-attr]
    assert reply.failure is None and reply.stop is Stop.STOP
    assert reply.text == ("2 + 2 equals 4.",) and not reply.calls
    assert (reply.usage.input, reply.usage.output) == (15, 9)


def test_400_is_a_bad_request_and_not_retryable() -> None:
    reply = replay("openai_responses_400_on_stream_request.json")[-1].reply  # type: ignore[union-attr]
    f = reply.failure
    assert f is not None and reply.stop is Stop.ERROR
    assert (f.kind, f.retryable, f.status) == (FailureKind.BAD_REQUEST, False, 400)
    assert f.message.startswith("test: HTTP 400 (bad_request): ") and "temperature" in f.message


def test_a_reasoning_summary_is_thinking() -> None:
    body = sse(
        {"type": "response.output_item.added", "output_index": 0, "item": {"id": "rs", "type": "reasoning"}},
        {
            "type": "response.reasoning_summary_text.delta",
            "output_index": 0,
            "item_id": "rs",
            "summary_index": 0,
            "delta": "Think",
        },
        {
            "type": "response.reasoning_summary_text.delta",
            "output_index": 0,
            "item_id": "rs",
            "summary_index": 0,
            "delta": "ing.",
        },
        {
            "type": "response.output_text.delta",
            "output_index": 1,
            "item_id": "m",
            "content_index": 0,
            "delta": "Hi",
        },
        {"type": "response.completed", "response": {"status": "completed", "output": [], "usage": None}},
    )
    with serve(200, SSE, body) as url:
        reply = ask(url)
    assert reply.failure is None and [t.text for t in reply.thinking] == ["Thinking."]
    assert reply.text == ("Hi",) and reply.stop is Stop.STOP


def test_incomplete_at_max_output_tokens_is_a_length_stop() -> None:
    body = sse(
        {
            "type": "response.output_text.delta",
            "output_index": 0,
            "item_id": "m",
            "content_index": 0,
            "delta": "Once upon",
        },
        {
            "type": "response.incomplete",
            "response": {
                "status": "incomplete",
                "incomplete_details": {"reason": "max_output_tokens"},
                "usage": {"input_tokens": 3, "output_tokens": 2},
            },
        },
    )
    with serve(200, SSE, body) as url:
        reply = ask(url)
    assert reply.failure is None and reply.stop is Stop.LENGTH
    assert reply.text == ("Once upon",) and reply.usage.output == 2


@pytest.mark.parametrize(
    "event,kind,retryable",
    [
        (
            {"type": "error", "code": "server_error", "message": "boom", "sequence_number": 1},
            FailureKind.SERVER,
            True,
        ),
        (
            {"type": "error", "code": "rate_limit_exceeded", "message": "slow", "sequence_number": 1},
            FailureKind.RATE_LIMITED,
            True,
        ),
        (
            {
                "type": "response.failed",
                "response": {"status": "failed", "error": {"code": "invalid_prompt", "message": "no"}},
            },
            FailureKind.BAD_REQUEST,
            False,
        ),
        (
            {"type": "error", "code": "what_is_this", "message": "?", "sequence_number": 1},
            FailureKind.STREAM_ERROR,
            False,
        ),
    ],
)
def test_an_error_in_the_stream_is_a_classified_failure(
    event: dict[str, Any], kind: FailureKind, retryable: bool
) -> None:
    start = {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": "Par"}
    with serve(200, SSE, sse(start, event)) as url:
        reply = ask(url)
    assert reply.failure is not None and reply.stop is Stop.ERROR
    assert (reply.failure.kind, reply.failure.retryable) == (kind, retryable)
    assert reply.text == ("Par",)  # what came before the error is kept


def _cut_before_completed() -> bytes:
    body: str = recording("openai_responses_background_stream_and_resume.json")["sse"]
    return body[: body.index("event: response.completed")].encode()


@pytest.mark.parametrize(
    "garbage",
    [
        sse({"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": "hi"})
        + b"event: response.output_text.delta\ndata: {not json\n\n",
        _cut_before_completed(),  # a clean end, but no response.completed
        b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"h',
        sse(
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {"type": "function_call", "call_id": "c", "arguments": ""},
            },
            {"type": "response.completed", "response": {"status": "completed", "output": []}},
        ),
    ],
)
def test_garbage_from_a_server_ends_in_a_reply_never_an_exception(garbage: bytes) -> None:
    with serve(200, SSE, garbage) as url:
        reply = ask(url)
    assert isinstance(reply, Reply)
    assert reply.failure is not None and reply.stop is Stop.ERROR
    assert reply.failure.kind in (FailureKind.MALFORMED, FailureKind.CONNECTION)
    assert reply.failure.message.startswith("test: ")


def test_a_dropped_connection_is_retryable() -> None:
    body = recording("openai_responses_background_stream_and_resume.json")["sse"].encode()
    with serve(200, SSE, body, cut_after=3000) as url:
        reply = ask(url)
    assert (
        reply.failure is not None and reply.failure.kind is FailureKind.CONNECTION and reply.failure.retryable
    )


def test_no_failure_holds_the_key() -> None:
    key = "sk-live-SECRET-abcdefghijklmnop"
    body = ('{"error":{"message":"Incorrect API key provided: ' + key + '"}}').encode()
    with serve(401, JSON, body) as url:
        reply = ask(url, key=key)
        polled = run(url, lambda p: p.poll(Job("resp_1", "queued", None, None)), key=key)
        cancelled = run(url, lambda p: p.cancel(Job("resp_1", "queued", None, None)), key=key)
    assert isinstance(polled, PollFailed)
    for f in (reply.failure, polled.failure, cancelled):
        assert f is not None and f.kind is FailureKind.AUTH
        assert key not in repr(f) and "[redacted]" in f.message
    assert key not in repr(reply) and key not in repr(polled)


# ---------------------------------------------------------------- background


def _poll_recording() -> tuple[dict[str, Any], list[Answer]]:
    r = recording("openai_responses_background_poll.json")
    answers = [answer(r["sse"], r["status"])]
    answers += [answer(ex["body"], ex["status"]) for ex in r["exchanges"][1:]]
    return r, answers


def test_start_then_poll_until_the_reply() -> None:
    r, answers = _poll_recording()
    rid = json.loads(r["sse"])["id"]
    seen: list[dict[str, Any]] = []

    async def flow(p: OpenAIResponses) -> list[Job | Reply]:
        started = await p.start(REQUEST, window="1h")
        assert isinstance(started, Job)
        first = await p.poll(started)
        assert isinstance(first, Job)
        return [started, first, await p.poll(first)]

    with serve_in_turn(answers, seen) as url:
        started, first, done = run(url, flow)
    assert started == Job(rid, "queued", 1770757617.0, None)
    assert first == Job(rid, "in_progress", 1770757617.0, None)
    assert isinstance(done, Reply) and done.failure is None and done.stop is Stop.STOP
    assert done.text == ("2 + 2 equals 4.",) and (done.usage.input, done.usage.output) == (15, 9)
    assert [(s["method"], s["path"].split("?")[0]) for s in seen] == [
        ("POST", "/v1/responses"),
        ("GET", f"/v1/responses/{rid}"),
        ("GET", f"/v1/responses/{rid}"),
    ]
    body = json.loads(seen[0]["body"])
    assert body["background"] is True and body["stream"] is False
    assert "background_options" not in body  # "1h" is the harness's window, not the API's


def test_a_poll_answered_503_is_a_retryable_poll_failure_and_the_next_poll_works() -> None:
    r, answers = _poll_recording()
    rid = json.loads(r["sse"])["id"]
    seen: list[dict[str, Any]] = []
    job = Job(rid, "queued", None, None)

    async def flow(p: OpenAIResponses) -> tuple[Job | Reply | PollFailed, Job | Reply | PollFailed]:
        return await p.poll(job), await p.poll(job)

    busy = (503, {**JSON, "retry-after": "2"}, b'{"error":{"message":"try later"}}', 0.0)
    with serve_in_turn([busy, answers[2]], seen) as url:
        failed, done = run(url, flow)
    assert isinstance(failed, PollFailed)
    f = failed.failure
    assert (f.kind, f.retryable, f.status, f.retry_after) == (FailureKind.SERVER, True, 503, 2.0)
    assert isinstance(done, Reply) and done.failure is None and done.text == ("2 + 2 equals 4.",)
    assert [s["method"] for s in seen] == ["GET", "GET"]  # the request was never sent again


def test_a_refused_connection_on_poll_is_a_retryable_poll_failure() -> None:
    with serve_in_turn([], []) as url:
        pass  # the server is gone: the port refuses
    polled = run(url, lambda p: p.poll(Job("resp_1", "in_progress", None, None)))
    assert isinstance(polled, PollFailed)
    assert polled.failure.kind is FailureKind.CONNECTION and polled.failure.retryable


@pytest.mark.parametrize(
    "response,kind,stop",
    [
        (
            {"id": "r", "status": "failed", "error": {"code": "server_error", "message": "x"}},
            FailureKind.SERVER,
            None,
        ),
        ({"id": "r", "status": "cancelled"}, FailureKind.STREAM_ERROR, None),
        (
            {
                "id": "r",
                "status": "incomplete",
                "incomplete_details": {"reason": "max_output_tokens"},
                "output": [{"type": "message", "content": [{"type": "output_text", "text": "Once"}]}],
            },
            None,
            Stop.LENGTH,
        ),
        (
            {
                "id": "r",
                "status": "completed",
                "output": [
                    {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Hmm."}]},
                    {
                        "type": "function_call",
                        "call_id": "c1",
                        "name": "get_capital",
                        "arguments": '{"country":"X"}',
                    },
                ],
                "usage": {
                    "input_tokens": 5,
                    "output_tokens": 7,
                    "output_tokens_details": {"reasoning_tokens": 3},
                    "input_tokens_details": {"cached_tokens": 4},
                },
            },
            None,
            Stop.TOOL_USE,
        ),
        ({"id": "r"}, FailureKind.MALFORMED, None),
    ],
)
def test_a_finished_job_is_a_reply(
    response: dict[str, Any], kind: FailureKind | None, stop: Stop | None
) -> None:
    with serve_in_turn([answer(json.dumps(response))], []) as url:
        reply = run(url, lambda p: p.poll(Job("r", "in_progress", None, None)))
    assert isinstance(reply, Reply)
    if kind is not None:
        assert reply.failure is not None and reply.failure.kind is kind and reply.stop is Stop.ERROR
    else:
        assert reply.failure is None and reply.stop is stop
    if stop is Stop.TOOL_USE:
        assert reply.calls[0].arguments == {"country": "X"} and reply.thinking[0].text == "Hmm."
        assert (reply.usage.input, reply.usage.output, reply.usage.reasoning, reply.usage.cache_read) == (
            5,
            7,
            3,
            4,
        )


def test_start_failing_is_a_reply() -> None:
    r = recording("openai_responses_400_on_stream_request.json")
    with serve_in_turn([answer(r["sse"], 400)], []) as url:
        started = run(url, lambda p: p.start(REQUEST))
    assert isinstance(started, Reply) and started.failure is not None
    assert started.failure.kind is FailureKind.BAD_REQUEST and not started.failure.retryable


def test_a_provider_expiry_is_kept_on_the_job() -> None:
    body = json.dumps({"id": "r", "status": "queued", "created_at": 100, "expires_at": 5000})
    with serve_in_turn([answer(body)], []) as url:
        started = run(url, lambda p: p.start(REQUEST, window="2h"))
    assert started == Job("r", "queued", 100.0, 5000.0)


def test_cancel_posts_to_the_job_and_never_raises() -> None:
    seen: list[dict[str, Any]] = []
    job = Job("resp_42", "in_progress", None, None)
    cancelled = json.dumps({"id": "resp_42", "status": "cancelled", "object": "response", "output": []})
    with serve_in_turn([answer(cancelled), answer('{"error":{"message":"x"}}', 500)], seen) as url:
        ok = run(url, lambda p: p.cancel(job))
        failed = run(url, lambda p: p.cancel(job))
    assert ok is None
    assert failed is not None and failed.kind is FailureKind.SERVER
    assert [(s["method"], s["path"]) for s in seen] == [("POST", "/v1/responses/resp_42/cancel")] * 2
    refused = run(url, lambda p: p.cancel(job))  # the server is gone
    assert refused is not None and refused.kind is FailureKind.CONNECTION


def test_cancelling_the_caller_of_cancel_propagates() -> None:
    async def flow(p: OpenAIResponses) -> None:
        task = asyncio.create_task(p.cancel(Job("r", "queued", None, None)))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    with serve_in_turn([answer('{"id":"r","status":"cancelled"}', delay=3.0)], []) as url:
        run(url, flow)


def test_the_deadline_is_the_expiry_else_the_window_else_a_day() -> None:
    now = 1_000_000.0
    assert deadline(Job("r", "queued", now, now + 600), "24h", now) == now + 600
    assert deadline(Job("r", "queued", now, None), "1h", now) == now + 3600
    assert deadline(Job("r", "queued", now, None), "15m", now) == now + 900
    assert deadline(Job("r", "queued", now, None), "24h", now) == now + 86400
    assert deadline(Job("r", "queued", None, None), None, now) == now + 86400
    assert deadline(Job("r", "queued", None, None), "3 weeks", now) == now + 86400


def test_a_context_with_calls_and_results_becomes_input_items() -> None:
    call = ToolCall("c1", "get_capital", '{"country":"X"}', {"country": "X"})
    request = Request(
        model="m",
        messages=(
            Message("user", "hi"),
            Message("assistant", "Looking.", calls=(call,)),
            Message("tool", "Xville", call_id="c1"),
        ),
    )
    assert inputs(request) == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Looking."},
        {"type": "function_call", "call_id": "c1", "name": "get_capital", "arguments": '{"country":"X"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "Xville"},
    ]
