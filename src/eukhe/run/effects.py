"""What a run does to the world, in one place: model requests, clock reads, waits,
tool calls and transcript appends.

The generation loop does each of these through an `Effects`, so the same loop runs
in memory (`Direct`, for tests and benchmarks) or as a durable workflow
(`eukhe.run.workflow.RecordedEffects`), where each effect is a recorded step: after a
crash the loop replays the recorded results and every count the rules keep
(rounds, notes, retries, polls, a job's deadline) comes back as it was.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from eukhe.ai.reply import ToolCall
from eukhe.ai.request import Message
from eukhe.json_types import JsonObject

T = TypeVar("T")


class Effects(Protocol):
    async def step(self, name: str, work: Callable[[], Awaitable[T]]) -> T:
        """Run `work` once; a durable run records its result and replays it after a crash."""
        ...

    async def now(self) -> float:
        """Wall-clock seconds, as first read (a replay reads the recorded value)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait; a durable run sleeps only what is left of the wait after a crash."""
        ...

    async def tool(
        self, call: ToolCall, replay_safe: bool, work: Callable[[], Awaitable[tuple[str, bool]]]
    ) -> tuple[str, bool]:
        """Run one tool call. A call a crash interrupted is run again only when the
        tool is replay-safe; otherwise its result says it was interrupted (H7.4)."""
        ...

    async def gated(
        self,
        call: ToolCall,
        replay_safe: bool,
        permit: Callable[[], Awaitable[JsonObject]],
        work: Callable[[bool], Awaitable[tuple[str, bool]]],
    ) -> tuple[JsonObject, tuple[str, bool] | None]:
        """The permission gate's decision on one call (`permit`, as `Permit.json`), then,
        if it runs, the call (`work(outside)`, as `tool`); its result None when it does
        not run. A durable run records the decision, so a replay asks nobody again."""
        ...

    async def append(self, message: Message) -> None:
        """Add a message to the run's transcript, exactly once."""
        ...


@dataclass
class Direct:
    """Effects done at once, in memory: nothing survives the process (the run's
    transcript is its Outcome's)."""

    sleeper: Callable[[float], Awaitable[None]] = asyncio.sleep

    async def step(self, name: str, work: Callable[[], Awaitable[T]]) -> T:
        return await work()

    async def now(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await self.sleeper(seconds)

    async def tool(
        self, call: ToolCall, replay_safe: bool, work: Callable[[], Awaitable[tuple[str, bool]]]
    ) -> tuple[str, bool]:
        return await work()

    async def gated(
        self,
        call: ToolCall,
        replay_safe: bool,
        permit: Callable[[], Awaitable[JsonObject]],
        work: Callable[[bool], Awaitable[tuple[str, bool]]],
    ) -> tuple[JsonObject, tuple[str, bool] | None]:
        got = await permit()
        return got, (await work(bool(got["outside"])) if got["runs"] else None)

    async def append(self, message: Message) -> None:
        return None
