"""The faux model's replies in three wire formats: OpenAI Chat Completions,
OpenAI Responses and Anthropic Messages, as server-sent events."""

from __future__ import annotations

import json

from eukhe.ai.faux.script import Turn, pieces
from eukhe.json_types import JsonObject, JsonValue


def stream_error(api: str, turn: Turn) -> bytes:
    """The error event each wire format sends inside a stream."""
    err = {"type": turn.error_type, "message": turn.error_message}
    if api == "anthropic":
        return sse({"type": "error", "error": err}, "error")
    if api == "responses":
        return sse(
            {"type": "error", "code": turn.error_type, "message": turn.error_message, "sequence_number": 0},
            "error",
        )
    return sse({"error": err})


def sse(data: JsonValue, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return (head + "data: " + (data if isinstance(data, str) else json.dumps(data)) + "\n\n").encode()


# ---------------------------------------------------------------- chat completions


def chat(turn: Turn, model: str, rid: str) -> list[bytes]:
    def chunk(delta: JsonObject, finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return sse(
            {"id": rid, "object": "chat.completion.chunk", "created": 0, "model": model, "choices": [choice]}
        )

    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"reasoning_content": p}) for p in pieces(turn.thinking, turn.chunks)]
    out += [chunk({"content": p}) for p in pieces(turn.text, turn.chunks)]
    for i, c in enumerate(turn.calls):
        head = {
            "index": i,
            "id": c.id or f"call_{rid}_{i}",
            "type": "function",
            "function": {"name": c.name, "arguments": ""},
        }
        out.append(chunk({"tool_calls": [head]}))
        out += [
            chunk({"tool_calls": [{"index": i, "function": {"arguments": p}}]})
            for p in pieces(c.arguments, turn.chunks)
        ]
    finish = {"stop": "stop", "length": "length", "toolUse": "tool_calls"}[turn.stop_reason]
    out.append(chunk({}, finish))
    usage = {
        "prompt_tokens": turn.usage[0],
        "completion_tokens": turn.usage[1],
        "total_tokens": turn.usage[0] + turn.usage[1],
        "prompt_tokens_details": {"cached_tokens": turn.usage[2]},
    }
    out.append(
        sse(
            {
                "id": rid,
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [],
                "usage": usage,
            }
        )
    )
    out.append(sse("[DONE]"))
    return out


# ---------------------------------------------------------------- anthropic messages


def anthropic(turn: Turn, model: str, rid: str) -> list[bytes]:
    start = {
        "type": "message_start",
        "message": {
            "id": rid,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            # Anthropic's input_tokens leaves the cache's reads out
            "usage": {
                "input_tokens": turn.usage[0] - turn.usage[2],
                "cache_read_input_tokens": turn.usage[2],
                "output_tokens": 0,
            },
        },
    }
    out = [sse(start, "message_start")]
    index = 0

    def block(kind: str, first: JsonObject, deltas: list[JsonObject]) -> None:
        nonlocal index
        out.append(
            sse(
                {"type": "content_block_start", "index": index, "content_block": first}, "content_block_start"
            )
        )
        for d in deltas:
            out.append(
                sse({"type": "content_block_delta", "index": index, "delta": d}, "content_block_delta")
            )
        out.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        index += 1

    if turn.thinking:
        deltas = [{"type": "thinking_delta", "thinking": p} for p in pieces(turn.thinking, turn.chunks)]
        block(
            "thinking",
            {"type": "thinking", "thinking": "", "signature": ""},
            [*deltas, {"type": "signature_delta", "signature": "faux-signature"}],
        )
    if turn.text:
        block(
            "text",
            {"type": "text", "text": ""},
            [{"type": "text_delta", "text": p} for p in pieces(turn.text, turn.chunks)],
        )
    for i, c in enumerate(turn.calls):
        block(
            "tool_use",
            {"type": "tool_use", "id": c.id or f"toolu_{rid}_{i}", "name": c.name, "input": {}},
            [{"type": "input_json_delta", "partial_json": p} for p in pieces(c.arguments, turn.chunks)],
        )
    stop = {"stop": "end_turn", "length": "max_tokens", "toolUse": "tool_use"}[turn.stop_reason]
    out.append(
        sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": turn.usage[1]},
            },
            "message_delta",
        )
    )
    out.append(sse({"type": "message_stop"}, "message_stop"))
    return out


# ---------------------------------------------------------------- responses


