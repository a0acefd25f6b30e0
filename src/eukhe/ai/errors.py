"""Errors classified once: an HTTP status (or a dropped connection) becomes a
`Failure` with its kind, whether a retry may cure it, and the server's wait.

No message made here ever holds an API key or an authorization header:
`redact` removes every secret it is given and anything shaped like a key.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import Iterable, Mapping
from typing import Any

from eukhe.ai.reply import RETRYABLE, Failure, Kind

EXCERPT = 300
"""Characters of a response body a message shows."""

_KEYISH = re.compile(
    r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"
    r"|\b(sk|pk|rk)-[A-Za-z0-9_-]{8,}"
    r"|(x-api-key|api[_-]?key|authorization)([\"']?\s*[:=]\s*[\"']?)[^\s\"',}]{4,}"
)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """The text with every given secret and every key-shaped token replaced."""
    for s in secrets:
        if s and len(s) >= 4:
            text = text.replace(s, "[redacted]")

    def hide(m: re.Match[str]) -> str:
        if m.group(1):
            return m.group(1) + "[redacted]"
        if m.group(3):
            return m.group(3) + m.group(4) + "[redacted]"
        return "[redacted]"

    return _KEYISH.sub(hide, text)


REJECTED_OUTPUT = (
    "The model produced output that does not match the expected",
    "Failed to parse tool call arguments as JSON",
)
"""How llama.cpp's server says its tool-call parser rejected the model's output (an
HTTP 500, or an error event inside a 200 stream): the model's fault, not an outage,
and a greedy model sends the same output to the same request, so it is never resent."""


def kind_of_status(status: int, body: Any = None) -> Kind:
    if _says_rejected(body):
        return Kind.REJECTED
    if status == 429:
        return Kind.RATE_LIMITED
    if status == 529 or _says_overloaded(body):
        return Kind.OVERLOADED
    if status >= 500 or status == 408:
        return Kind.SERVER
    return {
        400: Kind.BAD_REQUEST,
        401: Kind.AUTH,
        403: Kind.AUTH,
        404: Kind.NOT_FOUND,
        422: Kind.UNPROCESSABLE,
    }.get(status, Kind.REFUSED)


def _says_rejected(body: Any) -> bool:
    if isinstance(body, Mapping):
        err = body.get("error", body)
        message = err.get("message") if isinstance(err, Mapping) else None
        return isinstance(message, str) and message.startswith(REJECTED_OUTPUT)
    return False


def _says_overloaded(body: Any) -> bool:
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


def excerpt(body: Any) -> str:
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
    body: Any,
    headers: Mapping[str, str] | None = None,
    secrets: Iterable[str] = (),
) -> Failure:
    kind = kind_of_status(status, body)
    text = excerpt(body)
    message = f"{provider}: HTTP {status} ({kind.value})" + (f": {text}" if text else "")
    return Failure(kind, kind in RETRYABLE, redact(message, secrets), status, retry_after(headers))


def failure(
    provider: str, kind: Kind, what: str, secrets: Iterable[str] = (), status: int | None = None
) -> Failure:
    return Failure(kind, kind in RETRYABLE, redact(f"{provider}: {what}", secrets), status)


def body_of(error: Any) -> Any:
    """The body of an SDK's status error: its parsed JSON when it has one, else the
    text (None when a streamed body cannot be read again)."""
    if getattr(error, "body", None) is not None:
        return error.body
    try:
        return error.response.text
    except Exception:  # a streamed body that cannot be read again
        return None
