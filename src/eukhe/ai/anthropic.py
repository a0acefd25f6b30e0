"""Anthropic Messages, through the official SDK with its own retries off:
retrying is the harness's rule (H4.5).

The raw event stream is read, never the SDK's accumulating helper, so that a
tool input cut short by `max_tokens` arrives as data (a call whose arguments
are None, with the parse error) instead of an exception. Blocks are merged by
their index: text, thinking (with its signature), tool_use (input fragments
joined). Usage comes from `message_start` and `message_delta`. An `error`
event inside the stream, a 529 or an overloaded body is a retryable failure;
what the wire format does not allow (bad JSON, a delta for a block never
started) is a malformed reply, never an exception.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import anthropic
import httpx2

from eukhe.ai import errors, tls
from eukhe.ai.effort import ANSWER_ROOM, thinking_budget
from eukhe.ai.image import base64_of
from eukhe.ai.openai_chat import parse_arguments
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
from eukhe.errors import Code, EukheError
from eukhe.json_types import JsonObject, JsonValue
from eukhe.settings.secrets import NO_SECRETS, Redaction

FINISH = {
    "end_turn": Stop.STOP,
    "stop_sequence": Stop.STOP,
    "pause_turn": Stop.STOP,
    "tool_use": Stop.TOOL_USE,
    "max_tokens": Stop.LENGTH,
    "model_context_window_exceeded": Stop.LENGTH,
}

ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
"""The HTTP status each error type of the Messages API stands for."""


class Malformed(EukheError):
    """The server sent an event the Messages stream does not allow."""

    code = Code.PROVIDER


@dataclass
class _Block:
    kind: str  # "text", "thinking" or "tool_use"
    parts: list[str] = field(default_factory=list)
    signature: list[str] = field(default_factory=list)
    id: str = ""
    name: str = ""
    call: int = 0  # tool_use: the call's position among the reply's calls
    start_input: str = ""  # tool_use: the input the start event carried, as JSON


def _get(obj: object, name: str) -> Any:
    """A field of an event or block, or None; the SDK builds events without validating them."""
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass
class Merge:
    """Raw stream events merged into one reply."""

    provider: str
    blocks: dict[int, _Block] = field(default_factory=dict)
    ignored: set[int] = field(default_factory=set)
    calls: int = 0
    started: bool = False
    stop_reason: str | None = None
    stopped: bool = False
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    @property
    def usage(self) -> Usage:
        # Anthropic's input_tokens leaves out the cache's reads and writes; eukhe's input is the
        # whole prompt, as OpenAI's prompt_tokens is (cached ones included)
        whole = self.input + self.cache_read + self.cache_write
        return Usage(input=whole, output=self.output, cache_read=self.cache_read)

    def event(self, event: object) -> Iterable[Event]:
        kind = _get(event, "type")
        if not isinstance(kind, str):
            raise Malformed(f"an event without a type: {errors.excerpt(repr(event))}")
        if kind == "message_start":
            self.started = True
            if self._usage(_get(_get(event, "message"), "usage")):
                yield UsageEvent(self.usage)
        elif kind == "content_block_start":
            yield from self._start(event)
        elif kind == "content_block_delta":
            yield from self._delta(event)
        elif kind == "content_block_stop":
            self._index(event)
        elif kind == "message_delta":
            reason = _get(_get(event, "delta"), "stop_reason")
            if isinstance(reason, str):
                self.stop_reason = reason
            if self._usage(_get(event, "usage")):
                yield UsageEvent(self.usage)
        elif kind == "message_stop":
            self.stopped = True
        # anything else (ping, a type added later) carries nothing a reply holds

    def _usage(self, usage: object) -> bool:
        if usage is None:
            return False
        seen = False
        for attr, key in (
            ("input", "input_tokens"),
            ("output", "output_tokens"),
            ("cache_read", "cache_read_input_tokens"),
            ("cache_write", "cache_creation_input_tokens"),
        ):
            value = _int(_get(usage, key))
            if value is not None:
                setattr(self, attr, value)
                seen = True
        return seen

    def _index(self, event: object) -> int:
        index = _int(_get(event, "index"))
        if index is None:
            raise Malformed(f"{_get(event, 'type')} without a block index")
        if index not in self.blocks and index not in self.ignored:
            raise Malformed(f"{_get(event, 'type')} for block {index}, which was never started")
        return index

    def _start(self, event: object) -> Iterable[Event]:
        index = _int(_get(event, "index"))
        if index is None:
            raise Malformed("content_block_start without a block index")
        if index in self.blocks or index in self.ignored:
            raise Malformed(f"block {index} started twice")
        block = _get(event, "content_block")
        kind = _get(block, "type")
        if kind == "text":
            self.blocks[index] = b = _Block("text")
            text = _get(block, "text")
            if isinstance(text, str) and text:
                b.parts.append(text)
                yield TextDelta(text)
        elif kind == "thinking":
            self.blocks[index] = b = _Block("thinking")
            text, signature = _get(block, "thinking"), _get(block, "signature")
            if isinstance(signature, str) and signature:
                b.signature.append(signature)
            if isinstance(text, str) and text:
                b.parts.append(text)
                yield ThinkingDelta(text)
        elif kind == "tool_use":
            id_, name = _get(block, "id"), _get(block, "name")
            if not isinstance(name, str) or not name:
                raise Malformed(f"tool_use block {index} has no name")
            b = _Block("tool_use", id=id_ if isinstance(id_, str) else "", name=name, call=self.calls)
            start = _get(block, "input")
            if isinstance(start, Mapping) and start:
                b.start_input = json.dumps(dict(start), ensure_ascii=False)
            self.blocks[index] = b
            self.calls += 1
            yield CallDelta(b.call, b.id or None, name, b.start_input)
        elif isinstance(kind, str):
            self.ignored.add(index)  # redacted thinking, server tools: nothing a reply holds
        else:
            raise Malformed(f"content_block_start {index} without a block type")

    def _delta(self, event: object) -> Iterable[Event]:
        index = self._index(event)
        delta = _get(event, "delta")
        kind = _get(delta, "type")
        if not isinstance(kind, str):
            raise Malformed(f"a delta for block {index} without a type")
        b = self.blocks.get(index)
        if b is None:
            return
        expected = {
            "text_delta": ("text", "text"),
            "thinking_delta": ("thinking", "thinking"),
            "signature_delta": ("thinking", "signature"),
            "input_json_delta": ("tool_use", "partial_json"),
        }.get(kind)
        if expected is None:
            return  # citations and later delta types: nothing a reply holds
        block_kind, key = expected
        if b.kind != block_kind:
            raise Malformed(f"{kind} for {b.kind} block {index}")
        value = _get(delta, key)
        if not isinstance(value, str):
            raise Malformed(f"{kind} for block {index} without its {key}")
        if kind == "signature_delta":
            b.signature.append(value)
            return
        if not value:
            return
        b.parts.append(value)
        if kind == "text_delta":
            yield TextDelta(value)
        elif kind == "thinking_delta":
            yield ThinkingDelta(value)
        else:
            yield CallDelta(b.call, None, None, value)

    def reply(self, failure: Failure | None = None) -> Reply:
        text: list[str] = []
        thinking: list[Thinking] = []
        calls: list[ToolCall] = []
        for index in sorted(self.blocks):
            b = self.blocks[index]
            joined = "".join(b.parts)
            if b.kind == "text":
                if joined:
                    text.append(joined)
            elif b.kind == "thinking":
                thinking.append(Thinking(joined, "".join(b.signature) or None))
            else:
                raw = joined or b.start_input
                arguments, why = parse_arguments(raw)
                calls.append(ToolCall(b.id or f"toolu_{b.call}", b.name, raw, arguments, why))
        if failure is None and not self.started:
            failure = errors.failure(
                self.provider, FailureKind.MALFORMED, "the response held no message_start"
            )
        if failure is None and self.stop_reason is None:
            # no stop reason: the stream was cut short, whatever the transport said
            failure = errors.failure(
                self.provider, FailureKind.CONNECTION, "the stream ended before its stop reason"
            )
        if failure is None and self.stop_reason == "refusal":
            failure = errors.failure(
                self.provider, FailureKind.REFUSED, "the model refused (stop_reason refusal)"
            )
        stop = Stop.ERROR if failure is not None else FINISH.get(self.stop_reason or "", Stop.STOP)
        return Reply(tuple(text), tuple(thinking), tuple(calls), stop, self.usage, failure)


# ---------------------------------------------------------------- the request


def messages(request: Request) -> list[JsonObject]:
    """The context as Messages API turns; consecutive tool results become one user turn."""
    out: list[JsonObject] = []
    for m in request.messages:
        if m.role == "tool":
            result = {"type": "tool_result", "tool_use_id": m.call_id or "", "content": m.content}
            last = out[-1] if out else None
            if last is not None and last.get("_results"):
                last["content"].append(result)
            else:
                out.append({"role": "user", "content": [result], "_results": True})
        else:
            out.append(_message(m, request))
    for turn in out:
        turn.pop("_results", None)
    return out


def _message(m: Message, request: Request) -> JsonObject:
    if m.images:  # each image as a base64 block, then the text (the order Anthropic advises)
        blocks: list[JsonObject] = []
        for i in m.images:
            source = {"type": "base64", "media_type": i.media_type, "data": base64_of(request.image_bytes(i))}
            blocks.append({"type": "image", "source": source})
        return {"role": m.role, "content": [*blocks, {"type": "text", "text": m.content}]}
    if m.role == "assistant" and m.calls:
        content: list[JsonObject] = [{"type": "text", "text": m.content}] if m.content else []
        content.extend(
            {
                "type": "tool_use",
                "id": c.id,
                "name": c.name,
                "input": c.arguments if c.arguments is not None else {},
            }
            for c in m.calls
        )
        return {"role": "assistant", "content": content}
    return {"role": m.role, "content": m.content}


def tools(request: Request) -> list[JsonObject]:
    return [
        {"name": t.name, "description": t.description, "input_schema": dict(t.schema)} for t in request.tools
    ]


# ---------------------------------------------------------------- the provider


class AnthropicMessages:
    """The Messages API at its own or any base URL (the server root, without `/v1`)."""

    def __init__(
        self,
        name: str = "anthropic",
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 600.0,
        max_tokens_default: int = 8192,
        redact: Redaction = NO_SECRETS,
    ) -> None:
        self.name = name
        self._key = api_key or ""
        self._redact = redact  # every secret value the run knows: out of each body it sends
        self._max_tokens = max_tokens_default
        self._client = anthropic.AsyncAnthropic(
            base_url=base_url,
            api_key=api_key or "no-key",
            max_retries=0,
            timeout=timeout,
            http_client=anthropic.DefaultAsyncHttpxClient(verify=tls.verified()),  # the CA bundle loaded once
        )

    async def close(self) -> None:
        await self._client.close()

    async def stream(self, request: Request) -> AsyncIterator[Event]:
        """Events of one request, then exactly one `Done`. Cancelling the iteration
        closes the connection; the cancel is never turned into a reply."""
        merge = Merge(self.name)
        failure: Failure | None = None
        secrets = [self._key]
        try:
            budget = thinking_budget(request.effort)
            most = request.max_tokens if request.max_tokens is not None else self._max_tokens
            if budget is not None:  # the reply's tokens hold the thinking's: room for an answer after it
                most = max(most, budget + ANSWER_ROOM)
            thinking = {"type": "enabled", "budget_tokens": budget} if budget else None
            warm = request.temperature is not None and not budget  # with thinking, the API fixes it
            # the last line of defence: no secret value the run knows leaves in a body, whatever
            # put it there; its strings, before the SDK serializes them, so no escaping hides one
            redact = self._redact
            stream = await self._client.messages.create(
                model=request.model,
                max_tokens=most,
                thinking=cast(Any, thinking) if thinking else anthropic.omit,
                messages=cast(Any, redact.deep(messages(request))),
                system=redact(request.system) if request.system else anthropic.omit,
                tools=cast(Any, redact.deep(tools(request))) if request.tools else anthropic.omit,
                # this SDK's create() takes no temperature (newer models fix their own): in the body
                extra_body={"temperature": request.temperature} if warm else None,
                stream=True,
            )
            try:
                async for event in stream:
                    for out in merge.event(event):
                        yield out
            finally:
                await stream.close()
        except anthropic.APIStatusError as e:
            body = errors.body_of(e)
            if e.status_code < 400:  # an `error` event inside a stream that began well
                failure = stream_failure(self.name, body, secrets)
            else:
                failure = errors.http_failure(
                    self.name, e.status_code, body, dict(e.response.headers), secrets
                )
        except anthropic.APITimeoutError:
            failure = errors.failure(self.name, FailureKind.TIMEOUT, "the request timed out", secrets)
        except anthropic.APIConnectionError as e:
            failure = errors.connection_failure(self.name, str(self._client.base_url), e, secrets)
        except httpx2.TimeoutException:
            failure = errors.failure(self.name, FailureKind.TIMEOUT, "the stream timed out", secrets)
        except httpx2.TransportError as e:
            # a connection dropped mid-stream: the SDK passes the transport's error through
            failure = errors.failure(
                self.name, FailureKind.CONNECTION, f"connection lost: {type(e).__name__}: {e}", secrets
            )
        except anthropic.APIError as e:
            failure = errors.failure(
                self.name,
                FailureKind.MALFORMED,
                f"malformed response: {e.message}: {errors.excerpt(e.body)}",
                secrets,
            )
        except Malformed as e:
            failure = errors.failure(self.name, FailureKind.MALFORMED, f"malformed stream: {e}", secrets)
        except (ValueError, TypeError, KeyError, AttributeError, httpx2.HTTPError) as e:
            # what the SDK raises on an event that is not JSON (or not UTF-8, or not decodable)
            failure = errors.failure(
                self.name, FailureKind.MALFORMED, f"malformed stream: {type(e).__name__}: {e}", secrets
            )
        yield Done(merge.reply(failure))


def stream_failure(provider: str, body: JsonValue, secrets: Iterable[str]) -> Failure:
    """An `error` event inside a stream, classified by its error type."""
    err = _get(body, "error")
    kind_name = _get(err, "type") if err is not None else None
    status = ERROR_STATUS.get(kind_name) if isinstance(kind_name, str) else None
    what = (
        f"stream error ({kind_name}): {errors.excerpt(body)}"
        if status
        else f"stream error: {errors.excerpt(body)}"
    )
    if status is not None:
        kind = errors.kind_of_status(status, body)
    else:  # a type the API does not list: only an overflow is read from the body
        kind = (
            FailureKind.OVERFLOW
            if errors.kind_of_status(0, body) is FailureKind.OVERFLOW
            else FailureKind.STREAM_ERROR
        )
    return errors.failure(provider, kind, what, secrets)
