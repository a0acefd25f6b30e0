"""`eukhe run --timeout DURATION`: the invocation's deadline, absolute (epoch seconds), set
once as the command line reads it and passed down in every run's spec (`RunSpec.deadline`),
a subagent's and a follow-up run's too. The run's workflow honours it wherever it executes
(this process, or the owner that took it up after a crash): at the deadline it aborts the
run through the run's own cancel, as Ctrl-C does, and records it failed, kind `timeout`.

A duration is written as a person writes one: a number and its unit, `s`, `m` or `h`, or
several (`90s`, `5m`, `1h30m`, `2.5s`)."""

from __future__ import annotations

import asyncio
import dataclasses
import math
import re
import time
from dataclasses import dataclass

from eukhe import waits
from eukhe.errors import Code, EukheError
from eukhe.humanize import counted
from eukhe.json_types import JsonMapping, JsonObject
from eukhe.rules.wait import End
from eukhe.run.outcome import Ending, RunOutcome

TIMEOUT = "timeout"
"""The failure's kind of a run that its deadline ended (`eukhe run` exits 124)."""

LONGEST = 366 * 24 * 3600.0
"""The longest timeout, in seconds: a year and a day (past it a deadline is no bound)."""

_PART = re.compile(r"(\d+(?:\.\d+)?)(h|m|s)")
_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0}
_SHAPE = "a number and its unit, s, m or h, or several (90s, 5m, 1h30m, 2.5s)"


class DurationError(EukheError, ValueError):
    """A duration that cannot be read: says what was given and how to write one."""

    code = Code.INPUT


def duration(text: str) -> float:
    """The seconds `text` says (`90s`, `5m`, `1h30m`); a DurationError says why not."""
    given = text.strip()
    parts = _PART.findall(given)
    if not given or "".join(n + u for n, u in parts) != given:
        raise DurationError(f"--timeout {text!r}: give {_SHAPE}")
    seconds = sum(float(n) * _UNITS[u] for n, u in parts)
    if not math.isfinite(seconds) or seconds <= 0:
        raise DurationError(f"--timeout {text!r}: a timeout is longer than 0 s")
    if seconds > LONGEST:
        raise DurationError(f"--timeout {text!r}: a timeout is at most 366 days ({LONGEST:.0f} s)")
    return seconds


def in_words(seconds: float) -> str:
    """A duration as a person says it: `1 hour 30 minutes`, `90 seconds` is `1 minute 30
    seconds`, `2.5 seconds`."""
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [counted(hours, "hour")] if hours else []
    parts += [counted(minutes, "minute")] if minutes else []
    frac = seconds - whole
    if frac > 1e-9:  # a fraction of a second, kept as given (2.5 s)
        parts.append(f"{secs + frac:g} seconds")
    elif secs or not parts:
        parts.append(counted(secs, "second"))
    return " ".join(parts)


@dataclass(frozen=True)
class Deadline:
    """When the invocation ends at the latest (`at`, epoch seconds) and the timeout it was
    given (`seconds`, for its message)."""

    at: float
    seconds: float

    @classmethod
    def after(cls, seconds: float, now: float) -> Deadline:
        return cls(now + seconds, seconds)

    def passed(self, now: float) -> bool:
        return now >= self.at

    @property
    def message(self) -> str:
        return f"timed out after {in_words(self.seconds)}"

    def ended(self, out: RunOutcome, why: str = "") -> RunOutcome:
        """`out` as its deadline ended it: failed, kind `timeout`, its counts and answer
        kept (`why`: what was cut, after the message). The one place a timeout's failure is
        made: `eukhe run` exits 124 for it (`cli.printer.exit_code`)."""
        message = self.message + (f": {why}" if why else "")
        return dataclasses.replace(out, outcome=Ending.FAILED, code=TIMEOUT, message=message)

    def failure(self, why: str) -> RunOutcome:
        """The timeout of a run its deadline ended before it did anything (`ended`, no counts)."""
        return self.ended(RunOutcome(Ending.ABORTED), why)

    def json(self) -> JsonObject:
        return {"at": self.at, "seconds": self.seconds}

    @classmethod
    def of(cls, obj: JsonMapping) -> Deadline:
        """A deadline as a run's spec holds it (`json`); ValueError names a field that is not a number."""
        at, seconds = obj.get("at"), obj.get("seconds")
        if not isinstance(at, int | float) or not isinstance(seconds, int | float):
            raise ValueError(f"a run's deadline holds numbers at and seconds, not {dict(obj)!r:.100}")
        return cls(float(at), float(seconds))


def left_in_flight(run: str, deadline: Deadline | None, now: float) -> RunOutcome:
    """The outcome of a run this process stopped waiting for (Ctrl-C, a cancel's grace) while
    it is still at work elsewhere: aborted, or the deadline's failure once it has passed."""
    message = f"run {run} is still in flight elsewhere; eukhe resume finishes it once that one is gone"
    if deadline is not None and deadline.passed(now):
        return deadline.failure(message)
    return RunOutcome(Ending.ABORTED, code="aborted", message=message)


async def abort_at(deadline: Deadline, cancel: asyncio.Event, clock: waits.Clock | None = None) -> bool:
    """Set the run's `cancel` (its abort, as Ctrl-C sets it) at its deadline; whether it was
    that, not the cancel first (Ctrl-C, `eukhe abort`). The deadline is on the epoch, shared
    by every process; the wait is on `clock` (the loop's), from the time left now."""
    clock = clock or waits.LoopClock()
    raced = await waits.race(cancel.wait(), clock.now() + (deadline.at - time.time()), None, clock)
    if raced.end is End.DEADLINE:
        cancel.set()
        return True
    return False
