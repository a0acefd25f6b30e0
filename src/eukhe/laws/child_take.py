"""The laws of H5.4 at the parent: what waits for a run enters its transcript exactly
once, across every continuation of its conversation and every crash between a take
and the step that records it; over `rules.child` (`take`, `key`, `next_place`).

The adversary: messages arriving (children's reports, steers) and withdrawn at any
moment; the run taking at its start, at each round end, answering, and looking for its
children's reports once it has answered (a look that finds some goes on with them, in a
new conversation of the same run); a crash after any take commits in the store and
before its step is recorded, after which the replay reaches the same place and takes
again. Each take's key comes from the model's `key` of the model's place."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import child
from eukhe.rules.child import At, Fate, Held, Place, Where
from eukhe.rules.states import Choice


@dataclass(frozen=True)
class Model:
    take: Callable[[tuple[Held, ...], str], tuple[tuple[Held, ...], tuple[int, ...]]]
    key: Callable[[Place], str]
    next_place: Callable[[Where, At], tuple[Where, Place]]
    went_on: Callable[[Where], Where]
    withdraw: Callable[[Fate], Fate]


MODEL = Model(child.take, child.key, child.next_place, child.went_on, child.withdraw)


@dataclass(frozen=True)
class DCfg:
    reports: int  # messages that may arrive
    conversations: int  # a run's conversations: its first and its continuations
    rounds: int  # round ends a conversation may make
    looks: int  # looks a run may make
    crashes: int  # takes whose step a crash may lose


class Op(Choice):
    ARRIVE = "arrive"  # a message is queued for the run
    WITHDRAW = "withdraw"  # the parent withdraws a queued one (it closes)
    START = "start"  # the run takes at its start
    ROUND = "round"  # a round ends and the run takes
    ANSWER = "answer"  # its conversation answers
    LOOK = "look"  # it looks for its children's reports (a look that finds some goes on)
    CRASH = "crash"  # the next take (of kind `lost`) commits, and a crash loses its step


@dataclass(frozen=True)
class In:
    op: Op
    id: int = 0  # WITHDRAW: which message
    lost: Op = Op.ROUND  # CRASH: the take whose step is lost (START, ROUND or LOOK)


NOWHERE = Where()  # a run not started


@dataclass(frozen=True)
class Sys:
    """The inbox, the run's transcript (inbox indices, as they entered), how far the run
    has come, whether its conversation has answered, the take a crash lost (its replay
    comes next: `lost` is then START, ROUND or LOOK), the crashes so far, and the keys of
    the takes whose steps were recorded."""

    inbox: tuple[Held, ...] = ()
    transcript: tuple[int, ...] = ()
    where: Where = NOWHERE
    answered: bool = False
    lost: Op = Op.ARRIVE  # ARRIVE: none lost
    crashes: int = 0
    keys: tuple[str, ...] = ()


TAKES = {Op.START: At.START, Op.ROUND: At.ROUND, Op.LOOK: At.LOOK}


def start(m: Model, cfg: DCfg) -> Sys:
    return Sys()


def _take(m: Model, s: Sys, op: Op) -> tuple[Where, str, tuple[Held, ...], tuple[int, ...]]:
    where, place = m.next_place(s.where, TAKES[op])
    k = m.key(place)
    inbox, got = m.take(s.inbox, k)
    return where, k, inbox, got


def nxt(m: Model, cfg: DCfg, s: Sys, x: In) -> Sys:
    if x.op is Op.ARRIVE:
        return Sys(
            (*s.inbox, Held(Fate.QUEUED)), s.transcript, s.where, s.answered, s.lost, s.crashes, s.keys
        )
    if x.op is Op.WITHDRAW:
        if not 0 <= x.id < len(s.inbox):
            return s
        h = s.inbox[x.id]
        inbox = (*s.inbox[: x.id], Held(m.withdraw(h.fate), h.taker), *s.inbox[x.id + 1 :])
        return Sys(inbox, s.transcript, s.where, s.answered, s.lost, s.crashes, s.keys)
    if x.op is Op.ANSWER:
        return Sys(s.inbox, s.transcript, s.where, True, s.lost, s.crashes, s.keys)
    if x.op is Op.CRASH and x.lost in TAKES:
        _, _, inbox, _ = _take(m, s, x.lost)
        return Sys(inbox, s.transcript, s.where, s.answered, x.lost, s.crashes + 1, s.keys)
    if x.op in TAKES:
        where, k, inbox, got = _take(m, s, x.op)
        answered = s.answered
        if x.op is Op.LOOK and got:  # the conversation goes on with what it found
            where, answered = m.went_on(where), False
        return Sys(inbox, (*s.transcript, *got), where, answered, Op.ARRIVE, s.crashes, (*s.keys, k))
    return s


def cfg_valid(cfg: DCfg) -> bool:
    return (cfg.reports >= 0) & (cfg.conversations > 0) & (cfg.rounds >= 0) & (cfg.looks >= 0)


def valid(cfg: DCfg, s: Sys) -> bool:
    return all(0 <= i < len(s.inbox) for i in s.transcript)


def _may(cfg: DCfg, s: Sys, op: Op) -> bool:
    """Whether the run reaches a take of kind `op` next."""
    w = s.where
    if op is Op.START:
        return w.conversation == 0
    if op is Op.ROUND:
        return (w.conversation > 0) & (not s.answered) & (w.round < cfg.rounds)
    return s.answered & (w.looks < cfg.looks) & (w.conversation < cfg.conversations)


def inputs(cfg: DCfg, s: Sys) -> list[In]:
    xs = [In(Op.ARRIVE)] if len(s.inbox) < cfg.reports else []
    xs += [In(Op.WITHDRAW, id=i) for i, h in enumerate(s.inbox) if h.fate is Fate.QUEUED]
    if s.lost in TAKES:  # the replay reaches the same place first
        return [*xs, In(s.lost)]
    for op in TAKES:
        if _may(cfg, s, op):
            xs.append(In(op))
            if s.crashes < cfg.crashes:
                xs.append(In(Op.CRASH, lost=op))
    if (s.where.conversation > 0) & (not s.answered):
        xs.append(In(Op.ANSWER))
    return xs


# ---------------------------------------------------------------- laws


def child_take_once(m: Model, cfg: DCfg, s: Sys) -> bool:
    """A message enters the run's transcript at most once."""
    return len(set(s.transcript)) == len(s.transcript)


