"""The cost of one admit-and-release of the admission controller with 100, 1,000 and
10,000 requests queued, against a bare `asyncio.Semaphore` doing the same.

    .venv/bin/python bench/admission.py [--cycles N] [--rounds R]

One slot; waiters + 1 tasks each loop `async with slot: pass`, so the queue stays
at `waiters` long and every cycle is one release (the oldest waiter is woken), one
collected grant and one admit at the back of the queue. The same with
`async with semaphore: pass` on an `asyncio.Semaphore(1)`. Each is timed over
`cycles` cycles after every task has queued once; the best of `rounds` rounds is
kept. `model` is the pure model's part of a cycle alone (admit, release, poll on
the state with that many waiters), no event loop.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

from eukhe.admission import Controller
from eukhe.rules import admission as rule

SIZES = (100, 1_000, 10_000)


async def cycles_of(
    make: Callable[[], AbstractAsyncContextManager[object]], waiters: int, cycles: int
) -> float:
    """Seconds per cycle once `waiters` tasks wait behind the one that holds."""
    done = 0
    timed: list[float] = []
    ready = asyncio.Event()

    async def worker() -> None:
        nonlocal done
        await ready.wait()
        while done < cycles + waiters:
            async with make():
                done += 1
                if done <= waiters:
                    await asyncio.sleep(0)  # warming up: let every task queue behind the holder
                elif done == waiters + 1:
                    timed.append(time.perf_counter())  # every task has queued once
                elif done == waiters + 1 + cycles:
                    timed.append(time.perf_counter())

    tasks = [asyncio.create_task(worker()) for _ in range(waiters + 1)]
    await asyncio.sleep(0)
    ready.set()
    await asyncio.gather(*tasks)
    return (timed[1] - timed[0]) / cycles


def model_cycle(waiters: int, cycles: int) -> float:
    """Seconds per admit + release + poll of the pure model with `waiters` queued."""
    st = rule.admit(rule.start(1, waiters + 1), rule.Class.INTERACTIVE)
    holder, s = st.ticket, st.state
    for _ in range(waiters):
        s = rule.admit(s, rule.Class.INTERACTIVE).state
    t0 = time.perf_counter()
    for _ in range(cycles):
        s = rule.admit(s, rule.Class.INTERACTIVE).state
        st = rule.drop(s, holder)
        holder = st.granted[0]
        s = rule.poll(st.state, holder).state
    return (time.perf_counter() - t0) / cycles


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="every path once, small: the bench still runs")
    args = ap.parse_args()
    sizes = SIZES[:1] if args.smoke else SIZES
    if args.smoke:
        args.cycles, args.rounds = 200, 1
    print(f"one admit-and-release, one slot; best of {args.rounds} rounds of {args.cycles} cycles")
    print(f"{'waiters':>8} {'eukhe µs':>10} {'Semaphore µs':>13} {'ratio':>6} {'model µs':>9}")
    for n in sizes:
        ours, bare, model = [], [], []
        for _ in range(args.rounds):
            c = Controller("bench", 1, n + 1)
            ours.append(asyncio.run(cycles_of(lambda c=c: c.slot(interactive=True), n, args.cycles)))
            sem = asyncio.Semaphore(1)
            bare.append(asyncio.run(cycles_of(lambda sem=sem: sem, n, args.cycles)))
            model.append(model_cycle(n, args.cycles))
            assert not rule.tickets(c.state)
        o, b, m = min(ours) * 1e6, min(bare) * 1e6, min(model) * 1e6
        print(f"{n:>8,} {o:>10.2f} {b:>13.2f} {o / b:>6.2f} {m:>9.2f}")


if __name__ == "__main__":
    main()
