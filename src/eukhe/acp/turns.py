"""One editor session's live state: its turn (`rules.drive.Work`, the session loop's, its face
`drive.EDITOR`: the state IS the model's,
every input its `step`), the run at work, the permission requests it has sent, and the
tasks that bring the turn its inputs (a run's end, a look at the subagents).

All of it lives on the face's loop; the runs' threads reach it through `post`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path

from acp.schema import PromptResponse

from eukhe.acp.updates import Update
from eukhe.rules import drive as rule
from eukhe.run.spec import Setup


@dataclass
class Session:
    """An editor's session: eukhe's session `id` in `cwd`, its runs' setup, whether its first
    run has started (its SessionStart hooks' source), its turn, and the run at work."""

    id: str
    cwd: Path
    made: Setup
    resumed: bool = False  # opened with session/load: its first run's source is "resume"
    known: bool = True  # the editor has its id: a new session's, once session/new's answer is out
    held: list[Update] = field(default_factory=list)  # its updates until then
    began: bool = False
    turn: rule.Work | None = None
    run: str | None = None  # the run at work, once the runtime started it
    asks: int = 0  # the permission requests sent, for their ids
    inputs: asyncio.Queue[rule.Input] = field(default_factory=asyncio.Queue)  # the turn's, in order
    abort: Callable[[str], None] = lambda run: None  # the run's abort (`ProcessContext.abort`)
    # the turn's answer, for the steers that joined it (a failure: its error)
    answer: asyncio.Future[PromptResponse] | None = None
    work: set[asyncio.Task[None]] = field(default_factory=set)  # the tasks bringing its inputs

    def keep(self, work: Coroutine[object, object, None]) -> None:
        """`work` runs, kept until it ends (a task nobody holds may be collected mid-way)."""
        task = asyncio.ensure_future(work)
        self.work.add(task)
        task.add_done_callback(self.work.discard)

    def start_source(self) -> str | None:
        """The SessionStart hooks' source of the run about to start (None: not the first)."""
        if self.began:
            return None
        self.began = True
        return "resume" if self.resumed else "startup"

    def step(self, x: rule.Input) -> list[rule.Action]:
        """One input to the turn, and what the model says to do; no turn: nothing."""
        if self.turn is None:
            return []
        self.turn, actions = rule.step(self.turn, x)
        return actions
