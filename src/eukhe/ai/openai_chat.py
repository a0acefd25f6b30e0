"""OpenAI Chat Completions, and every server that speaks it (vLLM, llama.cpp,
Ollama, LM Studio, OpenRouter, DeepSeek, Groq), through the official SDK with
its own retries off: retrying is the harness's rule (H4.5).

Quirks arrive as data: tool calls merged by index from many chunks; calls kept
as calls whatever the finish reason (local servers send `stop`); reasoning
deltas (`reasoning_content`, `reasoning`) as thinking; usage from the final
chunk or from the finish chunk; an error inside the stream as a failure.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any

import openai
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletionChunk

from eukhe.ai import errors, tls
from eukhe.ai.image import data_url
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
from eukhe.json_types import JsonObject, JsonValue
from eukhe.settings.secrets import NO_SECRETS, Redaction

FINISH = {
    "stop": Stop.STOP,
    "tool_calls": Stop.TOOL_USE,
    "function_call": Stop.TOOL_USE,
    "length": Stop.LENGTH,
}


def parse_arguments(raw: str) -> tuple[JsonObject | None, str | None]:
    """A call's arguments as a JSON object, or the reason they are not one."""
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as e:
        return None, f"arguments are not valid JSON ({e.msg} at character {e.pos})"
    if not isinstance(value, dict):
        return None, f"arguments are JSON {type(value).__name__}, not an object"
    return value, None


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    raw: list[str] = field(default_factory=list)


@dataclass
class Merge:
    """Chunks merged into one reply."""

    provider: str
    text: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    calls: dict[int, _Call] = field(default_factory=dict)
    finish: str | None = None
    usage: Usage = field(default_factory=Usage)

    def chunk(self, chunk: ChatCompletionChunk) -> Iterable[Event]:
        if chunk.usage is not None:
            self.usage = _usage(chunk.usage)
            yield UsageEvent(self.usage)
        for choice in (chunk.choices or [])[:1]:
            delta = choice.delta
            if delta is not None:
                extra = delta.model_extra or {}
                think = extra.get("reasoning_content") or extra.get("reasoning")
                if isinstance(think, str) and think:
                    self.thinking.append(think)
                    yield ThinkingDelta(think)
                if delta.content:
                    self.text.append(delta.content)
                    yield TextDelta(delta.content)
                for tc in delta.tool_calls or []:
                    index = tc.index if isinstance(tc.index, int) else len(self.calls)
                    call = self.calls.setdefault(index, _Call())
                    fn = tc.function
                    name = fn.name if fn is not None and fn.name else None
                    args = fn.arguments if fn is not None and fn.arguments else ""
                    if tc.id:
                        call.id = tc.id
                    if name:
                        call.name = name if not call.name or call.name == name else call.name + name
                    if args:
                        call.raw.append(args)
                    yield CallDelta(index, tc.id, name, args)
            if choice.finish_reason:
                self.finish = choice.finish_reason

    def reply(self, failure: Failure | None = None) -> Reply:
        calls = []
        for index in sorted(self.calls):
            c = self.calls[index]
            raw = "".join(c.raw)
            if not c.name and failure is None:
                failure = errors.failure(
                    self.provider, FailureKind.MALFORMED, f"tool call {index} has no name"
                )
            arguments, why = parse_arguments(raw)
            calls.append(ToolCall(c.id or f"call_{index}", c.name, raw, arguments, why))
        if failure is None and self.finish is None:
            # no finish reason: the stream was cut short, whatever the transport said
            failure = errors.failure(
                self.provider, FailureKind.CONNECTION, "the stream ended before its finish reason"
            )
        if failure is None and self.finish == "content_filter":
            failure = errors.failure(
                self.provider, FailureKind.REFUSED, "the reply was stopped by the content filter"
            )
        stop = Stop.ERROR if failure is not None else FINISH.get(self.finish or "stop", Stop.STOP)
        thinking = (Thinking("".join(self.thinking)),) if self.thinking else ()
        text = ("".join(self.text),) if self.text else ()
        return Reply(text, thinking, tuple(calls), stop, self.usage, failure)


def _usage(u: CompletionUsage) -> Usage:
    details = getattr(u, "completion_tokens_details", None)
    cached = getattr(u, "prompt_tokens_details", None)
    return Usage(
        input=u.prompt_tokens or 0,
        output=u.completion_tokens or 0,
        reasoning=(getattr(details, "reasoning_tokens", 0) or 0) if details else 0,
        cache_read=(getattr(cached, "cached_tokens", 0) or 0) if cached else 0,
    )


