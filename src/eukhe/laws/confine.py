"""The laws of confinement (issue 40) over `rules.confine`, and over `rules.permission`
where it asks it: no read outside the workspace without a rule or a person; eukhe's home
and a process's memory never, the user's secret places only by their own rule naming
that very place or danger-full-access from the command line; no protected name written
without a person; and the decision made on the object a tool opened.

The adversary: every act on a vocabulary of paths, each labelled here with what it is
(the ground truth the laws read, written apart from the rule's own placing: a misplaced
path is caught as surely as a wrong decision), against rule sets that reach for each
place from the home and from a project, in every mode, with and without a person; and a
tool that opens, after its permit, any object of the vocabulary."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import confine as c
from eukhe.rules import permission as p
from eukhe.rules.access import Cfg, Decision, Kind, Mode, Policy, Rule, Source, Verdict, Why, literal_head
from eukhe.rules.confine import WRITES, Act, Name, Place, Reach, Where
from eukhe.rules.permission import Call
from eukhe.rules.registry import fold
from eukhe.rules.states import Choice, replace


@dataclass(frozen=True)
class Model:
    place: Callable[[str, Where], tuple[Place, str]]
    name_of: Callable[[str, tuple[str, ...]], Name]
    decide: Callable[[Cfg, Reach], Decision]
    opened: Callable[..., Decision]


MODEL = Model(c.place, c.name_of, c.decide, c.opened)


def cached(m: Model) -> Model:
    """The model as the walk runs it: a path placed once, a reach decided once a configuration
    (every law and every step asks the same few thousand)."""
    remember = functools.lru_cache(maxsize=1 << 16)
    return replace(m, place=remember(m.place), name_of=remember(m.name_of), decide=remember(m.decide))


WHERE = Where("/p", "/u/.eukhe", "/u", ("/w",), ("/o/cfg.json",), ("/p/tools/hooks",), ("/f",))
"""The workspace /p (and /w the sandbox may write), eukhe's home /u/.eukhe, the user's home /u,
/o/cfg.json, where a link of the home's leads, /p/tools/hooks, the folder git's
core.hooksPath names, and /f, the parent's checkout of a subagent in a worktree of its own."""


class Is(Choice):
    """What a path of the vocabulary is, as the laws know it."""

    INSIDE = "inside"
    GIT = "a .git inside"
    CODE = "what eukhe or git loads as code, inside"
    CONFIG = "eukhe's configuration inside"
    HOME = "eukhe's own"
    PROCESS = "a process's folder"
    SECRET = "a secret place"
    KERNEL = "a kernel pseudo-file"
    OUTSIDE = "outside"
    OUTSIDE_GIT = "a .git outside"
    OUTSIDE_CONFIG = "eukhe's configuration outside"
    OUTSIDE_CODE = "what eukhe loads as code, outside"
    FENCED = "the parent's checkout of a subagent in a worktree"


