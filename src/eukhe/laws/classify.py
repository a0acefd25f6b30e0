"""The laws of classification (H4.1, H4.5, H4.7, H4.8) over `rules.classify`: every
failure kind is one H4 input whatever else the reply holds; calls are calls, rebuilt
calls too; text answers; no text and no call never answers. Each is a law of one step
over every reply (`Seen`: its failure's kind, and eight flags), proven by CrossHair for
each failure kind; the walk flips one flag or sets the failure at a time."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import classify as c
from eukhe.rules import recovery
from eukhe.rules import run as run_rule
from eukhe.rules.classify import NOTED, Failure, Read, Seen
from eukhe.rules.recovery import Out
from eukhe.rules.states import replace


@dataclass(frozen=True)
class Model:
    classify: Callable[[Seen], Read]


MODEL = Model(c.classify)


@dataclass(frozen=True)
class CCfg:
    """Nothing to bound: a reply is all the rule reads."""


@dataclass(frozen=True)
class Flip:
    """One change of the reply: flip flag `i` (0..7), or set the failure (8 and on)."""

    i: int


FLAGS = ("retryable", "calls", "like", "text", "rebuilt", "rebuilt_like", "leak", "length")
FAILURES = tuple(Failure)


def nxt(m: Model, cfg: CCfg, s: Seen, x: Flip) -> Seen:
    i = x.i % (len(FLAGS) + len(FAILURES))
    if i < len(FLAGS):
        flags = {name: bool(getattr(s, name)) for name in FLAGS}
        flags[FLAGS[i]] = not flags[FLAGS[i]]
        return Seen(s.failure, **flags)
    return replace(s, failure=FAILURES[i - len(FLAGS)])


def inputs(cfg: CCfg, s: Seen) -> list[Flip]:
    return [Flip(i) for i in range(len(FLAGS) + len(FAILURES))]


# ---------------------------------------------------------------- laws


def classify_one_input_a_failure(m: Model, cfg: CCfg, s: Seen, x: Flip) -> bool:
    """A failed reply is one H4 input its kind names, whatever else it holds: an overflow
    compacts; a rejection, a stall and a repetition cut are noted errors (retryable, never a
    retry spent); any other kind an error, retryable as the reply says."""
    if s.failure is Failure.NONE:
        return True
    got = m.classify(s).input
    bare = m.classify(Seen(s.failure, s.retryable)).input
    if got != bare:
        return False
    if s.failure is Failure.OVERFLOW:
        return got == run_rule.Input(run_rule.Kind.OVERFLOW)
    if s.failure in NOTED:
        return got == run_rule.Input(run_rule.Kind.ERROR, retryable=True, noted=True)
    return got == run_rule.Input(run_rule.Kind.ERROR, retryable=s.retryable)


def classify_calls_are_calls(m: Model, cfg: CCfg, s: Seen, x: Flip) -> bool:
    """A reply with tool calls is calls, whatever its text and stop reason (H4.1); calls the
    leak scan rebuilt from its text are calls too (H4.8), and the run takes them."""
    if s.failure is not Failure.NONE or not (s.calls or (s.text and s.rebuilt)):
        return True
    r = m.classify(s)
    if s.calls:
        return (
            (r.input.kind is run_rule.Kind.CALLS)
            & (r.reply == recovery.Reply(Out.CALLS, s.like))
            & (not r.rebuilt)
        )
    return (
        (r.input.kind is run_rule.Kind.CALLS)
        & (r.reply == recovery.Reply(Out.REBUILT, s.rebuilt_like))
        & r.rebuilt
    )


def classify_no_text_is_no_answer(m: Model, cfg: CCfg, s: Seen, x: Flip) -> bool:
    """A reply with no text and no call never answers (H4.7): a length stop reads as LENGTH
    (the length recovery), any other as a noted no-answer."""
    if s.failure is not Failure.NONE or s.calls or s.text:
        return True
    r = m.classify(s)
    return (r.input.kind is run_rule.Kind.NO_ANSWER) & (
        r.reply.out is (Out.LENGTH if s.length else Out.NOTED)
    )


def classify_text_answers(m: Model, cfg: CCfg, s: Seen, x: Flip) -> bool:
    """Text with no call and nothing rebuilt answers; markup the scan could not rebuild is an
    answer the recoveries read as a leak."""
    if s.failure is not Failure.NONE or s.calls or not s.text or s.rebuilt:
        return True
    r = m.classify(s)
    return (
        (r.input.kind is run_rule.Kind.ANSWER)
        & (r.reply.out is (Out.LEAK if s.leak else Out.ANSWER))
        & (r.leak == s.leak)
    )


def _law(name: str, rule: str, says: str, edge: Callable[..., bool]) -> Law:
    return Law(name, rule, says, edge=edge)


LAWS = (
    _law("classify_one_input_a_failure", "H4.5", "Every failure kind is one H4 input.",
         classify_one_input_a_failure),
    _law("classify_calls_are_calls", "H4.1", "Calls (or rebuilt calls) are calls, never an answer.",
         classify_calls_are_calls),
    _law("classify_no_text_is_no_answer", "H4.7", "No text and no call never answers.",
         classify_no_text_is_no_answer),
    _law("classify_text_answers", "H4.8", "Text with no call answers; an unrebuilt leak is read as one.",
         classify_text_answers),
)  # fmt: skip


# ---------------------------------------------------------------- breaks


def _stall_not_noted(s: Seen) -> Read:
    if s.failure is Failure.STALL:
        return Read(run_rule.Input(run_rule.Kind.ERROR, retryable=s.retryable), recovery.Reply(Out.OTHER))
    return c.classify(s)


def _overflow_resent(s: Seen) -> Read:
    if s.failure is Failure.OVERFLOW:
        return Read(run_rule.Input(run_rule.Kind.ERROR, retryable=True), recovery.Reply(Out.OTHER))
    return c.classify(s)


def _text_before_calls(s: Seen) -> Read:
    if s.failure is Failure.NONE and s.text and s.calls:
        return Read(run_rule.Input(run_rule.Kind.ANSWER), recovery.Reply(Out.ANSWER))
    return c.classify(s)


def _length_answers(s: Seen) -> Read:
    if s.failure is Failure.NONE and not s.calls and not s.text and s.length:
        return Read(run_rule.Input(run_rule.Kind.ANSWER), recovery.Reply(Out.ANSWER))
    return c.classify(s)


def _rebuilt_read_as_text(s: Seen) -> Read:
    return c.classify(replace(s, rebuilt=False))


def _calls_decide_a_failure(s: Seen) -> Read:
    """A failed reply that still carries calls is read as calls."""
    if s.failure is not Failure.NONE and s.calls:
        return Read(run_rule.Input(run_rule.Kind.CALLS), recovery.Reply(Out.CALLS, s.like))
    return c.classify(s)


MUTANTS = (
    Mutant("a stall retried without a note", "H4.5", Model(_stall_not_noted)),
    Mutant("an overflow resent as it is", "H4.5", Model(_overflow_resent)),
    Mutant("text that wins over the calls beside it", "H4.1", Model(_text_before_calls)),
    Mutant("a length stop with nothing taken as an answer", "H4.7", Model(_length_answers)),
    Mutant("rebuilt calls read as text", "H4.8", Model(_rebuilt_read_as_text)),
    Mutant("a failure with calls read as calls", "H4.5", Model(_calls_decide_a_failure)),
)


# ---------------------------------------------------------------- the area


def proof_cases() -> list[tuple[dict[str, Enum], dict[str, Enum]]]:
    return [({"failure": f}, {}) for f in Failure]


def cfgs() -> Iterator[CCfg]:
    yield CCfg()


AREA = Area(
    name="classify",
    model=MODEL,
    cfg_type=CCfg,
    state_type=Seen,
    input_type=Flip,
    proof_cases=proof_cases,
    valid=lambda cfg, s: True,
    cfg_valid=lambda cfg: True,
    start=lambda m, cfg: Seen(),
    next=nxt,
    inputs=inputs,
    cfgs=cfgs,
    bounds=f"every failure kind, {len(FLAGS)} flags, from a bare reply",
    depth=9,
    sample_cfg=lambda seed: CCfg(),
    laws=LAWS,
    mutants=MUTANTS,
)