def lost_key(m: Model, s: Sys) -> str:
    if s.lost not in TAKES:
        return ""
    return m.key(m.next_place(s.where, TAKES[s.lost])[1])


def child_take_keeps(m: Model, cfg: DCfg, s: Sys) -> bool:
    """Every placed message is in the transcript, but those the take a crash lost placed:
    its replay comes next."""
    lost = lost_key(m, s)
    return all(
        i in s.transcript
        for i, h in enumerate(s.inbox)
        if (h.fate is Fate.PLACED) & ((lost == "") | (h.taker != lost))
    )


def child_take_keys(m: Model, cfg: DCfg, s: Sys) -> bool:
    """The takes of a run have one key a place: no key is recorded twice."""
    return len(set(s.keys)) == len(s.keys)


def child_take_only_queued(m: Model, cfg: DCfg, s: Sys, x: In) -> bool:
    """A take enters what was queued before it, all of it, and what the same take placed
    before a crash lost its step; nothing withdrawn, nothing another take placed."""
    if x.op not in TAKES or (not _may(cfg, s, x.op) and s.lost is not x.op):
        return True
    t = nxt(m, cfg, s, x)
    got = t.transcript[len(s.transcript) :]
    lost = lost_key(m, s)
    want = tuple(
        i
        for i, h in enumerate(s.inbox)
        if (h.fate is Fate.QUEUED) | ((h.fate is Fate.PLACED) & (lost != "") & (h.taker == lost))
    )
    return got == want


LAWS = (
    Law(
        "child_take_once",
        "H5.4",
        "A message enters the run's transcript at most once, across continuations and crashes (H5.4).",
        node=child_take_once,
        prove=False,
    ),
    Law(
        "child_take_keeps",
        "H5.4",
        "Every placed message is in the transcript, but what a lost take placed: its replay takes it (H5.4).",
        node=child_take_keeps,
        prove=False,
    ),
    Law(
        "child_take_keys",
        "H5.4",
        "A run's takes have one key a place, across every continuation (H5.4).",
        node=child_take_keys,
        prove=False,
    ),
    Law(
        "child_take_only_queued",
        "H5.4",
        "A take enters all that was queued, and what the same take placed before a crash; nothing else "
        "(H5.4).",
        edge=child_take_only_queued,
        prove=False,
    ),
)


