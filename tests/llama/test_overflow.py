"""The real llama.cpp server (tests/llama/conftest.py, a 4096-token context) refuses a prompt past
its context, and eukhe's Chat Completions adapter reads that refusal as overflow.

The request is tests/llama/record.py's (the one recorded in
tests/fixtures/recordings/llamacpp_context_overflow.json); tests/ai/test_overflow.py replays
that recording through the adapter without the server.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from eukhe.ai import Done, FailureKind, Message, OpenAIChat, Reply, Request
from tests.ai.replay import recording
from tests.llama import record
from tests.llama.server import LlamaServer, request

# every test of the real model on one worker of make test's two: one server of each kind a run
pytestmark = pytest.mark.xdist_group("llama")

CONTEXT = 4096  # n_ctx of every server tests/llama/conftest.py starts


def ask(server: LlamaServer, req: Request) -> Reply:
    async def go() -> Reply:
        p = OpenAIChat("llamacpp", base_url=server.base_url, timeout=60)
        try:
            events = [e async for e in p.stream(req)]
        finally:
            await p.close()
        assert sum(isinstance(e, Done) for e in events) == 1 and isinstance(events[-1], Done)
        return events[-1].reply

    return asyncio.run(go())


def test_the_prompt_is_past_the_servers_context(llama: LlamaServer) -> None:
    counted = request(llama, "POST", "/tokenize", {"content": record.OVERFLOW_PROMPT}).json()["tokens"]
    assert len(counted) > CONTEXT


def test_a_prompt_past_the_context_is_read_as_overflow(llama: LlamaServer) -> None:
    reply = ask(llama, Request("smollm2", (Message("user", record.OVERFLOW_PROMPT),), temperature=0.0))
    f = reply.failure
    assert f is not None and f.kind is FailureKind.OVERFLOW, f
    assert not f.retryable and f.status == 400
    assert f.message.startswith("llamacpp: HTTP 400 (overflow): ")
    assert "exceeds the available context size (4096 tokens)" in f.message
    assert "exceed_context_size_error" in f.message
    assert not reply.text and not reply.calls


def test_the_server_still_answers_as_recorded(llama: LlamaServer) -> None:
    """The recorded request again: the same status and the same body (the port aside)."""
    recorded = recording("llamacpp_context_overflow.json")
    assert recorded["request"]["body"] == record.overflow_request()
    ex = request(llama, "POST", "/v1/chat/completions", record.overflow_request(), timeout=120)
    assert ex.status == recorded["status"] == 400
    assert ex.headers["content-type"] == recorded["headers"]["content-type"]
    assert ex.json() == json.loads(recorded["sse"])
    err = ex.json()["error"]
    assert err["type"] == "exceed_context_size_error" and err["n_ctx"] == CONTEXT
    assert err["n_prompt_tokens"] > CONTEXT
