"""One provider's live admission controller.

Its state is the model's state (`eukhe.rules.admission.State`) and every
operation is the model's step: admit when a request asks for a slot, poll when a
woken waiter looks at its ticket, drop when a waiter leaves or a holder's block
ends, new limits when the settings change. The controller keeps no count and
makes no decision of its own; asyncio futures only carry the model's grants to
the waiting tasks, and its preemptions to the holding tasks (as a cancel).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from types import TracebackType

from eukhe import waits
from eukhe.admission._errors import Preempted, QueueFull, SlotTimeout
from eukhe.humanize import counted
from eukhe.rules import admission
from eukhe.rules.admission import Class, Op, Outcome, State, Status, Step
from eukhe.rules.wait import End


@dataclass(frozen=True)
class Statistics:
    """A snapshot of one provider's controller."""

    provider: str
    limit: int
    queue_limit: int
    held_interactive: int  # slots taken by session requests (granted or held)
    held_background: int
    waiting_interactive: int
    waiting_background: int
    preempted: int  # preempted holders whose blocks have not ended yet
    next_ticket: int


@dataclass(frozen=True)
class Queued:
    """A request that waits for a slot of its provider: its class ("interactive" or
    "background"), its place in its class's queue (1: the next of it), and what holds it
    up (`ahead`, a phrase), as the model's state has them (`rules.admission.waiting`)."""

    provider: str
    cls: str
    place: int
    ahead: str

    @property
    def text(self) -> str:
        """The wait as a person reads it."""
        queue = "session" if self.cls == Class.INTERACTIVE.value else "background"
        return (
            f"waiting for a slot of provider {self.provider}: "
            f"{ordinal(self.place)} in the {queue} queue; {self.ahead}"
        )


OnQueued = Callable[[Queued], None]
"""What a waiting request is told: once when it queues, and again when its place or what
holds it up changes. Nothing when it takes a slot at once."""


def queued(provider: str, w: admission.Waiting) -> Queued:
    """The wait of a queued ticket, from what the model says it waits for."""
    return Queued(provider, w.cls.value, w.place, holds_up(w))


def holds_up(w: admission.Waiting) -> str:
    """What keeps a queued request from a slot, as a phrase: the session requests a
    background request yields to (H3), else who holds the provider's slots."""
    if w.why is admission.Why.YIELDS:
        said = []
        if w.held_interactive:
            said.append(f"{w.held_interactive} {'holds' if w.held_interactive == 1 else 'hold'} a slot")
        if w.waiting_interactive:
            said.append(f"{w.waiting_interactive} {'waits' if w.waiting_interactive == 1 else 'wait'}")
        return "background work yields to session requests: " + " and ".join(said)
    if w.limit == 0:
        return "the provider has no slots (its limit is 0)"
    slots = "its slot" if w.limit == 1 else f"its {w.limit} slots"
    holders = [
        counted(n, f"{cls} request")
        for n, cls in ((w.held_interactive, "session"), (w.held_background, "background"))
        if n
    ]
    if not holders:  # not in a state of the model: a queued request has its slots taken
        return f"{slots} are taken"
    verb = "holds" if w.held_interactive + w.held_background == 1 else "hold"
    return f"{' and '.join(holders)} {verb} {slots}"


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, ..., 21st."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


_ADMIT = {cls: admission.admit_op(cls) for cls in Class}


class _Woke(Enum):
    GRANT = "grant"  # the model granted the ticket


class Controller:
    """Admission for one provider. Not thread-safe: one event loop at a time."""

    def __init__(self, provider: str, limit: int, queue_limit: int) -> None:
        self.provider = provider
        self._state = admission.start(limit, queue_limit)
        self._waiters: dict[int, asyncio.Future[_Woke]] = {}
        self._holders: dict[int, Slot] = {}
        self._told: dict[int, Slot] = {}  # queued tickets whose slots are told their wait

    @property
    def state(self) -> State:
        """The model's state: the controller's whole state."""
        return self._state

    def step(self, op: Op) -> Step:
        """Make one operation of the model and carry out what it says: wake the
        waiters it granted, cancel the holders it preempted."""
        st = admission.step(self._state, op)
        self._state = st.state
        for t in st.granted:
            fut = self._waiters.get(t)
            if fut is not None and not fut.done():
                fut.set_result(_Woke.GRANT)
        for t in st.preempted:
            slot = self._holders.get(t)
            if slot is not None:
                slot._preempt()
        if self._told:
            for slot in list(self._told.values()):
                self._tell(slot)
        return st

    def _tell(self, slot: Slot) -> None:
        """Tell a waiting slot its wait, as the model's state has it, when it changed."""
        w = admission.waiting(self._state, slot.ticket)
        if w is None or slot.on_queued is None:
            return  # granted (its wait ends with its poll), or ended
        now = queued(self.provider, w)
        if now != slot._told:
            slot._told = now
            with contextlib.suppress(Exception):  # a show that fails loses its line, never the slot
                slot.on_queued(now)

    def set_limits(self, limit: int, queue_limit: int) -> None:
        """New limits: a lowered limit drains (no slot is taken away); a raised one
        grants waiters at once. Negative limits change nothing (`ValueError`)."""
        if self.step(admission.limits_op(limit, queue_limit)).outcome is Outcome.INVALID:
            raise ValueError(
                f"provider {self.provider!r}: limit={limit}, queue_limit={queue_limit}: "
                "expected whole numbers >= 0"
            )

    def slot(
        self, *, interactive: bool, deadline: float | None = None, on_queued: OnQueued | None = None
    ) -> Slot:
        """A slot to hold in an `async with` block (see `Slot`)."""
        return Slot(self, Class.INTERACTIVE if interactive else Class.BACKGROUND, deadline, on_queued)

    def statistics(self) -> Statistics:
        s = self._state
        return Statistics(
            provider=self.provider,
            limit=s.limit,
            queue_limit=s.queue_limit,
            held_interactive=admission.held_by(s, Class.INTERACTIVE),
            held_background=admission.held_by(s, Class.BACKGROUND),
            waiting_interactive=len(s.interactive),
            waiting_background=len(s.background),
            preempted=sum(1 for h in s.holders if h.status is Status.PREEMPTED),
            next_ticket=s.next_ticket,
        )


