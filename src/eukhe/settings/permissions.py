"""The permissions in force in a project: every rule with where it comes from, the
sandbox mode, the approval policy and the ask's deadline, as `rules.permission` reads
them (`InForce.cfg`), and as `/permissions` prints them (`permissions_in_force`).

The rules come from the user's settings (`Source.HOME`), the project's (`Source.PROJECT`:
its deny and ask rules anywhere, its allow rules only in a trusted folder, as
`settings.trust.SIDES` says), the command line (`Source.FLAG`) and the project's
approvals (`Source.APPROVED`, `settings.approvals`). Each file's lists are read on their
own and put together, never merged: a project's `permissions.deny` adds to the user's,
it cannot replace them. They are listed deny, then ask, then allow; the rule itself
reads deny before ask before allow, so the order within a kind only decides which rule
is named.

The mode, the policy and plan mode: a flag (`--sandbox`, `--approval`, `--permission-mode`:
the user's own, it may widen), else the settings in effect (a project narrows them anywhere,
widens them only where trusted: `Side.NARROW`), else the default. Every ask has a deadline,
`permissions.askTimeoutMs` (never 0), and it ends before a subagent's stall
(`subagentStallMs`), so a child's ask is answered or denied before its parent gives up
on it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from eukhe.home import home
from eukhe.json_types import JsonMapping, JsonValue
from eukhe.rules.child import stall_ms
from eukhe.rules.permission import Cfg, Kind, Mode, Policy, Rule, Source
from eukhe.settings.approvals import approvals, approvals_path
from eukhe.settings.keys import APPROVAL_POLICIES, BY_NAME, PERMISSION_MODES, RULE_KEYS, SANDBOX_MODES
from eukhe.settings.load import SettingsError, Taken, at_path, has_path, project_file, project_layer, read
from eukhe.settings.rule_syntax import EXAMPLE, parse, path_globs
from eukhe.settings.trust import notice

FLAG = "command line"
DEFAULT = "default"
"""Where a value no file sets comes from."""

KINDS = {"permissions.deny": Kind.DENY, "permissions.ask": Kind.ASK, "permissions.allow": Kind.ALLOW}
CHOICES = {"--sandbox": SANDBOX_MODES, "--approval": APPROVAL_POLICIES, "--permission-mode": PERMISSION_MODES}
"""The flags' values, narrowest first."""


@dataclass(frozen=True)
class Written:
    """A rule as written, where it is written, and the model's rules it reads as (a path
    rule reads as a few globs: `rule_syntax.path_globs`)."""

    kind: Kind
    text: str
    source: Source
    where: str  # the file, or "command line"
    rules: tuple[Rule, ...]


@dataclass(frozen=True)
class InForce:
    """The permissions in force, each value with where it came from; `held`: the
    notices of the permission keys the project's file holds back here."""

    written: tuple[Written, ...]
    mode: Mode
    mode_from: str
    policy: Policy
    policy_from: str
    ask_timeout_ms: int
    timeout_from: str
    held: tuple[str, ...] = ()
    plan: bool = False  # plan mode (`permissions.defaultMode` "plan", `--permission-mode plan`)
    plan_from: str = DEFAULT

    @property
    def rules(self) -> tuple[Rule, ...]:
        return tuple(r for w in self.written for r in w.rules)

    def cfg(self, person: bool, sandbox: bool) -> Cfg:
        """The rule's configuration: `person`, a person can answer an ask; `sandbox`, the
        sandbox can run here; danger-full-access from the command line opens the user's
        secret places (`rules.confine`), from a settings file it does not."""
        full = self.mode is Mode.FULL and self.mode_from == FLAG
        return Cfg(self.mode, self.policy, person, sandbox, self.rules, flag_full=full, plan=self.plan)


def choice(option: str, value: str) -> str:
    """A `--sandbox`, `--approval` or `--permission-mode` value, checked."""
    values = CHOICES[option]
    if value not in values:
        want = ", ".join(f'"{v}"' for v in values)
        raise SettingsError(f"{option} {value!r} on the command line: expected one of {want}")
    return value


def shown(rule: Rule) -> str:
    """A model's rule in Claude Code's syntax (an absolute path with `//`)."""
    if rule.pattern is None:
        return rule.tool
    pattern = rule.pattern.replace("(", "\\(").replace(")", "\\)")
    absolute = rule.tool != "Bash" and pattern.startswith("/")
    return f"{rule.tool}(/{pattern})" if absolute else f"{rule.tool}({pattern})"


@dataclass(frozen=True)
class _Anchors:
    """The folders a path rule's anchors stand for, resolved: `/path` (`root`), a bare
    `path` (`cwd`), `~/path` (`user_home`)."""

    root: str
    cwd: str
    user_home: str


def _read(text: str, kind: Kind, source: Source, where: str, key: str, at: _Anchors) -> Written:
    got = parse(text)
    if isinstance(got, str):
        raise SettingsError(f"setting {key}={text!r} in {where}: expected a rule {EXAMPLE}; {got}")
    if got.spec is None:
        patterns: tuple[str | None, ...] = (None,)
    elif got.tool in ("Read", "Edit"):
        patterns = path_globs(got.spec, at.root, at.cwd, at.user_home)
    else:
        patterns = (got.spec,)
    rules = tuple(Rule(kind, got.tool, p, source) for p in patterns)
    return Written(kind, text.strip(), source, where, rules)


