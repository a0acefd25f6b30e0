"""One editor session's live state: its turn (`rules.acp.Turn`: the state IS the model's,
every input its `step`), the run at work, and the permission requests it has sent.

All of it lives on the face's loop; the runs' threads reach it through `post`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from acp.schema import PromptResponse

from eukhe.acp.updates import Update
from eukhe.rules import acp as rule
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
    turn: rule.Turn | None = None
    run: str | None = None  # the run at work, once the runtime started it
    asks: int = 0  # the permission requests sent, for their ids
    inputs: asyncio.Queue[rule.Input] = field(default_factory=asyncio.Queue)  # the turn's, in order
    abort: Callable[[str], None] = lambda run: None  # the run's abort (`ProcessContext.abort`)
    # the turn's answer, for the steers that joined it (a failure: its error)
    answer: asyncio.Future[PromptResponse] | None = None

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
