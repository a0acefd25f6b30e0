"""The laws of permission (issue 24) over `rules.permission`: deny before ask before
allow before the policy's default; a compound command allowed only part by part; every
ask ends, by an answer, its deadline or the run's abort; nobody to answer means no
wait; the model never widens its own rights; nothing runs outside the sandbox on the
model's say alone; a guard's ask asks a person, headless is denied, and nothing runs it
unasked.

The adversary: any call of a vocabulary (commands plain, wrapped, compound, unreadable,
asking to leave the sandbox; reads and writes inside and outside the workspace; eukhe's
own files; calls a PreToolUse hook asked about, which the rules would allow, run outside
the sandbox, or deny) against rule sets that agree and disagree, in every mode, policy,
with and without a person and a sandbox; a person's answers (once, always for the session or the
project, no), the deadline and the abort, in any order."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import permission as p
from eukhe.rules.confine import Act, Name, Place, Reach
from eukhe.rules.permission import (
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
    only_a_person: Callable[[Decision, Call], bool]


MODEL = Model(p.decide, p.call_step, p.end_step, p.settle, p.granted, p.only_a_person)


def cached(m: Model) -> Model:
    """The model as the walk runs it: a call decided once a configuration (every law and every
    step of the walk asks the same few hundred)."""
    return replace(m, decide=functools.lru_cache(maxsize=1 << 16)(m.decide))


H, P = Source.HOME, Source.PROJECT
GUARD = "chmod 777 is dangerous"

CALLS: tuple[Call, ...] = (
    Call("bash", (("ls", "-la"),)),
    Call("bash", (("npm", "test"),), writes=True),
    Call("bash", (("rm", "-rf", "/tmp/x"),), writes=True),
    Call("bash", (("env", "X=1", "rm", "-rf", "/tmp/x"),), writes=True),
    Call("bash", (("/bin/rm", "x"),), writes=True),
    Call("bash", (("npm", "test"), ("rm", "-rf", "/tmp/x")), writes=True),
    Call("bash", (("npm", "test"),), whole=False, writes=True),
    Call("bash", (("make",),), writes=True, outside=True),
    Call("bash", (("git", "push", "origin"),), writes=True),
    Call("bash", (("cat", ".env"),), paths=("/p/.env",)),
    Call("read", paths=("/p/a.txt",)),
    Call("read", paths=("/p/.env",)),
    Call("write", paths=("/p/a.txt",), writes=True),
    Call("write", paths=("/etc/x",), writes=True, reaches=(Reach(Act.WRITE, Place.OUTSIDE, "/etc/x"),)),
    Call(
        "edit",
        paths=("/p/.eukhe/settings.json",),
        writes=True,
        reaches=(Reach(Act.WRITE, Place.PROTECTED, "/p/.eukhe/settings.json", Name.CONFIG, "/p"),),
    ),
    Call("ipython", writes=True),
    Call("zoom"),
    Call("web_fetch", hosts=("evil.docs.python.org",)),
    # a PreToolUse hook asked: what bare Bash rules and the sandbox's default would run, what a
    # deny rule denies, what an Edit rule runs outside the sandbox
    Call("bash", (("chmod", "777", "x"),), writes=True, guard_asks=True, guard_reason=GUARD),
    Call("bash", (("rm", "-rf", "/tmp/x"),), writes=True, guard_asks=True, guard_reason=GUARD),
    Call(
        "write",
        paths=("/etc/x",),
        writes=True,
        reaches=(Reach(Act.WRITE, Place.OUTSIDE, "/etc/x"),),
        guard_asks=True,
        guard_reason=GUARD,
    ),
)
"""The calls the walk makes (a workspace /p)."""

RULES: tuple[tuple[Rule, ...], ...] = (
    (),
    (
        Rule(Kind.DENY, "Bash", "rm *", H),
        Rule(Kind.ALLOW, "Bash", "npm test", H),
        Rule(Kind.ALLOW, "WebFetch", "domain:docs.python.org", H),
    ),
    (Rule(Kind.ALLOW, "Bash", "rm *", H), Rule(Kind.DENY, "Bash", "rm *", P)),
    (
        Rule(Kind.ASK, "Bash", "git push:*", H),
        Rule(Kind.ALLOW, "Bash", None, H),
        Rule(Kind.DENY, "WebFetch", "domain:*.python.org", P),
        Rule(Kind.ALLOW, "WebFetch", None, H),
    ),
    (Rule(Kind.DENY, "Read", "/p/.env", H), Rule(Kind.ALLOW, "Read", "/p/**", H)),
    (
        Rule(Kind.ALLOW, "Write", "/etc/**", H),
        Rule(Kind.ALLOW, "Edit", "/p/**", P),
        Rule(Kind.ALLOW, "WebFetch", "domain:evil.docs.python.org", H),
    ),
    (Rule(Kind.ALLOW, "Bash", "npm test", P), Rule(Kind.ALLOW, "Bash", "make", H)),
    (
        Rule(Kind.ALLOW, "Bash", None, H),
        Rule(Kind.DENY, "Bash", "rm:*", H),
        Rule(Kind.ALLOW, "IPython", None, H),
    ),
)
"""Rule sets that agree and disagree (a deny after an allow; an ask beside a bare allow)."""

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
    sandbox: bool
    rules: int  # which of RULES

    def cfg(self) -> Cfg:
        return Cfg(self.mode, self.policy, self.person, self.sandbox, RULES[self.rules % len(RULES)])


class Op(Choice):
    CALL = "call"
    END = "end"


@dataclass(frozen=True)
class In:
    op: Op
    call: int = 0  # which of CALLS
    end: int = 0  # which of ENDS


def start(m: Model, cfg: PCfg) -> PermissionState:
    return PermissionState(cfg.cfg())


def nxt(m: Model, cfg: PCfg, s: PermissionState, x: In) -> PermissionState:
    if x.op is Op.CALL:
        return m.call_step(s, CALLS[x.call % len(CALLS)], m.decide)
    end, answer = ENDS[x.end % len(ENDS)]
    return m.end_step(s, end, answer, m.settle, m.granted)


def inputs(cfg: PCfg, s: PermissionState) -> list[In]:
    if s.pending is not None:
        return [In(Op.END, end=i) for i in range(len(ENDS))] + [In(Op.CALL, call=0)]
    return [In(Op.CALL, call=i) for i in range(len(CALLS))]


def cfg_valid(cfg: PCfg) -> bool:
    return 0 <= cfg.rules < len(RULES)


def valid(cfg: PCfg, s: PermissionState) -> bool:
    return (s.pending is None) == (s.asked is None)


# ---------------------------------------------------------------- what the laws read


Part = tuple[tuple[str, ...] | None, str | None, str | None]
"""One part of a call: a simple command's words, a path, or a host."""


