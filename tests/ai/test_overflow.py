"""Every provider's context-overflow error is read as overflow: each body as the provider's own
source, tests, docs or issue threads show it, served over loopback HTTP to the real adapter
(OpenAIChat, OpenAIResponses, AnthropicMessages), gives `FailureKind.OVERFLOW`, not retryable, with a
message that names the provider, the status and an excerpt. Errors that merely mention a context,
a maximum or a size for another reason stay what they were."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from eukhe.ai import Done, FailureKind, Message, OpenAIChat, Reply, Request, errors
from eukhe.ai.anthropic import AnthropicMessages
from eukhe.ai.faux import FauxServer, parse
from eukhe.ai.openai_responses import Job, OpenAIResponses
from eukhe.ai.reply import RETRYABLE
from tests.ai.replay import recording, serve

REQUEST = Request(model="m", messages=(Message("user", "hi"),))
JSON = {"content-type": "application/json"}
SSE = {"content-type": "text/event-stream"}


async def _events(p: Any) -> Reply:
    try:
        events = [e async for e in p.stream(REQUEST)]
    finally:
        await p.close()
    assert isinstance(events[-1], Done) and sum(isinstance(e, Done) for e in events) == 1
    return events[-1].reply


def chat(url: str) -> Reply:
    return asyncio.run(
        _events(OpenAIChat("test", base_url=url, api_key="sk-test-not-a-real-key-1", timeout=10))
    )


def responses(url: str) -> Reply:
    p = OpenAIResponses("test", base_url=url, api_key="sk-test-not-a-real-key-1", timeout=10)
    return asyncio.run(_events(p))


def anthropic(url: str) -> Reply:
    root = url.removesuffix("/v1")  # the SDK adds /v1/messages itself
    p = AnthropicMessages("test", base_url=root, api_key="sk-ant-test-not-a-real-key-1", timeout=10)
    return asyncio.run(_events(p))


def http(ask: Any, status: int, body: Any) -> Reply:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    with serve(status, JSON, raw) as url:
        return ask(url)


def assert_overflow(reply: Reply, status: int | None, excerpt: str) -> None:
    f = reply.failure
    assert f is not None and f.kind is FailureKind.OVERFLOW, f
    assert not f.retryable and FailureKind.OVERFLOW not in RETRYABLE
    assert f.status == status
    assert f.message.startswith("test: ") and excerpt in f.message, f.message
    if status is not None:
        assert f"{status} (overflow)" in f.message


# ---------------------------------------------------------------- HTTP errors, Chat Completions

CHAT_OVERFLOWS = [
    pytest.param(
        # OpenAI, a real API answer quoted in mckaywrigley/chatbot-ui#102
        400,
        {
            "error": {
                "message": "This model's maximum context length is 4097 tokens. However, you requested 4120 "
                "tokens (3120 in the messages, 1000 in the completion). Please reduce the length of the "
                "messages or completion.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
        "maximum context length is 4097 tokens",
        id="openai-requested",
    ),
    pytest.param(
        # OpenAI, microsoft/autogen#238
        400,
        {
            "error": {
                "message": "This model's maximum context length is 8192 tokens. However, your messages "
                "resulted "
                "in 11433 tokens. Please reduce the length of the messages.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
        "your messages resulted in 11433 tokens",
        id="openai-messages-resulted",
    ),
    pytest.param(
        # Groq: the code says it, the message does not (OpenHands/OpenHands#1902, letta-ai/letta#1963)
        400,
        {
            "error": {
                "message": "Please reduce the length of the messages or completion.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
        "Please reduce the length of the messages",
        id="groq",
    ),
    pytest.param(
        # OpenRouter, its upstream named in metadata (Aider-AI/aider#3721)
        400,
        {
            "error": {
                "message": "This endpoint's maximum context length is 131072 tokens. However, you requested "
                "about 141607 tokens (10535 of text input, 131072 in the output). Please reduce the length "
                "of "
                'either one, or use the "middle-out" transform to compress your prompt automatically.',
                "code": 400,
                "metadata": {"provider_name": "Chutes"},
            }
        },
        "This endpoint's maximum context length is 131072",
        id="openrouter",
    ),
    pytest.param(
        # OpenRouter passing an Anthropic upstream's own body on as metadata.raw (the shape of
        # tests/fixtures/recordings/openrouter_429_rate_limited.json; the raw text as Anthropic
        # sends it, anthropics/claude-code#12186)
        400,
        {
            "error": {
                "message": "Provider returned error",
                "code": 400,
                "metadata": {
                    "raw": '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too '
                    'long: 208310 tokens > 200000 maximum"}}',
                    "provider_name": "Anthropic",
                },
            }
        },
        "prompt is too long: 208310 tokens",
        id="openrouter-raw-upstream",
    ),
    pytest.param(
        # vLLM: serving.py _validate_input, an ErrorResponse from create_error_response, the message
        # as VLLMValidationError.__str__ renders it (vllm/exceptions.py)
        400,
        {
            "error": {
                "message": "This model's maximum context length is 4096 tokens. However, your request has "
                "5000 "
                "input tokens. Please reduce the length of the input messages. (parameter=input_tokens, "
                "value=5000)",
                "type": "BadRequestError",
                "param": "input_tokens",
                "code": 400,
            }
        },
        "your request has 5000 input tokens",
        id="vllm-input-tokens",
    ),
    pytest.param(
        # vLLM: serving.py _validate_input, the prompt fits but not with max_tokens
        400,
        {
            "error": {
                "message": "'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum "
                "context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778). "
                "(parameter=max_tokens, value=8000)",
                "type": "BadRequestError",
                "param": "max_tokens",
                "code": 400,
            }
        },
        "is too large: 8000",
        id="vllm-max-tokens",
    ),
    pytest.param(
        # vLLM v1: vllm/v1/engine/input_processor.py _validate_prompt_len
        400,
        {
            "error": {
                "message": "The decoder prompt (length 8825) is longer than the maximum model length of "
                "8192. "
                "Make sure that `max_model_len` is no smaller than the number of text tokens.",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            }
        },
        "is longer than the maximum model length of 8192",
        id="vllm-decoder-prompt",
    ),
    pytest.param(
        # vLLM: vllm/renderers/params.py _token_len_check, the newer "maximum input length" text
        400,
        {
            "error": {
                "message": "You passed 5000 input tokens and requested 16 output tokens. However, the "
                "model's "
                "context length is only 4096 tokens, resulting in a maximum input length of 4080 tokens. "
                "Please reduce the length of the input prompt. (parameter=input_tokens, value=5000)",
                "type": "BadRequestError",
                "param": "input_tokens",
                "code": 400,
            }
        },
        "resulting in a maximum input length of 4080 tokens",
        id="vllm-maximum-input-length",
    ),
    pytest.param(
        # llama.cpp when exceed_context_size_error was added (ggml-org/llama.cpp#15780): HTTP 500
        500,
        {
            "error": {
                "code": 500,
                "message": "the request exceeds the available context size. try increasing the context size "
                "or enable context shift",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 1407,
                "n_ctx": 256,
            }
        },
        "n_prompt_tokens",
        id="llamacpp-500-typed",
    ),
    pytest.param(
        # llama.cpp server.cpp before #15780: send_error(..., ERROR_TYPE_INVALID_REQUEST), only the
        # message says it
        400,
        {
            "error": {
                "code": 400,
                "message": "the request exceeds the available context size. try increasing the context size "
                "or enable context shift",
                "type": "invalid_request_error",
            }
        },
        "exceeds the available context size",
        id="llamacpp-400-untyped",
    ),
    pytest.param(
        # llama.cpp, no KV-cache room to decode: ggml-org/llama.cpp#19774 (was SERVER, retried)
        500,
        {"error": {"code": 500, "message": "Context size has been exceeded.", "type": "server_error"}},
        "Context size has been exceeded.",
        id="llamacpp-500-decode",
    ),
    pytest.param(
        # Ollama's OpenAI-compatible endpoint with context shift off (llm/llama_server.go, ollama/ollama
        # #16712; openai/openai.go NewError: type invalid_request_error, param and code null)
        400,
        {
            "error": {
                "message": "the prompt is longer than the context length currently available to the model; "
                "shorten the prompt, adjust the context length in settings, or use a model with a longer "
                "context length",
                "type": "invalid_request_error",
                "param": None,
                "code": None,
            }
        },
        "the prompt is longer than the context length",
        id="ollama",
    ),
    pytest.param(
        # Ollama's runner with truncate off (runner/ollamarunner/runner.go errorInputTooLong)
        400,
        {
            "error": {
                "message": "the input length exceeds the context length",
                "type": "invalid_request_error",
                "param": None,
                "code": None,
            }
        },
        "the input length exceeds the context length",
        id="ollama-runner",
    ),
    pytest.param(
        # Ollama's native API answers {"error": "text"} (server/routes.go streamResponse)
        400,
        {"error": "the input length exceeds the context length"},
        "the input length exceeds the context length",
        id="ollama-native",
    ),
]


@pytest.mark.parametrize("status,body,excerpt", CHAT_OVERFLOWS)
def test_chat_completions_overflow_bodies_are_overflow(status: int, body: Any, excerpt: str) -> None:
    assert_overflow(http(chat, status, body), status, excerpt)


def test_llamacpps_recorded_overflow_is_overflow_through_the_replay_server() -> None:
    """tests/fixtures/recordings/llamacpp_context_overflow.json: what the real server of
    tests/llama answered (its status, headers and body, replayed as they came)."""
    r = recording("llamacpp_context_overflow.json")
    assert r["status"] == 400 and json.loads(r["sse"])["error"]["type"] == "exceed_context_size_error"
    with serve(r["status"], r["headers"], r["sse"].encode()) as url:
        reply = chat(url)
    assert_overflow(reply, 400, "exceeds the available context size (4096 tokens)")


# ---------------------------------------------------------------- errors inside a 200 stream


def test_llamacpps_overflow_inside_a_200_stream_is_overflow() -> None:
    """Before ggml-org/llama.cpp#16486 a streamed request whose prompt overflows was answered
    HTTP 200 with the error as an SSE event (oobabooga/textgen#7257 shows the object)."""
    err = {
        "code": 400,
        "message": "the request exceeds the available context size. try increasing the context size or "
        "enable context shift",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 14429,
        "n_ctx": 8192,
    }
    with serve(200, SSE, f"data: {json.dumps({'error': err})}\n\n".encode()) as url:
        reply = chat(url)
    assert_overflow(reply, 400, "n_prompt_tokens")
    assert reply.failure is not None and "stream error, status 400 (overflow)" in reply.failure.message


def test_a_vllm_overflow_event_inside_a_stream_is_overflow() -> None:
    """vLLM streams an error as `data: {"error": {...}}` (create_streaming_error_response)."""
    err = {
        "message": "This model's maximum context length is 2048 tokens. However, your request has 2049 input "
        "tokens. Please reduce the length of the input messages.",
        "type": "BadRequestError",
        "param": "input_tokens",
        "code": 400,
    }
    with serve(200, SSE, f"data: {json.dumps({'error': err})}\n\n".encode()) as url:
        assert_overflow(chat(url), 400, "2049 input tokens")


def test_an_overflow_event_without_a_status_is_overflow() -> None:
    err = {"message": "the request exceeds the available context size, try increasing it", "type": "x"}
    with serve(200, SSE, f"data: {json.dumps({'error': err})}\n\n".encode()) as url:
        assert_overflow(chat(url), None, "exceeds the available context size")


# ---------------------------------------------------------------- OpenAI Responses

RESPONSES_TEXT = (
    "Your input exceeds the context window of this model. Please adjust your input and try again."
)
"""openai/codex core tests (sse_failed(..., "context_length_exceeded", this text)); the same
body as a 400 in its compact_remote tests, with type and param in james-6-23/codex2api#415."""


def test_responses_overflow_as_an_http_400_is_overflow() -> None:
    body = {
        "error": {
            "message": RESPONSES_TEXT,
            "type": "invalid_request_error",
            "param": "input",
            "code": "context_length_exceeded",
        }
    }
    assert_overflow(http(responses, 400, body), 400, "exceeds the context window of this model")


def sse(*events: dict[str, Any]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


@pytest.mark.parametrize(
    "event",
    [
        pytest.param(
            # the shape of openai/codex core_test_support::responses::sse_failed
            {
                "type": "response.failed",
                "response": {
                    "id": "resp-overflow",
                    "status": "failed",
                    "error": {"code": "context_length_exceeded", "message": RESPONSES_TEXT},
                },
            },
            id="response.failed",
        ),
        pytest.param(
            {
                "type": "error",
                "code": "context_length_exceeded",
                "message": RESPONSES_TEXT,
                "param": "input",
                "sequence_number": 1,
            },
            id="error-event",
        ),
        pytest.param(
            # nested, as the-open-agent/openagent#2344 shows it arriving while streaming
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "code": "context_length_exceeded",
                    "message": RESPONSES_TEXT,
                    "param": "input",
                },
            },
            id="error-event-nested",
        ),
    ],
)
def test_responses_overflow_inside_the_stream_is_overflow(event: dict[str, Any]) -> None:
    with serve(200, SSE, sse(event)) as url:
        assert_overflow(responses(url), None, "context_length_exceeded")


