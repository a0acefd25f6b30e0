"""The H6.1 model of one wait."""

from __future__ import annotations

from eukhe.rules import wait
from eukhe.rules.wait import End, Tick


def run(w: wait.Wait, *ticks: Tick) -> tuple[wait.Wait, int]:
    fired = 0
    for x in ticks:
        t = wait.step(w, x)
        fired += t.fired
        w = t.wait
    return w, fired


def test_a_deadline_ends_the_wait_on_its_tick_once() -> None:
    w, fired = run(wait.start(True, 3), Tick.TICK, Tick.TICK)
    assert w.end is End.LIVE and fired == 0
    w, fired = run(w, Tick.TICK, Tick.EVENT, Tick.CANCEL, Tick.TICK)
    assert w.end is End.DEADLINE and fired == 1


def test_the_first_of_event_and_cancel_wins() -> None:
    assert run(wait.start(False, 0), Tick.CANCEL, Tick.EVENT)[0].end is End.CANCEL
    assert run(wait.start(True, 9), Tick.EVENT, Tick.CANCEL)[0].end is End.EVENT


def test_a_wait_without_deadline_outlives_any_ticks() -> None:
    w, fired = run(wait.start(False, 0), *[Tick.TICK] * 1000)
    assert w.end is End.LIVE and fired == 0


def test_a_deadline_of_zero_has_passed_already() -> None:
    assert wait.start(True, 0).end is End.DEADLINE
