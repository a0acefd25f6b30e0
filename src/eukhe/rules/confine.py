"""Confine: where a tool may reach. One boundary for every tool: the file tools, the search
tools, the instruction files a run reads, and what bash may write; decided on the object a
tool opens, never on a name checked earlier.

**The place** (`place`). Every path a tool would touch is read as the class of the object,
resolved (links followed, `..` taken): a kernel pseudo-file (`/proc`, `/sys`, `/dev`), and
among `/proc` a process's own folder (`/proc/<pid>/`, `self`, `thread-self`: its memory,
its environment, its open files), eukhe's home, one of the user's secret places
(`SECRET_PLACES` in their home, `SYSTEM_SECRETS`), inside the workspace (or a folder the
sandbox lets a call write), or outside. Besides its place, a path may hold a protected
name, at any depth, whether it exists or not, compared as a folding filesystem compares
names (`rules.registry`, which declares what eukhe and git load): eukhe's configuration
(`.eukhe/`, `.mcp.json`), git's (`.git`), and what eukhe or git loads and runs as code
(`.claude/`, `.husky/`, and the folders a run's settings and git name: `Where.code`).

**The decision** (`decide`): what a tool does there (read, list, search, write, create,
delete, execute), against the mode and the rules in force. In order:
1. eukhe's home and a process's folder: denied, whatever the rules and the mode;
2. a deny rule that names the path (Read for what reads, Edit for what writes): denied;
3. a secret place: only the person's danger-full-access chosen on the command line, or
   an allow rule of the home's own settings that names that very place (a project's
   rules never can), opens it; else denied;
4. a kernel pseudo-file is never searched nor written;
5. eukhe's configuration (`.eukhe/`, `.mcp.json`) is never written; a `.git` is written
   only by a person's yes, asked each time; what eukhe or git loads as code (`.claude/`,
   git's hooks, a folder the settings name) by a person's yes, or an allow rule of their
   own (the home's settings, the command line) that names that very place;
6. inside the workspace: allowed (the permission rule then reads the mode and policy); the
   checkout of a subagent's parent, when it works in a worktree of its own (`Where.fenced`):
   read, and never written, whatever the mode and the rules (after 1-3);
7. outside: an allow rule that names it, or danger-full-access, allows; else a person
   is asked (headless: denied, naming the rule to add).

**At open time** (`opened`): the tool asks again on the object it actually opened. What
would ask then is touched only if it is the very object a person said yes to: nobody is
asked twice, and a link swapped after the ask leads nowhere.

Pure: standard library only, frozen data, total functions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from eukhe.rules import registry
from eukhe.rules.access import (
    Cfg,
    Decision,
    Kind,
    Mode,
    Rule,
    Source,
    Verdict,
    Why,
    literal_head,
    path_matches,
    rule_tool,
)
from eukhe.rules.states import Choice


class Act(Choice):
    READ = "read"
    LIST = "list"
    SEARCH = "search"
    WRITE = "write"
    CREATE = "create"
    DELETE = "delete"
    EXECUTE = "execute"


WRITES = frozenset({Act.WRITE, Act.CREATE, Act.DELETE})
"""The acts that change what is there (an Edit rule names them; a Read rule the rest)."""


class Place(Choice):
    WORKSPACE = "inside the workspace"
    PROTECTED = "a protected name inside the workspace (.git, .eukhe, .mcp.json, .claude, ...)"
    HOME = "eukhe's home"
    PROCESS = "a process's memory or environment (/proc/<pid>/)"
    SECRET = "one of the user's secret places"
    KERNEL = "a kernel pseudo-file (/proc, /sys, /dev)"
    FENCED = "the parent's checkout, read-only to a subagent in a worktree of its own"
    OUTSIDE = "outside the workspace"


class Name(Choice):
    """The protected name a path holds, wherever it is."""

    PLAIN = "plain"
    GIT = ".git"
    CODE = "what eukhe or git loads and runs as code"
    CONFIG = "eukhe's configuration"


def _name(top: str, guard: registry.Guard) -> Name:
    if guard is registry.Guard.NEVER:
        return Name.CONFIG
    return Name.GIT if top == ".git" else Name.CODE


PROTECTED: dict[str, Name] = {
    registry.fold(e.top): _name(e.top, registry.NAMES[registry.fold(e.top)])
    for e in registry.ENTRIES
    if registry.fold(e.top) in registry.NAMES
}
"""The protected names, folded (`rules.registry.NAMES`, from its entries): what runs later
outside any sandbox (a git hook, `core.fsmonitor`, a Claude Code hook, a husky hook), or
configures eukhe and its MCP servers (rules, mode, trust, servers)."""

RANK = {Name.PLAIN: 0, Name.CODE: 1, Name.GIT: 2, Name.CONFIG: 3}
"""Which protected name a path that holds several is read by: the strictest."""

SECRET_PLACES = (
    ".ssh",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".config/op",
    ".config/doctl",
    ".netrc",
    ".git-credentials",
    ".docker/config.json",
    ".kube",
    ".gnupg",
    ".password-store",
    ".pgpass",
    ".my.cnf",
    ".npmrc",
    ".pypirc",
    ".gem/credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".terraform.d/credentials.tfrc.json",
    ".vault-token",
    ".local/share/keyrings",
    ".codex/auth.json",
    ".claude/.credentials.json",
    ".config/anthropic",
    ".config/openai",
)
"""The user's secret places, in their home: keys, tokens and credentials of the tools they use."""