def test_a_failed_background_response_that_overflowed_is_overflow() -> None:
    body = {
        "id": "resp_1",
        "object": "response",
        "status": "failed",
        "error": {"code": "context_length_exceeded", "message": RESPONSES_TEXT},
        "output": [],
    }

    async def go(url: str) -> Any:
        p = OpenAIResponses("test", base_url=url, api_key="sk-test-not-a-real-key-1", timeout=10)
        try:
            return await p.poll(Job("resp_1", "in_progress"))
        finally:
            await p.close()

    with serve(200, JSON, json.dumps(body).encode()) as url:
        polled = asyncio.run(go(url))
    assert isinstance(polled, Reply)
    assert_overflow(polled, None, "context_length_exceeded")


# ---------------------------------------------------------------- Anthropic Messages

ANTHROPIC_OVERFLOWS = [
    pytest.param(
        # anthropics/claude-code#12186
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "prompt is too long: 208310 tokens > 200000 maximum",
            },
            "request_id": "req_011CVQe1dLrGNMJyE1ghG1av",
        },
        "prompt is too long: 208310 tokens > 200000 maximum",
        id="prompt-too-long",
    ),
    pytest.param(
        # continuedev/continue#8454 (input and max_tokens together past the window)
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "input length and `max_tokens` exceed context limit: 143653 + 64000 > 200000, "
                "decrease input length or `max_tokens` and try again",
            },
            "request_id": "req_011CUWu7a8bGeMSvA9d7DRLa",
        },
        "exceed context limit: 143653 + 64000 > 200000",
        id="input-and-max-tokens",
    ),
    pytest.param(
        # docs.claude.com/en/api/errors (413 request_too_large); the body as
        # anthropics/anthropic-sdk-python#938 quotes it (Cloudflare's: no top-level type)
        413,
        {"error": {"type": "request_too_large", "message": "Request exceeds the maximum size"}},
        "Request exceeds the maximum size",
        id="413-request-too-large",
    ),
]