PATHS: tuple[tuple[str, Is, str], ...] = (
    ("/p/a.txt", Is.INSIDE, ""),
    ("/p", Is.INSIDE, ""),
    ("/w/out.log", Is.INSIDE, ""),
    ("/p/.gitignore", Is.INSIDE, ""),
    ("/p/.git/config", Is.GIT, ""),
    ("/p/.git", Is.GIT, ""),
    ("/p/sub/.git/hooks/pre-commit", Is.GIT, ""),
    ("/p/.eukhe/settings.json", Is.CONFIG, ""),
    ("/p/sub/.mcp.json", Is.CONFIG, ""),
    ("/p/.GIT/hooks/pre-commit", Is.GIT, ""),
    ("/p/.Eukhe/settings.json", Is.CONFIG, ""),
    ("/p/.mcp.j\u017fon", Is.CONFIG, ""),
    ("/p/\uff0egit/config", Is.GIT, ""),
    ("/p/.claude/settings.json", Is.CODE, "/p/.claude"),
    ("/p/.claude", Is.CODE, "/p/.claude"),
    ("/p/sub/.Claude/agents/planted.md", Is.CODE, "/p/sub/.Claude"),
    ("/p/.husky/pre-commit", Is.CODE, "/p/.husky"),
    ("/p/tools/hooks/pre-push", Is.CODE, "/p/tools/hooks"),
    ("/p/tools/hooks-old/x", Is.INSIDE, ""),
    ("/p/.github/workflows/ci.yml", Is.INSIDE, ""),
    ("/u/.eukhe/settings.json", Is.HOME, ""),
    ("/u/.eukhe", Is.HOME, ""),
    ("/o/cfg.json", Is.HOME, ""),
    ("/proc/self/environ", Is.PROCESS, ""),
    ("/proc/4242/mem", Is.PROCESS, ""),
    ("/proc/thread-self/fd/3", Is.PROCESS, ""),
    ("/u/.ssh/id_ed25519", Is.SECRET, "/u/.ssh"),
    ("/u/.aws/credentials", Is.SECRET, "/u/.aws"),
    ("/u/.config/gcloud/adc.json", Is.SECRET, "/u/.config/gcloud"),
    ("/run/secrets/db", Is.SECRET, "/run/secrets"),
    ("/proc/cpuinfo", Is.KERNEL, ""),
    ("/dev/zero", Is.KERNEL, ""),
    ("/sys/kernel/notes", Is.KERNEL, ""),
    ("/etc/hosts", Is.OUTSIDE, ""),
    ("/u/notes.txt", Is.OUTSIDE, ""),
    ("/u/.sshkeys.txt", Is.OUTSIDE, ""),
    ("/pp/a.txt", Is.OUTSIDE, ""),
    ("/q/.git/config", Is.OUTSIDE_GIT, ""),
    ("/q/.eukhe/settings.json", Is.OUTSIDE_CONFIG, ""),
    ("/q/.claude/settings.json", Is.OUTSIDE_CODE, ""),
    ("/f/a.txt", Is.FENCED, "/f"),
    ("/f/.git/HEAD", Is.FENCED, "/f"),
)
"""Each path, what it is, and for a secret place the place's own folder."""

H, P = Source.HOME, Source.PROJECT

RULES: tuple[tuple[Rule, ...], ...] = (
    (),
    (Rule(Kind.ALLOW, "Read", "/etc/**", H), Rule(Kind.ALLOW, "Edit", "/etc/**", P)),
    (Rule(Kind.ALLOW, "Read", "/u/.ssh/**", H), Rule(Kind.ALLOW, "Edit", "/u/.aws/credentials", H)),
    (Rule(Kind.ALLOW, "Read", "/u/.ssh/**", P), Rule(Kind.ALLOW, "Read", "/run/secrets/**", Source.SESSION)),
    (Rule(Kind.ALLOW, "Read", "/**", H), Rule(Kind.ALLOW, "Edit", "/**", H)),
    (Rule(Kind.ALLOW, "Read", None, H), Rule(Kind.ALLOW, "Edit", None, H)),
    (Rule(Kind.ALLOW, "Edit", "/p/**", H), Rule(Kind.ALLOW, "Edit", "/q/**", H)),
    (
        Rule(Kind.DENY, "Read", "/p/a.txt", H),
        Rule(Kind.ALLOW, "Read", "/u/.eukhe/**", H),
        Rule(Kind.ALLOW, "Read", "/proc/**", H),
        Rule(Kind.ALLOW, "Read", "/o/**", H),
    ),
    (Rule(Kind.ALLOW, "Read", "/u/**", H), Rule(Kind.ALLOW, "Read", "/u/.ssh*", H)),
    (
        Rule(Kind.ALLOW, "Edit", "/p/.claude/**", H),
        Rule(Kind.ALLOW, "Edit", "/p/tools/hooks/**", Source.FLAG),
        Rule(Kind.ALLOW, "Edit", "/p/.husky/**", P),
        Rule(Kind.ALLOW, "Edit", "/p/sub/.Claude/**", Source.APPROVED),
    ),
)
"""Rule sets that reach for each place: outside from the home and a project, a secret place named
by the home, by a project, by a person's session; broad and bare rules; rules for eukhe's own
places and /proc; a rule whose text starts like a secret place without naming it; rules that
name what eukhe loads as code, from the home and the command line, from a project and from a
person's approvals."""

READS = (Act.READ, Act.LIST, Act.SEARCH)
TOOL = {
    Act.READ: "read",
    Act.LIST: "ls",
    Act.SEARCH: "grep",
    Act.WRITE: "write",
    Act.CREATE: "write",
    Act.DELETE: "edit",
    Act.EXECUTE: "read",
}
"""The file tool that does each act, for the permission rule's call."""


