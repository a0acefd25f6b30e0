"""What a run's parts ask of the durable workflow that runs them (`Steps`): one interface, which
the workflow gives its run once (`run.workflow.DurableSteps`), so that nothing below it calls
back up through a closure of its own: `run.assemble` pins the run's view and starts its
subagents through it, `run.delivery` takes what waits for the run, looks at its subagents and
waits between looks through it. Each is a recorded step or a durable wait: a replay after a
crash meets the same results in the same order."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Protocol

from eukhe.events import ShowEvent
from eukhe.json_types import JsonObject
from eukhe.memory.access import Memory
from eukhe.run.spec import RunSpec

"""(kind, text, data=None): a line of the run (`eukhe.events` has the kinds), with the fields
of its event when it has some: `ProcessContext.show` with the run's id."""


class Steps(Protocol):
    """The durable workflow, as a run's parts see it."""

    async def view(
        self, chat: Memory, settle_ms: int, show: ShowEvent, cancel: asyncio.Event, pinned: int
    ) -> str:
        """The chat's settled view, the bytes pinned beside it left room (`pinned`): a
        recorded step, so a replay sends the same view byte for byte."""
        ...

    async def start_child(self, cid: str, spec: RunSpec, watch: JsonObject) -> None:
        """A subagent's run and its task started, under their ids (`cid`, its task's)."""
        ...

    async def worktree(self, cid: str, project: str) -> JsonObject:
        """A git worktree for subagent `cid` of the repository that holds `project`
        (`children.worktree.make_worktree`), as a recorded step (a replay never makes it again): its
        `Worktree.json`, or {"error": why} when it cannot be made."""
        ...

    async def take(self, key: str, steers: bool, followups: bool) -> list[str]:
        """What waits for the run at the place `key` names (`rules.child.key`), oldest first:
        its subagents' reports, and the person's steers and follow-ups as asked; a recorded
        step, so the same place takes the same again."""
        ...

    async def working(self, children: Sequence[str]) -> bool:
        """Whether any of these subagents is still at work (its task in flight): a recorded step."""
        ...

    async def sleep(self, seconds: float) -> None:
        """A durable wait."""
        ...

    def step_id(self) -> int | None:
        """The recorded step in progress, if any: where the run's hooks keep their answers
        (`run.hook_events`)."""
        ...
