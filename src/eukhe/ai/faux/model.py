"""The faux model in process: the same script as the server, played as events,
with the same stalls, drops, errors and background jobs, and no HTTP."""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from eukhe.ai import errors
from eukhe.ai.faux.script import Script, Turn, pieces
from eukhe.ai.jobs import Job, PollFailed
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
)
from eukhe.ai.request import Request

STOPS = {"stop": Stop.STOP, "length": Stop.LENGTH, "toolUse": Stop.TOOL_USE}


def last_user(request: Request) -> str:
    for m in reversed(request.messages):
        if m.role == "user":
            return m.content
    return ""


def reply_of(turn: Turn, name: str) -> Reply:
    """The reply a turn ends with when nothing goes wrong."""
    calls = []
    for i, c in enumerate(turn.calls):
        arguments, why = parse_arguments(c.arguments)
        calls.append(ToolCall(c.id or f"call_{i}", c.name, c.arguments, arguments, why))
    return Reply(
        text=(turn.text,) if turn.text else (),
        thinking=(Thinking(turn.thinking),) if turn.thinking else (),
        calls=tuple(calls),
        stop=STOPS[turn.stop_reason],
        usage=Usage(input=turn.usage[0], output=turn.usage[1], cache_read=turn.usage[2]),
    )


def events_of(turn: Turn) -> list[Event]:
    out: list[Event] = [ThinkingDelta(p) for p in pieces(turn.thinking, turn.chunks)]
    out += [TextDelta(p) for p in pieces(turn.text, turn.chunks)]
    for i, c in enumerate(turn.calls):
        out.append(CallDelta(i, c.id or f"call_{i}", c.name, ""))
        out += [CallDelta(i, None, None, p) for p in pieces(c.arguments, turn.chunks)]
    return out


async def stalled(turn: Turn) -> None:
    """Silent for the turn's stall, or until its `stallUntil` file exists."""
    end = asyncio.get_running_loop().time() + turn.stall
    while asyncio.get_running_loop().time() < end:
        if turn.stall_until is not None and os.path.exists(turn.stall_until):
            return
        await asyncio.sleep(min(0.05, max(end - asyncio.get_running_loop().time(), 0)))


def _failed(failure: Failure) -> Done:
    return Done(Reply(stop=Stop.ERROR, failure=failure))


@dataclass
class FauxModel:
    """A provider that plays its script: `stream`, and background `start`/`poll`/`cancel`."""

    script: Script
    name: str = "faux"
    requests: list[Request] = field(default_factory=list)
    _jobs: dict[str, list[int | Turn | str]] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=itertools.count)

    async def close(self) -> None:
        pass

    async def stream(self, request: Request) -> AsyncIterator[Event]:
        self.requests.append(request)
        turn = self.script.next(last_user(request), sum(m.role == "tool" for m in request.messages))
        if turn.error_status:
            headers = {"retry-after": f"{turn.retry_after:g}"} if turn.retry_after is not None else None
            yield _failed(errors.http_failure(self.name, turn.error_status, turn.error_body, headers))
            return
        for i, event in enumerate(events_of(turn)):
            if turn.drop_after is not None and i >= turn.drop_after:
                yield _failed(errors.failure(self.name, FailureKind.CONNECTION, "connection dropped (faux)"))
                return
            if turn.error_after is not None and i >= turn.error_after:
                body = {"error": {"type": turn.error_type, "message": turn.error_message}}
                kind = (
                    FailureKind.OVERLOADED
                    if turn.error_type == "overloaded_error"
                    else FailureKind.STREAM_ERROR
                )
                yield _failed(errors.failure(self.name, kind, f"stream error: {errors.excerpt(body)}"))
                return
            if turn.stall_after is not None and i == turn.stall_after:
                await stalled(turn)
            elif turn.delay and i:
                await asyncio.sleep(turn.delay)
            yield event
        yield Done(reply_of(turn, self.name))

    async def start(self, request: Request, window: str | None = None) -> Job | Reply:
        self.requests.append(request)
        turn = self.script.next(last_user(request), sum(m.role == "tool" for m in request.messages))
        if turn.error_status:
            return _failed(errors.http_failure(self.name, turn.error_status, turn.error_body)).reply
        jid = f"faux_job_{next(self._ids)}"
        self._jobs[jid] = [turn.deferred_polls, turn, "queued"]
        return Job(jid, "queued", None, None)

    async def poll(self, job: Job) -> Job | Reply | PollFailed:
        entry = self._jobs.get(job.id)
        if entry is None:
            return PollFailed(
                errors.failure(self.name, FailureKind.NOT_FOUND, f"no job {job.id}", status=404)
            )
        left, turn, status = entry
        assert isinstance(left, int) and isinstance(turn, Turn)
        if status == "cancelled":
            return _failed(
                errors.failure(self.name, FailureKind.STREAM_ERROR, f"job {job.id} was cancelled")
            ).reply
        if left > 0:
            entry[0] = left - 1
            return Job(job.id, "in_progress", job.created_at, job.expires_at)
        return reply_of(turn, self.name)

    async def cancel(self, job: Job) -> Failure | None:
        entry = self._jobs.get(job.id)
        if entry is None:
            return errors.failure(self.name, FailureKind.NOT_FOUND, f"no job {job.id}", status=404)
        entry[2] = "cancelled"
        return None