SYSTEM_SECRETS = ("/run/secrets", "/var/run/secrets", "/etc/shadow", "/etc/gshadow", "/etc/ssh")
"""Secret places outside any home: container secrets, the system's password hashes and host keys."""

KERNEL_PLACES = ("/proc", "/sys", "/dev")
KERNEL_HEADS = tuple(k + "/" for k in KERNEL_PLACES)
PROCESS_NAMES = frozenset({"self", "thread-self"})


@dataclass(frozen=True)
class Where:
    """The roots a path is placed against, each absolute and resolved: the `workspace`, the
    folders the sandbox lets a call write (`writable`), eukhe's `home`, the `user`'s home,
    eukhe's `own` files elsewhere: where a link of the home's, or a project's `.eukhe`
    or `.mcp.json` that is a link, leads (writing it by its own name changes the same file),
    and the `code` a run loads beyond the registry's names: the folders its settings and
    git name (`rules.registry.named_folders`, `hooks_folders`), and where a link of a
    protected name leads."""

    workspace: str
    home: str
    user: str
    writable: tuple[str, ...] = ()
    own: tuple[str, ...] = ()
    code: tuple[str, ...] = ()
    # a subagent in a worktree of its own: its parent's checkout, read and never written
    # (`fenced`), and its worktree, a folder of the home lent to it as its workspace (`lent`)
    fenced: tuple[str, ...] = ()
    lent: str = ""
    secrets: tuple[str, ...] = field(init=False, repr=False, compare=False)
    """The secret places' folders, made once (placing a path is on every file a tool opens)."""
    heads: tuple[str, ...] = field(init=False, repr=False, compare=False)
    """Each secret folder with its `/`: one `startswith` tells whether any holds a path."""

    def __post_init__(self) -> None:
        mine = tuple(join(self.user, s) for s in SECRET_PLACES) if self.user.startswith("/") else ()
        object.__setattr__(self, "secrets", (*mine, *SYSTEM_SECRETS))
        object.__setattr__(self, "heads", tuple(s.rstrip("/") + "/" for s in self.secrets))


@dataclass(frozen=True)
class Reach:
    """What a tool would do (`act`), to which object: its `place`, the protected `name` it
    holds, its absolute resolved `path`, and the `root` of its place that holds it (a secret
    place's folder: a rule must name that very place)."""

    act: Act
    place: Place
    path: str
    name: Name = Name.PLAIN
    root: str = ""


