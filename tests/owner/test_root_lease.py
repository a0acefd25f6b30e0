"""The live root-turn lease (`owner.root_lease.RootLease`) against `rules.lease`: generated
scenarios of asks, releases, stops and crashes in any order, through the runtime
(real waits, real cancels) and through the model, compared line for line."""

from __future__ import annotations

import asyncio
import random

import pytest

from eukhe.owner.root_lease import RootLease, Stopped
from eukhe.rules import lease
from eukhe.rules.lease import Kind, Op

ORIGINS = 3


def scenario(seed: int) -> list[Op]:
    """A history of 4..24 operations: asks from 3 origins, releases and stops of
    live keys, of ended keys and of keys not given yet, crashes of any origin."""
    rnd = random.Random(seed)
    ops: list[Op] = []
    keys = 0
    for _ in range(rnd.randint(4, 24)):
        kind = rnd.choice([Kind.ASK, Kind.ASK, Kind.RELEASE, Kind.STOP, Kind.CRASH])
        if kind is Kind.ASK:
            ops.append(Op(kind, rnd.randrange(ORIGINS)))
            keys += 1
        elif kind is Kind.CRASH:
            ops.append(Op(kind, rnd.randrange(ORIGINS)))
        else:
            ops.append(Op(kind, rnd.randrange(keys + 2)))
    return ops


def through_model(ops: list[Op]) -> list[str]:
    s = lease.start()
    granted: set[int] = set()
    stopped: set[int] = set()
    lines = []
    for x in ops:
        waiting = {w.key for w in s.waiters}
        st = lease.step(s, x)
        if st.granted >= 0:
            granted.add(st.granted)
        if x.kind is not Kind.ASK and x.kind is not Kind.CRASH and x.who in waiting:  # a waiter leaves
            stopped.add(x.who)
        if x.kind is Kind.CRASH:
            stopped |= {w.key for w in s.waiters if w.origin == x.who}
        s = st.lease
        holder = -1 if s.holder is None else s.holder.key
        lines.append(
            f"{x.kind.value} {x.who}: holder {holder} waiters {[w.key for w in s.waiters]} "
            f"granted {sorted(granted)} stopped {sorted(stopped)}"
        )
    return lines


async def through_runtime(ops: list[Op]) -> list[str]:
    turns = RootLease()
    asks: dict[int, tuple[asyncio.Task[int], asyncio.Event]] = {}
    granted: set[int] = set()
    stopped: set[int] = set()
    lines = []
    next_key = 0

    async def settle() -> None:
        for _ in range(6):  # quiescence of the loop, not time
            await asyncio.sleep(0)

    for x in ops:
        if x.kind is Kind.ASK:
            cancel = asyncio.Event()
            asks[next_key] = (asyncio.ensure_future(turns.acquire(x.who, {"origin": x.who}, cancel)), cancel)
            next_key += 1
        elif x.kind is Kind.CRASH:
            turns.crash(x.who)
        elif x.kind is Kind.STOP and x.who in asks and not asks[x.who][0].done():
            asks[x.who][1].set()  # a waiter's stop is its cancel
        else:
            turns.release(x.who)  # a holder's stop or release, or a key that is not live
        await settle()
        for key, (task, _) in asks.items():
            if task.done():
                if task.exception() is None:
                    granted.add(task.result())
                else:
                    assert isinstance(task.exception(), Stopped)
                    stopped.add(key)
        lines.append(
            f"{x.kind.value} {x.who}: holder {turns.holder} waiters {turns.waiters} "
            f"granted {sorted(granted)} stopped {sorted(stopped)}"
        )
    for origin in range(ORIGINS):
        turns.crash(origin)
    await settle()
    assert all(task.done() for task, _ in asks.values())
    assert turns.pending == 0 and turns.about == {}  # nothing left behind
    return lines


SEEDS = range(240)


def test_the_live_lease_and_the_model_agree_on_every_generated_scenario() -> None:
    async def every() -> list[list[str]]:
        return [await through_runtime(scenario(seed)) for seed in SEEDS]

    got = asyncio.run(every())
    for seed, lines in zip(SEEDS, got, strict=True):
        assert lines == through_model(scenario(seed)), f"scenario {seed}: {scenario(seed)}"
    kinds = {x.kind for seed in SEEDS for x in scenario(seed)}
    assert kinds == set(Kind)


def test_a_stopped_wait_leaves_nothing_and_a_grant_that_came_meanwhile_is_handed_on() -> None:
    async def go() -> None:
        turns = RootLease()
        first = await turns.acquire(0, {})
        cancel = asyncio.Event()
        second = asyncio.ensure_future(turns.acquire(1, {}, cancel))
        third = asyncio.ensure_future(turns.acquire(2, {}))
        await asyncio.sleep(0)
        assert turns.waiters == [1, 2]
        cancel.set()
        with pytest.raises(Stopped):
            await second
        assert turns.waiters == [2] and turns.pending == 1
        turns.release(first)
        assert await third == 2
        assert turns.holder == 2 and turns.pending == 0

    asyncio.run(go())
