"""OpenAI Responses API, streamed or in background mode, through the official SDK
with its own retries off: retrying is the harness's rule (H4.5).

Streaming: text, reasoning (summary and raw text) and function calls are merged
by output item; `response.completed` gives usage and the stop; `response.failed`
and an `error` event are classified failures; a stream that ends without a
terminal event was cut short (CONNECTION).

Background ("deferred", H4.4): separate operations, so the harness owns the
loop. `start` sends the request once and returns a `Job`; `poll` fetches the job
and returns the `Job` while it is still running, else the `Reply`; a failed poll
is a `Reply` whose failure is classified, and never resends the request; `cancel`
never raises. `deadline` says until when the harness may poll.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any

import openai

from eukhe.ai import errors, tls
from eukhe.ai.image import data_url
from eukhe.ai.jobs import Job, PollFailed
from eukhe.ai.openai_chat import parse_arguments, stream_failure
from eukhe.ai.reply import (
    CallDelta,
    Done,
    Event,
    Failure,
    FailureKind,
    Reply,
    Stop,
    TextDelta,
    Thinking,
    ThinkingDelta,
    ToolCall,
    Usage,
    UsageEvent,
)
from eukhe.ai.request import Message, Request
from eukhe.json_types import JsonObject
from eukhe.settings.secrets import NO_SECRETS, Redaction

RUNNING = frozenset({"queued", "in_progress"})
"""Job statuses that are still deferred: poll again."""

COMPLETION_WINDOWS = frozenset({"soonest", "2h", "8h"})
"""The windows the API itself accepts (`background_options.completion_window`);
only these are sent. The harness's windows bound polling only (`deadline`)."""

# `response.error.code` (and the `code` of an `error` event) to a kind
_CODES = {
    "server_error": FailureKind.SERVER,
    "vector_store_timeout": FailureKind.SERVER,
    "rate_limit_exceeded": FailureKind.RATE_LIMITED,
    "insufficient_quota": FailureKind.RATE_LIMITED,
    "overloaded": FailureKind.OVERLOADED,
    "overloaded_error": FailureKind.OVERLOADED,
    "bio_policy": FailureKind.REFUSED,
    "misalignment_policy_violation": FailureKind.REFUSED,
    "image_content_policy_violation": FailureKind.REFUSED,
    "content_filter": FailureKind.REFUSED,
    "invalid_prompt": FailureKind.BAD_REQUEST,
    "data_residency_mismatch": FailureKind.BAD_REQUEST,
}
"""`context_length_exceeded` is not here: an overflow is read by errors.kind_of_status, the one rule."""


# ---------------------------------------------------------------- request


def inputs(request: Request) -> list[JsonObject]:
    """The context as Responses input items (the system prompt goes to `instructions`)."""
    out: list[JsonObject] = []
    for m in request.messages:
        out.extend(_items(m, request))
    return out