def _parts(call: Call) -> list[Part]:
    return (
        [(w, None, None) for w in call.commands]
        + [(None, x, None) for x in call.paths]
        + [(None, None, h) for h in call.hosts]
    )


def _allow_parts(call: Call) -> list[Part]:
    """What allow rules must each cover: a command's simple commands (the files it names
    are for deny and ask rules), a file tool's paths, a fetch's host."""
    paths = call.paths if call.tool != "bash" else ()
    return (
        [(w, None, None) for w in call.commands]
        + [(None, x, None) for x in paths]
        + [(None, None, h) for h in call.hosts]
    )


def _domain(rule: Rule, host: str) -> bool:
    """A WebFetch rule's host as the issue states it: the host exactly, or with `*.` a name
    below it (never the name itself, never a name that only ends with the same letters)."""
    spec = (rule.pattern or "").removeprefix("domain:")
    if rule.tool != "WebFetch" or spec == rule.pattern:
        return False
    if spec.startswith("*."):
        return host.endswith("." + spec[2:])
    return host == spec


def _part_matches(rule: Rule, call: Call, part: Part, forms: bool) -> bool:
    w, path, host = part
    if w is not None:
        return any(p.matches(rule, call, f, None) for f in (p.forms(w) if forms else [p.final(w)]) if f)
    if path is not None:
        return p.matches(rule, call, None, path)
    return host is not None and call.tool == "web_fetch" and _domain(rule, host)


