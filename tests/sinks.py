"""A `RunSink` (`run.sink`) that keeps what a runtime shows, for the tests that drive runs."""

from __future__ import annotations

from dataclasses import dataclass, field

from eukhe.events import Event
from eukhe.run.outcome import RunOutcome


@dataclass
class Kept:
    events: list[Event] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
    started_runs: list[tuple[str, str | None]] = field(default_factory=list)
    outcomes: list[tuple[str | None, RunOutcome]] = field(default_factory=list)

    def event(self, e: Event) -> None:
        self.events.append(e)

    def say(self, text: str) -> None:
        self.said.append(text)

    def started(self, run: str, prompt: str | None) -> None:
        self.started_runs.append((run, prompt))

    def ended(self, run: str | None, outcome: RunOutcome) -> None:
        self.outcomes.append((run, outcome))
