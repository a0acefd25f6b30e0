"""What waits for a run, taken at the places `rules.child` names (H5.4): its start, each
round end, and, for a child whose conversation answered while children of its own were
still at work, each look for their reports, where a look that finds some goes on with
them (a continuation of the conversation, in the same run).

Each take is made under the model's key of its place (`rules.child.key`), through the
workflow's `Steps` (`run.steps`), which record it, so a replay reaches the same places in
the same order and takes under the same keys. The run's position IS the model's `Where`,
moved only by the model's steps.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from eukhe import fault_injection
from eukhe.ai.request import Message
from eukhe.rules import child
from eukhe.rules.child import At, Where
from eukhe.run.loop import RunLoop
from eukhe.run.outcome import Ending, RunOutcome
from eukhe.run.steps import Steps
from eukhe.timing import timing


@dataclass
class Delivery:
    """A run's takes, through its workflow's `steps`. `spawned`: the run's subagents (its
    `Children.spawned`, as they grow); `steerable`: its person may steer it. A round end
    takes only for a run that has subagents or may be steered: the others' rounds make no
    step for it."""

    steps: Steps
    spawned: Sequence[str] = ()
    steerable: bool = True
    where: Where = field(default_factory=Where)

    async def _at(self, at: At, steers: bool = True, followups: bool = True, skip: bool = False) -> list[str]:
        self.where, place = child.next_place(self.where, at)
        if skip:
            return []
        got = await self.steps.take(child.key(place), steers, followups)
        if got:
            fault_injection.reached("placed")  # the take is recorded, its messages not yet in the transcript
        return got

    async def start(self) -> list[str]:
        """What waited for the run before it started: its prompt when it has none."""
        return await self._at(At.START)

    async def round_end(self, steers: bool) -> list[str]:
        """What a round end places: the children's reports, and the steers when the run
        takes them (`rules.run.takes_steers`); follow-ups wait for the next run."""
        return await self._at(At.ROUND, steers, False, skip=not (self.spawned or self.steerable))

    async def until_reported(self, loop: RunLoop, out: RunOutcome, cancel: asyncio.Event) -> RunOutcome:
        """A child's run that answered with children of its own still at work goes on with
        each of their reports as it comes (its conversation so far before it, in `loop`),
        until none is at work: no report is owed to a session nobody runs again. Between
        looks, a durable wait; its cancel ends the looks (its children go on). Called only by
        a run that has spawned children."""
        polls = timing()
        pause = polls.children_poll
        while not cancel.is_set() and out.outcome is Ending.ANSWERED:
            texts = await self._at(At.LOOK)
            if texts:
                self.where = child.went_on(self.where)
                out = await loop.run(texts[-1], [Message("user", t) for t in texts[:-1]], out.transcript)
                pause = polls.children_poll
                continue
            if not await self.steps.working(tuple(self.spawned)):
                break
            await self.steps.sleep(pause)
            pause = min(pause * 2, polls.children_poll_max)
        return out
