"""H3: a user's request never waits behind background work.

One provider's admission controller, per ticket. Every request asks for a
slot and gets a ticket (ascending numbers, in the order asked); its class is
interactive (a session turn) or background (the compactor, summaries,
background subagents). A ticket is queued, granted (a waiter's grant not yet
collected), held, preempted (a background holder whose slot an interactive
request took) or ended.

1. An interactive admit preempts every background request of the provider:
   a held background slot becomes preempted (the runtime cancels its holder,
   which asks again with a new ticket) and an uncollected background grant
   goes back into its queue at its place (it is older than every queued
   background ticket, so it goes first, without a sort).
2. Within a class: oldest first (the queues are in ticket order).
3. A free slot and an eligible request are never left apart: interactive is
   eligible whenever it waits; background only while no interactive request
   holds or waits.
4. An interactive request waits only for the interactive requests ahead of it
   (`ahead`): the interactive slots held and the older interactive waiters.

A slot is taken by a granted or held ticket; a preempted ticket gave its slot
up at once. A lowered limit drains: nothing is taken away, and nothing is
granted until fewer than `limit` slots are held.

Operations, as the runtime makes them: admit (either class; grants only the
new ticket), waiter poll (collects a grant), drop (the holder of a ticket goes
away: a permit released or a waiter leaving, cancelled or timed out), new
limits. Drop and new limits run the grant loop (new limits must: a raised
limit with a waiter present would otherwise leave a free slot and an eligible
request apart); admit and poll never grant another ticket.

The queue limit bounds each class's queue at admission: an admit that would
queue behind `queue_limit` waiters of its class is refused (`FULL`, a
retryable error in the runtime). Background waiters never fill the queue an
interactive request needs. A preempted uncollected grant goes back into its
queue whatever the limit.

Representation: the spec's, with ended tickets pruned: per class a queue of
ticket numbers (`Line`, a persistent ordered set: finding a ticket is two
bisections; adding or removing one copies its chunk, at most CHUNK numbers, and
the index of chunks, one entry per CHUNK numbers in use, so a step with 10,000
waiters copies a few hundred pointers, not 10,000), and the holders (granted,
held, preempted; about as many as the limit) in ticket order. A ticket found in
neither has ended (or was never given).

Pure: standard library only, frozen data, total functions. A malformed input
(a negative limit, a ticket that is unknown or ended) gets an explicit
outcome and changes nothing.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from eukhe.rules.states import Choice

CHUNK = 64
"""Ticket numbers a chunk of a `Line` spans: chunk k holds k·CHUNK ≤ t < (k+1)·CHUNK."""


class Class(Choice):
    INTERACTIVE = "interactive"  # a session request: a user waits for it
    BACKGROUND = "background"  # compaction, summaries, background subagents

    __hash__ = object.__hash__  # members are singletons: hashed by identity, in C


class Status(Choice):
    QUEUED = "queued"
    GRANTED = "granted"  # granted to a waiter that has not collected it yet: takes a slot
    HELD = "held"  # takes a slot
    PREEMPTED = "preempted"  # gave its slot to an interactive request; ends when its holder drops it
    ENDED = "ended"

    __hash__ = object.__hash__


TAKES_A_SLOT = (Status.GRANTED, Status.HELD)


@dataclass(frozen=True)
class Line:
    """Ticket numbers in ascending order, persistent: every change makes a new Line
    and copies only the top index and one chunk.

    keys: the numbers of the nonempty chunks, ascending; chunks: their tickets,
    each ascending. Only nonempty chunks are kept, so equal sets are equal Lines."""

    keys: tuple[int, ...] = ()
    chunks: tuple[tuple[int, ...], ...] = ()
    size: int = 0

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[int]:
        for chunk in self.chunks:
            yield from chunk

    def __contains__(self, t: object) -> bool:
        if not isinstance(t, int):
            return False
        i = bisect_left(self.keys, t // CHUNK)
        if i == len(self.keys) or self.keys[i] != t // CHUNK:
            return False
        c = self.chunks[i]
        j = bisect_left(c, t)
        return j < len(c) and c[j] == t

    def first(self) -> int:
        """The oldest ticket, or -1 when the line is empty."""
        return self.chunks[0][0] if self.chunks else -1

    def below(self, t: int) -> int:
        """How many tickets are older than `t`."""
        n = 0
        for chunk in self.chunks:
            if chunk[-1] < t:
                n += len(chunk)
            else:
                return n + bisect_left(chunk, t)
        return n

    def add(self, t: int) -> Line:
        """The line with `t` in it (the same line if it was)."""
        k = t // CHUNK
        i = bisect_left(self.keys, k)
        if i < len(self.keys) and self.keys[i] == k:
            c = self.chunks[i]
            j = bisect_left(c, t)
            if j < len(c) and c[j] == t:
                return self
            chunk = (*c[:j], t, *c[j:])
            return Line(self.keys, (*self.chunks[:i], chunk, *self.chunks[i + 1 :]), self.size + 1)
        return Line(
            (*self.keys[:i], k, *self.keys[i:]), (*self.chunks[:i], (t,), *self.chunks[i:]), self.size + 1
        )

    def remove(self, t: int) -> Line:
        """The line without `t` (the same line if it was not in it)."""
        k = t // CHUNK
        i = bisect_left(self.keys, k)
        if i == len(self.keys) or self.keys[i] != k:
            return self
        c = self.chunks[i]
        j = bisect_left(c, t)
        if j == len(c) or c[j] != t:
            return self
        if len(c) == 1:
            return Line(
                (*self.keys[:i], *self.keys[i + 1 :]),
                (*self.chunks[:i], *self.chunks[i + 1 :]),
                self.size - 1,
            )
        chunk = (*c[:j], *c[j + 1 :])
        return Line(self.keys, (*self.chunks[:i], chunk, *self.chunks[i + 1 :]), self.size - 1)


EMPTY = Line()


def line(*tickets: int) -> Line:
    out = EMPTY
    for t in tickets:
        out = out.add(t)
    return out


class Holder(NamedTuple):
    """A ticket granted, held or preempted."""

    ticket: int
    cls: Class
    status: Status


class Ticket(NamedTuple):
    """A live ticket as `tickets` lists it."""

    number: int
    cls: Class
    status: Status


@dataclass(frozen=True)
class State:
    """One provider's controller.

    limit: slots (requests running at once); queue_limit: waiters a class may queue.
    next_ticket: the number the next admitted request gets.
    interactive, background: each class's queued tickets, oldest first.
    holders: granted, held and preempted tickets, in ticket order.
    """

    limit: int
    queue_limit: int
    next_ticket: int
    interactive: Line
    background: Line
    holders: tuple[Holder, ...]

    def queue(self, cls: Class) -> Line:
        return self.interactive if cls is Class.INTERACTIVE else self.background


class Kind(Choice):
    ADMIT = "admit"  # a request asks for a slot (`cls`)
    POLL = "poll"  # the waiter of `ticket` looks at its ticket: collects a grant
    DROP = "drop"  # the holder of `ticket` goes away: permit released, or waiter leaves
    LIMITS = "limits"  # new `limit` and `queue_limit`

    __hash__ = object.__hash__


class Op(NamedTuple):
    """One operation; the fields its kind does not read are ignored."""

    kind: Kind
    cls: Class = Class.INTERACTIVE
    ticket: int = -1
    limit: int = 0
    queue_limit: int = 0


def admit_op(cls: Class) -> Op:
    return Op(Kind.ADMIT, cls=cls)


def poll_op(ticket: int) -> Op:
    return Op(Kind.POLL, ticket=ticket)


def drop_op(ticket: int) -> Op:
    return Op(Kind.DROP, ticket=ticket)


def limits_op(limit: int, queue_limit: int) -> Op:
    return Op(Kind.LIMITS, limit=limit, queue_limit=queue_limit)


class Outcome(Choice):
    HELD = "held"  # admit: the slot taken at once; poll: the grant collected (or held already)
    QUEUED = "queued"  # admit: waits; poll: still waits (a preempted grant waits again)
    FULL = "full"  # admit: its class's queue is at the queue limit; no ticket (preemption stands)
    PREEMPTED = "preempted"  # poll: the ticket was preempted
    ENDED = "ended"  # drop: the ticket ended; poll or drop of an ended or unknown ticket: nothing changed
    SET = "set"  # new limits taken
    INVALID = "invalid"  # a negative limit: nothing changed


@dataclass(frozen=True)
class Step:
    """The controller after one operation.

    ticket: admit: the new ticket (-1 when refused); other operations: theirs.
    granted: tickets the grant loop granted (their waiters are woken), oldest first.
    preempted: held background tickets preempted (their holders are cancelled).
    """

    state: State
    outcome: Outcome
    ticket: int
    granted: tuple[int, ...] = ()
    preempted: tuple[int, ...] = ()


def start(limit: int, queue_limit: int) -> State:
    """A new controller (a negative limit counts as 0)."""
    return State(max(limit, 0), max(queue_limit, 0), 0, EMPTY, EMPTY, ())


# ---------------------------------------------------------------- reading


def held(s: State) -> int:
    """Slots taken: granted and held tickets."""
    return sum(1 for h in s.holders if h.status in TAKES_A_SLOT)


def held_by(s: State, cls: Class) -> int:
    return sum(1 for h in s.holders if h.cls is cls and h.status in TAKES_A_SLOT)


def interactive_busy(s: State) -> bool:
    """An interactive request holds a slot or waits for one."""
    return len(s.interactive) > 0 or any(
        h.cls is Class.INTERACTIVE and h.status in TAKES_A_SLOT for h in s.holders
    )


def _holder(s: State, t: int) -> Holder | None:
    for h in s.holders:
        if h.ticket == t:
            return h
    return None


def status(s: State, t: int) -> Status:
    if t in s.interactive or t in s.background:
        return Status.QUEUED
    h = _holder(s, t)
    return Status.ENDED if h is None else h.status


def class_of(s: State, t: int) -> Class | None:
    """The class of a live ticket (None for an ended one)."""
    if t in s.interactive:
        return Class.INTERACTIVE
    if t in s.background:
        return Class.BACKGROUND
    h = _holder(s, t)
    return None if h is None else h.cls


def tickets(s: State) -> tuple[Ticket, ...]:
    """Every live ticket in ticket order, with its class and status."""
    out = [Ticket(t, Class.INTERACTIVE, Status.QUEUED) for t in s.interactive]
    out += [Ticket(t, Class.BACKGROUND, Status.QUEUED) for t in s.background]
    out += [Ticket(h.ticket, h.cls, h.status) for h in s.holders]
    return tuple(sorted(out))


def ahead(s: State, w: int) -> int:
    """What interactive ticket `w` waits for: interactive slots taken and older interactive waiters."""
    return held_by(s, Class.INTERACTIVE) + s.interactive.below(w)


class Why(Choice):
    """What keeps a queued ticket from a slot."""

    YIELDS = "yields"  # a background ticket, while an interactive request holds or waits (rule 3)
    FULL = "full"  # every slot is taken (or a lowered limit drains)

    __hash__ = object.__hash__


class Waiting(NamedTuple):
    """What a queued ticket waits for, as the state has it: its class and its place in
    its class's queue (1: the next of it), why it waits, the slots each class takes,
    the interactive requests waiting, and the limit."""

    cls: Class
    place: int
    why: Why
    held_interactive: int
    held_background: int
    waiting_interactive: int
    limit: int


def waiting(s: State, t: int) -> Waiting | None:
    """What ticket `t` waits for; None when it is not queued (held, granted, preempted,
    ended or never given)."""
    if t in s.interactive:
        cls = Class.INTERACTIVE
    elif t in s.background:
        cls = Class.BACKGROUND
    else:
        return None
    why = Why.YIELDS if cls is Class.BACKGROUND and interactive_busy(s) else Why.FULL
    return Waiting(
        cls,
        s.queue(cls).below(t) + 1,
        why,
        held_by(s, Class.INTERACTIVE),
        held_by(s, Class.BACKGROUND),
        len(s.interactive),
        s.limit,
    )


def valid(s: State) -> bool:
    """The states of the model: limits not negative; every ticket below `next_ticket`
    and in one place only; holders in ticket order, none queued or ended; only
    background tickets preempted."""
    numbers = [h.ticket for h in s.holders]
    queued = [*s.interactive, *s.background]
    every = numbers + queued
    return (
        (s.limit >= 0)
        & (s.queue_limit >= 0)
        & (s.next_ticket >= 0)
        & (numbers == sorted(set(numbers)))
        & (len(set(every)) == len(every))
        & all(0 <= t < s.next_ticket for t in every)
        & all(h.status in (*TAKES_A_SLOT, Status.PREEMPTED) for h in s.holders)
        & all(h.cls is Class.BACKGROUND for h in s.holders if h.status is Status.PREEMPTED)
        & _line_valid(s.interactive)
        & _line_valid(s.background)
    )


def _line_valid(q: Line) -> bool:
    every = list(q)
    return (
        (len(every) == q.size)
        & (every == sorted(set(every)))
        & (len(q.keys) == len(q.chunks))
        & all(len(c) > 0 and all(t // CHUNK == k for t in c) for k, c in zip(q.keys, q.chunks, strict=False))
        & (list(q.keys) == sorted(set(q.keys)))
    )


# ---------------------------------------------------------------- steps


def _insert(holders: tuple[Holder, ...], h: Holder) -> tuple[Holder, ...]:
    i = bisect_right([x.ticket for x in holders], h.ticket)
    return (*holders[:i], h, *holders[i:])


def _grant(
    limit: int, interactive: Line, background: Line, holders: tuple[Holder, ...]
) -> tuple[Line, Line, tuple[Holder, ...], tuple[int, ...]]:
    """The grant loop: while a slot is free, the oldest interactive waiter; failing
    that, while no interactive request holds or waits, the oldest background one."""
    taken = 0
    interactive_holds = False
    for h in holders:
        if h.status in TAKES_A_SLOT:
            taken += 1
            interactive_holds |= h.cls is Class.INTERACTIVE
    granted: list[int] = []
    while taken < limit:
        if len(interactive) > 0:
            t = interactive.first()
            interactive = interactive.remove(t)
            holders = _insert(holders, Holder(t, Class.INTERACTIVE, Status.GRANTED))
            interactive_holds = True
        elif not interactive_holds and len(background) > 0:
            t = background.first()
            background = background.remove(t)
            holders = _insert(holders, Holder(t, Class.BACKGROUND, Status.GRANTED))
        else:
            break
        taken += 1
        granted.append(t)
    return interactive, background, holders, tuple(granted)


def _preempt(s: State) -> tuple[Line, tuple[Holder, ...], tuple[int, ...]]:
    """Every background slot given up: held ones preempted, uncollected grants back in the queue."""
    background = s.background
    holders: list[Holder] = []
    preempted: list[int] = []
    for h in s.holders:
        if h.cls is Class.BACKGROUND and h.status is Status.GRANTED:
            background = background.add(h.ticket)
        elif h.cls is Class.BACKGROUND and h.status is Status.HELD:
            holders.append(Holder(h.ticket, h.cls, Status.PREEMPTED))
            preempted.append(h.ticket)
        else:
            holders.append(h)
    return background, tuple(holders), tuple(preempted)


def admit(s: State, cls: Class) -> Step:
    """A request asks for a slot. Interactive: every background slot is given up
    first; then the slot is taken at once when one is free and no older request of
    its class waits (background: and no interactive request holds or waits); else
    it queues, unless its class's queue is full. Grants no other ticket."""
    background, holders = s.background, s.holders
    preempted: tuple[int, ...] = ()
    if cls is Class.INTERACTIVE and any(h.cls is Class.BACKGROUND for h in holders):
        background, holders, preempted = _preempt(s)
    taken = sum(1 for h in holders if h.status in TAKES_A_SLOT)
    t = s.next_ticket
    if cls is Class.INTERACTIVE:
        now = (taken < s.limit) & (len(s.interactive) == 0)
        waiting = len(s.interactive)
    else:
        busy = len(s.interactive) > 0 or any(
            h.cls is Class.INTERACTIVE and h.status in TAKES_A_SLOT for h in holders
        )
        now = (taken < s.limit) & (not busy) & (len(background) == 0)
        waiting = len(background)
    if now:
        holders = (*holders, Holder(t, cls, Status.HELD))
        state = State(s.limit, s.queue_limit, t + 1, s.interactive, background, holders)
        return Step(state, Outcome.HELD, t, (), preempted)
    if waiting >= s.queue_limit:
        state = State(s.limit, s.queue_limit, s.next_ticket, s.interactive, background, holders)
        return Step(state, Outcome.FULL, -1, (), preempted)
    interactive = s.interactive.add(t) if cls is Class.INTERACTIVE else s.interactive
    background = background.add(t) if cls is Class.BACKGROUND else background
    state = State(s.limit, s.queue_limit, t + 1, interactive, background, holders)
    return Step(state, Outcome.QUEUED, t, (), preempted)