@pytest.mark.parametrize("status,body,excerpt", ANTHROPIC_OVERFLOWS)
def test_anthropic_overflow_bodies_are_overflow(status: int, body: Any, excerpt: str) -> None:
    assert_overflow(http(anthropic, status, body), status, excerpt)


def test_an_anthropic_overflow_error_event_inside_the_stream_is_overflow() -> None:
    """The error-event path (stream_failure) goes through the same rule."""
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 1, "output_tokens": 0},
        },
    }
    err = {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "prompt is too long: 5 tokens > 4"},
    }
    body = f"event: message_start\ndata: {json.dumps(start)}\n\nevent: error\ndata: {json.dumps(err)}\n\n"
    with serve(200, SSE, body.encode()) as url:
        assert_overflow(anthropic(url), None, "prompt is too long: 5 tokens")


# ---------------------------------------------------------------- the faux server, all three wires


@pytest.mark.parametrize("ask", [chat, responses, anthropic], ids=["chat", "responses", "messages"])
def test_the_faux_servers_overflow_error_is_overflow_on_every_wire(ask: Any) -> None:
    body = {
        "error": {
            "message": "prompt is too long: 9000 tokens > 8192 maximum",
            "type": "invalid_request_error",
        }
    }
    with FauxServer(parse([{"error": {"status": 400, "body": body}}])) as server:
        assert_overflow(ask(server.url), 400, "prompt is too long: 9000 tokens")


