"""The call phase of a run: one request to the model, holding a slot of its provider (H3),
streamed with its text shown as it comes and its secret values out, or a deferred job's
start or poll under the same slot. The loop (`run/loop.py`) decides what is called and
what a reply means; this module only makes the call."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from eukhe.admission import AdmissionError, Queued, Slots, run_in_slot
from eukhe.ai.guard import guard
from eukhe.ai.provider import Provider
from eukhe.ai.reply import Done, Event, Failure, FailureKind, Reply, TextDelta, ToolCall
from eukhe.ai.request import Request
from eukhe.run import secrets as redacted
from eukhe.settings.secrets import Redaction

BACKGROUND_SLOT_WAIT = 600.0
"""Seconds background work (compaction, subagents) may wait for a slot, preemptions included."""

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class ModelCall:
    """A run's calls to its model: its provider, the admission its slots come from, the
    events it shows, its redaction, and its admission class (`interactive`: a session turn;
    compaction and subagents are background work)."""

    provider: Provider
    admission: Slots
    show: Callable[..., None]
    redact: Redaction
    interactive: bool

    @property
    def provider_name(self) -> str:
        return str(getattr(self.provider, "name", "model"))

    async def stream(
        self,
        request: Request,
        idle: float,
        streamed: list[str] | None = None,
        sent: dict[str, ToolCall] | None = None,
    ) -> Reply:
        """The request streamed under a slot: its text shown as it comes (a key's start held
        back until the next piece says it is none), a quiet stream of `idle` seconds a stall
        (`ai.guard`); the reply as its step records it (`redacted`)."""

        async def stream() -> Reply:
            # made once the slot is held: the idle clock never counts the wait for a slot (H6.3)
            events = guard(self.provider.stream(request), self.provider_name, idle=idle)
            last: Event | None = None
            stream = {"wait": "stream", "provider": self.provider_name, "idle": idle}
            self.show("stream", "", stream)  # the stall clock runs from here: quiet `idle` s is a stall
            beat = time.monotonic()
            held = ""  # the end of the text so far that may start a key: shown with the next piece
            try:
                async for event in events:
                    last = event
                    if isinstance(event, TextDelta):  # shown as it comes, not at the end
                        ready, held = self.redact.stream(held + event.text)
                        if ready:
                            self.show("text", ready)
                            if streamed is not None:
                                streamed.append(ready)
                    elif time.monotonic() - beat >= 1.0:  # thinking or arguments: the stream is alive
                        beat = time.monotonic()
                        self.show("stream", "", {**stream, "alive": True})
                if held:
                    self.show("text", held)
            finally:
                self.show("waited", "", {"wait": "stream"})
            assert isinstance(last, Done)
            return self.redacted(last.reply, sent)

        reply: Reply = await self.admitted(stream, refused)
        return reply

    async def kept(
        self, work: Callable[[], Awaitable[T]], refused: Callable[[Failure], R], sent: dict[str, ToolCall]
    ) -> T | R | Reply:
        """A deferred job's start or poll holding a slot (`admitted`); a reply it gives, as its
        step records it (`redacted`)."""
        got = await self.admitted(work, refused)
        return self.redacted(got, sent) if isinstance(got, Reply) else got

    def redacted(self, reply: Reply, sent: dict[str, ToolCall] | None = None) -> Reply:
        """The reply as its step records it, and as the run reads it from then on (so a replay
        decides as the run did): the secret values out of its text, thinking, calls and
        failure. The calls as the model sent them go into `sent`, for the tools alone: a
        replay that runs a call again runs it as recorded."""
        if sent is not None:
            sent.update({c.id: c for c in reply.calls})
        return redacted.reply(reply, self.redact)

    async def admitted(self, work: Callable[[], Awaitable[T]], refused: Callable[[Failure], R]) -> T | R:
        """`work` holding a slot of the provider (H3). A session request waits only for
        session requests ahead of it; background work yields to it and asks again
        within BACKGROUND_SLOT_WAIT. A full queue or no slot in time is a retryable
        failure, shaped by `refused` as the caller's reply. A request that waits for
        its slot shows it (`SlotWait`); one that takes it at once shows nothing."""
        name = self.provider_name
        wait = SlotWait(self.show)

        async def held() -> T:
            wait.ended()
            return await work()

        try:
            if self.interactive:
                async with self.admission.slot(name, interactive=True, on_queued=wait.queued):
                    return await held()
            deadline = asyncio.get_running_loop().time() + BACKGROUND_SLOT_WAIT
            return await run_in_slot(
                lambda _slot: held(),
                name,
                interactive=False,
                deadline=deadline,
                registry=self.admission,
                on_queued=wait.queued,
            )
        except AdmissionError as e:
            return refused(Failure(FailureKind.OVERLOADED, True, str(e)))
        finally:
            wait.ended()


@dataclass
class SlotWait:
    """A request's wait for a slot of its provider, as its run shows it: a "slot" event
    each time the admission says where the request waits and behind what (when it
    queues, and when that changes), and "waited" once the wait ends, granted or not."""

    show: Callable[..., None]
    waiting: bool = False

    def queued(self, q: Queued) -> None:
        self.waiting = True
        fields = {"wait": "slot", "provider": q.provider, "class": q.cls, "place": q.place, "ahead": q.ahead}
        self.show("slot", q.text, fields)

    def ended(self) -> None:
        if self.waiting:
            self.waiting = False
            self.show("waited", "", {"wait": "slot"})


def refused(failure: Failure) -> Reply:
    """A call refused a slot, as the reply the run reads: a retryable failure."""
    return Reply(failure=failure)
