"""waits.race against rules.wait: the same scenarios through the runtime on a clock
the test moves and through the model, compared line for line; and the guarantees
(exactly one end, losers cleaned, a cancel stays a cancel)."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from eukhe.rules import wait as model
from eukhe.waits import ManualClock, race

NEVER = None
TIMES = (NEVER, 1, 2, 3)


def expected(event: int | None, deadline: int | None, cancel: int | None) -> str:
    """The model stepped through the inputs in time order (at one time: event, cancel, tick)."""
    w = model.start(deadline is not None, 1 if deadline is None or deadline > 0 else 0)
    for t in range(0, 5):
        for when, tick in (
            (event, model.Tick.EVENT),
            (cancel, model.Tick.CANCEL),
            (deadline, model.Tick.TICK),
        ):
            if when == t and w.end is model.End.LIVE:
                w = model.step(w, tick).wait
    return w.end.value


def through_race(event: int | None, deadline: int | None, cancel: int | None) -> str:
    async def go() -> str:
        clock = ManualClock()
        done = asyncio.Event()
        stop = asyncio.Event()

        async def work() -> str:
            await done.wait()
            return "value"

        waiter = asyncio.ensure_future(race(work(), deadline, stop, clock))
        for t in range(0, 5):
            if t:
                clock.advance(1)
            if event == t:
                done.set()
            if cancel == t:
                stop.set()
            for _ in range(5):  # let the loop settle (quiescence, not time)
                await asyncio.sleep(0)
            if waiter.done():
                break
        raced = await asyncio.wait_for(waiter, timeout=5)
        if raced.end is model.End.EVENT:
            assert raced.result() == "value"
        assert clock.sleepers == 0  # the deadline's sleeper did not outlive the wait
        return raced.end.value

    return asyncio.run(go())


SCENARIOS = [s for s in itertools.product(TIMES, TIMES, TIMES) if s != (NEVER, NEVER, NEVER)]


def test_race_and_the_model_end_every_scenario_alike() -> None:
    """Every scenario of an event, a deadline and a cancel at times 1..3 or never (ties
    included), line for line."""
    got = [f"{s}: {through_race(*s)}" for s in SCENARIOS]
    want = [f"{s}: {expected(*s)}" for s in SCENARIOS]
    assert got == want
    assert len(SCENARIOS) == 63


def test_a_deadline_already_past_ends_at_once_and_never_starts_the_work() -> None:
    started = []

    async def work() -> None:
        started.append(1)

    async def go() -> str:
        clock = ManualClock(10.0)
        return (await race(work(), deadline=5.0, clock=clock)).end.value

    assert asyncio.run(go()) == "deadline" and started == []


def test_the_loser_is_cancelled_and_a_work_error_is_its_result() -> None:
    cancelled = []

    async def slow() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.append(1)
            raise

    async def failing() -> None:
        raise ValueError("broken")

    async def go() -> None:
        clock = ManualClock()
        waiter = asyncio.ensure_future(race(slow(), deadline=1.0, clock=clock))
        await asyncio.sleep(0)
        clock.advance(1)
        assert (await waiter).end is model.End.DEADLINE
        raced = await race(failing(), deadline=5.0, clock=clock)
        with pytest.raises(ValueError, match="broken"):
            raced.result()

    asyncio.run(go())
    assert cancelled == [1]


def test_a_cancel_of_the_waiter_stays_a_cancel() -> None:
    cancelled = []

    async def slow() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.append(1)
            raise

    async def go() -> None:
        waiter = asyncio.ensure_future(race(slow(), deadline=None, clock=ManualClock()))
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter

    asyncio.run(go())
    assert cancelled == [1]


def test_a_work_deaf_to_its_cancel_is_left_after_the_grace() -> None:
    """The deadline passes; the work ignores its cancel: the wait ends within the grace
    all the same, and the work is left to run (here until the test lets it go)."""
    done = asyncio.Event()

    async def deaf() -> None:
        while not done.is_set():
            try:
                await asyncio.sleep(0.01)
            except asyncio.CancelledError:
                continue

    async def go() -> tuple[str, float]:
        clock = ManualClock()
        loop = asyncio.get_running_loop()
        waiter = asyncio.ensure_future(race(deaf(), 1.0, None, clock, grace=0.2))
        await asyncio.sleep(0)
        began = loop.time()
        clock.advance(2)
        got = await asyncio.wait_for(waiter, timeout=5)
        took = loop.time() - began
        done.set()  # the deaf work, left running, may end now
        await asyncio.sleep(0.05)
        return got.end.value, took

    end, took = asyncio.run(go())
    assert end == "deadline" and 0.15 <= took < 2.0


INPUTS = {"e": model.Tick.EVENT, "t": model.Tick.TICK, "c": model.Tick.CANCEL}


def model_trace(deadline: int | None, inputs: str) -> list[str]:
    """The model after each input, one at a time: live, or how it ended."""
    w = model.start(deadline is not None, 1 if deadline is None else deadline)
    lines = [w.end.value]
    for x in inputs:
        w = model.step(w, INPUTS[x]).wait
        lines.append(w.end.value)
    return lines


async def race_trace(deadline: int | None, inputs: str, shared: bool) -> list[str]:
    """waits.race fed the same inputs on a clock the test moves: after each, whether
    the waiter has ended and how. `shared`: the cancel waiter is one the caller owns."""
    clock = ManualClock()
    done, stop = asyncio.Event(), asyncio.Event()
    watch = asyncio.ensure_future(stop.wait()) if shared else None

    async def work() -> str:
        await done.wait()
        return "value"

    async def settle() -> None:
        for _ in range(6):  # quiescence of the loop, not time
            await asyncio.sleep(0)

    waiter = asyncio.ensure_future(race(work(), deadline, stop, clock, watch=watch))  # type: ignore[arg-type]
    await settle()

    def line() -> str:
        return waiter.result().end.value if waiter.done() else "live"

    lines = [line()]
    for x in inputs:
        if x == "e":
            done.set()
        elif x == "c":
            stop.set()
        else:
            clock.advance(1)
        await settle()
        lines.append(line())
    if not waiter.done():
        stop.set()  # end the leftover wait: nothing may outlive the scenario
        await asyncio.wait_for(waiter, timeout=5)
    assert clock.sleepers == 0
    if watch is not None:
        assert not watch.cancelled()  # a shared waiter is the caller's: left running
        watch.cancel()
    return lines


GENERATED = [
    (deadline, "".join(xs))
    for deadline in (None, 0, 1, 2, 3)
    for n in range(1, 5)
    for xs in itertools.product("etc", repeat=n)
]


def test_race_and_the_model_step_every_generated_history_alike() -> None:
    """Every history of up to 4 inputs (events, ticks, cancels in any order, repeats
    included) under every deadline of 0..3 ticks or none: 600 scenarios, each through
    the runtime (half with a shared cancel waiter) and the model, line for line."""

    async def all_of_them() -> list[str]:
        out = []
        for i, (deadline, xs) in enumerate(GENERATED):
            trace = await race_trace(deadline, xs, shared=i % 2 == 1)
            out.append(f"{deadline} {xs}: {' '.join(trace)}")
        return out

    got = asyncio.run(all_of_them())
    want = [f"{d} {xs}: {' '.join(model_trace(d, xs))}" for d, xs in GENERATED]
    assert len(GENERATED) == 600
    assert got == want