def messages(request: Request) -> list[JsonObject]:
    out: list[JsonObject] = [{"role": "system", "content": request.system}] if request.system else []
    for m in request.messages:
        out.append(_message(m, request))
    return out


def _message(m: Message, request: Request) -> JsonObject:
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.call_id or "", "content": m.content}
    if m.role == "assistant" and m.calls:
        return {
            "role": "assistant",
            "content": m.content or None,
            "tool_calls": [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.raw or "{}"}}
                for c in m.calls
            ],
        }
    if m.images:  # the text, then each image inline as a data URL
        parts: list[JsonObject] = [{"type": "text", "text": m.content}]
        parts += [
            {"type": "image_url", "image_url": {"url": data_url(i, request.image_bytes(i))}} for i in m.images
        ]
        return {"role": m.role, "content": parts}
    return {"role": m.role, "content": m.content}


class OpenAIChat:
    """A Chat Completions endpoint at any base URL; the key is optional (local servers)."""

    def __init__(
        self,
        name: str = "openai",
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 600.0,
        include_usage: bool = True,
        redact: Redaction = NO_SECRETS,
    ) -> None:
        self.name = name
        self._key = api_key or ""
        self._redact = redact  # every secret value the run knows: out of each body it sends
        self._include_usage = include_usage
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
        merge = Merge(self.name)
        failure: Failure | None = None
        # the context is already in the wire format: it goes as the raw body (`extra_body`),
        # which spares the SDK's typed walk of every message on every request (the
        # largest cost of a round on a long context); `messages=[]` is overridden by it
        body: JsonObject = {"messages": messages(request)}
        kwargs: dict[str, Any] = {"model": request.model, "messages": [], "stream": True, "extra_body": body}
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": dict(t.schema)},
                }
                for t in request.tools
            ]
        if request.max_tokens is not None:
            kwargs["max_tokens"] = request.max_tokens
        if request.temperature is not None:
            kwargs["temperature"] = request.temperature
        if request.effort is not None:  # in the body: a compatible server takes it under the same name
            body["reasoning_effort"] = request.effort
        if self._include_usage:
            kwargs["stream_options"] = {"include_usage": True}
        # the last line of defence: no secret value the run knows leaves in a body, whatever
        # put it there (a prompt, an instruction file, a tool's result, a call's arguments);
        # its strings, before the SDK serializes them, so no escaping hides one
        kwargs["extra_body"] = self._redact.deep(body)
        try:
            stream = await self._client.chat.completions.create(**kwargs)
            try:
                async for chunk in stream:
                    for event in merge.chunk(chunk):
                        yield event
            finally:
                await stream.close()
        except openai.APIStatusError as e:
            failure = errors.http_failure(
                self.name, e.status_code, errors.body_of(e), dict(e.response.headers), [self._key]
            )
        except openai.APITimeoutError:
            failure = errors.failure(self.name, FailureKind.TIMEOUT, "the request timed out", [self._key])
        except openai.APIConnectionError as e:
            failure = errors.connection_failure(self.name, str(self._client.base_url), e, [self._key])
        except openai.APIError as e:
            failure = stream_failure(self.name, e.body, e.message, [self._key])
        except (ValueError, TypeError, KeyError, AttributeError) as e:
            # what the SDK raises on a chunk that is not JSON or not a chunk
            failure = errors.failure(
                self.name, FailureKind.MALFORMED, f"malformed stream: {type(e).__name__}: {e}", [self._key]
            )
        yield Done(merge.reply(failure))


def stream_failure(provider: str, body: JsonValue, message: str, secrets: Iterable[str]) -> Failure:
    """An error the server sent inside a stream: classified by the status it names."""
    status = None
    if isinstance(body, dict):
        for key in ("status_code", "code", "status"):
            v = body.get(key)
            if isinstance(v, int) and 100 <= v <= 599:
                status = v
                break
    if status is not None:
        f = errors.http_failure(provider, status, body, None, secrets)
        return Failure(f.kind, f.retryable, f.message.replace("HTTP", "stream error, status", 1), status)
    kind = errors.kind_of_status(0, body)
    if kind in (FailureKind.OVERLOADED, FailureKind.OVERFLOW):
        return errors.failure(provider, kind, f"stream error: {errors.excerpt(body)}", secrets)
    return errors.failure(
        provider, FailureKind.STREAM_ERROR, f"stream error: {message}: {errors.excerpt(body)}", secrets
    )