# ---------------------------------------------------------------- breaks


def _with(**parts: Callable[..., object]) -> Model:
    fields: dict[str, Callable[..., object]] = {
        "take": child.take,
        "key": child.key,
        "next_place": child.next_place,
        "went_on": child.went_on,
        "withdraw": child.withdraw,
    }
    return Model(**{**fields, **parts})  # type: ignore[arg-type]


def _key_per_conversation(p: Place) -> str:
    """The round-end key counted per conversation (the bug of issue 22: `r{k}`)."""
    return f"r{p.n}" if p.at is At.ROUND else child.key(p)


def _one_look_key(p: Place) -> str:
    return "look" if p.at is At.LOOK else child.key(p)


def _no_continuation(w: Where) -> Where:
    """A continuation that counts as the same conversation."""
    return Where(w.conversation, 0, w.looks)


def _take_forgets(inbox: tuple[Held, ...], taker: str) -> tuple[tuple[Held, ...], tuple[int, ...]]:
    """A take that does not give back what it placed before its step was lost."""
    return child.take(tuple(Held(h.fate, "") if h.taker == taker else h for h in inbox), taker)


def _take_all_placed(inbox: tuple[Held, ...], taker: str) -> tuple[tuple[Held, ...], tuple[int, ...]]:
    """A take that hands back every placed message, whoever placed it."""
    after, _ = child.take(inbox, taker)
    return after, tuple(i for i, h in enumerate(after) if h.fate is Fate.PLACED)


def _take_withdrawn(inbox: tuple[Held, ...], taker: str) -> tuple[tuple[Held, ...], tuple[int, ...]]:
    return child.take(tuple(Held(Fate.QUEUED) if h.fate is Fate.WITHDRAWN else h for h in inbox), taker)


def _take_leaves_one(inbox: tuple[Held, ...], taker: str) -> tuple[tuple[Held, ...], tuple[int, ...]]:
    """A take that leaves the newest queued message for later (it may never come)."""
    queued = [i for i, h in enumerate(inbox) if h.fate is Fate.QUEUED]
    if not queued:
        return child.take(inbox, taker)
    last = queued[-1]
    after, got = child.take((*inbox[:last], Held(Fate.WITHDRAWN), *inbox[last + 1 :]), taker)
    return (*after[:last], inbox[last], *after[last + 1 :]), got


MUTANTS = (
    Mutant("round-end keys counted per conversation", "H5.4", _with(key=_key_per_conversation)),
    Mutant("one key for every look", "H5.4", _with(key=_one_look_key)),
    Mutant("a continuation that keeps the conversation's count", "H5.4", _with(went_on=_no_continuation)),
    Mutant("a take that forgets what it placed before a crash", "H5.4", _with(take=_take_forgets)),
    Mutant("a take that hands back every placed message", "H5.4", _with(take=_take_all_placed)),
    Mutant("a take that places a withdrawn message", "H5.4", _with(take=_take_withdrawn)),
    Mutant("a take that leaves a queued message", "H5.4", _with(take=_take_leaves_one)),
)


# ---------------------------------------------------------------- the area


def proof_cases() -> list[tuple[dict[str, Enum], dict[str, Enum]]]:
    return [({}, {})]


def cfgs() -> Iterator[DCfg]:
    for reports, crashes in itertools.product((2, 3), (0, 1)):
        yield DCfg(reports, 3, 2, 3, crashes)


def sample_cfg(seed: int) -> DCfg:
    return DCfg(1 + seed % 6, 1 + (seed // 6) % 4, (seed // 24) % 5, (seed // 120) % 5, (seed // 600) % 4)


AREA = Area(
    name="child_take",
    model=MODEL,
    cfg_type=DCfg,
    state_type=Sys,
    input_type=In,
    proof_cases=proof_cases,
    valid=valid,
    cfg_valid=cfg_valid,
    start=start,
    next=nxt,
    inputs=inputs,
    cfgs=cfgs,
    bounds="2..3 messages, 3 conversations, 2 rounds each, 3 looks, 0..1 crashes",
    depth=9,
    sample_cfg=sample_cfg,
    laws=LAWS,
    mutants=MUTANTS,
)
