"""The words the permission rule and the confine rule both speak: the sandbox modes, the
user's rules (allow, ask, deny; Claude Code's syntax) and where each comes from, the
verdicts and their reasons, and the path globs a Read or Edit rule matches with.

`rules.confine` decides where a tool may reach; `rules.permission` decides the whole
call and asks `confine` for every place it reaches. Both read these.

Pure: standard library only, frozen data, total functions.
"""

from __future__ import annotations

from dataclasses import dataclass

from eukhe.rules.states import Choice


class Mode(Choice):
    READ_ONLY = "read-only"
    WORKSPACE_WRITE = "workspace-write"
    FULL = "danger-full-access"


class Policy(Choice):
    UNTRUSTED = "untrusted"  # ask for every call that is not read-only and not allowed by a rule
    ON_REQUEST = "on-request"  # ask when a call must leave the sandbox, or an ask rule matches
    NEVER = "never"  # never ask: what would ask is denied


class Kind(Choice):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


class Source(Choice):
    HOME = "home settings"
    PROJECT = "project settings"
    FLAG = "command line"
    SESSION = "this session"  # a person's "always for this session"
    APPROVED = "project approvals"  # a person's "always for this project"


@dataclass(frozen=True)
class Rule:
    """One rule: `tool` as rules name them (`Bash`, `Read`, `Edit`, or a tool's name),
    `pattern` what it matches (None: every call of the tool). Bash patterns match a
    simple command's words joined by spaces: exact, `*` for any text, or the legacy
    prefix form `git diff:*`. Read and Edit patterns are absolute path globs (the
    runtime anchors them): `**` any text, `*` any text but `/`, `?` one character but `/`."""

    kind: Kind
    tool: str
    pattern: str | None
    source: Source


class Verdict(Choice):
    ALLOW = "allow"  # runs, in the sandbox
    OUTSIDE = "outside"  # runs outside the sandbox
    ASK = "ask"
    DENY = "deny"


class Why(Choice):
    PROTECTED = "it touches eukhe's own files: the home, .eukhe/ or .mcp.json"
    HOME = "it touches eukhe's own files: its home, which no tool reads or writes"
    PROCESS = "it reaches a process's memory or environment (/proc/<pid>/), which no tool may touch"
    SECRET = "it reaches one of your secret places (~/.ssh, ~/.aws, ...)"
    KERNEL = "it searches or writes kernel pseudo-files (/proc, /sys, /dev)"
    GIT = "it writes inside a .git folder, which only a person may allow"
    LOADED = (
        "it writes what eukhe or git loads and runs as code (Claude Code's .claude/ settings, hooks "
        "and agents, git's hooks, a skills folder), which only a person may allow"
    )
    OUTSIDE_READ = "it reads outside the workspace"
    DENY_RULE = "a deny rule matches it"
    UNREADABLE = "its command could not be read whole"
    ESCAPE = "it asks to run outside the sandbox"
    ASK_RULE = "an ask rule matches it"
    ALLOW_RULE = "allow rules match every part of it"
    FULL_ACCESS = "the sandbox mode is danger-full-access"
    UNTRUSTED = "the approval policy is untrusted, and it is not read-only"
    NO_SANDBOX = "the sandbox cannot run here"
    READ_ONLY = "the sandbox mode is read-only, and it writes"
    OUTSIDE_WORKSPACE = "it writes outside the workspace"
    FENCED = (
        "it writes your parent's checkout, which is read-only to a subagent working in a git worktree "
        "of its own: write in your worktree (your working directory) instead"
    )
    SANDBOXED = "it runs in the sandbox"
    READS = "it only reads"
    SESSION_STATE = "it changes only the session's task list, nothing on disk"
    INSIDE = "it stays inside the workspace"
    MCP = "an MCP tool runs outside the sandbox, and its server does not say it only reads"
    NETWORK = "it reaches the network, which the sandbox keeps from bash too"
    HEADLESS = "no person can answer an ask here"
    NEVER = "the approval policy is never"
    ANSWERED = "a person allowed it"
    REFUSED = "a person denied it"
    TIMEOUT = "nobody answered before permissions.askTimeoutMs"
    ABORTED = "the run was aborted while it asked"
    PLAN = (
        "plan mode is on: nothing that writes or runs code runs until the person approves a plan; "
        "call exit_plan with your plan"
    )
    PLAN_EXIT = "only a person approves a plan, which ends plan mode"
    PLAN_HEADLESS = "no person can approve a plan here: the run ends with the plan as its answer"
    NOT_PLANNING = "plan mode is not on: there is no plan to approve; go on with the task"
    HOOK_ASK = "a PreToolUse hook asks a person about it"
    HOOK_UNASKED = "a PreToolUse hook asks a person about it, and nobody can answer here"


@dataclass(frozen=True)
class Cfg:
    """What a decision reads besides the call: the sandbox `mode`, the approval `policy`,
    whether a `person` can answer an ask (interactive; else headless), whether the
    `sandbox` can run here, the `rules` in force, whether the person chose
    danger-full-access on the command line (`flag_full`: the only mode that opens their
    secret places), and whether plan mode is on (`plan`: over the mode, which it leaves as
    it is, so leaving plan mode goes back to it)."""

    mode: Mode
    policy: Policy
    person: bool
    sandbox: bool
    rules: tuple[Rule, ...] = ()
    flag_full: bool = False
    plan: bool = False


@dataclass(frozen=True)
class Decision:
    """What a rule says of a call, why, and the rule that said it (-1: none)."""

    verdict: Verdict
    why: Why
    rule: int = -1


def rule_tool(name: str) -> str:
    """A rule's tool name as the rule reads it: `Write` is `Edit`."""
    return "Edit" if name == "Write" else name


def glob(pattern: str, text: str, slash: bool) -> bool:
    """`**` any text; `*` any text (with `slash`, `/` too); `?` one character but `/`."""
    parts: list[str] = []  # tokens: "**", "*", "?" or a literal character
    i = 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            parts.append("**")
            i += 2
        else:
            parts.append(pattern[i])
            i += 1
    # positions reachable after each token (a set walk: total, no backtracking blow-up)
    at = {0}
    for p in parts:
        nxt: set[int] = set()
        for j in at:
            if p == "**" or (p == "*" and slash):
                nxt.update(range(j, len(text) + 1))
            elif p == "*":
                k = j
                nxt.add(k)
                while k < len(text) and text[k] != "/":
                    k += 1
                    nxt.add(k)
            elif p == "?":
                if j < len(text) and text[j] != "/":
                    nxt.add(j + 1)
            elif j < len(text) and text[j] == p:
                nxt.add(j + 1)
        at = nxt
        if not at:
            return False
    return len(text) in at


def path_matches(pattern: str, path: str) -> bool:
    return glob(pattern, path, slash=False)


def literal_head(pattern: str) -> str:
    """A path glob's text before its first wildcard: the folder it can only reach below."""
    cut = [i for i in (pattern.find(c) for c in "*?") if i >= 0]
    return pattern[: min(cut)] if cut else pattern