def under(path: str, root: str) -> bool:
    """Whether `path` is `root` or lies below it (both absolute, normalized)."""
    if not root or not path.startswith(root):
        return False
    return len(path) == len(root) or path[len(root)] == "/" or root.endswith("/")


def join(root: str, rel: str) -> str:
    return root.rstrip("/") + "/" + rel


def name_of(path: str, code: tuple[str, ...] = ()) -> Name:
    """The protected name `path` holds in any of its parts, folded (`rules.registry.fold`),
    or CODE when it lies under one of the `code` paths; the strictest when it holds several."""
    got = Name.CODE if any(under(path, c) for c in code) else Name.PLAIN
    for part in path.split("/"):
        if not part:
            continue
        name = PROTECTED.get(part) or PROTECTED.get(registry.fold(part))
        if name is not None and RANK[name] > RANK[got]:
            got = name
    return got


def place(path: str, where: Where) -> tuple[Place, str]:
    """The class of the absolute resolved `path`, and the root of that class that holds it.
    A path that is not absolute names no place anyone decided on: outside."""
    if not path.startswith("/"):
        return Place.OUTSIDE, ""
    if path.startswith(KERNEL_HEADS) or path in KERNEL_PLACES:
        parts = path.split("/")
        if parts[1] == "proc" and len(parts) > 2 and (parts[2].isdigit() or parts[2] in PROCESS_NAMES):
            return Place.PROCESS, "/proc/" + parts[2]
        return Place.KERNEL, "/" + parts[1]
    if under(path, where.home) and not (where.lent and under(path, where.lent)):
        return Place.HOME, where.home
    mine = next((o for o in where.own if under(path, o)), "")
    if mine:
        return Place.HOME, mine
    secret = secret_root(path, where)
    if secret:
        return Place.SECRET, secret
    inside = under(path, where.workspace) or any(under(path, w) for w in where.writable)
    if not inside:
        fence = next((f for f in where.fenced if under(path, f)), "")
        return (Place.FENCED, fence) if fence else (Place.OUTSIDE, "")
    name = name_of(path, where.code)
    if name is Name.PLAIN:
        return Place.WORKSPACE, where.workspace
    return Place.PROTECTED, protected_head(path, name, where.code)


def protected_head(path: str, name: Name, code: tuple[str, ...] = ()) -> str:
    """The protected place `path` lies in, for a rule that names that very place: the path up
    to its first part of the protected name it holds, or the `code` path that holds it."""
    head = ""
    for part in path.split("/")[1:]:
        head += "/" + part
        got = PROTECTED.get(part) or PROTECTED.get(registry.fold(part))
        if got is name:
            return head
    return next((c for c in code if under(path, c)), path)


def secret_root(path: str, where: Where) -> str:
    """The secret place that holds `path` ("" none)."""
    if not path.startswith(where.heads) and path not in where.secrets:
        return ""
    return next((s for s in where.secrets if under(path, s)), "")


def reach(act: Act, path: str, where: Where) -> Reach:
    """A tool's act on the absolute resolved `path`, placed."""
    p, root = place(path, where)
    return Reach(act, p, path, name_of(path, where.code), root)


# ---------------------------------------------------------------- the decision


def names(rule: Rule, act: Act, path: str) -> bool:
    """Whether a path rule names `path` for `act`: the one reading of a Read or Edit rule.
    An Edit rule names what writes; a Read rule that allows names what only reads, and one
    that denies or asks names every act there (what may not be read may not be written
    either); a bare `Read` or `Edit` names every path."""
    tool = rule_tool(rule.tool)
    if tool == "Edit":
        fits = act in WRITES
    elif tool == "Read":
        fits = rule.kind is not Kind.ALLOW or act not in WRITES
    else:
        return False
    return fits and (rule.pattern is None or path_matches(rule.pattern, path))


def _first(rules: tuple[Rule, ...], kind: Kind, act: Act, path: str) -> int:
    return next((i for i, r in enumerate(rules) if r.kind is kind and names(r, act, path)), -1)