@dataclass(frozen=True)
class CCfg:
    mode: Mode
    policy: Policy
    person: bool
    flag_full: bool
    rules: int  # which of RULES

    def cfg(self) -> Cfg:
        rules = RULES[self.rules % len(RULES)]
        return Cfg(self.mode, self.policy, self.person, True, rules, self.flag_full)


@dataclass(frozen=True)
class State:
    """The paths a person said yes to, this run."""

    approved: tuple[str, ...] = ()


class Op(Choice):
    PERMIT = "permit"  # the gate decides a call that reaches a place; an ask a person answers yes
    OPEN = "open"  # the tool opens an object (the one decided on, or another a link led to)


@dataclass(frozen=True)
class In:
    op: Op
    reach: int  # which of REACHES


REACHES: tuple[tuple[Act, int], ...] = tuple(itertools.product(Act, range(len(PATHS))))


def placed(m: Model, i: int) -> Reach:
    act, k = REACHES[i % len(REACHES)]
    path = PATHS[k][0]
    where, root = m.place(path, WHERE)
    return Reach(act, where, path, m.name_of(path, WHERE.code), root)


def truth(i: int) -> tuple[Act, str, Is, str]:
    act, k = REACHES[i % len(REACHES)]
    path, kind, root = PATHS[k]
    return act, path, kind, root


def call_of(r: Reach) -> Call:
    return Call(TOOL[r.act], paths=(r.path,), writes=r.act in WRITES, reaches=(r,))


def permitted(m: Model, cfg: Cfg, r: Reach) -> Decision:
    """The permission rule's decision on a file tool's call that reaches `r`, asking `m`'s rule."""
    return p.decide(cfg, call_of(r), m.decide)


def start(m: Model, cfg: CCfg) -> State:
    return State()


def nxt(m: Model, cfg: CCfg, s: State, x: In) -> State:
    if x.op is Op.OPEN:
        return s
    _, path, _, _, _, d = _decided(m, cfg, x.reach)
    if d.verdict is Verdict.ASK and path not in s.approved:  # a person says yes to the object asked about
        return State((*s.approved, path))
    return s


def inputs(cfg: CCfg, s: State) -> list[In]:
    return [In(op, i) for op in Op for i in range(len(REACHES))]


def valid(cfg: CCfg, s: State) -> bool:
    return len(set(s.approved)) == len(s.approved)


def cfg_valid(cfg: CCfg) -> bool:
    return 0 <= cfg.rules < len(RULES)


# ---------------------------------------------------------------- what the laws read


def _rule_allows(
    cfg: Cfg, act: Act, path: str, home_only: bool = False, place: str = "", flag: bool = False
) -> bool:
    """Whether an allow rule of the set names `path` for `act` (Read for what reads, Edit
    for what writes; a bare one names all), from the home when `home_only` (or the command
    line too, with `flag`), and naming the place `place` itself (its text cannot reach above
    it) when given."""
    tool = "Edit" if act in WRITES else "Read"
    mine = (Source.HOME, Source.FLAG) if flag else (Source.HOME,)
    for r in cfg.rules:
        if r.kind is not Kind.ALLOW or p.rule_tool(r.tool) != tool:
            continue
        if home_only and r.source not in mine:
            continue
        if r.pattern is None:
            if place:
                continue
            return True
        if not p.path_matches(r.pattern, path):
            continue
        head = literal_head(r.pattern).rstrip("/")
        if place and not (head == place or head.startswith(place + "/")):
            continue
        return True
    return False


def _runs(d: Decision) -> bool:
    return d.verdict in (Verdict.ALLOW, Verdict.OUTSIDE)


def _permit(m: Model, cfg: CCfg, x: In) -> tuple[Act, str, Is, str, Decision, Decision] | None:
    if x.op is not Op.PERMIT:
        return None
    return _decided(m, cfg, x.reach)


@functools.lru_cache(maxsize=1 << 16)
def _decided(m: Model, cfg: CCfg, reach: int) -> tuple[Act, str, Is, str, Decision, Decision]:
    """A reach's truth and its two decisions (the confine rule's, the permission rule's asking
    it), once a model and a configuration: the state (a person's earlier yeses) changes
    neither, and every law asks them on every state the walk reaches (most of its time)."""
    act, path, kind, root = truth(reach)
    r = placed(m, reach)
    return act, path, kind, root, m.decide(cfg.cfg(), r), permitted(m, cfg.cfg(), r)


# ---------------------------------------------------------------- laws