def _layer(data: JsonMapping, source: Source, where: Path, at: _Anchors) -> dict[Kind, list[Written]]:
    out: dict[Kind, list[Written]] = {k: [] for k in Kind}
    for key in RULE_KEYS:
        path = tuple(key.split("."))
        if has_path(data, path):
            for text in at_path(data, path):
                out[KINDS[key]].append(_read(text, KINDS[key], source, str(where), key, at))
    return out


def _pick(key: str, layers: Sequence[tuple[str, JsonMapping]]) -> tuple[JsonValue, str]:
    """The key's value in the last layer that sets it, and that layer's name."""
    path = tuple(key.split("."))
    for where, data in reversed(layers):
        if has_path(data, path):
            return at_path(data, path), where
    return BY_NAME[key].default, DEFAULT


def in_force(
    project: Path,
    env: Mapping[str, str] | None = None,
    sandbox: str | None = None,
    approval: str | None = None,
    flags: Mapping[Kind, Sequence[str]] | None = None,
    permission_mode: str | None = None,
    taken: Taken | None = None,
) -> InForce:
    """The permissions in force in `project` (the working folder), with `--sandbox`,
    `--approval`, `--permission-mode` (a face's mode change too) and rules given on the
    command line (`flags`); `taken`: the run's configuration (None: the files as they are
    now). A malformed rule, flag, deadline or approvals file is a SettingsError naming it
    and where it is."""
    env = os.environ if env is None else env
    taken = Taken.take(project, env) if taken is None else taken
    here, eukhe_home = os.path.realpath(project), home(env)
    user_home = os.path.realpath(env.get("HOME") or Path.home())
    user_file, their_file = eukhe_home / "settings.json", project_file(project)
    user = read(user_file, taken)
    layer, said = project_layer(project, env, taken)
    by_kind: dict[Kind, list[Written]] = {k: [] for k in Kind}
    for data, source, where, root in (
        (user, Source.HOME, user_file, os.path.realpath(eukhe_home)),  # `/path`: where its file is
        (layer, Source.PROJECT, their_file, here),  # a project's `/path`: under the project
    ):
        for kind, ws in _layer(data, source, where, _Anchors(root, here, user_home)).items():
            by_kind[kind] += ws
    at_flag = _Anchors(here, here, user_home)
    for kind, texts in (flags or {}).items():
        by_kind[kind] += [_read(t, kind, Source.FLAG, FLAG, f"--{kind.value}", at_flag) for t in texts]
    kept = str(approvals_path(eukhe_home))
    for r in approvals(eukhe_home, project):
        by_kind[Kind.ALLOW].append(Written(Kind.ALLOW, shown(r), r.source, kept, (r,)))

    layers = [(str(user_file), user), (str(their_file), layer)]
    mode, mode_from = (choice("--sandbox", sandbox), FLAG) if sandbox else _pick("sandbox.mode", layers)
    policy, policy_from = (
        (choice("--approval", approval), FLAG) if approval else _pick("permissions.approval", layers)
    )
    planning, plan_from = (
        (choice("--permission-mode", permission_mode), FLAG)
        if permission_mode
        else _pick("permissions.defaultMode", layers)
    )
    timeout, timeout_from = _pick("permissions.askTimeoutMs", layers)
    stall, stall_from = _pick("subagentStallMs", layers)
    if timeout_from == DEFAULT and timeout >= stall_ms(stall):
        timeout = max(stall_ms(stall) // 2, 1)  # unset: the default gives way to a short stall, half of it
    if timeout >= stall_ms(stall):
        raise SettingsError(
            f"setting permissions.askTimeoutMs={timeout} in {timeout_from}: expected less than "
            f"subagentStallMs={stall_ms(stall)} ({stall_from}), so a subagent's ask ends before the "
            "subagent is taken as stalled; lower permissions.askTimeoutMs or raise subagentStallMs"
        )
    held = tuple(
        notice(their_file, h, project)
        for h in said.held
        if h.key.startswith("permissions.") or h.key == "sandbox.mode"
    )
    written = (*by_kind[Kind.DENY], *by_kind[Kind.ASK], *by_kind[Kind.ALLOW])
    return InForce(
        written,
        Mode(mode),
        mode_from,
        Policy(policy),
        policy_from,
        timeout,
        timeout_from,
        held,
        plan=planning == "plan",
        plan_from=plan_from,
    )


def permissions_in_force(
    project: Path,
    env: Mapping[str, str] | None = None,
    sandbox: str | None = None,
    approval: str | None = None,
) -> list[str]:
    """What `/permissions` prints: the mode, the policy, plan mode when on, the ask's deadline, then every
    rule (deny, ask, allow) with where it comes from, then what the project holds back."""
    p = in_force(project, env, sandbox, approval)
    out = [
        f"sandbox mode: {p.mode.value} ({p.mode_from})",
        f"approval policy: {p.policy.value} ({p.policy_from})",
        *(
            [f"plan mode: on ({p.plan_from}); nothing writes or runs until you approve a plan"]
            if p.plan
            else []
        ),
        f"ask timeout: {p.ask_timeout_ms} ms ({p.timeout_from}); an ask nobody answers is then denied",
    ]
    width = min(max((len(w.text) for w in p.written), default=0), 48)
    for w in p.written:
        out.append(f"{w.kind.value:<5}  {w.text.ljust(width)}  {w.source.value}: {w.where}")
    if not p.written:
        out.append("no rules: each call is decided by the mode and the policy")
    return out + [f"held back: {line}" for line in p.held]