class _Phase(Enum):
    NEW = "new"
    WAITING = "waiting"
    HELD = "held"
    DONE = "done"


class Slot:
    """`async with controller.slot(interactive=...) as slot:` holds one slot of the
    provider for the block.

    Entering asks the model for a slot: taken at once when one is free and no
    request it must yield to waits (`slot.queued` is False), else the task waits
    in its class's queue, oldest first, until the model grants the slot, the
    deadline passes (`SlotTimeout`; `deadline` is absolute, in the event loop's
    clock, None for none) or the task is cancelled (the cancel propagates). A full
    queue raises `QueueFull` at once. Whatever ends the wait ends the ticket: a
    grant that came too late is released to the next waiter. A waiting slot with
    `on_queued` is told its wait (`Queued`: its place, what holds it up) when it
    queues and whenever that changes; one that takes its slot at once is told
    nothing.

    Leaving the block ends the ticket and frees the slot, however the block ends.

    A background slot is preempted when a session request of the same provider
    asks for a slot (H3.1): `slot.preempted` becomes True, the slot is free at
    once, and the holding task is cancelled, which closes the stream it reads.
    The block then raises `Preempted` (from the `CancelledError`) unless the task
    was also cancelled from elsewhere, in which case the `CancelledError`
    propagates. A body that swallows the cancel ends normally, with
    `slot.preempted` True. The holder asks again with a new slot, within its
    call's deadline (`run_in_slot`). Do not ask for an interactive slot of the
    same provider while holding a background one in the same task: it preempts
    the task itself.
    """

    def __init__(
        self, controller: Controller, cls: Class, deadline: float | None, on_queued: OnQueued | None = None
    ) -> None:
        self.controller = controller
        self.cls = cls
        self.deadline = deadline
        self.on_queued = on_queued
        self._told: Queued | None = None  # the wait it was told last
        self.ticket = -1
        self.queued = False
        self.preempted = False
        self._phase = _Phase.NEW
        self._task: asyncio.Task[object] | None = None
        self._cancelling = 0
        self._cancelled = False  # the controller cancelled the task to stop it

    @property
    def interactive(self) -> bool:
        return self.cls is Class.INTERACTIVE

    def _preempt(self) -> None:
        self.preempted = True
        task = self._task
        if task is not None and not task.done():
            task.cancel(msg=f"admission: {self.controller.provider}: background slot preempted")
            self._cancelled = True

    async def __aenter__(self) -> Slot:
        if self._phase is not _Phase.NEW:
            raise RuntimeError("a Slot is entered once; ask the controller for a new one")
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("a Slot is held by a task")
        c = self.controller
        st = c.step(_ADMIT[self.cls])
        if st.outcome is Outcome.FULL:
            self._phase = _Phase.DONE
            raise QueueFull(c.provider, self.cls.value, c.state.queue_limit)
        self.ticket = st.ticket
        if st.outcome is Outcome.QUEUED:
            self.queued = True
            self._phase = _Phase.WAITING
            await self._wait()
        self._task = task
        self._cancelling = task.cancelling()
        self._phase = _Phase.HELD
        c._holders[self.ticket] = self
        return self

    async def _wait(self) -> None:
        """Wait for the model's grant, the deadline or a cancel; on any but the grant,
        the ticket ends (a waiter drop) and the wait raises."""
        c = self.controller
        loop = asyncio.get_running_loop()
        t = self.ticket
        began = loop.time()
        try:
            if self.on_queued is not None:
                c._told[t] = self
                c._tell(self)
            while True:
                fut: asyncio.Future[_Woke] = loop.create_future()
                c._waiters[t] = fut
                try:
                    raced = await waits.race(fut, self.deadline, None, _CLOCK)
                finally:
                    c._waiters.pop(t, None)
                outcome = c.step(admission.poll_op(t)).outcome
                if outcome is Outcome.HELD:
                    return  # granted, even if the deadline came in the same tick
                if outcome is not Outcome.QUEUED:  # only this waiter ends its ticket
                    raise RuntimeError(f"provider {c.provider!r}: ticket {t} {outcome.value} while it waited")
                if raced.end is End.DEADLINE:
                    raise SlotTimeout(c.provider, self.cls.value, loop.time() - began, c.state.limit)
                # still queued: an uncollected background grant went back to the queue
        except BaseException:
            self._phase = _Phase.DONE
            c.step(admission.drop_op(t))  # leaves the queue, or frees a grant not collected
            raise
        finally:
            c._told.pop(t, None)

    async def __aexit__(
        self,
        typ: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._phase is not _Phase.HELD:
            return
        self._phase = _Phase.DONE
        c = self.controller
        c._holders.pop(self.ticket, None)
        c.step(admission.drop_op(self.ticket))  # a preempted ticket frees nothing twice
        if self._cancelled and self._task is not None:
            only_ours = self._task.uncancel() <= self._cancelling  # no other cancel is pending
            if only_ours and typ is asyncio.CancelledError:
                raise Preempted(c.provider, self.ticket) from exc


_CLOCK = waits.LoopClock()