def confine_outside_asks(m: Model, cfg: CCfg, s: State, x: In) -> bool:
    """No read, list or search outside the workspace runs without a rule that names it,
    full access, or a person's yes (headless: denied, never left asking); a kernel
    pseudo-file is never searched."""
    got = _permit(m, cfg, x)
    if got is None:
        return True
    act, path, kind, _, placed_d, d = got
    if act not in READS or kind not in (Is.OUTSIDE, Is.KERNEL, Is.OUTSIDE_GIT, Is.OUTSIDE_CONFIG):
        return True
    full = cfg.mode is Mode.FULL
    if kind is Is.KERNEL and act is Act.SEARCH:
        return (placed_d.verdict is Verdict.DENY) & (d.verdict is Verdict.DENY)
    if _runs(d) and not (_rule_allows(cfg.cfg(), act, path) or full):
        return False
    return cfg.person or d.verdict is not Verdict.ASK


def confine_home_never(m: Model, cfg: CCfg, s: State, x: In) -> bool:
    """eukhe's home (and where its links lead) and a process's folder never reach a tool,
    whatever the rules and the mode; a secret place only by an allow rule of the home's own
    settings that names that very place, or danger-full-access from the command line."""
    got = _permit(m, cfg, x)
    if got is None:
        return True
    act, path, kind, root, placed_d, d = got
    if kind in (Is.HOME, Is.PROCESS):
        return (placed_d.verdict is Verdict.DENY) & (d.verdict is Verdict.DENY)
    if kind is not Is.SECRET:
        return True
    opened_by = (cfg.flag_full and cfg.mode is Mode.FULL) or _rule_allows(cfg.cfg(), act, path, True, root)
    if not opened_by:
        return (placed_d.verdict is Verdict.DENY) & (d.verdict is Verdict.DENY)
    return placed_d.verdict is Verdict.ALLOW


PROTECTED_KINDS = frozenset({Is.GIT, Is.CODE, Is.CONFIG, Is.OUTSIDE_GIT, Is.OUTSIDE_CONFIG, Is.OUTSIDE_CODE})


def confine_protected_never_written(m: Model, cfg: CCfg, s: State, x: In) -> bool:
    """No tool, bash included, writes, creates or deletes a protected name (a .git at any
    depth, .eukhe/, .mcp.json, and what eukhe or git loads as code: .claude/, .husky/, the
    folder git's hooks path names), existing or not, whatever its spelling, without a
    person: eukhe's configuration never; a .git only by a person's yes, asked each time
    whatever the rules; what is loaded as code by a person's yes, or by an allow rule of
    their own (the home's settings, the command line) that names that very place."""
    got = _permit(m, cfg, x)
    if got is None:
        return True
    act, path, kind, root, placed_d, d = got
    if act not in WRITES or kind not in PROTECTED_KINDS:
        return True
    bash = _bash_decided(m, cfg, x.reach)
    never = not _runs(d) and not _runs(bash) and not _runs(placed_d)
    if kind in (Is.CONFIG, Is.OUTSIDE_CONFIG):
        return never & (d.verdict is Verdict.DENY) & (bash.verdict is Verdict.DENY)
    if kind is Is.CODE and _rule_allows(cfg.cfg(), act, path, home_only=True, place=root, flag=True):
        return placed_d.verdict is Verdict.ALLOW
    if not cfg.person:
        return never & (d.verdict is Verdict.DENY)
    return never & (placed_d.verdict is Verdict.ASK)


@functools.lru_cache(maxsize=1 << 16)
def _bash_decided(m: Model, cfg: CCfg, reach: int) -> Decision:
    """The permission rule's decision on bash touching the reach's path, once a model and a
    configuration (as `_decided`)."""
    r = placed(m, reach)
    return p.decide(cfg.cfg(), Call("bash", (("touch", r.path),), writes=True, reaches=(r,)), m.decide)


def confine_names_as_folded(m: Model, cfg: CCfg, s: State, x: In) -> bool:
    """A path holds a protected name however a folding filesystem spells it (case, Unicode's
    case folding, compatibility forms, the code points HFS+ ignores, trailing dots), and
    whichever of eukhe's loaders or git's reads it (`rules.registry`): `.GIT`, `.Claude` and
    `.mcp.jſon` are protected as `.git`, `.claude` and `.mcp.json` are, and so is the folder
    git's hooks path names; a name that only starts like one (`.github`, `.claudeignore`,
    `hooks-old`) is plain."""
    if x.op is not Op.PERMIT:
        return True
    _, path, kind, _ = truth(x.reach)
    name = m.name_of(path, WHERE.code)
    want = {
        Is.GIT: Name.GIT,
        Is.OUTSIDE_GIT: Name.GIT,
        Is.CODE: Name.CODE,
        Is.OUTSIDE_CODE: Name.CODE,
        Is.CONFIG: Name.CONFIG,
        Is.OUTSIDE_CONFIG: Name.CONFIG,
        Is.INSIDE: Name.PLAIN,
    }.get(kind)
    return want is None or name is want


