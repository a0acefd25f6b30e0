"""Errors classified once: an HTTP status (or a dropped connection) becomes a
`Failure` with its kind, whether a retry may cure it, and the server's wait.

No message made here ever holds an API key or an authorization header:
`redact` removes every secret it is given and anything shaped like a key.
"""

from __future__ import annotations

import email.utils
import ipaddress
import json
import re
import time
import urllib.parse
from collections.abc import Iterable, Mapping

from eukhe.ai.reply import RETRYABLE, Failure, FailureKind
from eukhe.json_types import JsonValue
from eukhe.settings.secrets import REDACTED
from eukhe.settings.secrets import redact as redact_values

EXCERPT = 300
"""Characters of a response body a message shows."""

_KEYISH = re.compile(
    r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"
    r"|\b(sk|pk|rk)-[A-Za-z0-9_-]{8,}"
    r"|(x-api-key|api[_-]?key|authorization)([\"']?\s*[:=]\s*[\"']?)[^\s\"',}]{4,}"
)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """The text with every given secret (as every key value is taken out: `settings.secrets`)
    and every key-shaped token replaced."""
    text = redact_values(text, sorted({s for s in secrets if len(s) >= 4}, key=len, reverse=True))

    def hide(m: re.Match[str]) -> str:
        if m.group(1):
            return m.group(1) + REDACTED
        if m.group(3):
            return m.group(3) + m.group(4) + REDACTED
        return REDACTED

    return _KEYISH.sub(hide, text)


REJECTED_OUTPUT = (
    "The model produced output that does not match the expected",
    "Failed to parse tool call arguments as JSON",
)
"""How llama.cpp's server says its tool-call parser rejected the model's output (an
HTTP 500, or an error event inside a 200 stream): the model's fault, not an outage,
and a greedy model sends the same output to the same request, so it is never resent."""

OVERFLOW_CODES = frozenset(
    {
        # OpenAI Chat Completions (HTTP 400, error.code) and Responses (error.code of a 400,
        # of `response.failed` and of an `error` event); Groq (HTTP 400, error.code)
        "context_length_exceeded",
        # llama.cpp server, error.type (tools/server/server-common.cpp format_error_response,
        # ERROR_TYPE_EXCEED_CONTEXT_SIZE: HTTP 400, with n_prompt_tokens and n_ctx; HTTP 500
        # when the type was added, ggml-org/llama.cpp#15780)
        "exceed_context_size_error",
        # Anthropic, HTTP 413, error.type: "Request exceeds the maximum size" (docs.claude.com
        # /en/api/errors: over 32 MB, answered by Cloudflare before the API)
        "request_too_large",
    }
)
"""Error codes and types that mean the context is too large for the model (or the endpoint)."""