@pytest.mark.parametrize("ask", [chat, responses, anthropic], ids=["chat", "responses", "messages"])
def test_a_request_past_the_faux_servers_window_is_overflow_on_every_wire(ask: Any) -> None:
    """The faux `window`: the wire's own overflow error, and no scripted reply is used."""
    with FauxServer(parse({"window": 10, "replies": ["never"]})) as server:
        words = "prompt is too long" if ask is anthropic else "context"
        assert_overflow(ask(server.url), 400, words)
        assert server.state.script.used == [False]


# ---------------------------------------------------------------- what is not an overflow

NOT_OVERFLOW = [
    pytest.param(
        # OpenAI: max_tokens past the model's output limit, not its window (quoted in the
        # Portkey error library, token-limit-exceeded-error-10022)
        chat,
        400,
        {
            "error": {
                "message": "max_tokens is too large: 10000. This model supports at most 4096 completion "
                "tokens, "
                "whereas you provided 10000.",
                "type": "invalid_request_error",
                "param": "max_tokens",
                "code": None,
            }
        },
        FailureKind.BAD_REQUEST,
        id="openai-max-tokens",
    ),
    pytest.param(
        # OpenAI: one string too long (Portkey error library, string-length-exceeded-error-10472)
        chat,
        400,
        {
            "error": {
                "message": "Invalid 'messages[0].content': string too long. Expected a string with maximum "
                "length 1048576, but got a string with length 3235717 instead.",
                "type": "invalid_request_error",
                "param": "messages[0].content",
                "code": "string_above_max_length",
            }
        },
        FailureKind.BAD_REQUEST,
        id="openai-string-too-long",
    ),
    pytest.param(
        # OpenAI: a request larger than the tokens-per-minute limit is a rate limit (vanna-ai/vanna-flask#11)
        chat,
        429,
        {
            "error": {
                "message": "Request too large for gpt-4o on tokens per min (TPM): Limit 30000, Requested "
                "342389. "
                "The input or output tokens must be reduced in order to run successfully.",
                "type": "tokens",
                "param": None,
                "code": "rate_limit_exceeded",
            }
        },
        FailureKind.RATE_LIMITED,
        id="openai-429-tpm",
    ),
    pytest.param(
        # Groq: its 413 is the tokens-per-minute limit, not the window (cottongeeks/podscript#20)
        chat,
        413,
        {
            "error": {
                "message": "Request too large for model `llama-3.3-70b-versatile` in organization "
                "`org_01j2g5d88hfvjrgw64hnapqk8y` service tier `on_demand` on tokens per minute (TPM): Limit "
                "6000, Requested 10338, please reduce your message size and try again. Visit "
                "https://console.groq.com/docs/rate-limits for more information.",
                "type": "tokens",
                "code": "rate_limit_exceeded",
            }
        },
        FailureKind.REFUSED,
        id="groq-413-tpm",
    ),
    pytest.param(
        # vLLM: serving.py _validate_request, names max_model_len but is about a parameter
        chat,
        400,
        {
            "error": {
                "message": "truncate_prompt_tokens value is greater than max_model_len. Please, select a "
                "smaller "
                "truncation size.",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            }
        },
        FailureKind.BAD_REQUEST,
        id="vllm-truncate-prompt-tokens",
    ),
    pytest.param(
        # vLLM: input_processor.py, an image past the encoder cache, not the window
        chat,
        400,
        {
            "error": {
                "message": "The decoder prompt contains a(n) image item with 20000 embedding tokens, which "
                "exceeds the pre-allocated encoder cache size 16384. Please reduce the input size or "
                "increase "
                "the encoder cache size by setting --limit-mm-per-prompt at startup.",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            }
        },
        FailureKind.BAD_REQUEST,
        id="vllm-encoder-cache",
    ),
    pytest.param(
        # Anthropic: a 400 that says "context" for another reason (anthropics/claude-code#14135)
        anthropic,
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "context_management: Extra inputs are not permitted",
            },
            "request_id": "req_011CW9z9GbtaQWp24SzDDZCp",
        },
        FailureKind.BAD_REQUEST,
        id="anthropic-context-management",
    ),
    pytest.param(
        # Anthropic: an image past its own limit (Portkey error library, image-size-error-10499)
        anthropic,
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "messages.0.content.2.image.source: image exceeds 5 MB maximum: 5591868 bytes > "
                "5242880 bytes",
            },
        },
        FailureKind.BAD_REQUEST,
        id="anthropic-image-too-big",
    ),
    pytest.param(
        # a 413 with no Anthropic type: not read as overflow from the status alone
        anthropic,
        413,
        b"<html><body><h1>413 Request Entity Too Large</h1></body></html>",
        FailureKind.REFUSED,
        id="413-without-a-type",
    ),
]


