"""`--timeout DURATION`: a duration read as a person writes it, said back in words, and a
deadline that turns a run it aborted into a failure of kind `timeout`."""

from __future__ import annotations

import asyncio
import time

import pytest

from eukhe.run.deadline import TIMEOUT, Deadline, DurationError, abort_at, duration, in_words
from eukhe.run.outcome import Ending, RunOutcome
from eukhe.waits import ManualClock


def test_a_duration_is_a_number_and_its_unit_or_several() -> None:
    assert [duration(t) for t in ("90s", "5m", "1h", "1h30m", "2.5s", " 10s ")] == [
        90,
        300,
        3600,
        5400,
        2.5,
        10,
    ]
    for bad in ("", "5", "5x", "m5", "5 m", "-5s", "1e3s", "5m5"):
        with pytest.raises(DurationError, match=r"^--timeout .*: give a number and its unit, s, m or h"):
            duration(bad)
    with pytest.raises(DurationError, match=r"^--timeout '0s': a timeout is longer than 0 s$"):
        duration("0s")
    with pytest.raises(DurationError, match=r"a timeout is at most 366 days"):
        duration("9000h")


def test_a_duration_in_words() -> None:
    assert [in_words(s) for s in (90, 300, 3600, 5400, 2.5, 1, 3661)] == [
        "1 minute 30 seconds", "5 minutes", "1 hour", "1 hour 30 minutes", "2.5 seconds", "1 second",
        "1 hour 1 minute 1 second",
    ]  # fmt: skip


def test_a_deadline_ends_a_run_failed_with_its_counts_kept() -> None:
    d = Deadline.after(120, now=1000.0)
    assert (d.at, d.passed(1119.9), d.passed(1120.0)) == (1120.0, False, True)
    out = d.ended(RunOutcome(Ending.ABORTED, answer="partial", rounds=3), "why")
    assert (out.outcome, out.code, out.message) == (Ending.FAILED, TIMEOUT, "timed out after 2 minutes: why")
    assert (out.answer, out.rounds) == ("partial", 3)
    assert Deadline.of(d.json()) == d
    with pytest.raises(ValueError, match="a run's deadline holds numbers"):
        Deadline.of({"at": "soon", "seconds": 1})


def test_the_deadline_aborts_the_run_at_its_time_and_a_cancel_first_is_not_a_timeout() -> None:
    async def main() -> tuple[bool, bool, bool]:
        clock = ManualClock()
        cancel = asyncio.Event()
        timer = asyncio.ensure_future(abort_at(Deadline(time.time() + 100, 100), cancel, clock))
        await asyncio.sleep(0)
        clock.advance(90)
        await asyncio.sleep(0)
        early = cancel.is_set()
        clock.advance(11)
        fired = await asyncio.wait_for(timer, 5)
        ctrl_c = asyncio.Event()
        other = asyncio.ensure_future(abort_at(Deadline(time.time() + 100, 100), ctrl_c, clock))
        await asyncio.sleep(0)
        ctrl_c.set()  # Ctrl-C before the deadline: an abort, not a timeout
        return early, fired and cancel.is_set(), await asyncio.wait_for(other, 5)

    assert asyncio.run(main()) == (False, True, False)