def _hit(rule: Rule, call: Call) -> bool:
    """Whether a rule matches some part of the call (a command in any form, a path, a host)."""
    if rule.pattern is None:
        return p.matches(rule, call, None, None)
    return any(_part_matches(rule, call, part, True) for part in _parts(call))


def _kinds(cfg: Cfg, call: Call) -> set[Kind]:
    return {r.kind for r in cfg.rules if _hit(r, call)}


def _decided(m: Model, s: PermissionState, x: In) -> tuple[Call, Decision] | None:
    """A call the session decides now (none pending), and the decision."""
    if x.op is not Op.CALL or s.pending is not None:
        return None
    call = CALLS[x.call % len(CALLS)]
    return call, m.decide(s.cfg, call)


# ---------------------------------------------------------------- laws


def perm_deny_wins(m: Model, cfg: PCfg, s: PermissionState, x: In) -> bool:
    """A protected call or a matching deny rule denies, whatever allows or asks; an ask rule
    that matches never lets a call run; a call runs only if no deny or ask rule matches."""
    got = _decided(m, s, x)
    if got is None:
        return True
    call, d = got
    kinds = _kinds(s.cfg, call)
    if call.protected or Kind.DENY in kinds:
        return d.verdict is Verdict.DENY
    if Kind.ASK in kinds:
        return d.verdict in (Verdict.ASK, Verdict.DENY)
    return True


def perm_every_part(m: Model, cfg: PCfg, s: PermissionState, x: In) -> bool:
    """A call that allow rules let run has every part allowed (each simple command as it
    finally runs, each path); a command the parser could not read whole never runs unasked."""
    got = _decided(m, s, x)
    if got is None:
        return True
    call, d = got
    if d.verdict not in (Verdict.ALLOW, Verdict.OUTSIDE):
        return True
    if not call.whole:
        return False
    if d.why is not Why.ALLOW_RULE:
        return True
    allows = [r for r in s.cfg.rules if r.kind is Kind.ALLOW]
    if any(r.pattern is None and p.matches(r, call, None, None) for r in allows):
        return True
    return all(
        any(_part_matches(r, call, part, False) for r in allows) for part in _allow_parts(call)
    ) and bool(_allow_parts(call))


def perm_ask_ends(m: Model, cfg: PCfg, s: PermissionState, x: In) -> bool:
    """An ask ends exactly once: its answer, its deadline (a denial that names the timeout)
    or the run's abort end it, and what it ends with is never an ask again."""
    if x.op is not Op.END or s.pending is None:
        return True
    end, answer = ENDS[x.end % len(ENDS)]
    t = nxt(m, cfg, s, x)
    if t.pending is not None or t.last is None or t.last.verdict is Verdict.ASK:
        return False
    if end is End.DEADLINE:
        return (t.last.verdict is Verdict.DENY) & (t.last.why is Why.TIMEOUT)
    if end is End.CANCEL:
        return (t.last.verdict is Verdict.DENY) & (t.last.why is Why.ABORTED)
    return (t.last.verdict is Verdict.DENY) == (answer is Answer.NO)


def perm_headless_never_waits(m: Model, cfg: PCfg, s: PermissionState, x: In) -> bool:
    """With no person to answer (or the never policy), a call is never left asking: what
    would ask is a denial at once, whose cause says how to allow it."""
    got = _decided(m, s, x)
    if got is None or (cfg.person and cfg.policy is not Policy.NEVER):
        return True
    d = got[1]
    if d.verdict is Verdict.ASK:
        return False
    t = nxt(m, cfg, s, x)
    return (t.pending is None) & (d.why not in (Why.UNREADABLE, Why.ESCAPE, Why.ASK_RULE, Why.UNTRUSTED))


