"""What waits for a run, taken at the places `rules.child` names (H5.4): its start, each
round end, and, for a child whose conversation answered while children of its own were
still at work, each look for their reports, where a look that finds some goes on with
them (a continuation of the conversation, in the same run).

Each take is made under the model's key of its place (`rules.child.key`), through a
`take` port that records it as a step (the durable workflow's), so a replay reaches
the same places in the same order and takes under the same keys. The run's position
IS the model's `Where`, moved only by the model's steps.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from eukhe import fault_injection
from eukhe.ai.request import Message
from eukhe.rules import child
from eukhe.rules.child import At, Where
from eukhe.timing import timing

Take = Callable[[str, bool, bool], Awaitable[list[str]]]
"""(key, steers, follow-ups): the texts placed for the run at the place with that key,
oldest first: its children's reports, and the user's steers and follow-ups as asked."""


class Conversation(Protocol):
    """The run's conversation (`run.loop.RunLoop.run`)."""

    async def __call__(self, prompt: str, context: Sequence[Message], earlier: Sequence[Message]) -> Any: ...


@dataclass
class Delivery:
    """A run's takes. `take`: the recorded take; `wanted`: whether a round end takes at
    all (a run with no children that its user cannot steer has nothing to take: its
    rounds make no step for it)."""

    take: Take
    wanted: Callable[[], bool] = lambda: True
    where: Where = field(default_factory=Where)

    async def _at(self, at: At, steers: bool = True, followups: bool = True, skip: bool = False) -> list[str]:
        self.where, place = child.next_place(self.where, at)
        if skip:
            return []
        got = await self.take(child.key(place), steers, followups)
        if got:
            fault_injection.reached("placed")  # the take is recorded, its messages not yet in the transcript
        return got

    async def start(self) -> list[str]:
        """What waited for the run before it started: its prompt when it has none."""
        return await self._at(At.START)

    async def round_end(self, steers: bool) -> list[str]:
        """What a round end places: the children's reports, and the steers when the run
        takes them (`rules.run.takes_steers`); follow-ups wait for the next run."""
        return await self._at(At.ROUND, steers, False, skip=not self.wanted())

    async def until_reported(
        self,
        converse: Conversation,
        out: Any,
        working: Callable[[], Awaitable[bool]],
        sleep: Callable[[float], Awaitable[None]],
        cancel: asyncio.Event,
    ) -> Any:
        """A child's run that answered with children of its own still at work goes on with
        each of their reports as it comes (its conversation so far before it), until none
        is at work: no report is owed to a session nobody runs again. `working`: whether
        any of its children is still at work (a recorded step); `sleep`: a durable wait;
        its cancel ends the looks (its children go on). Called only by a run that has
        spawned children."""
        polls = timing()
        pause = polls.children_poll
        while not cancel.is_set() and out.outcome == "answered":
            texts = await self._at(At.LOOK)
            if texts:
                self.where = child.went_on(self.where)
                out = await converse(texts[-1], [Message("user", t) for t in texts[:-1]], out.transcript)
                pause = polls.children_poll
                continue
            if not await working():
                break
            await sleep(pause)
            pause = min(pause * 2, polls.children_poll_max)
        return out
