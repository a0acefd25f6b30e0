"""A real llama.cpp server (xllamacpp) with SmolLM2-135M-Instruct: what it actually answers.

Raw HTTP (http.client) against the fixtures of tests/llama/conftest.py. Greedy (temperature 0)
and short, so the module takes seconds.
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from tests.llama import record
from tests.llama.server import (
    HERMES_TOOLS_TEMPLATE,
    MODEL,
    LlamaServer,
    LlamaServerError,
    missing,
    request,
    sse_data,
)

# every test of the real model on one worker of make test's two: one server of each kind a run
pytestmark = pytest.mark.xdist_group("llama")

needs_llama = pytest.mark.skipif(missing() is not None, reason=missing() or "")

CHAT = "/v1/chat/completions"
ASK = [{"role": "user", "content": "What is 2+2? Answer in one word."}]

SEARCH_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "search_web",
        "description": "Search the web and return the top results",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["query"],
        },
    },
}

# One earlier turn in which the assistant called the tool: SmolLM2 then answers the next
# question with a call of its own (offered tools alone never get it to call one).
FEW_SHOT_CALL = [
    {"role": "user", "content": "What is the weather in Rome?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
            }
        ],
    },
    {"role": "user", "content": "What is the weather in Paris?"},
]


def chat(server: LlamaServer, **body: Any) -> dict[str, Any]:
    ex = request(server, "POST", CHAT, {"model": server.model, "temperature": 0} | body)
    assert ex.status == 200, ex.text
    reply: dict[str, Any] = ex.json()
    return reply


def stream(server: LlamaServer, **body: Any) -> list[Any]:
    """The stream's data payloads, JSON-decoded except the closing "[DONE]"."""
    body = {"model": server.model, "temperature": 0, "stream": True} | body
    ex = request(server, "POST", CHAT, body)
    assert ex.status == 200, ex.text
    assert ex.headers["content-type"] == "text/event-stream"
    return [e if e == "[DONE]" else json.loads(e) for e in ex.events()]


def prompt_tokens(server: LlamaServer, **body: Any) -> int:
    count: int = chat(server, max_tokens=1, **body)["usage"]["prompt_tokens"]
    return count


def strip_ids(event: Any) -> Any:
    """A chunk without what differs between runs (id, created)."""
    if isinstance(event, dict):
        return {k: v for k, v in event.items() if k not in ("id", "created")}
    return event