def perm_model_cannot_widen(m: Model, cfg: PCfg, s: PermissionState, x: In) -> bool:
    """No tool call changes the rules, the mode or the policy (only a person's answer adds a
    rule), and a call that touches eukhe's own files is denied in every mode."""
    if x.op is not Op.CALL:
        return True
    t = nxt(m, cfg, s, x)
    call = CALLS[x.call % len(CALLS)]
    same = t.cfg == s.cfg
    if call.protected and s.pending is None:
        return same & (t.last is not None) & (t.last.verdict is Verdict.DENY if t.last else False)
    return same


def perm_escape_needs_a_person(m: Model, cfg: PCfg, s: PermissionState, x: In) -> bool:
    """A call runs outside the sandbox only after a person's answer, or by a rule the user
    wrote (full access, or an allow rule for a write outside the workspace): never on the
    model's say alone (a call that asks to leave the sandbox always asks)."""
    t = nxt(m, cfg, s, x)
    if t == s or t.last is None or t.last.verdict is not Verdict.OUTSIDE:
        return True  # nothing happened, or nothing runs outside
    if x.op is Op.END:
        end, answer = ENDS[x.end % len(ENDS)]
        return (end is End.EVENT) & (answer is not Answer.NO)
    call = CALLS[x.call % len(CALLS)]
    if s.cfg.mode is Mode.FULL:
        return True
    ruled = t.last.rule >= 0  # rules come from the user's settings and a person's answers (see above)
    return ruled & (t.last.why is Why.ALLOW_RULE) & (call.tool in p.FILE_TOOLS) & (not call.outside)


def perm_fetch_asks(m: Model, cfg: PCfg, s: PermissionState, x: In) -> bool:
    """A web fetch runs unasked only by an allow rule for its host (or every host), or in
    full access: in the sandbox's modes it asks, for the sandbox keeps the network from bash
    too, and a person's "always" keeps a rule for that host alone."""
    got = _decided(m, s, x)
    if got is None or got[0].tool != "web_fetch":
        return True
    call, d = got
    ruled = any(r.kind is Kind.ALLOW and (r.pattern is None or _hit(r, call)) and r.tool == "WebFetch"
                for r in s.cfg.rules)  # fmt: skip
    if d.verdict in (Verdict.ALLOW, Verdict.OUTSIDE) and not (ruled or s.cfg.mode is Mode.FULL):
        return False
    kept = m.granted(call, Answer.SESSION)
    return kept == tuple(Rule(Kind.ALLOW, "WebFetch", f"domain:{h}", Source.SESSION) for h in call.hosts)


def perm_guard_asks(m: Model, cfg: PCfg, s: PermissionState, x: In) -> bool:
    """A guard's ask (a PreToolUse hook answered `ask`) asks a person: what the rules would
    run (an allow rule, the policy's default, any mode, full access too) asks for the hook,
    and what they ask stays their ask; where nobody can answer (headless, the `never`
    policy) it is a denial that names the hook; a denial of the rules stays that denial. No
    hook answers it for the person, and their "always" to it keeps no rule."""
    if x.op is Op.END:
        if s.pending is None or not s.pending.guard_asks:
            return True
        return nxt(m, cfg, s, x).cfg.rules == s.cfg.rules
    got = _decided(m, s, x)
    if got is None or not got[0].guard_asks:
        return True
    call, d = got
    base = m.decide(s.cfg, replace(call, guard_asks=False, guard_reason=""))
    if base.verdict is Verdict.DENY and base.why not in (Why.HEADLESS, Why.NEVER):
        return d == base
    if not s.cfg.person or s.cfg.policy is Policy.NEVER:
        return (d.verdict is Verdict.DENY) & (d.why is Why.HOOK_UNASKED)
    t = nxt(m, cfg, s, x)
    asked = (t.pending == call) & (t.asked == d) & m.only_a_person(d, call)
    if base.verdict is Verdict.ASK:
        return asked & (d == base)
    return asked & (d == Decision(Verdict.ASK, Why.HOOK_ASK))