OVERFLOW_TEXT = re.compile(
    "|".join(
        (
            # OpenAI: "This model's maximum context length is 8192 tokens. However, your messages
            # resulted in 9000 tokens. ..." (and "... has been exceeded"); vLLM's serving
            # _validate_input (vllm/entrypoints/openai/engine/serving.py): "This model's maximum
            # context length is N tokens. However, your request has M input tokens. ..." and
            # "'max_tokens' or 'max_completion_tokens' is too large: K. This model's maximum
            # context length is N tokens and your request has M input tokens ..."; OpenRouter:
            # "This endpoint's maximum context length is N tokens. However, you requested about M"
            r"maximum context length (?:is \d|has been exceeded)",
            # Ollama's MLX runner (x/mlxrunner/pipeline.go): "input length (N tokens) exceeds the
            # model's maximum context length (M tokens)"
            r"exceeds (?:the )?(?:model'?s )?maximum context length",
            # OpenAI Responses, code context_length_exceeded (openai/codex core tests, sse_failed):
            # "Your input exceeds the context window of this model. Please adjust your input ..."
            r"input exceeds the context window",
            # vLLM v1 (vllm/v1/engine/input_processor.py _validate_prompt_len): "The decoder prompt
            # (length N) is longer than the maximum model length of M." (also "... plus the
            # number of requested output tokens (at least 1) is longer than the maximum model length")
            r"longer than the maximum model length",
            # vLLM renderer (vllm/renderers/params.py _token_len_check): "You passed N input tokens
            # and requested M output tokens. However, the model's context length is only C tokens,
            # resulting in a maximum input length of X tokens."
            r"model'?s context length is only \d",
            # Together AI (as listed in earendil-works/pi packages/ai/src/utils/overflow.ts): "The
            # input (N tokens) is longer than the model's context length (M tokens)."
            r"is longer than the model'?s context length",
            # llama.cpp server (tools/server/server-context.cpp, and this xllamacpp build's own
            # strings): "request (N tokens) exceeds the available context size (M tokens), try
            # increasing it"; before: "the request exceeds the available context size, try
            # increasing it" and "... . try increasing the context size or enable context shift";
            # tools/server/tests/unit/test_ctx_shift.py asserts "exceeds the available context size"
            r"exceeds the available context size",
            # llama.cpp server, a task that cannot be split: "input (N tokens) is larger than the
            # max context size (M tokens). skipping"
            r"is larger than the max context size",
            # llama.cpp server: no KV-cache room left to decode, HTTP 500 server_error "Context
            # size has been exceeded." (ggml-org/llama.cpp#19774: the same oversized request got
            # this or the 400 exceed_context_size_error)
            r"context size has been exceeded",
            # Anthropic, 400 invalid_request_error: "prompt is too long: 208310 tokens > 200000
            # maximum" (anthropics/claude-code#12186) and "input length and `max_tokens` exceed
            # context limit: 143653 + 64000 > 200000, decrease input length or `max_tokens` and
            # try again" (continuedev/continue#8454)
            r"prompt is too long: [\d,]+ tokens",
            r"input length and `?max_tokens`? exceed context limit",
            # Ollama (llm/llama_server.go, since ollama/ollama#16712, when context shift is off):
            # "the prompt is longer than the context length currently available to the model;
            # shorten the prompt, adjust the context length in settings, or use a model with a
            # longer context length"; its runner with truncate off, and embeddings: "the input
            # length exceeds the context length"
            r"prompt is longer than the context length",
            r"input length exceeds the context length",
        )
    ),
    re.IGNORECASE,
)
"""Messages that mean the context is too large for the model, each from the provider's own
source, tests or documentation (named above each). Specific on purpose: a 400 that mentions
"context" or a maximum for another reason (a string, an image, `max_tokens` past the model's
output limit) is not an overflow."""


def kind_of_status(status: int, body: JsonValue = None) -> FailureKind:
    """The kind of an HTTP error (or, with `status` 0, of an error the server sent as data).
    Overflow is read from the body whatever the status (llama.cpp has sent it as 400 and
    500, and inside a 200 stream), except under a 429: a rate limit stays a rate limit."""
    if _says_rejected(body):
        return FailureKind.REJECTED
    if status == 429:
        return FailureKind.RATE_LIMITED
    if _says_overflow(body):
        return FailureKind.OVERFLOW
    if status == 529 or _says_overloaded(body):
        return FailureKind.OVERLOADED
    if status >= 500 or status == 408:
        return FailureKind.SERVER
    return {
        400: FailureKind.BAD_REQUEST,
        401: FailureKind.AUTH,
        403: FailureKind.AUTH,
        404: FailureKind.NOT_FOUND,
        422: FailureKind.UNPROCESSABLE,
    }.get(status, FailureKind.REFUSED)


def _says_rejected(body: JsonValue) -> bool:
    if isinstance(body, Mapping):
        err = body.get("error", body)
        message = err.get("message") if isinstance(err, Mapping) else None
        return isinstance(message, str) and message.startswith(REJECTED_OUTPUT)
    return False


def _says_overflow(body: JsonValue) -> bool:
    """The body says the request's context is larger than the model's window: by its error
    code or type (`OVERFLOW_CODES`), else by its message (`OVERFLOW_TEXT`). Reads the body
    as the SDKs give it: `{"error": {...}}`, the error object itself (a stream's error event),
    `{"error": "text"}` (Ollama's native API), or plain text. OpenRouter passes an upstream's
    own error body on as `error.metadata.raw`: that text is read too."""
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str):
        return OVERFLOW_TEXT.search(body) is not None
    if not isinstance(body, Mapping):
        return False
    err = body.get("error", body)
    if isinstance(err, str):
        return OVERFLOW_TEXT.search(err) is not None
    if not isinstance(err, Mapping):
        return False
    if any(err.get(key) in OVERFLOW_CODES for key in ("code", "type") if isinstance(err.get(key), str)):
        return True
    meta = err.get("metadata")
    texts = (err.get("message"), meta.get("raw") if isinstance(meta, Mapping) else None)
    return any(isinstance(t, str) and OVERFLOW_TEXT.search(t) is not None for t in texts)


