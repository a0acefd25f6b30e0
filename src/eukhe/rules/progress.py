"""H5.2: the work ledger, a child's progress as new work, not as events.

A child's progress token is its work (the distinct acts it did: a tool call and
its result, by name, arguments, result text and error flag; or an accepted
progress note, or a running call's progress that rose), plus the tokens of its own
unsettled children, plus the output
bytes of its kernel jobs. Only a new act moves the work: the same call with the
same result again, a retry, an answer, streamed text, thinking move nothing, so a
looping child keeps its token and the watch (`rules.child`) stalls it.

An act's `key` is its identity: the runtime builds it from the act's fields, so
two acts are the same act exactly when their keys are equal.

Pure: standard library only, frozen data, total functions.
"""

from __future__ import annotations

from dataclasses import dataclass

from eukhe.rules.states import Choice


class Kind(Choice):
    CALL = "call"  # a tool call and its result
    NOTE = "note"  # an accepted progress note
    PROGRESS = "progress"  # a running call's progress (an MCP notification) that rose (`rising`)
    TEXT = "text"  # streamed text
    THINKING = "thinking"
    RETRY = "retry"
    ANSWER = "answer"


WORK = frozenset({Kind.CALL, Kind.NOTE, Kind.PROGRESS})
"""The kinds of act that can be new work."""


@dataclass(frozen=True)
class Act:
    kind: Kind
    key: str = ""


@dataclass(frozen=True)
class Ledger:
    """The acts seen (by kind and key) and how many: `work`."""

    seen: frozenset[tuple[Kind, str]] = frozenset()
    work: int = 0


def ledger_valid(g: Ledger) -> bool:
    return g.work == len(g.seen)


def new(g: Ledger, a: Act) -> bool:
    """Whether `a` is new work."""
    return a.kind in WORK and (a.kind, a.key) not in g.seen


def work(g: Ledger, a: Act) -> Ledger:
    """The ledger after act `a`: a new act counts once; anything else changes nothing."""
    if not new(g, a):
        return g
    return Ledger(g.seen | {(a.kind, a.key)}, g.work + 1)


def rising(last: float | None, value: float) -> bool:
    """Whether a call's progress `value` is new work: strictly above the call's last value
    (None: its first). A notification that repeats or goes back is an event, not work, so
    a server that sends the same progress forever cannot keep a looping child alive. Not
    a number is never new."""
    if value != value:  # NaN
        return False
    return last is None or value > last


def token(g: Ledger, children: int, jobs: int) -> int:
    """The progress token: the work, its unsettled children's tokens and its kernel jobs'
    output bytes (each never decreasing, so the token moves exactly when one does)."""
    return g.work + (children if children > 0 else 0) + (jobs if jobs > 0 else 0)
