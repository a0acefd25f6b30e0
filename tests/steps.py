"""A run's workflow steps (`run.steps.Steps`) for tests that put a run or its subagents together
without a durable workflow: the subagents' specs each start is kept (`started`); `starts`
False makes a start fail the test, and a pinned view always does (none is asked for here)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from eukhe.events import ShowEvent
from eukhe.json_types import JsonObject
from eukhe.memory.access import Memory
from eukhe.run.spec import RunSpec


@dataclass
class Kept:
    starts: bool = True
    started: list[RunSpec] = field(default_factory=list)

    async def view(
        self, chat: Memory, settle_ms: int, show: ShowEvent, cancel: asyncio.Event, pinned: int
    ) -> str:
        raise AssertionError("no view is pinned here")

    async def start_child(self, cid: str, spec: RunSpec, watch: JsonObject) -> None:
        if not self.starts:
            raise AssertionError("no child is started here")
        self.started.append(spec)

    async def take(self, key: str, steers: bool, followups: bool) -> list[str]:
        return []

    async def working(self, children: Sequence[str]) -> bool:
        return False

    async def sleep(self, seconds: float) -> None:
        return None

    def step_id(self) -> int | None:
        return None