@functools.lru_cache(maxsize=1 << 16)
def _own(m: Model, cfg: CCfg, reach: int) -> tuple[Reach, Decision]:
    """A reach as the model places it and the confine rule's own decision on it, once a model
    and a configuration (as `_decided`)."""
    r = placed(m, reach)
    return r, c.decide(cfg.cfg(), r)


def confine_decides_what_it_opens(m: Model, cfg: CCfg, s: State, x: In) -> bool:
    """At open time the decision is made on the object opened: it is touched only when the
    rule allows that very object, or when it would ask and a person said yes to that very
    object; a link that led elsewhere since the permit leads nowhere."""
    if x.op is not Op.OPEN:
        return True
    r, own = _own(m, cfg, x.reach)  # the rule itself on this very object
    got = m.opened(cfg.cfg(), r, s.approved, m.decide)
    if own.verdict is Verdict.DENY:
        return got.verdict is Verdict.DENY
    if own.verdict is Verdict.ALLOW:
        return got.verdict is Verdict.ALLOW
    covered = r.path in s.approved or (r.act is Act.CREATE and any(c.under(a, r.path) for a in s.approved))
    return (got.verdict is Verdict.ALLOW) == covered and got.verdict is not Verdict.ASK


def confine_fenced_never_written(m: Model, cfg: CCfg, s: State, x: In) -> bool:
    """The checkout of a subagent's parent, when the subagent works in a git worktree of its
    own, is read as its workspace is (unless a deny rule names it) and never written, created
    or deleted in: by no tool, bash included, whatever the rules, the mode, and a person's yes."""
    got = _permit(m, cfg, x)
    if got is None:
        return True
    act, path, kind, _, placed_d, d = got
    if kind is not Is.FENCED:
        return True
    if act in WRITES:
        bash = _bash_decided(m, cfg, x.reach)
        return (
            (placed_d.verdict is Verdict.DENY) & (d.verdict is Verdict.DENY) & (bash.verdict is Verdict.DENY)
        )
    return (placed_d.verdict is Verdict.ALLOW) | any(
        r.kind is Kind.DENY and c.names(r, act, path) for r in cfg.cfg().rules
    )


def _law(name: str, says: str, edge: Callable[..., bool]) -> Law:
    return Law(name, "confine", says, edge=edge, prove=False)


LAWS = (
    _law(
        "confine_outside_asks",
        "No read, list or search outside the workspace without a rule, full access or a person.",
        confine_outside_asks,
    ),
    _law(
        "confine_home_never",
        "The home and /proc/<pid> never; secret places only by the home's own rule or the flag.",
        confine_home_never,
    ),
    _law(
        "confine_protected_never_written",
        "No protected name (.git, .eukhe, .mcp.json, .claude, git's hooks) is written without a person.",
        confine_protected_never_written,
    ),
    _law(
        "confine_names_as_folded",
        "A protected name is one however a folding filesystem spells it, and whoever loads it.",
        confine_names_as_folded,
    ),
    _law(
        "confine_fenced_never_written",
        "A subagent's parent checkout is read, never written: no tool, rule, mode or yes writes it.",
        confine_fenced_never_written,
    ),
    _law(
        "confine_decides_what_it_opens",
        "The decision is made on the object opened, not on a name checked earlier.",
        confine_decides_what_it_opens,
    ),
)


# ---------------------------------------------------------------- breaks


def _with(**parts: Callable[..., object]) -> Model:
    fields: dict[str, Callable[..., object]] = {
        "place": c.place,
        "name_of": c.name_of,
        "decide": c.decide,
        "opened": c.opened,
    }
    return Model(**{**fields, **parts})  # type: ignore[arg-type]


def _fenced_as_outside(path: str, where: Where) -> tuple[Place, str]:
    """The parent's checkout placed as any folder outside the workspace."""
    got, root = c.place(path, where)
    return (Place.OUTSIDE, "") if got is Place.FENCED else (got, root)


