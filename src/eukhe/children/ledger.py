"""A child's work ledger at run time: the acts of its transcript, as it is written
(replays after a crash included), fed to `rules.progress.work`, which decides what
is new work. The token adds its own children's tokens and its kernel's output."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from eukhe.ai.request import Message
from eukhe.rules import progress
from eukhe.rules.progress import Act, Kind


def call_key(name: str, arguments: str, result: str, error: bool) -> str:
    """A tool call and its result as one act: by name, arguments, result text and error flag."""
    return json.dumps([name, arguments, result, error], ensure_ascii=False)


@dataclass
class Ledger:
    """The ledger of one run. `children`: the tokens of its own children (a settled one
    keeps its last, so the sum never goes back); `jobs`: its kernel's output bytes."""

    g: progress.Ledger = field(default_factory=progress.Ledger)
    calls: dict[str, tuple[str, str]] = field(default_factory=dict)  # call id -> (name, arguments)
    children: Callable[[], int] = lambda: 0
    jobs: Callable[[], int] = lambda: 0
    risen: dict[str, float] = field(default_factory=dict)  # a running call -> its progress so far

    def act(self, a: Act) -> bool:
        """The rule's step; whether it was new work."""
        new = progress.new(self.g, a)
        self.g = progress.work(self.g, a)
        return new

    def message(self, m: Message) -> None:
        """A message of the transcript: a tool result is an act with its call."""
        if m.role == "assistant":
            for c in m.calls:
                self.calls[c.id] = (c.name, c.raw or json.dumps(c.arguments, sort_keys=True))
            self.act(Act(Kind.TEXT if m.calls else Kind.ANSWER, m.content))  # words are no work
            return
        if m.role == "tool" and m.call_id is not None:
            name, arguments = self.calls.get(m.call_id, ("?", ""))
            self.act(Act(Kind.CALL, call_key(name, arguments, m.content, m.is_error)))

    def note(self, text: str) -> bool:
        """A progress note; whether it was accepted as new."""
        return self.act(Act(Kind.NOTE, text.strip()))

    def progressed(self, call: str, value: float) -> bool:
        """A running call's progress (an MCP notification); whether it was new work: only
        a value that rises (`rules.progress.rising`)."""
        if not progress.rising(self.risen.get(call), value):
            return False
        self.risen[call] = value
        return self.act(Act(Kind.PROGRESS, f"{call}#{value!r}"))

    def token(self) -> int:
        return progress.token(self.g, self.children(), self.jobs())


def with_ledger(effects: Any, ledger: Ledger) -> Any:
    """`effects` (the run's `RecordedEffects`) with every transcript message also fed to the ledger."""
    append = effects.append

    async def appended(message: Message) -> None:
        await append(message)
        ledger.message(message)

    effects.append = appended
    return effects