def names_place(rule: Rule, root: str) -> bool:
    """Whether a rule names the place `root` itself: its pattern cannot reach beyond it
    (`Read(~/.ssh/config)`, `Read(~/.aws/**)`; never `Read(~/**)` nor a bare `Read`)."""
    return rule.pattern is not None and under(literal_head(rule.pattern).rstrip("/") or "/", root)


def decide(cfg: Cfg, r: Reach) -> Decision:
    """Where a tool may reach: allow, ask (a person), or deny with why (the module's order)."""
    if r.place is Place.HOME:
        return Decision(Verdict.DENY, Why.HOME)
    if r.place is Place.PROCESS:
        return Decision(Verdict.DENY, Why.PROCESS)
    i = _first(cfg.rules, Kind.DENY, r.act, r.path)
    if i >= 0:
        return Decision(Verdict.DENY, Why.DENY_RULE, i)
    if r.place is Place.SECRET:
        if cfg.flag_full and cfg.mode is Mode.FULL:
            return Decision(Verdict.ALLOW, Why.FULL_ACCESS)
        for i, rule in enumerate(cfg.rules):
            own = rule.kind is Kind.ALLOW and rule.source is Source.HOME
            if own and names(rule, r.act, r.path) and names_place(rule, r.root):
                return Decision(Verdict.ALLOW, Why.ALLOW_RULE, i)
        return Decision(Verdict.DENY, Why.SECRET)
    writes = r.act in WRITES
    if r.place is Place.FENCED:  # read as the workspace is; never written, whatever the mode
        return Decision(Verdict.DENY, Why.FENCED) if writes else Decision(Verdict.ALLOW, Why.READS)
    if r.place is Place.KERNEL and (writes or r.act is Act.SEARCH or r.act is Act.EXECUTE):
        return Decision(Verdict.DENY, Why.KERNEL)
    if writes and r.name is Name.CONFIG:
        return Decision(Verdict.DENY, Why.PROTECTED)
    if writes and r.name is Name.GIT:
        return Decision(Verdict.ASK, Why.GIT)
    if writes and r.name is Name.CODE:
        for i, rule in enumerate(cfg.rules):  # the person's own rule naming that very place
            own = rule.kind is Kind.ALLOW and rule.source in (Source.HOME, Source.FLAG)
            if own and names(rule, r.act, r.path) and names_place(rule, r.root):
                return Decision(Verdict.ALLOW, Why.ALLOW_RULE, i)
        return Decision(Verdict.ASK, Why.LOADED)
    if r.place in (Place.WORKSPACE, Place.PROTECTED):
        return Decision(Verdict.ALLOW, Why.INSIDE)
    i = _first(cfg.rules, Kind.ALLOW, r.act, r.path)
    if i >= 0:
        return Decision(Verdict.ALLOW, Why.ALLOW_RULE, i)
    if cfg.mode is Mode.FULL:
        return Decision(Verdict.ALLOW, Why.FULL_ACCESS)
    return Decision(Verdict.ASK, Why.OUTSIDE_WORKSPACE if writes else Why.OUTSIDE_READ)


Decide = Callable[[Cfg, Reach], Decision]


def approves(approved: tuple[str, ...], r: Reach) -> bool:
    """Whether a person's yes covers this reach: the very path they were asked about, or a
    folder a write they allowed must make on its way there."""
    if r.path in approved:
        return True
    return r.act is Act.CREATE and any(under(a, r.path) for a in approved)


def opened(cfg: Cfg, r: Reach, approved: tuple[str, ...], rule: Decide | None = None) -> Decision:
    """The decision on the object a tool has opened (`r`: placed by its real path), given
    the paths a person said yes to (`approved`). Nobody is asked now: what the rule would
    ask of is touched only when a person's yes covers it; else it is denied, with why.
    `rule`: the decision it asks (None: `decide`, looked up now)."""
    d = (rule or decide)(cfg, r)
    if d.verdict is not Verdict.ASK:
        return d
    if approves(approved, r):
        return Decision(Verdict.ALLOW, Why.ANSWERED, d.rule)
    return Decision(Verdict.DENY, d.why, d.rule)