def _fenced_written_in_full_access(cfg: Cfg, r: Reach) -> Decision:
    d = c.decide(cfg, r)
    if r.place is Place.FENCED and cfg.mode is Mode.FULL:
        return Decision(Verdict.ALLOW, Why.FULL_ACCESS)
    return d


def _outside_read_free(cfg: Cfg, r: Reach) -> Decision:
    d = c.decide(cfg, r)
    if d.why is Why.OUTSIDE_READ:
        return Decision(Verdict.ALLOW, Why.READS)
    return d


def _kernel_searched(cfg: Cfg, r: Reach) -> Decision:
    if r.place is Place.KERNEL and r.act is Act.SEARCH:
        return c.decide(cfg, replace(r, act=Act.READ))
    return c.decide(cfg, r)


def _rules_open_the_home(cfg: Cfg, r: Reach) -> Decision:
    """Allow rules read before the home's never."""
    if r.place is Place.HOME and any(
        c.names(rule, r.act, r.path) and rule.kind is Kind.ALLOW for rule in cfg.rules
    ):
        return Decision(Verdict.ALLOW, Why.ALLOW_RULE)
    return c.decide(cfg, r)


def _process_as_kernel(path: str, where: Where) -> tuple[Place, str]:
    got, root = c.place(path, where)
    return (Place.KERNEL, "/proc") if got is Place.PROCESS else (got, root)


def _any_source(at: Callable[[Reach], bool]) -> c.Decide:
    """Every rule taken as the home's own where `at` holds: a project's rule opens it."""

    def decide(cfg: Cfg, r: Reach) -> Decision:
        if at(r):
            mine = tuple(replace(x, source=Source.HOME) for x in cfg.rules)
            return c.decide(replace(cfg, rules=mine), r)
        return c.decide(cfg, r)

    return decide


def _broad_rule(at: Callable[[Reach], bool]) -> c.Decide:
    """A rule taken as naming the place where `at` holds, however broad (`Read(/**)`)."""

    def decide(cfg: Cfg, r: Reach) -> Decision:
        return c.decide(cfg, replace(r, root="/") if at(r) else r)

    return decide


def _secret(r: Reach) -> bool:
    return r.place is Place.SECRET


def _code(r: Reach) -> bool:
    return r.name is Name.CODE


def _settings_full_opens_secrets(cfg: Cfg, r: Reach) -> Decision:
    return c.decide(replace(cfg, flag_full=True), r)


def _git_written_freely(cfg: Cfg, r: Reach) -> Decision:
    if r.name is Name.GIT:
        return c.decide(cfg, replace(r, name=Name.PLAIN))
    return c.decide(cfg, r)


def _only_the_top_name(path: str, code: tuple[str, ...] = ()) -> Name:
    """A protected name seen only at the top of the workspace: one deeper in the tree is plain."""
    parts = path.split("/")
    return c.PROTECTED.get(parts[2], Name.PLAIN) if len(parts) > 2 else Name.PLAIN


def _exact_names(path: str, code: tuple[str, ...] = ()) -> Name:
    """Names compared as they are spelled: `.GIT` or `.mcp.jſon` taken as plain."""
    names = [c.PROTECTED[part] for part in path.split("/") if part in c.PROTECTED]
    if any(c.under(path, x) for x in code):
        names.append(Name.CODE)
    return max(names, key=c.RANK.__getitem__, default=Name.PLAIN)


def _hand_list(path: str, code: tuple[str, ...] = ()) -> Name:
    """The protected names as a list someone wrote before hooks and agents came: `.claude`,
    `.husky` and the folders the settings and git name are plain."""
    old = {".git": Name.GIT, ".eukhe": Name.CONFIG, ".mcp.json": Name.CONFIG}
    names = [old[f] for f in (fold(part) for part in path.split("/")) if f in old]
    return max(names, key=c.RANK.__getitem__, default=Name.PLAIN)


def _code_folders_forgotten(path: str, code: tuple[str, ...] = ()) -> Name:
    return c.name_of(path)


def _code_written_freely(cfg: Cfg, r: Reach) -> Decision:
    if r.name is Name.CODE:
        return c.decide(cfg, replace(r, name=Name.PLAIN))
    return c.decide(cfg, r)