def _items(m: Message, request: Request) -> list[JsonObject]:
    if m.role == "tool":
        return [{"type": "function_call_output", "call_id": m.call_id or "", "output": m.content}]
    if m.role == "assistant":
        out: list[JsonObject] = [{"role": "assistant", "content": m.content}] if m.content else []
        out.extend(
            {"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.raw or "{}"}
            for c in m.calls
        )
        return out or [{"role": "assistant", "content": ""}]
    if m.images:
        parts: list[JsonObject] = [{"type": "input_text", "text": m.content}]
        parts += [{"type": "input_image", "image_url": data_url(i, request.image_bytes(i))} for i in m.images]
        return [{"role": m.role, "content": parts}]
    return [{"role": m.role, "content": m.content}]


def tools(request: Request) -> list[JsonObject]:
    # strict off: the API's strict default rejects schemas that are not closed
    return [
        {
            "type": "function",
            "name": t.name,
            "description": t.description,
            "parameters": dict(t.schema),
            "strict": False,
        }
        for t in request.tools
    ]


def _params(request: Request) -> JsonObject:
    kwargs: dict[str, Any] = {"model": request.model, "input": inputs(request)}
    if request.system:
        kwargs["instructions"] = request.system
    if request.tools:
        kwargs["tools"] = tools(request)
    if request.max_tokens is not None:
        kwargs["max_output_tokens"] = request.max_tokens
    if request.temperature is not None:
        kwargs["temperature"] = request.temperature
    if request.effort is not None:
        kwargs["reasoning"] = {"effort": request.effort}
    return kwargs


# ---------------------------------------------------------------- reply


def _get(obj: object, name: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _str(obj: object, name: str) -> str | None:
    v = _get(obj, name)
    return v if isinstance(v, str) else None


def _int(obj: object, name: str) -> int:
    v = _get(obj, name)
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _time(obj: object, name: str) -> float | None:
    v = _get(obj, name)
    if v is None and not isinstance(obj, dict):
        v = (getattr(obj, "model_extra", None) or {}).get(name)
    if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
        return float(v)
    return None


def usage_of(u: object) -> Usage:
    if u is None:
        return Usage()
    return Usage(
        input=_int(u, "input_tokens"),
        output=_int(u, "output_tokens"),
        reasoning=_int(_get(u, "output_tokens_details"), "reasoning_tokens"),
        cache_read=_int(_get(u, "input_tokens_details"), "cached_tokens"),
    )


def code_failure(provider: str, error: object, what: str, secrets: Iterable[str] = ()) -> Failure:
    """A failure the server reported as data (`response.error`, an `error` event):
    classified by its code."""
    code = _str(error, "code") or _str(error, "type") or ""
    message = _str(error, "message") or ""
    kind = _CODES.get(code)
    overflow = errors.kind_of_status(0, {"code": code, "message": message}) is FailureKind.OVERFLOW
    if overflow and kind is not FailureKind.RATE_LIMITED:  # a rate limit stays a rate limit
        kind = FailureKind.OVERFLOW
    elif kind is None:
        kind = (
            FailureKind.BAD_REQUEST if code.startswith(("invalid_", "image_")) else FailureKind.STREAM_ERROR
        )
    detail = ": ".join(p for p in (code, errors.excerpt(message)) if p)
    return errors.failure(provider, kind, f"{what}" + (f": {detail}" if detail else ""), secrets)


@dataclass
class _Item:
    kind: str  # "message", "reasoning", "call"
    parts: dict[object, list[str]] = field(default_factory=dict)
    id: str = ""
    call_id: str = ""
    name: str = ""
    index: int = 0  # a call's index among the calls

    def text(self, sep: str = "") -> str:
        return sep.join("".join(self.parts[k]) for k in self.parts)


@dataclass
class Merge:
    """Stream events, or the output items of a finished response, merged into one reply."""

    provider: str
    secrets: tuple[str, ...] = ()
    items: dict[object, _Item] = field(default_factory=dict)
    calls: int = 0
    usage: Usage = field(default_factory=Usage)
    end: str | None = None  # "completed" or "incomplete": the response's terminal status
    reason: str | None = None  # why it is incomplete
    failure: Failure | None = None
    final: object = None  # the completed response, for its output if no item arrived

    def _item(self, key: object, kind: str) -> _Item:
        item = self.items.get(key)
        if item is None:
            item = self.items[key] = _Item(kind)
            if kind == "call":
                item.index = self.calls
                self.calls += 1
        return item

    def event(self, event: object) -> Iterable[Event]:
        kind = _get(event, "type")
        key = _get(event, "output_index")
        if not isinstance(key, int):
            key = _get(event, "item_id")
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            delta = _str(event, "delta")
            if delta:
                self._item(key, "message").parts.setdefault(_get(event, "content_index"), []).append(delta)
                yield TextDelta(delta)
        elif kind in ("response.output_text.done", "response.refusal.done"):
            text = _str(event, "text") if kind == "response.output_text.done" else _str(event, "refusal")
            if text is not None:
                self._item(key, "message").parts[_get(event, "content_index")] = [text]
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            delta = _str(event, "delta")
            if delta:
                part = _thinking_part(kind, event)
                self._item(key, "reasoning").parts.setdefault(part, []).append(delta)
                yield ThinkingDelta(delta)
        elif kind in ("response.reasoning_summary_text.done", "response.reasoning_text.done"):
            text = _str(event, "text")
            if text is not None:
                self._item(key, "reasoning").parts[_thinking_part(kind, event)] = [text]
        elif kind == "response.output_item.added":
            item = _get(event, "item")
            if _get(item, "type") == "function_call":
                call = self._call(key, item)
                raw = _str(item, "arguments") or ""
                call.parts[0] = [raw]
                yield CallDelta(call.index, call.call_id or None, call.name or None, raw)
        elif kind == "response.function_call_arguments.delta":
            delta = _str(event, "delta")
            if delta:
                call = self._item(key, "call")
                call.parts.setdefault(0, []).append(delta)
                yield CallDelta(call.index, None, None, delta)
        elif kind == "response.function_call_arguments.done":
            final = _str(event, "arguments")
            if final is not None:
                self._item(key, "call").parts[0] = [final]
        elif kind == "response.output_item.done":
            self.output_item(key, _get(event, "item"))
        elif kind in ("response.completed", "response.incomplete"):
            response = _get(event, "response")
            self.usage = usage_of(_get(response, "usage"))
            self.end = "completed" if kind == "response.completed" else "incomplete"
            self.reason = _str(_get(response, "incomplete_details"), "reason")
            self.final = response
            yield UsageEvent(self.usage)
        elif kind == "response.failed":
            response = _get(event, "response")
            self.usage = usage_of(_get(response, "usage"))
            self.failure = self.failure or code_failure(
                self.provider, _get(response, "error"), "the response failed", self.secrets
            )
        elif kind == "error":
            self.failure = self.failure or code_failure(self.provider, event, "stream error", self.secrets)

    def _call(self, key: object, item: object) -> _Item:
        call = self._item(key, "call")
        call.id = _str(item, "id") or call.id
        call.call_id = _str(item, "call_id") or call.call_id
        call.name = _str(item, "name") or call.name
        return call

    def output_item(self, key: object, item: object) -> None:
        """A finished output item: what it holds overrides what its deltas said."""
        kind = _get(item, "type")
        if kind == "function_call":
            call = self._call(key, item)
            raw = _str(item, "arguments")
            if raw is not None:
                call.parts[0] = [raw]
        elif kind == "message":
            parts: dict[object, list[str]] = {}
            for i, part in enumerate(_get(item, "content") or []):
                text = _str(part, "text") if _get(part, "type") == "output_text" else _str(part, "refusal")
                if text is not None:
                    parts[i] = [text]
            if parts:
                self._item(key, "message").parts = parts
        elif kind == "reasoning":
            parts = {}
            for i, part in enumerate(_get(item, "summary") or []):
                if (text := _str(part, "text")) is not None:
                    parts[("summary", i)] = [text]
            for i, part in enumerate(_get(item, "content") or []):
                if (text := _str(part, "text")) is not None:
                    parts[("content", i)] = [text]
            if parts:
                self._item(key, "reasoning").parts = parts

    def response(self, response: object) -> None:
        """A whole response object (a poll, or the final output of a stream)."""
        for i, item in enumerate(_get(response, "output") or []):
            self.output_item(("output", i), item)
        self.usage = usage_of(_get(response, "usage"))
        self.reason = _str(_get(response, "incomplete_details"), "reason")

    def reply(self, failure: Failure | None = None) -> Reply:
        failure = failure or self.failure
        if not self.items and self.final is not None:
            self.response(self.final)
        text: list[str] = []
        thinking: list[Thinking] = []
        calls: list[ToolCall] = []
        for item in self.items.values():
            if item.kind == "message":
                if body := item.text():
                    text.append(body)
            elif item.kind == "reasoning":
                if body := item.text("\n\n"):
                    thinking.append(Thinking(body))
            else:
                raw = item.text()
                if not item.name and failure is None:
                    failure = errors.failure(
                        self.provider,
                        FailureKind.MALFORMED,
                        f"function call {item.index} has no name",
                        self.secrets,
                    )
                arguments, why = parse_arguments(raw)
                calls.append(
                    ToolCall(item.call_id or item.id or f"call_{item.index}", item.name, raw, arguments, why)
                )
        if failure is None and self.end is None:
            failure = errors.failure(
                self.provider,
                FailureKind.CONNECTION,
                "the stream ended before response.completed",
                self.secrets,
            )
        if failure is None and self.end == "incomplete" and self.reason == "content_filter":
            failure = errors.failure(
                self.provider,
                FailureKind.REFUSED,
                "the reply was stopped by the content filter",
                self.secrets,
            )
        if failure is not None:
            stop = Stop.ERROR
        elif self.end == "incomplete":
            stop = Stop.LENGTH
        else:
            stop = Stop.TOOL_USE if calls else Stop.STOP
        return Reply(tuple(text), tuple(thinking), tuple(calls), stop, self.usage, failure)


def _thinking_part(kind: str, event: object) -> tuple[str, object]:
    if kind.startswith("response.reasoning_summary_text"):
        return ("summary", _get(event, "summary_index"))
    return ("content", _get(event, "content_index"))


# ---------------------------------------------------------------- the provider


class OpenAIResponses:
    """The Responses API at any base URL, streamed (`stream`) or deferred
    (`start`, `poll`, `cancel`)."""

    def __init__(
        self,
        name: str = "openai",
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 600.0,
        redact: Redaction = NO_SECRETS,
    ) -> None:
        self.name = name
        self._key = api_key or ""
        self._redact = redact  # every secret value the run knows: out of each body it sends
        self._client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or "no-key",
            max_retries=0,
            timeout=timeout,
            http_client=openai.DefaultAsyncHttpxClient(verify=tls.verified()),  # the CA bundle loaded once
        )

    async def close(self) -> None:
        await self._client.close()

    async def stream(self, request: Request) -> AsyncIterator[Event]:
        """Events of one request, then exactly one `Done`. Cancelling the iteration
        closes the connection; the cancel is never turned into a reply."""
        merge = Merge(self.name, (self._key,))
        failure: Failure | None = None
        try:
            stream = await self._client.responses.create(**self._params(request), stream=True)
            try:
                async for event in stream:
                    for out in merge.event(event):
                        yield out
            finally:
                await stream.close()
        except openai.APIError as e:
            failure = self._failure(e)
        except (ValueError, TypeError, KeyError, AttributeError) as e:
            # what the SDK raises on an event that is not JSON or not an event
            failure = self._malformed(e)
        yield Done(merge.reply(failure))

    def _params(self, request: Request) -> JsonObject:
        """The request's body, its strings redacted before the SDK serializes them: the last
        line of defence, no secret value the run knows leaves, whatever put it there."""
        got: JsonObject = self._redact.deep(_params(request))
        return got

    async def start(self, request: Request, window: str | None = None) -> Job | Reply:
        """Send the request once, in background mode: the `Job` to poll, or the
        `Reply` if it failed (or finished at once)."""
        kwargs = self._params(request)
        if window in COMPLETION_WINDOWS:
            kwargs["background_options"] = {"completion_window": window}
        try:
            response = await self._client.responses.create(**kwargs, background=True, stream=False)
        except openai.APIError as e:
            return Reply(stop=Stop.ERROR, failure=self._failure(e))
        except (ValueError, TypeError, KeyError, AttributeError) as e:
            return Reply(stop=Stop.ERROR, failure=self._malformed(e))
        return self._outcome(response, None)

    async def poll(self, job: Job) -> Job | Reply | PollFailed:
        """The job once more: still running (`Job`), or its `Reply` (a job that ended
        failed is a reply with its failure). A poll that itself failed is `PollFailed`,
        classified (retryable: the same job may be polled again); it never resends
        the request."""
        try:
            response = await self._client.responses.retrieve(job.id)
        except openai.APIError as e:
            return PollFailed(self._failure(e))
        except (ValueError, TypeError, KeyError, AttributeError) as e:
            return PollFailed(self._malformed(e))
        return self._outcome(response, job)

    async def cancel(self, job: Job) -> Failure | None:
        """Cancel the job: None when done, else why not. Never raises, but a
        cancel of the caller (`CancelledError`) propagates."""
        try:
            await self._client.responses.cancel(job.id)
        except asyncio.CancelledError:
            raise
        except openai.APIError as e:
            return self._failure(e)
        except Exception as e:  # a cancel is best effort
            return self._malformed(e)
        return None

    def _outcome(self, response: object, job: Job | None) -> Job | Reply:
        status = _str(response, "status")
        rid = _str(response, "id") or (job.id if job else "")
        if status in RUNNING:
            if not rid:
                nameless = errors.failure(
                    self.name, FailureKind.MALFORMED, "a background response without an id"
                )
                return Reply(stop=Stop.ERROR, failure=nameless)
            return Job(
                rid,
                status,
                _time(response, "created_at") or (job.created_at if job else None),
                _time(response, "expires_at") or (job.expires_at if job else None),
            )
        merge = Merge(self.name, (self._key,))
        merge.response(response)
        failure: Failure | None = None
        if status == "completed":
            merge.end = "completed"
        elif status == "incomplete":
            merge.end = "incomplete"
        elif status == "failed":
            failure = code_failure(self.name, _get(response, "error"), "the response failed", (self._key,))
        elif status == "cancelled":
            failure = errors.failure(
                self.name, FailureKind.STREAM_ERROR, "the background response was cancelled"
            )
        else:
            failure = errors.failure(
                self.name,
                FailureKind.MALFORMED,
                f"unknown response status: {errors.excerpt(status)}",
                (self._key,),
            )
        return merge.reply(failure)

    def _failure(self, e: openai.APIError) -> Failure:
        if isinstance(e, openai.APIStatusError):
            return errors.http_failure(
                self.name, e.status_code, errors.body_of(e), dict(e.response.headers), [self._key]
            )
        if isinstance(e, openai.APITimeoutError):
            return errors.failure(self.name, FailureKind.TIMEOUT, "the request timed out", [self._key])
        if isinstance(e, openai.APIConnectionError):
            return errors.connection_failure(self.name, str(self._client.base_url), e, [self._key])
        if isinstance(e, openai.APIResponseValidationError):
            return errors.failure(
                self.name, FailureKind.MALFORMED, f"malformed response: {e.message}", [self._key]
            )
        if isinstance(e.body, dict) and isinstance(e.body.get("code"), str):
            return code_failure(self.name, e.body, "stream error", [self._key])
        return stream_failure(self.name, e.body, e.message, [self._key])

    def _malformed(self, e: Exception) -> Failure:
        return errors.failure(
            self.name, FailureKind.MALFORMED, f"malformed response: {type(e).__name__}: {e}", [self._key]
        )