def _law(name: str, says: str, edge: Callable[..., bool]) -> Law:
    return Law(name, "permission", says, edge=edge, prove=False)


LAWS = (
    _law("perm_deny_wins", "Deny before ask before allow before the policy's default.", perm_deny_wins),
    _law(
        "perm_every_part",
        "A compound command runs only if every part is allowed; an unreadable one asks.",
        perm_every_part,
    ),
    _law(
        "perm_ask_ends",
        "Every ask ends exactly once: an answer, its deadline (a denial), or the abort.",
        perm_ask_ends,
    ),
    _law(
        "perm_headless_never_waits",
        "No person to answer: an ask is a denial at once, with how to allow it.",
        perm_headless_never_waits,
    ),
    _law(
        "perm_model_cannot_widen",
        "No tool call changes the rules, the mode, the policy or the trust.",
        perm_model_cannot_widen,
    ),
    _law(
        "perm_escape_needs_a_person",
        "Outside the sandbox only by a person's answer or the user's own rule.",
        perm_escape_needs_a_person,
    ),
    _law(
        "perm_fetch_asks",
        "A web fetch asks unless a rule allows its host (or full access); always: that host.",
        perm_fetch_asks,
    ),
    _law(
        "perm_guard_asks",
        "A guard's ask asks a person; headless it is denied; nothing runs it unasked; always keeps no rule.",
        perm_guard_asks,
    ),
)


# ---------------------------------------------------------------- breaks


def _with(**parts: Callable[..., object]) -> Model:
    fields: dict[str, Callable[..., object]] = {
        "decide": p.decide,
        "call_step": p.call_step,
        "end_step": p.end_step,
        "settle": p.settle,
        "granted": p.granted,
        "only_a_person": p.only_a_person,
    }
    return Model(**{**fields, **parts})  # type: ignore[arg-type]


def _allow_before_deny(cfg: Cfg, call: Call) -> Decision:
    """Allow rules read before deny rules: an allowed command that a deny rule names runs."""
    i = p._all_allowed(cfg.rules, call)
    if i >= 0 and not call.protected:
        return Decision(Verdict.ALLOW, Why.ALLOW_RULE, i)
    return p.decide(cfg, call)


def _one_part_allows(cfg: Cfg, call: Call) -> Decision:
    """One allowed part allows the whole compound command."""
    d = p.decide(cfg, call)
    if d.verdict is Verdict.DENY or len(call.commands) < 2:
        return d
    for i, r in enumerate(cfg.rules):
        if r.kind is Kind.ALLOW and any(p.matches(r, call, p.final(w), None) for w in call.commands if w):
            return Decision(Verdict.ALLOW, Why.ALLOW_RULE, i)
    return d


def _unreadable_allowed(cfg: Cfg, call: Call) -> Decision:
    return p.decide(cfg, replace(call, whole=True))


def _headless_asks(cfg: Cfg, call: Call) -> Decision:
    """An ask nobody can answer is left asking (it waits for nobody)."""
    return p.judge(cfg, call) if cfg.policy is not Policy.NEVER else p.decide(cfg, call)


def _escape_by_rule(cfg: Cfg, call: Call) -> Decision:
    """A bare allow rule lets a call that asks to leave the sandbox run outside it."""
    if call.outside and any(
        r.kind is Kind.ALLOW and r.pattern is None and r.tool == "Bash" for r in cfg.rules
    ):
        return Decision(Verdict.OUTSIDE, Why.ALLOW_RULE, 0)
    return p.decide(cfg, call)


def _protected_in_full_access(cfg: Cfg, call: Call) -> Decision:
    if call.protected and cfg.mode is Mode.FULL:
        return Decision(Verdict.OUTSIDE, Why.FULL_ACCESS)
    return p.decide(cfg, call)