def _decided_earlier(cfg: Cfg, r: Reach, approved: tuple[str, ...], rule: c.Decide | None = None) -> Decision:
    """The name checked at permit time stands for whatever is opened: anything a person approved
    once, or that the workspace held, is touched."""
    if approved:
        return Decision(Verdict.ALLOW, Why.ANSWERED)
    return c.opened(cfg, r, approved, rule)


def _yes_covers_all(cfg: Cfg, r: Reach, approved: tuple[str, ...], rule: c.Decide | None = None) -> Decision:
    d = (rule or c.decide)(cfg, r)
    if d.verdict is Verdict.ASK and approved:
        return Decision(Verdict.ALLOW, Why.ANSWERED)
    return c.opened(cfg, r, approved, rule)


C = "confine"
MUTANTS = (
    Mutant("a read outside that runs unasked", C, _with(decide=_outside_read_free)),
    Mutant("a kernel pseudo-file searched", C, _with(decide=_kernel_searched)),
    Mutant("an allow rule that opens the home", C, _with(decide=_rules_open_the_home)),
    Mutant("a process's folder placed as a plain kernel file", C, _with(place=_process_as_kernel)),
    Mutant("a project's rule that opens a secret place", C, _with(decide=_any_source(_secret))),
    Mutant("a broad rule taken as naming a secret place", C, _with(decide=_broad_rule(_secret))),
    Mutant(
        "full access from settings opening secret places",
        "confine",
        _with(decide=_settings_full_opens_secrets),
    ),
    Mutant("a .git written without a person", C, _with(decide=_git_written_freely)),
    Mutant("a protected name deep in the tree read as plain", C, _with(name_of=_only_the_top_name)),
    Mutant("protected names compared as spelled, not as folded", C, _with(name_of=_exact_names)),
    Mutant("the protected names a hand-written list, not the registry", C, _with(name_of=_hand_list)),
    Mutant("the folders git and the settings name forgotten", C, _with(name_of=_code_folders_forgotten)),
    Mutant("what eukhe loads as code written without a person", C, _with(decide=_code_written_freely)),
    Mutant(
        "a project's or an approval's rule that opens what is loaded as code",
        C,
        _with(decide=_any_source(_code)),
    ),
    Mutant("a broad rule taken as naming what is loaded as code", C, _with(decide=_broad_rule(_code))),
    Mutant("the name decided at permit time standing for the object", C, _with(opened=_decided_earlier)),
    Mutant("a person's yes covering every later object", C, _with(opened=_yes_covers_all)),
    Mutant("a subagent's parent checkout placed as any folder outside", C, _with(place=_fenced_as_outside)),
    Mutant(
        "a subagent's parent checkout written in full access", C, _with(decide=_fenced_written_in_full_access)
    ),
)


# ---------------------------------------------------------------- the area


def proof_cases() -> list[tuple[dict[str, Enum], dict[str, Enum]]]:
    return [({}, {})]


def cfgs() -> Iterator[CCfg]:
    """Every mode, person, flag and rule set; the policy on-request (the others only turn what
    a call asks of into a denial or an ask for writes, which the samples draw)."""
    for mode, person, flag, rules in itertools.product(Mode, (True, False), (True, False), range(len(RULES))):
        if flag and mode is not Mode.FULL:
            continue  # the flag names the mode it chose
        yield CCfg(mode, Policy.ON_REQUEST, person, flag, rules)


def sample_cfg(seed: int) -> CCfg:
    modes, policies = list(Mode), list(Policy)
    mode = modes[seed % 3]
    return CCfg(
        mode,
        policies[(seed // 3) % 3],
        bool(seed & 16),
        bool(seed & 32) and mode is Mode.FULL,
        (seed // 64) % len(RULES),
    )


AREA = Area(
    name="confine",
    model=MODEL,
    cfg_type=CCfg,
    state_type=State,
    input_type=In,
    proof_cases=proof_cases,
    valid=valid,
    cfg_valid=cfg_valid,
    start=start,
    next=nxt,
    inputs=inputs,
    cfgs=cfgs,
    bounds=f"3 modes, a person or not, the full-access flag or not, {len(RULES)} rule sets, "
    f"{len(Act)} acts on {len(PATHS)} paths",
    depth=1,
    sample_cfg=sample_cfg,
    laws=LAWS,
    mutants=MUTANTS,
    cached=cached,
    samples=100,  # a decision of one step: the walk covers the vocabulary, the samples the policies
    sample_length=20,
)