def response_object(turn: Turn, model: str, rid: str, status: str) -> JsonObject:
    output: list[JsonObject] = []
    if status == "completed":
        if turn.thinking:
            output.append(
                {
                    "type": "reasoning",
                    "id": f"rs_{rid}",
                    "summary": [{"type": "summary_text", "text": turn.thinking}],
                }
            )
        if turn.text:
            output.append(
                {
                    "type": "message",
                    "id": f"msg_{rid}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
                }
            )
        for i, c in enumerate(turn.calls):
            output.append(
                {
                    "type": "function_call",
                    "id": f"fc_{rid}_{i}",
                    "call_id": c.id or f"call_{rid}_{i}",
                    "name": c.name,
                    "arguments": c.arguments,
                    "status": "completed",
                }
            )
    incomplete = turn.stop_reason == "length" and status == "completed"
    return {
        "id": rid,
        "object": "response",
        "created_at": 0,
        "model": model,
        "status": "incomplete" if incomplete else status,
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "output": output,
        "background": False,
        "error": None,
        "usage": {
            "input_tokens": turn.usage[0],
            "input_tokens_details": {"cached_tokens": turn.usage[2]},
            "output_tokens": turn.usage[1],
            "total_tokens": turn.usage[0] + turn.usage[1],
            "output_tokens_details": {"reasoning_tokens": 0},
        }
        if status == "completed"
        else None,
    }


def responses(turn: Turn, model: str, rid: str) -> list[bytes]:
    seq = 0

    def ev(kind: str, **fields: JsonValue) -> bytes:
        nonlocal seq
        seq += 1
        return sse({"type": kind, "sequence_number": seq, **fields}, kind)

    out = [ev("response.created", response=response_object(turn, model, rid, "in_progress"))]
    index = 0
    if turn.thinking:
        item = {"type": "reasoning", "id": f"rs_{rid}", "summary": []}
        out.append(ev("response.output_item.added", output_index=index, item=item))
        out += [
            ev(
                "response.reasoning_summary_text.delta",
                item_id=f"rs_{rid}",
                output_index=index,
                summary_index=0,
                delta=p,
            )
            for p in pieces(turn.thinking, turn.chunks)
        ]
        index += 1
    if turn.text:
        item = {
            "type": "message",
            "id": f"msg_{rid}",
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        out.append(ev("response.output_item.added", output_index=index, item=item))
        out += [
            ev(
                "response.output_text.delta",
                item_id=f"msg_{rid}",
                output_index=index,
                content_index=0,
                delta=p,
            )
            for p in pieces(turn.text, turn.chunks)
        ]
        index += 1
    for i, c in enumerate(turn.calls):
        item = {
            "type": "function_call",
            "id": f"fc_{rid}_{i}",
            "call_id": c.id or f"call_{rid}_{i}",
            "name": c.name,
            "arguments": "",
            "status": "in_progress",
        }
        out.append(ev("response.output_item.added", output_index=index, item=item))
        out += [
            ev("response.function_call_arguments.delta", item_id=f"fc_{rid}_{i}", output_index=index, delta=p)
            for p in pieces(c.arguments, turn.chunks)
        ]
        out.append(
            ev(
                "response.function_call_arguments.done",
                item_id=f"fc_{rid}_{i}",
                output_index=index,
                arguments=c.arguments,
            )
        )
        index += 1
    final = response_object(turn, model, rid, "completed")
    out.append(
        ev("response.incomplete" if final["status"] == "incomplete" else "response.completed", response=final)
    )
    return out


def chat_completion(turn: Turn, model: str, rid: str) -> JsonObject:
    """The same reply as one JSON chat.completion (a request with stream false)."""
    message: JsonObject = {"role": "assistant", "content": turn.text or None}
    if turn.thinking:
        message["reasoning_content"] = turn.thinking
    if turn.calls:
        message["tool_calls"] = [
            {
                "id": c.id or f"call_{rid}_{i}",
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for i, c in enumerate(turn.calls)
        ]
    finish = {"stop": "stop", "length": "length", "toolUse": "tool_calls"}[turn.stop_reason]
    return {
        "id": rid,
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": turn.usage[0],
            "completion_tokens": turn.usage[1],
            "total_tokens": turn.usage[0] + turn.usage[1],
            "prompt_tokens_details": {"cached_tokens": turn.usage[2]},
        },
    }


def overflow(path: str, size: int, window: int) -> JsonObject:
    """The body of each wire's context-overflow error (HTTP 400), in its provider's words,
    for a request of `size` bytes to a model whose window is `window` bytes (4 a token)."""
    have, limit = size // 4, window // 4
    if path.endswith("/messages"):
        message = f"prompt is too long: {have} tokens > {limit} maximum"
        return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    if path.endswith("/responses"):
        message = (
            "Your input exceeds the context window of this model. Please adjust your input and try again."
        )
        param = "input"
    else:
        message = (
            f"This model's maximum context length is {limit} tokens. However, your messages resulted in "
            f"{have} tokens. Please reduce the length of the messages."
        )
        param = "messages"
    code = "context_length_exceeded"
    return {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}