def _no_deadline(asked: Decision, call: Call, cfg: Cfg, end: End, answer: Answer) -> Decision:
    """An ask whose deadline passes is still an ask."""
    if end is End.DEADLINE:
        return asked
    return p.settle(asked, call, cfg, end, answer)


def _call_edits_rules(
    s: PermissionState, call: Call, rule: Callable[[Cfg, Call], Decision] = p.decide
) -> PermissionState:
    """A write to a settings file adds what it writes: the call widens its own rights."""
    t = p.call_step(s, call, rule)
    if call.protected:
        cfg = s.cfg
        return PermissionState(replace(cfg, mode=Mode.FULL), t.pending, t.asked, t.last)
    return t


def _timeout_is_a_yes(asked: Decision, call: Call, cfg: Cfg, end: End, answer: Answer) -> Decision:
    if end is End.DEADLINE:
        return p.settle(asked, call, cfg, End.EVENT, Answer.ONCE)
    return p.settle(asked, call, cfg, end, answer)


def _fetch_sandboxed(cfg: Cfg, call: Call) -> Decision:
    """A web fetch taken as a read that runs in the sandbox, unasked."""
    d = p.decide(cfg, call)
    if call.tool == "web_fetch" and d.why in (Why.NETWORK, Why.HEADLESS, Why.NEVER):
        return Decision(Verdict.ALLOW, Why.READS)
    return d


def _suffix_domain(cfg: Cfg, call: Call) -> Decision:
    """A domain rule that matches every host ending in its name (`evil.docs.python.org`)."""
    d = p.decide(cfg, call)
    if call.tool != "web_fetch" or d.verdict is Verdict.DENY:
        return d
    for i, r in enumerate(cfg.rules):
        spec = (r.pattern or "").removeprefix("domain:")
        if r.kind is Kind.ALLOW and r.tool == "WebFetch" and all(h.endswith(spec) for h in call.hosts):
            return Decision(Verdict.ALLOW, Why.ALLOW_RULE, i)
    return d


def _every_host_granted(call: Call, answer: Answer) -> tuple[Rule, ...]:
    """A person's "always" for one fetch kept as a rule for every host."""
    if call.tool == "web_fetch" and answer in (Answer.SESSION, Answer.PROJECT):
        return (Rule(Kind.ALLOW, "WebFetch", None, Source.SESSION),)
    return p.granted(call, answer)


def _unguarded(call: Call) -> Call:
    return replace(call, guard_asks=False, guard_reason="")


def _guard_ignored(cfg: Cfg, call: Call) -> Decision:
    """A PreToolUse hook's ask ignored: only its deny changes anything (issue 51's finding)."""
    return p.decide(cfg, _unguarded(call))


def _allow_rule_over_guard(cfg: Cfg, call: Call) -> Decision:
    """An allow rule that matches runs the call, whatever the guard asked."""
    d = p.decide(cfg, call)
    i = p._all_allowed(cfg.rules, call)
    if call.guard_asks and i >= 0 and d.why in (Why.HOOK_ASK, Why.HOOK_UNASKED):
        return Decision(Verdict.ALLOW, Why.ALLOW_RULE, i)
    return d


def _full_access_over_guard(cfg: Cfg, call: Call) -> Decision:
    """danger-full-access (Claude Code's bypassPermissions) runs what a guard asked about."""
    return p.decide(cfg, _unguarded(call) if cfg.mode is Mode.FULL else call)


def _guard_over_deny(cfg: Cfg, call: Call) -> Decision:
    """A guard's ask asks where a deny rule denies (a yes would run what the user denied)."""
    if call.guard_asks and cfg.person and cfg.policy is not Policy.NEVER:
        return Decision(Verdict.ASK, Why.HOOK_ASK)
    return p.decide(cfg, call)


def _headless_guard_unnamed(cfg: Cfg, call: Call) -> Decision:
    """Headless, a guard's ask left to the rules: what they allow runs, what they ask is denied
    without naming the hook (the model is told to add an allow rule, which would not help)."""
    if not cfg.person or cfg.policy is Policy.NEVER:
        return p.decide(cfg, _unguarded(call))
    return p.decide(cfg, call)