@pytest.mark.parametrize("ask,status,body,kind", NOT_OVERFLOW)
def test_errors_that_are_not_overflow_stay_what_they_were(
    ask: Any, status: int, body: Any, kind: FailureKind
) -> None:
    f = http(ask, status, body).failure
    assert f is not None and f.kind is kind, f


@pytest.mark.parametrize(
    "name,kind",
    [
        ("llamacpp_tool_parse_error_500.json", FailureKind.REJECTED),
        ("openai_responses_400_on_stream_request.json", FailureKind.BAD_REQUEST),
        ("openrouter_429_rate_limited.json", FailureKind.RATE_LIMITED),
    ],
)
def test_the_recorded_errors_stay_what_they_were(name: str, kind: FailureKind) -> None:
    r = recording(name)
    assert errors.kind_of_status(r["status"], json.loads(r["sse"])) is kind


def test_an_overflow_text_under_a_429_stays_a_rate_limit() -> None:
    body = {
        "error": {
            "message": "This model's maximum context length is 4096 tokens.",
            "code": "rate_limit_exceeded",
        }
    }
    assert errors.kind_of_status(429, body) is FailureKind.RATE_LIMITED


def test_the_rule_reads_text_bodies_too() -> None:
    assert errors.kind_of_status(
        400, "request (5000 tokens) exceeds the available context size (4096 tokens)"
    ) is (FailureKind.OVERFLOW)
    assert errors.kind_of_status(400, b"Bad Request") is FailureKind.BAD_REQUEST
    assert (
        errors.kind_of_status(400, {"error": {"code": ["context_length_exceeded"]}})
        is FailureKind.BAD_REQUEST
    )