def listening_addresses(port: int) -> set[str]:
    """The local addresses (hex, as /proc/net/tcp* has them) with a LISTEN socket on `port`."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        path = Path(table)
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            addr, hex_port = fields[1].split(":")
            if int(hex_port, 16) == port and fields[3] == "0A":  # 0A: TCP_LISTEN
                found.add(addr)
    return found


# -- the process wrapper --------------------------------------------------------------------


@needs_llama
def test_start_serves_on_loopback_and_stop_leaves_nothing() -> None:
    server = LlamaServer.start()
    try:
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
        assert server.process.poll() is None
        assert request(server, "GET", "/health").json() == {"status": "ok"}
        if Path("/proc/net/tcp").exists():
            assert listening_addresses(server.port) == {"0100007F"}  # 127.0.0.1 only
    finally:
        began = time.monotonic()
        server.stop()
    assert time.monotonic() - began < 5  # SIGTERM was enough, no kill after the timeout
    assert server.process.returncode == 0
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", server.port), timeout=2).close()


@needs_llama
def test_start_fails_with_the_servers_stderr_when_it_dies(tmp_path: Path) -> None:
    bogus = tmp_path / "not-a-model.gguf"
    bogus.write_bytes(b"GGUF but not really")
    began = time.monotonic()
    with pytest.raises(LlamaServerError) as raised:
        LlamaServer.start(model_path=bogus)
    assert time.monotonic() - began < 30
    message = str(raised.value)
    assert "exited with code 1 while waiting to listen" in message
    assert "Failed to init server" in message  # the runner's traceback, from stderr


@needs_llama
def test_start_gives_up_at_its_deadline_and_stops_the_process() -> None:
    with pytest.raises(LlamaServerError, match=r"timed out waiting to listen") as raised:
        LlamaServer.start(timeout=0.0)
    assert "its stderr ends:" in str(raised.value)
    assert raised.value.pid is not None
    assert not Path(f"/proc/{raised.value.pid}").exists()  # stopped and reaped


# -- the GGUF's own chat template -----------------------------------------------------------


def test_models_lists_the_alias(llama: LlamaServer) -> None:
    models = request(llama, "GET", "/v1/models").json()
    assert [m["id"] for m in models["data"]] == [MODEL]
    meta = models["data"][0]["meta"]
    assert meta["n_ctx"] == 4096
    assert meta["ftype"] == "Q4_1"
    assert 130e6 < meta["n_params"] < 140e6  # 135M


def test_serves_the_ggufs_own_template(llama: LlamaServer) -> None:
    props = request(llama, "GET", "/props").json()
    assert "You are a helpful AI assistant named SmolLM" in props["chat_template"]
    assert props["chat_template_caps"]["supports_tools"] is False


def test_streamed_answer_has_text_deltas_and_a_final_usage_chunk(llama: LlamaServer) -> None:
    events = stream(llama, messages=ASK, max_tokens=24, stream_options={"include_usage": True})
    assert events[-1] == "[DONE]"
    chunks = events[:-1]
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": None}
    texts = [
        c["choices"][0]["delta"]["content"]
        for c in chunks
        if c["choices"] and c["choices"][0]["delta"].get("content")
    ]
    assert texts and "".join(texts).strip()
    finishing = [c for c in chunks if c["choices"] and c["choices"][0]["finish_reason"]]
    assert len(finishing) == 1
    assert finishing[0]["choices"][0]["finish_reason"] in ("stop", "length")
    usage_chunk = chunks[-1]
    assert usage_chunk["choices"] == []
    usage = usage_chunk["usage"]
    assert usage["prompt_tokens"] > 0
    assert 0 < usage["completion_tokens"] <= 24
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert usage_chunk["timings"]["predicted_n"] == usage["completion_tokens"]
    assert all(c["model"] == MODEL for c in chunks)


def test_unstreamed_answer_has_text_and_usage(llama: LlamaServer) -> None:
    reply = chat(llama, messages=ASK, max_tokens=24)
    (choice,) = reply["choices"]
    assert choice["message"]["role"] == "assistant"
    assert isinstance(choice["message"]["content"], str) and choice["message"]["content"].strip()
    assert choice["finish_reason"] in ("stop", "length")
    usage = reply["usage"]
    assert usage["prompt_tokens"] > 0
    assert 0 < usage["completion_tokens"] <= 24
    assert reply["timings"]["predicted_n"] == usage["completion_tokens"]


def test_greedy_answers_repeat_exactly(llama: LlamaServer) -> None:
    first = chat(llama, messages=ASK, max_tokens=24)["choices"][0]["message"]["content"]
    second = chat(llama, messages=ASK, max_tokens=24)["choices"][0]["message"]["content"]
    streamed = "".join(
        c["choices"][0]["delta"].get("content") or ""
        for c in stream(llama, messages=ASK, max_tokens=24)
        if c != "[DONE]" and c["choices"]
    )
    assert first == second == streamed


def test_ggufs_own_template_drops_offered_tools(llama: LlamaServer) -> None:
    without = prompt_tokens(llama, messages=ASK)
    assert prompt_tokens(llama, messages=ASK, tools=[record.WEATHER_TOOL]) == without


# -- the tools-aware template (tests/llama/hermes_tools.jinja) --------------------------------


def test_serves_the_tools_template(llama_tools: LlamaServer) -> None:
    props = request(llama_tools, "GET", "/props").json()
    # (the server trims the file's closing newline)
    assert props["chat_template"].strip() == HERMES_TOOLS_TEMPLATE.read_text(encoding="utf-8").strip()
    caps = props["chat_template_caps"]
    assert caps["supports_tools"] is True
    assert caps["supports_tool_calls"] is True


def test_offered_tools_reach_the_prompt(llama_tools: LlamaServer) -> None:
    none = prompt_tokens(llama_tools, messages=ASK)
    one = prompt_tokens(llama_tools, messages=ASK, tools=[record.WEATHER_TOOL])
    two = prompt_tokens(llama_tools, messages=ASK, tools=[record.WEATHER_TOOL, SEARCH_TOOL])
    assert none < one < two
    # The count is exactly that of the templated prompt, which holds each tool's JSON.
    templated = request(
        llama_tools, "POST", "/apply-template", {"messages": ASK, "tools": [record.WEATHER_TOOL]}
    ).json()["prompt"]
    assert json.dumps(record.WEATHER_TOOL) in templated
    tokens = request(llama_tools, "POST", "/tokenize", {"content": templated, "parse_special": True})
    assert len(tokens.json()["tokens"]) == one


def test_a_tool_call_comes_back_parsed(llama_tools: LlamaServer) -> None:
    reply = chat(llama_tools, messages=FEW_SHOT_CALL, tools=[record.WEATHER_TOOL], max_tokens=64)
    (choice,) = reply["choices"]
    assert choice["finish_reason"] == "tool_calls"
    assert not choice["message"]["content"]
    (call,) = choice["message"]["tool_calls"]
    assert call["type"] == "function" and call["id"]
    assert call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {"city": "Paris"}


def test_a_streamed_tool_call_comes_in_argument_fragments(llama_tools: LlamaServer) -> None:
    events = stream(
        llama_tools,
        messages=FEW_SHOT_CALL,
        tools=[record.WEATHER_TOOL],
        max_tokens=64,
        stream_options={"include_usage": True},
    )
    assert events[-1] == "[DONE]"
    deltas = [c["choices"][0]["delta"] for c in events[:-1] if c["choices"]]
    calls = [tc for d in deltas for tc in d.get("tool_calls", [])]
    assert len(calls) > 2  # the header fragment, then arguments piece by piece
    assert calls[0]["function"]["name"] == "get_weather" and calls[0]["id"]
    assert {tc["index"] for tc in calls} == {0}
    arguments = "".join(tc["function"].get("arguments", "") for tc in calls)
    assert json.loads(arguments) == {"city": "Paris"}
    finish = [c["choices"][0]["finish_reason"] for c in events[:-1] if c["choices"]]
    assert finish[-1] == "tool_calls"
    assert events[-2]["usage"]["completion_tokens"] > 0


# -- the server's tool-parse failure, as recorded in tests/fixtures/recordings/ ----------------


def load_recording(path: Path) -> dict[str, Any]:
    recording: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return recording


@pytest.mark.parametrize("path", [record.UNSTREAMED, record.STREAMED], ids=lambda p: p.stem)
def test_recording_was_made_with_this_template(path: Path) -> None:
    recording = load_recording(path)
    assert recording["provider"] == "llamacpp"
    assert recording["template_sha256"] == record.template_sha256(), (
        "tests/llama/hermes_tools.jinja changed since the recording: run python -m tests.llama.record"
    )


def test_tool_parse_failure_unstreamed_is_a_500(llama_tools: LlamaServer) -> None:
    recorded = load_recording(record.UNSTREAMED)
    assert recorded["request"]["body"] == record.unstreamed_request()
    ex = request(llama_tools, "POST", CHAT, recorded["request"]["body"], timeout=60)
    assert ex.status == recorded["status"] == 500
    assert ex.headers["content-type"] == recorded["headers"]["content-type"]
    assert ex.json() == record.PARSE_ERROR
    assert ex.text == recorded["sse"]


def test_tool_parse_failure_streamed_is_an_error_event_in_a_200(llama_tools: LlamaServer) -> None:
    recorded = load_recording(record.STREAMED)
    assert recorded["request"]["body"] == record.streamed_request()
    ex = request(llama_tools, "POST", CHAT, recorded["request"]["body"], timeout=60)
    assert ex.status == recorded["status"] == 200
    assert ex.headers["content-type"] == recorded["headers"]["content-type"] == "text/event-stream"
    events = [json.loads(e) for e in ex.events()]  # no "[DONE]" (it would not decode)
    assert len(events) == 2
    assert events[0]["choices"][0]["delta"] == {"role": "assistant", "content": None}
    assert events[1] == record.PARSE_ERROR
    assert [strip_ids(e) for e in events] == [strip_ids(json.loads(e)) for e in sse_data(recorded["sse"])]
