"""Where a process's runs show themselves (`RunSink`): given by the face that opened the
runtime (the command line's printer, the agent's session) or by the owner (its log), and
called by the runtime below it. A face passes an object of this protocol, never a
callback of its own: the way down is typed, and nothing below the faces calls up into them."""

from __future__ import annotations

from typing import Protocol

from eukhe.events import Event
from eukhe.run.outcome import RunOutcome


class EventSink(Protocol):
    """Where a run's events go: a printer, the event stream (`cli/printer.py`)."""

    def event(self, e: Event) -> None:
        """A line of a run, as it came."""


class RunSink(EventSink, Protocol):
    """What the runtime tells the face of its process."""

    def event(self, e: Event) -> None:
        """A line of one of the process's runs, as it came (any session's: `events.seen_by`
        gives one session's view). Called from the loop the runs execute on (DBOS's)."""

    def say(self, text: str) -> None:
        """The runtime's own line: a run taken up, waited for, left in flight."""

    def started(self, run: str, prompt: str | None) -> None:
        """A run the face asked for has started under `run` (`prompt`: None for a run whose
        prompt is what waited for the session, its subagents' reports)."""

    def ended(self, run: str | None, outcome: RunOutcome) -> None:
        """How a run the face asked for ended (`run` None: it never started)."""


class Silent:
    """A sink that shows nothing: a process that began no face (a test's, a tool's)."""

    def event(self, e: Event) -> None:
        pass

    def say(self, text: str) -> None:
        pass

    def started(self, run: str, prompt: str | None) -> None:
        pass

    def ended(self, run: str | None, outcome: RunOutcome) -> None:
        pass