def _says_overloaded(body: JsonValue) -> bool:
    if isinstance(body, Mapping):
        err = body.get("error", body)
        if isinstance(err, Mapping):
            return err.get("type") == "overloaded_error"
    return False


def retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """The server's wait: `retry-after-ms`, or `retry-after` in seconds or as an HTTP date."""
    if not headers:
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    ms = lower.get("retry-after-ms")
    if ms is not None:
        try:
            return max(float(ms) / 1000.0, 0.0)
        except ValueError:
            pass
    value = lower.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return max(when - (time.time() if now is None else now), 0.0)


def excerpt(body: JsonValue) -> str:
    """A short, one-line rendering of a body (JSON kept as JSON)."""
    if body is None:
        return ""
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if not isinstance(body, str):
        try:
            body = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError):
            body = repr(body)
    one = " ".join(body.split())
    return one if len(one) <= EXCERPT else one[: EXCERPT - 1] + "…"


def http_failure(
    provider: str,
    status: int,
    body: JsonValue,
    headers: Mapping[str, str] | None = None,
    secrets: Iterable[str] = (),
) -> Failure:
    kind = kind_of_status(status, body)
    text = excerpt(body)
    message = f"{provider}: HTTP {status} ({kind.value})" + (f": {text}" if text else "")
    return Failure(kind, kind in RETRYABLE, redact(message, secrets), status, retry_after(headers))


def failure(
    provider: str, kind: FailureKind, what: str, secrets: Iterable[str] = (), status: int | None = None
) -> Failure:
    return Failure(kind, kind in RETRYABLE, redact(f"{provider}: {what}", secrets), status)


def connection_failure(
    provider: str, base_url: str, error: BaseException, secrets: Iterable[str] = ()
) -> Failure:
    """A request that could not connect: the URL, the cause and the way out. A loopback
    address that refused the connection (nothing listens there) is marked `local_refusal`:
    `rules.retry` gives it one short retry, not the whole backoff."""
    base_url = plain_url(base_url)
    refused = _refused(error)
    local = refused and is_loopback(base_url)
    if refused:
        what = f"nothing listens at {base_url} (connection refused): is the server running? (--base-url)"
    else:
        what = f"cannot connect to {base_url}: {error.__cause__ or error}"
    f = failure(provider, FailureKind.CONNECTION, what, secrets)
    return Failure(f.kind, f.retryable, f.message, local_refusal=local)


def plain_url(url: str) -> str:
    """The URL as a line may show it: no user, password, query or fragment (a key may be there)."""
    u = urllib.parse.urlsplit(url)
    host = u.hostname or ""
    netloc = (f"[{host}]" if ":" in host else host) + (f":{u.port}" if u.port else "")
    return urllib.parse.urlunsplit((u.scheme, netloc, u.path, "", "")).rstrip("/")


def _refused(error: BaseException) -> bool:
    """Whether a ConnectionRefusedError is in the error's chain of causes."""
    seen: set[int] = set()
    e: BaseException | None = error
    while e is not None and id(e) not in seen:
        if isinstance(e, ConnectionRefusedError) or "Connection refused" in str(e):
            return True
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return False


def is_loopback(url: str) -> bool:
    """Whether the URL's host is this machine: localhost, 127.0.0.0/8 or ::1."""
    host = urllib.parse.urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def body_of(error: object) -> JsonValue:
    """The body of an SDK's status error: its parsed JSON when it has one, else the
    text (None when a streamed body cannot be read again)."""
    if (body := getattr(error, "body", None)) is not None:
        return body
    try:
        text = getattr(getattr(error, "response", None), "text", None)
    except Exception:  # a streamed body that cannot be read again
        return None
    return text if isinstance(text, str) else None