@pytest.mark.parametrize(
    "message",
    [
        # Ollama's MLX runner (x/mlxrunner/pipeline.go)
        "input length (5000 tokens) exceeds the model's maximum context length (4096 tokens)",
        # OpenAI (quoted in Niek/chatgpt-web#525)
        "This model's maximum context length has been exceeded. Please reduce the length of the messages.",
        # vLLM v1, a prompt exactly the window (vllm/v1/engine/input_processor.py)
        "The decoder prompt (length 2048) plus the number of requested output tokens (at least 1) is longer "
        "than the maximum model length of 2048. Make sure that `max_model_len` is no smaller than the number "
        "of text tokens (prompt + requested output tokens).",
        # Together AI (as listed in earendil-works/pi packages/ai/src/utils/overflow.ts)
        "The input (140000 tokens) is longer than the model's context length (131072 tokens).",
        # llama.cpp, a task that cannot be split (this xllamacpp build's strings)
        "input (5000 tokens) is larger than the max context size (4096 tokens). skipping",
        # llama.cpp, the older wording (llama.cpp server.cpp before ggml-org/llama.cpp#15780)
        "the request exceeds the available context size, try increasing it",
        # Ollama, the first wording of ollama/ollama#16712
        "the prompt is longer than the context length currently available to the model; shorten the prompt "
        "or adjust the context length in settings",
    ],
)
def test_each_overflow_text_is_read(message: str) -> None:
    assert errors.kind_of_status(400, {"error": {"message": message, "type": "invalid_request_error"}}) is (
        FailureKind.OVERFLOW
    )
