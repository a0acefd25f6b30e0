"""What the run asks of a provider (`Provider`), and of one that answers in the background
(`Deferred`): the seams the loop is typed against. Every adapter (OpenAI Chat Completions,
OpenAI Responses, Anthropic Messages, the faux model) is one."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from eukhe.ai.jobs import Job, PollFailed
from eukhe.ai.reply import Event, Failure, Reply
from eukhe.ai.request import Request


@runtime_checkable
class Provider(Protocol):
    """A model API. `stream` yields events and ends with exactly one `Done`, whose reply
    carries any failure classified (it never raises for the provider's faults); `close`
    releases its connections."""

    name: str

    def stream(self, request: Request) -> AsyncIterator[Event]: ...

    async def close(self) -> None: ...


@runtime_checkable
class Deferred(Provider, Protocol):
    """A provider that answers as a background job (`--deferred`): started, polled until it
    ends or its deadline, cancelled when the run stops waiting."""

    async def start(self, request: Request, window: str | None = None) -> Job | Reply: ...

    async def poll(self, job: Job) -> Job | Reply | PollFailed: ...

    async def cancel(self, job: Job) -> Failure | None: ...