def _always_silences_guard(call: Call, answer: Answer) -> tuple[Rule, ...]:
    """A person's "always" to a guard's ask kept as an allow rule."""
    return p.granted(_unguarded(call), answer)


def _hook_answers_guard(asked: Decision, call: Call) -> bool:
    """A PermissionRequest hook may answer a guard's ask for the person (only a plan is theirs)."""
    return asked.why is Why.PLAN_EXIT


MUTANTS = (
    Mutant("deny losing to allow", "permission", _with(decide=_allow_before_deny)),
    Mutant("one allowed part allowing a compound command", "permission", _with(decide=_one_part_allows)),
    Mutant("an unreadable command read as whole", "permission", _with(decide=_unreadable_allowed)),
    Mutant("an ask with no deadline", "permission", _with(settle=_no_deadline)),
    Mutant("a headless ask that waits", "permission", _with(decide=_headless_asks)),
    Mutant("a tool call that edits the rules", "permission", _with(call_step=_call_edits_rules)),
    Mutant("an escape allowed by a rule, no person asked", "permission", _with(decide=_escape_by_rule)),
    Mutant("eukhe's own files open in full access", "permission", _with(decide=_protected_in_full_access)),
    Mutant("a timeout taken for a yes", "permission", _with(settle=_timeout_is_a_yes)),
    Mutant("a web fetch run unasked in the sandbox's modes", "permission", _with(decide=_fetch_sandboxed)),
    Mutant("a domain rule matching any host that ends with it", "permission", _with(decide=_suffix_domain)),
    Mutant(
        "a person's always for one host kept for every host", "permission", _with(granted=_every_host_granted)
    ),
    Mutant("a guard's ask ignored", "permission", _with(decide=_guard_ignored)),
    Mutant("an allow rule over a guard's ask", "permission", _with(decide=_allow_rule_over_guard)),
    Mutant("danger-full-access over a guard's ask", "permission", _with(decide=_full_access_over_guard)),
    Mutant("a guard's ask over a deny rule", "permission", _with(decide=_guard_over_deny)),
    Mutant("a headless guard's ask left to the rules", "permission", _with(decide=_headless_guard_unnamed)),
    Mutant("an always to a guard's ask kept as a rule", "permission", _with(granted=_always_silences_guard)),
    Mutant(
        "a PermissionRequest hook answering a guard's ask",
        "permission",
        _with(only_a_person=_hook_answers_guard),
    ),
)


# ---------------------------------------------------------------- the area


def proof_cases() -> list[tuple[dict[str, Enum], dict[str, Enum]]]:
    return [({}, {})]


def cfgs() -> Iterator[PCfg]:
    for mode, policy, person, sandbox, rules in itertools.product(Mode, Policy, (True, False), (True, False),
                                                                  range(len(RULES))):  # fmt: skip
        yield PCfg(mode, policy, person, sandbox, rules)


def sample_cfg(seed: int) -> PCfg:
    modes, policies = list(Mode), list(Policy)
    return PCfg(
        modes[seed % 3],
        policies[(seed // 3) % 3],
        bool(seed & 16),
        bool(seed & 32),
        (seed // 64) % len(RULES),
    )


AREA = Area(
    name="permission",
    model=MODEL,
    cfg_type=PCfg,
    state_type=PermissionState,
    input_type=In,
    proof_cases=proof_cases,
    valid=valid,
    cfg_valid=cfg_valid,
    start=start,
    next=nxt,
    inputs=inputs,
    cfgs=cfgs,
    bounds=f"3 modes, 3 policies, a person or not, a sandbox or not, {len(RULES)} rule sets, "
    f"{len(CALLS)} calls",
    depth=3,
    sample_cfg=sample_cfg,
    laws=LAWS,
    mutants=MUTANTS,
    cached=cached,
)
