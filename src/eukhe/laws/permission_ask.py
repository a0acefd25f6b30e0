"""The step law of an ask (issue 24), proven: however a pending ask ends (a person's
answer, its deadline, the run's abort), `rules.permission.settle` makes it a decision
that is never an ask again, and says which end it was. The ask's state is scalar (why
it asked, as an index; whether the mode is full access; whether the call writes a file
outside the workspace), so CrossHair proves it over every one, for each way it ends.

The walk of histories and the session around the ask are `laws.permission`'s."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import permission as p
from eukhe.rules.confine import Act, Place, Reach
from eukhe.rules.permission import Answer, Call, Cfg, Decision, Mode, Policy, Verdict, Why
from eukhe.rules.wait import End

ASK_WHYS = (
    Why.UNREADABLE,
    Why.ESCAPE,
    Why.ASK_RULE,
    Why.UNTRUSTED,
    Why.NO_SANDBOX,
    Why.READ_ONLY,
    Why.OUTSIDE_WORKSPACE,
    Why.HOOK_ASK,
)
"""Why the rule asks (`judge`'s asks; a guard's ask over what would run: its yes runs it where
the rules would have, outside the sandbox only in full access or for a write outside)."""

LEAVES = (Why.ESCAPE, Why.NO_SANDBOX, Why.READ_ONLY, Why.OUTSIDE_WORKSPACE)
"""The asks whose yes runs the call outside the sandbox."""


@dataclass(frozen=True)
class Model:
    settle: Callable[[Decision, Call, Cfg, End, Answer], Decision]


MODEL = Model(p.settle)


@dataclass(frozen=True)
class ACfg:
    """The ask a walk starts from (the proof ranges over every state at once)."""

    why: int
    full: bool
    writes_out: bool


@dataclass(frozen=True)
class Asking:
    """A pending ask: why (an index into ASK_WHYS), full access, a file written outside the
    workspace by a file tool; `done`: its decision's verdict once it ended (ASK: pending)."""

    why: int
    full: bool
    writes_out: bool
    done: Verdict = Verdict.ASK
    ended: Why = Why.SANDBOXED


@dataclass(frozen=True)
class Ended:
    end: End
    answer: Answer


def _parts(a: Asking) -> tuple[Decision, Call, Cfg]:
    why = ASK_WHYS[a.why % len(ASK_WHYS)]
    where = Place.OUTSIDE if a.writes_out else Place.WORKSPACE
    call = Call("write", paths=("/x",), writes=True, reaches=(Reach(Act.WRITE, where, "/x"),))
    cfg = Cfg(Mode.FULL if a.full else Mode.WORKSPACE_WRITE, Policy.ON_REQUEST, True, True)
    return Decision(Verdict.ASK, why), call, cfg


def nxt(m: Model, cfg: ACfg, a: Asking, x: Ended) -> Asking:
    if a.done is not Verdict.ASK or x.end is End.LIVE:
        return a
    asked, call, c = _parts(a)
    d = m.settle(asked, call, c, x.end, x.answer)
    return Asking(a.why, a.full, a.writes_out, d.verdict, d.why)


def perm_ask_settles(m: Model, cfg: ACfg, a: Asking, x: Ended) -> bool:
    """A pending ask ends with a decision, never an ask: its deadline a denial naming the
    timeout, the abort a denial, a no a denial, a yes the call run (outside the sandbox only
    when it had to leave it, or the user's mode is full access)."""
    if a.done is not Verdict.ASK or x.end is End.LIVE:
        return True
    asked, call, c = _parts(a)
    d = m.settle(asked, call, c, x.end, x.answer)
    if x.end is End.DEADLINE:
        return (d.verdict is Verdict.DENY) & (d.why is Why.TIMEOUT)
    if x.end is End.CANCEL:
        return (d.verdict is Verdict.DENY) & (d.why is Why.ABORTED)
    if x.answer is Answer.NO:
        return (d.verdict is Verdict.DENY) & (d.why is Why.REFUSED)
    out = (asked.why in LEAVES) | a.full | a.writes_out
    return (d.why is Why.ANSWERED) & (d.verdict is (Verdict.OUTSIDE if out else Verdict.ALLOW))


LAWS = (
    Law(
        "perm_ask_settles",
        "permission",
        "A pending ask ends as a decision, never an ask: deadline, abort or no deny; a yes runs it.",
        edge=perm_ask_settles,
        scope=lambda s, x: s["done"] is Verdict.ASK and x["end"] is not End.LIVE,
    ),
)


def _no_deadline(asked: Decision, call: Call, cfg: Cfg, end: End, answer: Answer) -> Decision:
    return asked if end is End.DEADLINE else p.settle(asked, call, cfg, end, answer)


def _no_runs(asked: Decision, call: Call, cfg: Cfg, end: End, answer: Answer) -> Decision:
    return p.settle(asked, call, cfg, end, Answer.ONCE if answer is Answer.NO else answer)


def _escape_stays_inside(asked: Decision, call: Call, cfg: Cfg, end: End, answer: Answer) -> Decision:
    d = p.settle(asked, call, cfg, end, answer)
    return Decision(Verdict.ALLOW, d.why, d.rule) if d.verdict is Verdict.OUTSIDE else d


def _abort_runs(asked: Decision, call: Call, cfg: Cfg, end: End, answer: Answer) -> Decision:
    return p.settle(asked, call, cfg, End.EVENT if end is End.CANCEL else end, Answer.ONCE)


MUTANTS = (
    Mutant("an ask whose deadline leaves it asking", "permission", Model(_no_deadline)),
    Mutant("a no that runs the call", "permission", Model(_no_runs)),
    Mutant("a yes to leave the sandbox that stays inside", "permission", Model(_escape_stays_inside)),
    Mutant("an abort taken for a yes", "permission", Model(_abort_runs)),
)


def proof_cases() -> list[tuple[dict[str, Enum], dict[str, Enum]]]:
    return [
        ({"done": v, "ended": Why.SANDBOXED}, {"end": e, "answer": a})
        for v in (Verdict.ASK,)
        for e in End
        for a in Answer
    ]


def cfgs() -> Iterator[ACfg]:
    for why, full, out in itertools.product(range(len(ASK_WHYS)), (False, True), (False, True)):
        yield ACfg(why, full, out)


def _inputs(cfg: ACfg, a: Asking) -> list[Ended]:
    return [Ended(e, ans) for e in End for ans in Answer]


AREA = Area(
    name="permission_ask",
    model=MODEL,
    cfg_type=ACfg,
    state_type=Asking,
    input_type=Ended,
    proof_cases=proof_cases,
    valid=lambda cfg, a: 0 <= a.why < len(ASK_WHYS),
    cfg_valid=lambda cfg: 0 <= cfg.why < len(ASK_WHYS),
    start=lambda m, cfg: Asking(cfg.why, cfg.full, cfg.writes_out),
    next=nxt,
    inputs=_inputs,
    cfgs=cfgs,
    bounds=f"{len(ASK_WHYS)} reasons to ask, full access or not, a write outside the workspace or not",
    depth=3,
    sample_cfg=lambda seed: ACfg(seed % len(ASK_WHYS), seed % 2 == 0, seed % 3 == 0),
    laws=LAWS,
    mutants=MUTANTS,
)