def poll(s: State, t: int) -> Step:
    """The waiter of `t` looks: a grant is collected (held); nothing else changes."""
    for i, h in enumerate(s.holders):
        if h.ticket == t:
            if h.status is Status.GRANTED:
                holders = (*s.holders[:i], Holder(t, h.cls, Status.HELD), *s.holders[i + 1 :])
                state = State(s.limit, s.queue_limit, s.next_ticket, s.interactive, s.background, holders)
                return Step(state, Outcome.HELD, t)
            return Step(s, Outcome.PREEMPTED if h.status is Status.PREEMPTED else Outcome.HELD, t)
    if t in s.interactive or t in s.background:
        return Step(s, Outcome.QUEUED, t)
    return Step(s, Outcome.ENDED, t)


def drop(s: State, t: int) -> Step:
    """The holder of `t` goes away (a permit released, a waiter cancelled or timed
    out): the ticket ends, its slot if it took one is free, and the grant loop runs.
    An ended or unknown ticket: nothing changes (no second release)."""
    interactive, background, holders = s.interactive, s.background, s.holders
    i = next((k for k, h in enumerate(holders) if h.ticket == t), -1)
    if i >= 0:
        holders = (*holders[:i], *holders[i + 1 :])
    elif t in interactive:
        interactive = interactive.remove(t)
    elif t in background:
        background = background.remove(t)
    else:
        return Step(s, Outcome.ENDED, t)
    interactive, background, holders, granted = _grant(s.limit, interactive, background, holders)
    state = State(s.limit, s.queue_limit, s.next_ticket, interactive, background, holders)
    return Step(state, Outcome.ENDED, t, granted)


def limits(s: State, limit: int, queue_limit: int) -> Step:
    """New limits. A lowered limit takes no slot away (held ones drain); a raised one
    grants waiters at once. A negative limit: nothing changes."""
    if limit < 0 or queue_limit < 0:
        return Step(s, Outcome.INVALID, -1)
    interactive, background, holders, granted = _grant(limit, s.interactive, s.background, s.holders)
    state = State(limit, queue_limit, s.next_ticket, interactive, background, holders)
    return Step(state, Outcome.SET, -1, granted)


def step(s: State, op: Op) -> Step:
    if op.kind is Kind.ADMIT:
        return admit(s, op.cls)
    if op.kind is Kind.POLL:
        return poll(s, op.ticket)
    if op.kind is Kind.DROP:
        return drop(s, op.ticket)
    return limits(s, op.limit, op.queue_limit)
