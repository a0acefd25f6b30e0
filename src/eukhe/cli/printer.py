"""What a run shows a person: one line a happening (styled on a terminal, plain
text otherwise), and the model's text as it streams, so an answer appears as it
is written rather than all at once at the end.

Lines and text come from whichever thread runs the run (DBOS's loop for a
durable one); a lock keeps each write whole. A line that follows streamed text
starts on a line of its own. When stdout carries JSON (`--json`), everything
but that JSON goes to stderr.

Every piece of text is neutralized (eukhe.terminal: an escape sequence in the
model's text, a tool's output or a project's names shows as its code), on a terminal,
into a pipe and into a file alike; only eukhe's own styling goes raw, and only to a
terminal. `--events` (Stream) is JSON, escaped as it is.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

from eukhe.cli.output import echo_json
from eukhe.cli.status_line import StatusLine
from eukhe.display.lines import marked
from eukhe.errors import Code
from eukhe.events import QUIET, SETTLE_WAY_OUT, Event, event, outcome_text, seen_by, tally, used_line
from eukhe.ids import run_line, session_of
from eukhe.json_types import JsonMapping
from eukhe.run.deadline import TIMEOUT
from eukhe.run.outcome import Ending, RunOutcome
from eukhe.terminal import neutralized


class Printer:
    def __init__(self, as_json: bool) -> None:
        from rich.console import Console

        self._as_json = as_json
        self._out: TextIO = sys.stderr if as_json else sys.stdout
        self._console = Console(file=self._out, soft_wrap=True, highlight=False)
        self._lock = threading.Lock()
        self._mid = False  # streamed text left a line unfinished
        self._streamed: list[str] = []  # the text streamed since the last line
        self._tty = self._out.isatty()
        # on a terminal, the agent's status line on stderr (what the run waits for, the exit)
        self._status = StatusLine(sys.stderr, self._lock, lambda: self._mid) if sys.stderr.isatty() else None
        self._waiting = False  # a settle wait's progress is shown: on a terminal, its one line
        self._waited = False  # a settle wait showed progress: its end line comes with the way out
        self._hinted = False  # the way out is said once a process

    def event(self, e: Event) -> None:
        """An event of the session, as a line (the quiet ones are the event stream's)."""
        if self._status is not None:
            with self._lock:
                self._status.event(e)
        if e.type == "say":
            self.say(e.text)
        else:
            self.show(e.type, e.text, dict(e.data))
        if self._status is not None:
            if e.type == "outcome":
                self._status.close()
            else:
                with self._lock:
                    self._status.draw()

    def outcome(self, out: RunOutcome) -> None:
        """How a run ended, said once: the answer and its counts, or why not and the
        counts so far."""
        if self._status is not None:  # the run is over: its status line goes
            self._status.close()
            with self._lock:
                self._status.erase()
        # its counts in the words the agent's view says them, from the outcome's event (its JSON)
        counts = out.json()
        used = f" · {used_line(counts)}" if used_line(counts) else ""
        if out.outcome is Ending.ANSWERED:
            self.answer(out.answer)
            self.say(f"answered in {tally(counts)}{used}")
        elif out.outcome is Ending.FAILED:
            self.say(f"failed ({out.code}): {out.message}, after {tally(counts)}{used}")
        else:
            why = f": {out.message}" if out.message else ""
            self.say(f"aborted{why}, after {tally(counts)}{used}")

    def show(self, kind: str, text: str, data: JsonMapping | None = None) -> None:
        """A line of the run; kind "text" is a piece of the model's text, written as it comes.
        A settle wait's progress is one line: on a terminal it updates in place, into a pipe
        only its first shows, then how it ended, with the way out once."""
        with self._lock:
            if self._status is not None:
                self._status.erase()
            if kind == "memory" and isinstance(data, dict) and data.get("wait") == "memory":
                if self._status is None:
                    self._progress(text)
                else:  # the status line shows the wait
                    self._waiting = self._waited = True
                return
            if kind == "waited" and isinstance(data, dict) and data.get("wait") == "memory":
                if self._waiting and self._tty and self._status is None:
                    self._end_line()
                self._waiting = False
                return
            if kind == "memory" and self._waited and text:
                self._waited = False
                self._line(kind, text)
                if not self._hinted:
                    self._hinted = True
                    self._line(kind, SETTLE_WAY_OUT)
                return
            if kind == "text":
                if text:
                    self._out.write(neutralized(text))
                    self._out.flush()
                    self._mid = not text.endswith("\n")
                    self._streamed.append(text)
                return
            if kind in QUIET or not text:  # the event stream's and the interactive view's
                return
            if kind == "lease":  # a wait for another run's turn: the process's, not the run's work
                self._end_line()
                sys.stderr.write(neutralized(text) + "\n")
                sys.stderr.flush()
                return
            self._line(kind, text)

    def _line(self, kind: str, text: str) -> None:
        self._end_line()
        self._streamed.clear()
        line, style = marked(kind, text)
        self._console.print(neutralized(line), style=style, markup=False)

    def _progress(self, text: str) -> None:
        """A settle wait's progress line: on a terminal written over the last one, into a
        pipe only the first of the wait."""
        first = not self._waiting
        self._waiting = self._waited = True
        if not self._tty:
            if first:
                self._line("memory", text)
            return
        if first:
            self._end_line()
        line, style = marked("memory", text)
        self._out.write("\r\x1b[2K")
        self._console.print(neutralized(line), style=style, markup=False, end="")
        self._mid = True  # what follows starts on a line of its own

    def say(self, text: str) -> None:
        """A line about the process (runs resumed, runs left), on stderr."""
        with self._lock:
            if self._status is not None:
                self._status.erase()
            self._end_line()
            self._streamed.clear()
            sys.stderr.write(neutralized(text) + "\n")
            sys.stderr.flush()

    def answer(self, text: str) -> None:
        """The run's answer, on stdout: once (not again when it was just streamed whole)."""
        with self._lock:
            if self._status is not None:
                self._status.erase()
            streamed = "".join(self._streamed)
            self._end_line()
            self._streamed.clear()
            if self._as_json or (text.strip() and streamed.strip() == text.strip()):
                return
            sys.stdout.write(neutralized(text) + "\n")
            sys.stdout.flush()

    def _end_line(self) -> None:
        if self._mid:
            self._out.write("\n")
            self._out.flush()
            self._mid = False


class Stream:
    """`eukhe run --events`: every event of the session, one JSON object a line on stdout
    (docs/events.md), the outcome last; nothing else goes to stdout."""

    def __init__(self, out: TextIO | None = None) -> None:
        self._out = out or sys.stdout
        self._lock = threading.Lock()

    def event(self, e: Event) -> None:
        with self._lock:
            self._out.write(e.line() + "\n")
            self._out.flush()

    def show(self, kind: str, text: str, data: JsonMapping | None = None) -> None:
        self.event(event(kind, text, data=data))

    def say(self, text: str) -> None:
        self.event(event("say", text))

    def outcome(self, out: RunOutcome) -> None:
        """The outcome's event: its JSON as `--json` prints it (docs/events.md)."""
        data = out.json()
        self.event(event("outcome", outcome_text(data), data=data))


EXIT_CODES = {"answered": 0, "failed": 1, "usage": 2, "timeout": 124, "aborted": 130}
"""`eukhe run`'s exit codes: by the run's outcome, but a failure of kind `timeout` (its
`--timeout` ran out, as coreutils' `timeout` exits) is 124, and 2 is a command that could not
run (a wrong option, settings, no prompt, the store)."""


def exit_code(out: RunOutcome) -> int:
    """The exit code of an outcome: `EXIT_CODES`."""
    if out.outcome is Ending.FAILED and out.code == TIMEOUT:
        return EXIT_CODES["timeout"]
    return EXIT_CODES[out.outcome]


def finished(printer: Printer | Stream, outcome: RunOutcome, as_json: bool) -> int:
    """Print how a run ended (and its JSON with `--json`); its exit code."""
    printer.outcome(outcome)
    if as_json:
        echo_json(outcome.json())
    return exit_code(outcome)


class RunView:
    """The command line's `RunSink` (`run.sink`): the runs' events as `session`'s view
    shows them (None: every run's, as `eukhe resume` shows the runs it finishes), the
    runtime's lines, and each run's end; `code` is the exit code of the last one, and
    `current` the run at work. `announced`: the line already shown for the run expected
    to start (a new session's first), not said again.

    An outcome is the last thing it prints until another run starts: what comes after
    one meanwhile (a subagent's last line, a recovered run's, as the process ends) is held,
    printed before the next run, or, when none comes, on stderr as the process ends
    (`leftover`). So `--events` always ends with an outcome. Lines come from DBOS's
    thread and the command's; a lock keeps the check and the print one step.

    Each outcome it prints is `told` with its session, its run and its duration on `clock`
    (seconds): from the run's start, or, for one that never started, from the view's
    beginning or the last outcome, so a script can go on with the session it started."""

    def __init__(
        self,
        printer: Printer | Stream,
        session: str | None,
        as_json: bool = False,
        announced: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.printer, self.session, self.as_json, self.announced = printer, session, as_json, announced
        self.code = 0
        self.current: str | None = None
        self._clock = clock
        self._since = clock()  # when the run to be told began (its start, once it started)
        self._lock = threading.Lock()
        self._after = False  # an outcome was printed, and no run has started since
        self._held: list[Event] = []

    def event(self, e: Event) -> None:
        seen = seen_by(self.session, e)
        if seen is not None:
            self._print(seen)

    def say(self, text: str) -> None:
        self._print(event("say", text))

    def _print(self, e: Event) -> None:
        with self._lock:
            if self._after:
                self._held.append(e)
            else:
                self.printer.event(e)

    def started(self, run: str, prompt: str | None) -> None:
        with self._lock:  # what came after the last outcome, before this run's own lines
            held, self._held, self._after = self._held, [], False
            self._since = self._clock()
            for e in held:
                if e.run != run:
                    self.printer.event(e)
        self.current = run
        line = run_line(run.rpartition("/")[0], run)
        if prompt is None:
            self.say(f"{line}: what waited for it (follow-ups, subagents' reports)")
        elif line != self.announced:
            self.say(line)
        for e in held:
            if e.run == run:
                self._print(e)

    def ended(self, run: str | None, outcome: RunOutcome) -> None:
        with self._lock:
            took = max(0, round((self._clock() - self._since) * 1000))
            session = session_of(run) if run is not None else self.session
            self.code = finished(self.printer, outcome.told(session, run, took), self.as_json)
            self._after = True
            self._since = self._clock()
        if run is None or run == self.current:
            self.current = None

    def refused(self, why: str) -> None:
        """The run could not start (`eukhe: why`, exit 2): on the event stream, a failed
        outcome says it, so that the stream still ends with one."""
        if isinstance(self.printer, Stream):
            self.ended(None, RunOutcome(Ending.FAILED, code=Code.RUN.kind, message=why))
        else:
            with self._lock:
                self.printer.say(f"eukhe: {why}")
        self.code = EXIT_CODES["usage"]

    def leftover(self) -> None:
        """What came after the last outcome, as the process ends: on stderr, as text."""
        with self._lock:
            held, self._held = self._held, []
        for e in held:
            if e.text and e.type not in QUIET:
                sys.stderr.write(neutralized(e.text if e.type == "say" else marked(e.type, e.text)[0]) + "\n")
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.flush()
