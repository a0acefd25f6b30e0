"""The live controller under thousands of random admits, polls, cancellations,
releases, deadlines, preemptions and limit changes across many tasks. After every
step of the model the laws are checked on the live state (each invariant on the
new state, each step law on the step just made); between steps, the controller's
futures and holders match the model's tickets (every waiter can be woken, every
holder can be preempted); at the end every ticket has ended."""

from __future__ import annotations

import asyncio
import random
from collections import Counter

from eukhe.admission import Controller, Preempted, QueueFull, Slot, SlotTimeout
from eukhe.laws import admission as laws
from eukhe.rules import admission as rule
from eukhe.rules.admission import Op, Status, Step
from tests.admission.helpers import run

CFG = laws.ACfg(0, 0, 0, 0, canonical=False)  # the laws read no bound of it


class Checked(Controller):
    """A controller that checks the laws at every step it makes."""

    steps = 0

    def step(self, op: Op) -> Step:
        before = self.state
        st = super().step(op)
        after = self.state
        assert rule.valid(after), after
        made = laws.Model(
            step=lambda s, x: st if (s is before and x is op) else rule.step(s, x), start=rule.start
        )
        for law in laws.LAWS:
            if law.node is not None:
                assert law.node(made, CFG, after), f"{law.name}: {op} gives {after}"
            if law.edge is not None:  # the step the controller made, as the model's
                assert law.edge(made, CFG, before, op), f"{law.name}: {before}, {op} gives {st}"
        self.steps += 1
        return st


def matches(c: Controller) -> None:
    """The runtime's futures and holders are the model's tickets: every queued or
    granted ticket has a waiter to wake (a granted one's future is resolved), and
    every held or preempted ticket a holder to cancel or to end."""
    tickets = rule.tickets(c.state)
    waiting = {t.number for t in tickets if t.status in (Status.QUEUED, Status.GRANTED)}
    holding = {t.number for t in tickets if t.status in (Status.HELD, Status.PREEMPTED)}
    assert set(c._waiters) == waiting, (c._waiters, tickets)
    assert set(c._holders) == holding, (c._holders, tickets)
    for t in tickets:
        if t.status is Status.GRANTED:
            assert c._waiters[t.number].done()


def test_thousands_of_random_operations_keep_every_law_and_end_every_ticket() -> None:
    rng = random.Random(20240605)
    seen: Counter[str] = Counter()

    async def go() -> int:
        c = Checked("stress", 2, 30)
        loop = asyncio.get_running_loop()
        attempts: set[asyncio.Task[None]] = set()
        admitted = 0

        async def attempt(interactive: bool, deadline: float | None, work: int, swallow: bool) -> None:
            nonlocal admitted
            slot: Slot = c.slot(interactive=interactive, deadline=deadline)
            try:
                async with slot:
                    for _ in range(work):
                        try:
                            await asyncio.sleep(0 if rng.random() < 0.8 else 0.0005)
                        except asyncio.CancelledError:
                            if not (swallow and slot.preempted):
                                raise
                            seen["swallowed"] += 1
                            break
                seen["preempted, body kept" if slot.preempted else "released"] += 1
            except QueueFull:
                seen["full"] += 1
                await asyncio.sleep(0.001)  # retryable: back off a little
            except SlotTimeout:
                seen["timed out"] += 1
            except Preempted:
                seen["preempted"] += 1
            except asyncio.CancelledError:
                seen["cancelled"] += 1
            finally:
                admitted += slot.ticket >= 0  # a ticket was given (all but a full queue)
                matches(c)

        async def worker(n: int) -> None:
            for _ in range(n):
                deadline = None if rng.random() < 0.5 else loop.time() + rng.uniform(0, 0.01)
                t = asyncio.create_task(
                    attempt(rng.random() < 0.3, deadline, rng.randint(0, 6), rng.random() < 0.2)
                )
                attempts.add(t)
                await asyncio.wait([t])
                attempts.discard(t)
                if not t.cancelled():
                    t.result()  # a law broken inside the attempt fails the test

        async def chaos() -> None:
            while any(not w.done() for w in workers):
                await asyncio.sleep(0 if rng.random() < 0.7 else 0.0005)
                matches(c)
                r = rng.random()
                if r < 0.15:
                    c.set_limits(rng.randint(0, 4), rng.choice((0, 3, 10, 40, 40)))
                    seen["new limits"] += 1
                elif r < 0.35 and attempts:
                    rng.choice(sorted(attempts, key=id)).cancel()
                    seen["cancel sent"] += 1
                elif r < 0.4:
                    c.set_limits(max(c.state.limit, 1), c.state.queue_limit)  # never stuck at 0 for long

        workers = [asyncio.create_task(worker(120)) for _ in range(60)]
        mess = asyncio.create_task(chaos())
        await asyncio.gather(*workers, mess)
        matches(c)
        assert not rule.tickets(c.state), rule.tickets(c.state)  # every ticket has ended
        assert c.state.next_ticket == admitted  # ... and each was given to one request
        assert not c._waiters and not c._holders
        return c.steps

    steps = run(go(), deadline=60)
    assert steps > 10_000, steps
    for what in ("released", "preempted", "swallowed", "timed out", "cancelled", "full", "new limits"):
        assert seen[what] > 0, (what, seen)
