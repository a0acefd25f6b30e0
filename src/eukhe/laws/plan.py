"""The laws of plan mode (issue 44) over `rules.permission`: in plan mode nothing that
writes or runs code runs, whatever the rules, the policy and the sandbox mode say; the
plan's `exit_plan` always asks a person (where nobody can answer, the run ends with the
plan as its answer); only a person's yes to it, or their own mode change, leaves plan mode,
and a mode change never widens the sandbox mode, the policy or the rules.

The adversary: calls that write, run code or only look like reads (`ls` in bash, an MCP
tool, the kernel), reads, a subagent's spawn and `exit_plan`, against rule sets that allow
everything (the plan's tool too), in every sandbox mode and policy, with and without a
person; a person's answers, the deadline and the abort, and mode changes, in any order."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import permission as p
from eukhe.rules.confine import Act, Place, Reach
from eukhe.rules.permission import (
    EXIT_PLAN,
    Answer,
    Call,
    Cfg,
    Decision,
    Kind,
    Mode,
    PermissionState,
    Policy,
    Rule,
    Source,
    Verdict,
    Why,
)
from eukhe.rules.states import Choice, replace
from eukhe.rules.wait import End


@dataclass(frozen=True)
class Model:
    decide: Callable[[Cfg, Call], Decision]
    call_step: Callable[[PermissionState, Call, Callable[[Cfg, Call], Decision]], PermissionState]
    end_step: Callable[..., PermissionState]
    settle: Callable[[Decision, Call, Cfg, End, Answer], Decision]
    granted: Callable[[Call, Answer], tuple[Rule, ...]]
    mode_step: Callable[[PermissionState, bool], PermissionState]


MODEL = Model(p.decide, p.call_step, p.end_step, p.settle, p.granted, p.mode_step)


def cached(m: Model) -> Model:
    return replace(m, decide=functools.lru_cache(maxsize=1 << 14)(m.decide))


H = Source.HOME


def _in(act: Act, path: str, place: Place = Place.WORKSPACE) -> Reach:
    return Reach(act, place, path)


CALLS: tuple[Call, ...] = (
    Call("write", paths=("/p/a.txt",), writes=True, reaches=(_in(Act.WRITE, "/p/a.txt"),)),
    Call("edit", paths=("/etc/x",), writes=True, reaches=(_in(Act.WRITE, "/etc/x", Place.OUTSIDE),)),
    Call("bash", (("ls", "-la"),)),  # looks read-only: it runs all the same
    Call("bash", (("npm", "test"),), writes=True),
    Call("bash", (("make",),), writes=True, outside=True),
    Call("ipython", writes=True),
    Call("mcp__fs__write_file", writes=True),
    Call("mcp__fs__read_file"),  # its server says it only reads
    Call("read", paths=("/p/a.txt",), reaches=(_in(Act.READ, "/p/a.txt"),)),
    Call("grep", paths=("/p",), reaches=(_in(Act.SEARCH, "/p"),)),
    Call("spawn"),  # its child runs in plan mode too (the runtime's `Children`)
    Call(EXIT_PLAN),
)
"""The calls the walk makes (a workspace /p)."""

RULES: tuple[tuple[Rule, ...], ...] = (
    (),
    tuple(
        Rule(Kind.ALLOW, tool, None, H) for tool in ("Bash", "Edit", "IPython", "mcp__fs", "Read", EXIT_PLAN)
    ),
    (Rule(Kind.ALLOW, "Bash", "ls -la", H), Rule(Kind.ALLOW, "Edit", "/p/**", H)),
    (Rule(Kind.ASK, "Edit", "/p/**", H), Rule(Kind.ASK, "Read", "/p/**", H)),
)
"""Rule sets that allow everything (the plan's tool too), a little, or ask."""

ENDS: tuple[tuple[End, Answer], ...] = (
    *((End.EVENT, a) for a in Answer),
    (End.DEADLINE, Answer.NO),
    (End.CANCEL, Answer.NO),
)


@dataclass(frozen=True)
class PCfg:
    mode: Mode
    policy: Policy
    person: bool
    rules: int  # which of RULES
    plan: bool = True  # plan mode at the start (off: a person turns it on while a call asks)

    def cfg(self) -> Cfg:
        return Cfg(self.mode, self.policy, self.person, True, RULES[self.rules % len(RULES)], plan=self.plan)


class Op(Choice):
    CALL = "call"
    END = "end"
    MODE = "mode"  # a person turns plan mode on or off


@dataclass(frozen=True)
class In:
    op: Op
    call: int = 0  # which of CALLS
    end: int = 0  # which of ENDS
    plan: bool = True  # MODE: plan mode on or off


def start(m: Model, cfg: PCfg) -> PermissionState:
    return PermissionState(cfg.cfg())


def nxt(m: Model, cfg: PCfg, s: PermissionState, x: In) -> PermissionState:
    if x.op is Op.CALL:
        return m.call_step(s, CALLS[x.call % len(CALLS)], m.decide)
    if x.op is Op.MODE:
        return m.mode_step(s, x.plan)
    end, answer = ENDS[x.end % len(ENDS)]
    return m.end_step(s, end, answer, m.settle, m.granted)


def inputs(cfg: PCfg, s: PermissionState) -> list[In]:
    modes = [In(Op.MODE, plan=not s.cfg.plan)]
    if s.pending is not None:
        return [In(Op.END, end=i) for i in range(len(ENDS))] + modes
    return [In(Op.CALL, call=i) for i in range(len(CALLS))] + modes


# ---------------------------------------------------------------- what the laws read


def writes_or_runs(call: Call) -> bool:
    """What plan mode keeps from running, as the law states it: a file written, code run
    (bash whatever its words, the kernel), a command that may write or leave the sandbox,
    an MCP tool whose server does not say it only reads."""
    return call.tool in ("write", "edit", "bash", "ipython") or call.writes or call.outside


def _runs(d: Decision | None) -> bool:
    return d is not None and d.verdict in (Verdict.ALLOW, Verdict.OUTSIDE)


def _pending(s: PermissionState, x: In) -> Call | None:
    return s.pending if x.op is Op.END else None


# ---------------------------------------------------------------- laws


def plan_mode_writes_nothing(m: Model, cfg: PCfg, s: PermissionState, x: In) -> bool:
    """In plan mode no call that writes or runs code runs, whatever the rules, the policy and
    the mode (its denial names plan mode), nor on a yes to an ask made before plan mode came
    on; a read is decided as it would be out of plan mode; `exit_plan` asks a person where
    one can answer, and else is not run and ends the run with the plan as its answer."""
    if x.op is Op.MODE or not s.cfg.plan:
        return True
    t = nxt(m, cfg, s, x)
    call = CALLS[x.call % len(CALLS)] if x.op is Op.CALL else _pending(s, x)
    if call is None or (x.op is Op.CALL and s.pending is not None):
        return True
    if x.op is Op.END:  # an ask ends in plan mode: what writes or runs still does not run
        return not (writes_or_runs(call) and _runs(t.last))
    d = m.decide(s.cfg, call)
    if call.tool == EXIT_PLAN:
        if cfg.person and cfg.policy is not Policy.NEVER:
            return (d.verdict is Verdict.ASK) & (d.why is Why.PLAN_EXIT) & (t.pending == call)
        return (d.verdict is Verdict.DENY) & p.answers_run(d) & (t.pending is None)
    if writes_or_runs(call):
        return (d.verdict is Verdict.DENY) & (d.why is Why.PLAN) & (t.pending is None)
    return d == m.decide(replace(s.cfg, plan=False), call)


def plan_mode_left_by_a_person(m: Model, cfg: PCfg, s: PermissionState, x: In) -> bool:
    """Only a person leaves plan mode: their yes to the plan (which adds no rule: the next
    plan is asked again) or their own mode change; no call, no no, deadline or abort does.
    A mode change turns plan mode on or off and nothing else: never a wider sandbox mode,
    policy or rule."""
    t = nxt(m, cfg, s, x)
    if x.op is Op.MODE:
        same = replace(t.cfg, plan=s.cfg.plan) == s.cfg
        return same & (t.cfg.plan == x.plan) & (t.pending == s.pending)
    if x.op is Op.CALL:
        return t.cfg.plan == s.cfg.plan
    call = s.pending
    if call is None or call.tool != EXIT_PLAN:
        return t.cfg.plan == s.cfg.plan
    end, answer = ENDS[x.end % len(ENDS)]
    yes = end is End.EVENT and answer is not Answer.NO
    return (t.cfg.plan == (s.cfg.plan and not yes)) & (t.cfg.rules == s.cfg.rules)


def _law(name: str, says: str, edge: Callable[..., bool]) -> Law:
    return Law(name, "permission", says, edge=edge, prove=False)


LAWS = (
    _law(
        "plan_mode_writes_nothing",
        "In plan mode nothing writes or runs code; exit_plan asks a person, else ends the run with the plan.",
        plan_mode_writes_nothing,
    ),
    _law(
        "plan_mode_left_by_a_person",
        "Only a person's yes to the plan, or their mode change, leaves plan mode; neither widens a right.",
        plan_mode_left_by_a_person,
    ),
)


# ---------------------------------------------------------------- breaks


def _with(**parts: Callable[..., object]) -> Model:
    return replace(MODEL, **parts)  # type: ignore[arg-type]


def _allow_rule_first(cfg: Cfg, call: Call) -> Decision:
    """An allow rule read before plan mode: `Edit` or `Bash` allowed lets a write through."""
    i = p._all_allowed(cfg.rules, call)
    if cfg.plan and i >= 0 and call.tool != EXIT_PLAN:
        return Decision(Verdict.ALLOW, Why.ALLOW_RULE, i)
    return p.decide(cfg, call)


def _read_only_bash(cfg: Cfg, call: Call) -> Decision:
    """A command that looks read-only (`ls`) taken as a read in plan mode."""
    if cfg.plan and call.tool == "bash" and not call.writes and all(p.read_only(w) for w in call.commands):
        return p.decide(replace(cfg, plan=False), call)
    return p.decide(cfg, call)


def _full_access_over_plan(cfg: Cfg, call: Call) -> Decision:
    if cfg.mode is Mode.FULL and call.tool != EXIT_PLAN:
        return p.decide(replace(cfg, plan=False), call)
    return p.decide(cfg, call)


def _mcp_in_plan(cfg: Cfg, call: Call) -> Decision:
    """An MCP tool judged as out of plan mode (its server's say-so of what it does ignored)."""
    if call.tool.startswith(p.MCP_PREFIX):
        return p.decide(replace(cfg, plan=False), call)
    return p.decide(cfg, call)


def _exit_by_rule(cfg: Cfg, call: Call) -> Decision:
    """An allow rule naming `exit_plan` lets it run unasked."""
    for i, r in enumerate(cfg.rules):
        if call.tool == EXIT_PLAN and r.kind is Kind.ALLOW and r.tool == EXIT_PLAN:
            return Decision(Verdict.ALLOW, Why.ALLOW_RULE, i)
    return p.decide(cfg, call)


def _exit_by_policy(cfg: Cfg, call: Call) -> Decision:
    """Nobody to answer, or the `never` policy: the plan runs unasked (its exit approved)."""
    d = p.decide(cfg, call)
    return Decision(Verdict.ALLOW, Why.SANDBOXED) if p.answers_run(d) else d


def _no_leaves_plan(
    s: PermissionState, end: End, answer: Answer, ended: p.Settle = p.settle, grant: p.Grant = p.granted
) -> PermissionState:
    t = p.end_step(s, end, answer, ended, grant)
    if s.pending is not None and s.pending.tool == EXIT_PLAN:
        return replace(t, cfg=replace(t.cfg, plan=False))
    return t


def _yes_asked_before(
    s: PermissionState, end: End, answer: Answer, ended: p.Settle = p.settle, grant: p.Grant = p.granted
) -> PermissionState:
    """A yes to a write asked before plan mode came on runs it."""
    if s.pending is None or s.asked is None or end is End.LIVE:
        return s
    t = p.end_step(replace(s, cfg=replace(s.cfg, plan=False)), end, answer, ended, grant)
    plan = s.cfg.plan and (s.pending.tool != EXIT_PLAN or t.last is None or t.last.verdict is Verdict.DENY)
    return replace(t, cfg=replace(t.cfg, plan=plan))


def _always_approves(call: Call, answer: Answer) -> tuple[Rule, ...]:
    """A yes, always, to a plan adds a rule: the next plan would be approved unasked."""
    if call.tool == EXIT_PLAN and answer in (Answer.SESSION, Answer.PROJECT):
        return (Rule(Kind.ALLOW, EXIT_PLAN, None, Source.SESSION),)
    return p.granted(call, answer)


def _key_opens_full_access(s: PermissionState, plan: bool) -> PermissionState:
    t = p.mode_step(s, plan)
    return t if plan else replace(t, cfg=replace(t.cfg, mode=Mode.FULL))


def _call_leaves_plan(
    s: PermissionState, call: Call, rule: Callable[[Cfg, Call], Decision] = p.decide
) -> PermissionState:
    """The plan's own call leaves plan mode, before any person has seen it."""
    t = p.call_step(s, call, rule)
    if call.tool == EXIT_PLAN:
        return replace(t, cfg=replace(t.cfg, plan=False))
    return t


MUTANTS = (
    Mutant(
        "an allow rule that lets a write through in plan mode", "permission", _with(decide=_allow_rule_first)
    ),
    Mutant("bash allowed in plan mode for looking read-only", "permission", _with(decide=_read_only_bash)),
    Mutant("danger-full-access over plan mode", "permission", _with(decide=_full_access_over_plan)),
    Mutant("an MCP tool that writes, run in plan mode", "permission", _with(decide=_mcp_in_plan)),
    Mutant("exit_plan allowed by a rule", "permission", _with(decide=_exit_by_rule)),
    Mutant("exit_plan allowed where nobody can answer", "permission", _with(decide=_exit_by_policy)),
    Mutant("a no to the plan that leaves plan mode", "permission", _with(end_step=_no_leaves_plan)),
    Mutant("a yes to a write asked before plan mode", "permission", _with(end_step=_yes_asked_before)),
    Mutant("an always to a plan that approves the next", "permission", _with(granted=_always_approves)),
    Mutant("a mode key that opens danger-full-access", "permission", _with(mode_step=_key_opens_full_access)),
    Mutant(
        "the plan's call that leaves plan mode by itself", "permission", _with(call_step=_call_leaves_plan)
    ),
)


# ---------------------------------------------------------------- the area


def cfgs() -> Iterator[PCfg]:
    b = (True, False)
    for mode, policy, person, rules, plan in itertools.product(Mode, Policy, b, range(len(RULES)), b):
        yield PCfg(mode, policy, person, rules, plan)


AREA = Area(
    name="plan",
    model=MODEL,
    cfg_type=PCfg,
    state_type=PermissionState,
    input_type=In,
    proof_cases=lambda: [({}, {})],
    valid=lambda cfg, s: (s.pending is None) == (s.asked is None),
    cfg_valid=lambda cfg: 0 <= cfg.rules < len(RULES),
    start=start,
    next=nxt,
    inputs=inputs,
    cfgs=cfgs,
    bounds=f"3 modes, 3 policies, a person or not, {len(RULES)} rule sets, {len(CALLS)} calls, "
    "plan mode on or off at the start, then turned on and off",
    depth=3,
    sample_cfg=lambda seed: PCfg(
        list(Mode)[seed % 3],
        list(Policy)[(seed // 3) % 3],
        bool(seed & 16),
        (seed // 32) % len(RULES),
        bool(seed & 256),
    ),
    laws=LAWS,
    mutants=MUTANTS,
    cached=cached,
)
