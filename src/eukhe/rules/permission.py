"""Permission: what a tool call may do, decided before it runs; every ask ends, and the
model can never widen its own rights.

**The decision** (`decide`). A call (its tool, and for `bash` its simple commands as
the runtime's parser read them, whether it read them whole, the paths the call names,
whether it writes, whether it asks to leave the sandbox, whether it touches eukhe's own
files) is judged against the rules (allow, ask, deny; Claude Code's syntax), the
sandbox mode, the approval policy, whether a person can answer, and whether the
sandbox can run here. In order:
0. Plan mode, before everything (`planned`, below).
1. Where it reaches, first: `rules.confine` decides every place the call would touch
   (the home, a process's memory, a secret place, eukhe's configuration: denied in
   every mode; a `.git` written, or a place outside the workspace: asked). A denial
   there denies the call; an ask waits for the checks below.
2. A deny rule that matches any part of the call denies it.
3. A command the parser could not read whole asks: it is never allowed.
4. A call that asks to run outside the sandbox asks (unless the user's mode is full access).
5. An ask rule that matches any part asks; then the place `confine` asked of asks.
6. Allow rules that match every part allow it (in the sandbox; a write outside the
   workspace that a rule of the user's allows runs outside it).
7. Else the policy's default: `untrusted` asks for what is not read-only; full access
   (the user's own mode) runs outside the sandbox; with no sandbox here, code asks;
   a write the mode does not allow asks; the rest runs in the sandbox.
Then a guard's ask (`guarded`, below) turns what would run into an ask. Then an ask that
nobody can answer (headless), or that the `never` policy forbids, is a denial at once,
whose cause says how to allow the call.

**A guard's ask** (`Call.guard_asks`: a PreToolUse hook answered `ask`, with its reason)
is a person's to answer, every time: what the rules would run (by an allow rule, the
policy's default or the mode, danger-full-access too) asks instead (`HOOK_ASK`), for the
hook's reason; what they deny stays denied, what they ask stays asked. Where nobody can
answer (headless, or the `never` policy) it is denied, naming the hook (`HOOK_UNASKED`):
no rule allows it. No hook answers it for the person (`only_a_person`), and their
"always" keeps no rule (`granted`), so the guard asks again next time.

**Plan mode** (`Cfg.plan`), over the sandbox mode and before every rule (`planned`): no
call that writes or runs anything runs (`plan_denies`: a file tool's write, bash and the
kernel whatever their words, a call that asks to leave the sandbox, an MCP tool whose
server does not say it only reads), whatever the rules, the policy and the mode say;
reads keep their usual decision. The model hands its plan over with `exit_plan`, which
only a person answers (no rule, policy or mode lets it run unasked, and its "always"
adds no rule): their yes ends plan mode (`end_step`: back to the mode it was over), their
no keeps it. Where nobody can answer (headless, or the `never` policy) it is not asked:
the run ends with the plan as its answer (`PLAN_HEADLESS`). A person turns plan mode on
or off (`mode_step`); no call does.

**The ask** is a wait (`rules.wait`) with a deadline always (`permissions.askTimeoutMs`):
its answer, its deadline or the run's abort ends it, exactly once (`settle`).

**The session** (`step`): calls and a person's answers in any order. Only a person's
answer adds a rule (always for this session, always for this project); no call does.

Pure: standard library only, frozen data, total functions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from eukhe.rules import address, confine
from eukhe.rules.access import (
    Cfg,
    Decision,
    Kind,
    Mode,
    Policy,
    Rule,
    Source,
    Verdict,
    Why,
    glob,
    path_matches,
    rule_tool,
)
from eukhe.rules.confine import WRITES, Act, Name, Place, Reach
from eukhe.rules.states import Choice, replace
from eukhe.rules.wait import End

__all__ = [
    "ASK_TIMEOUT_MS",
    "Answer",
    "Call",
    "Cfg",
    "Decision",
    "Kind",
    "Mode",
    "PermissionState",
    "Policy",
    "Rule",
    "Source",
    "Verdict",
    "Why",
    "answers_run",
    "call_step",
    "decide",
    "end_step",
    "glob",
    "granted",
    "guarded",
    "judge",
    "mode_step",
    "only_a_person",
    "path_matches",
    "planned",
    "rule_tool",
    "ruled",
    "settle",
]

ASK_TIMEOUT_MS = 300_000
"""`permissions.askTimeoutMs` by default: an ask nobody answers is a denial after 5 minutes."""


@dataclass(frozen=True)
class Call:
    """A tool call as the permission rule reads it. `tool`: eukhe's tool name; `commands`:
    bash's simple commands (words, quotes removed); `whole`: the parser read the command
    whole; `paths`: the files it names, absolute and resolved; `writes`: it may change
    files; `outside`: bash asks to run outside the sandbox; `reaches`: the places it would
    touch, as `rules.confine` reads them (a file tool's path; what a command writes that is
    eukhe's own or a protected name: the sandbox confines the rest of bash); `hosts`: the
    host a web fetch names (`rules.address.host_of`; none when its URL names none);
    `guard_asks`: a PreToolUse hook answered `ask` (a person must decide), `guard_reason`
    its reason."""

    tool: str
    commands: tuple[tuple[str, ...], ...] = ()
    whole: bool = True
    paths: tuple[str, ...] = ()
    writes: bool = False
    outside: bool = False
    reaches: tuple[Reach, ...] = ()
    hosts: tuple[str, ...] = ()
    guard_asks: bool = False
    guard_reason: str = ""

    @property
    def in_workspace(self) -> bool:
        """Every place it writes is inside the workspace."""
        inside = (Place.WORKSPACE, Place.PROTECTED)
        return all(r.place in inside for r in self.reaches if r.act in WRITES)

    @property
    def protected(self) -> bool:
        """It writes eukhe's own files: its home, or its configuration in a project."""
        return any(r.act in WRITES and (r.place is Place.HOME or r.name is Name.CONFIG) for r in self.reaches)


# ---------------------------------------------------------------- tools


RULE_TOOLS = {
    "bash": "Bash",
    "read": "Read",
    "grep": "Grep",
    "glob": "Glob",
    "ls": "LS",
    "write": "Edit",
    "edit": "Edit",
    "ipython": "IPython",
    "web_fetch": address.TOOL,
    "todo": "TodoWrite",
    "job_output": "BashOutput",
    "job_kill": "KillShell",
}
"""How rules name eukhe's tools (Claude Code's names; `Write` rules are taken as `Edit`)."""

MCP_PREFIX = "mcp__"
"""An MCP server's tools are `mcp__<server>__<tool>`; a rule naming `mcp__<server>` names them all."""

RUNS_CODE = frozenset({"bash", "ipython"})
"""The tools whose calls run code, in the sandbox."""

SESSION_TOOLS = frozenset({"todo", "job_output", "job_kill"})
"""The tools that change only the session's own state (its task list, its background jobs: a
job's command was judged as any bash call when it started), nothing on disk of the user's:
allowed without asking, unless a rule of the user's names them."""

FILE_TOOLS = frozenset({"write", "edit"})
"""The tools that write files themselves (outside the sandbox: the rule is their confinement)."""

NETWORK_TOOLS = frozenset({"web_fetch"})
"""The tools that reach the network from eukhe's own process: they ask unless a rule allows
them (or the mode is full access), since the sandbox keeps the network from bash too."""
EXIT_PLAN = "exit_plan"
"""The tool with which the model hands its plan to the person, in plan mode."""

WRAPPERS = frozenset(
    {"env", "nice", "nohup", "timeout", "time", "command", "exec", "xargs", "sudo", "stdbuf", "doas"}
)
"""Commands that run the command after their own options: a rule sees the inner one too."""

READ_ONLY_COMMANDS = frozenset(
    {"ls", "cat", "head", "tail", "wc", "grep", "rg", "pwd", "echo", "true", "false", "date", "which",
     "file", "stat", "diff", "cmp", "du", "df", "tree", "sort", "uniq", "cut", "tr", "basename", "dirname",
     "realpath", "printf", "test", "[", "nl", "od", "whoami", "id", "uname", "hostname"}
)  # fmt: skip
"""Commands that only read (the `untrusted` policy does not ask for them), as Codex keeps a
list of known-safe commands; `git` and `find` are judged by their words (`read_only`)."""

BASH_LIKE = frozenset(
    {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "rbash", "ksh93", "pdksh", "lksh"}
)
"""Shells whose `-c` script the parser reads as bash (zsh and ksh differ in corners)."""
OTHER_SHELLS = frozenset({"fish", "csh", "tcsh", "nu", "xonsh", "elvish", "pwsh", "powershell", "rc", "es"})
"""Shells whose scripts are not bash: the parser does not read a script given to one."""
SHELLS = BASH_LIKE | OTHER_SHELLS
"""A shell with no `-c` runs a script from a file or standard input, which no rule reads."""

EXECS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
"""`find` options whose next words are a command it runs."""

GIT_READS = frozenset({"status", "diff", "log", "show", "branch", "blame", "rev-parse", "ls-files", "grep"})
FIND_ACTS = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprintf", "-fls", "-fprint0"}
)
WRITING_OPTIONS = {
    "sort": ("-o", "--output", "--compress-program"),  # a file written, a program run
    "rg": ("--pre",),  # a program run on each file
    "date": ("-s", "--set"),  # the clock set
    "git": ("--output", "--ext-diff", "-O", "--open-files-in-pager", "-c"),  # a file, a program, a config
}
"""Options with which a command of the read-only lists writes or runs something else."""
BRANCH_LISTS = frozenset({"-a", "-r", "-l", "--list", "-v", "-vv", "--all", "--remotes", "--show-current"})


def tool_of(call: Call) -> str:
    return RULE_TOOLS.get(call.tool, call.tool)


def base(word: str) -> str:
    return word.rpartition("/")[2]


def final(words: tuple[str, ...]) -> tuple[str, ...]:
    """The command a simple command finally runs, as written: past each wrapper, its
    options, assignments and numbers (`env X=1 nice -n 5 make` runs `make`)."""
    w = words
    while w and base(w[0]) in WRAPPERS:
        rest = w[1:]
        while rest and (rest[0].startswith("-") or "=" in rest[0] or rest[0][:1].isdigit()):
            rest = rest[1:]
        w = rest
    return w


def forms(words: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """A simple command as deny and ask rules see it: as written, with its program's path
    dropped (`/bin/rm` is `rm`), past a wrapper every tail of its words (whatever options
    `sudo -u root rm` takes, `rm` is in it), and the command `find -exec` runs, each so too."""
    out: list[tuple[str, ...]] = []
    tails = [words]
    if words and base(words[0]) in WRAPPERS:
        tails += [words[k:] for k in range(1, len(words))]
    if words and base(words[0]) == "find":
        tails += [words[k + 1 :] for k, w in enumerate(words) if w in EXECS]
    for w in tails:
        if not w:
            continue
        out.append(w)
        named = (base(w[0]), *w[1:])
        if named != w:
            out.append(named)
    return tuple(out)


def runs_a_script(words: tuple[str, ...]) -> bool:
    """A shell with no `-c`: it runs a script file or standard input, which no rule reads."""
    w = final(words)
    if not w or base(w[0]) not in SHELLS:
        return False
    return not any(
        a == "-c" or (a.startswith("-") and not a.startswith("--") and "c" in a[1:]) for a in w[1:]
    )


def read_only(words: tuple[str, ...]) -> bool:
    """Whether a simple command only reads (for the `untrusted` policy): a command of the
    read-only lists, without an option that writes or runs something else."""
    w = final(words)
    if not w:
        return not words
    name = base(w[0])
    args = w[1:]
    banned = WRITING_OPTIONS.get(name, ())
    if any(
        a == o or a.startswith(o + "=") or (o.startswith("-o") and a.startswith(o))
        for a in args
        for o in banned
    ):
        return False
    if name == "git":
        if not args or args[0] not in GIT_READS:
            return False
        return args[0] != "branch" or all(a in BRANCH_LISTS for a in args[1:])
    if name == "find":
        return not any(a in FIND_ACTS for a in args)
    if name == "uniq":  # `uniq IN OUT` writes OUT
        return len([a for a in args if not a.startswith("-")]) <= 1
    return name in READ_ONLY_COMMANDS and name not in WRAPPERS


# ---------------------------------------------------------------- matching


def command_matches(pattern: str, words: tuple[str, ...]) -> bool:
    """A Bash rule's pattern against a simple command's words."""
    text = " ".join(words)
    if pattern.endswith(":*"):
        head = pattern[:-2]
        return text == head or text.startswith(head + " ")
    if pattern.endswith(" *") and text == pattern[:-2]:  # `rm *` names `rm` with no argument too
        return True
    return glob(pattern, text, slash=True)


def matches(
    rule: Rule, call: Call, words: tuple[str, ...] | None, path: str | None, host: str | None = None
) -> bool:
    """Whether `rule` matches one part of `call`: a simple command (`words`), a path, or
    the host a web fetch names."""
    tool = rule_tool(rule.tool)
    if rule.pattern is None:
        server = tool.startswith(MCP_PREFIX) and "__" not in tool[len(MCP_PREFIX) :]
        return tool == tool_of(call) or (server and tool_of(call).startswith(tool + "__"))
    if words is not None and tool == "Bash" and call.tool == "bash":
        return command_matches(rule.pattern, words)
    if path is not None:
        return confine.names(rule, Act.WRITE if call.writes else Act.READ, path)
    if host is not None and tool == address.TOOL and call.tool in NETWORK_TOOLS:
        return address.domain_matches(rule.pattern, host)
    return False


def _first(rules: tuple[Rule, ...], kind: Kind, call: Call) -> int:
    """The first rule of `kind` that matches any part of the call (any form of a command)."""
    for i, r in enumerate(rules):
        if r.kind is not kind:
            continue
        if r.pattern is None and matches(r, call, None, None):
            return i
        for words in call.commands:
            if any(matches(r, call, f, None) for f in forms(words)):
                return i
        if any(matches(r, call, None, p) for p in call.paths):
            return i
        if any(matches(r, call, None, None, h) for h in call.hosts):
            return i
    return -1


def _all_allowed(rules: tuple[Rule, ...], call: Call) -> int:
    """A rule that allows the call when allow rules match every part of it (each simple
    command as it finally runs, each path it writes or reads); -1 when some part is not."""
    allows = [(i, r) for i, r in enumerate(rules) if r.kind is Kind.ALLOW]
    whole_tool = next((i for i, r in allows if r.pattern is None and matches(r, call, None, None)), -1)
    if whole_tool >= 0:
        return whole_tool
    # a command's parts are its simple commands (the files it names are for deny and ask
    # rules: `Read(.env)` denies `cat .env`); a file tool's part is its path
    paths = call.paths if call.tool != "bash" else ()
    parts = [("c", w) for w in call.commands] + [("p", p) for p in paths] + [("h", h) for h in call.hosts]
    if not parts:
        return -1
    first = -1
    for kind, part in parts:
        hit = -1
        for i, r in allows:
            if kind == "c" and isinstance(part, tuple) and part and matches(r, call, final(part), None):
                hit = i
                break
            if kind == "p" and isinstance(part, str) and matches(r, call, None, part):
                hit = i
                break
            if kind == "h" and isinstance(part, str) and matches(r, call, None, None, part):
                hit = i
                break
        if hit < 0:
            return -1
        first = hit if first < 0 else first
    return first


# ---------------------------------------------------------------- the decision


def plan_denies(call: Call) -> bool:
    """Whether plan mode keeps the call from running: it writes (a file, or a command or an
    MCP tool that may), runs code (bash or the kernel, whatever its words), or asks to leave
    the sandbox."""
    return call.writes or call.outside or call.tool in RUNS_CODE or call.tool in FILE_TOOLS


def planned(cfg: Cfg, call: Call) -> Decision | None:
    """Plan mode's decision on a call, before every rule (None: the rules decide it):
    `exit_plan` asks in plan mode (only a person answers it) and is denied out of it; in
    plan mode a call that writes or runs anything is denied."""
    if call.tool == EXIT_PLAN:
        return Decision(Verdict.ASK, Why.PLAN_EXIT) if cfg.plan else Decision(Verdict.DENY, Why.NOT_PLANNING)
    if cfg.plan and plan_denies(call):
        return Decision(Verdict.DENY, Why.PLAN)
    return None


def guarded(d: Decision, call: Call) -> Decision:
    """A guard's ask over the rules' decision: what they would run (whatever allowed it: a
    rule, the policy, the mode) asks a person instead; a denial stays that denial, and an
    ask stays the rules' own (the hook's reason is asked with it)."""
    if call.guard_asks and d.verdict in (Verdict.ALLOW, Verdict.OUTSIDE):
        return Decision(Verdict.ASK, Why.HOOK_ASK)
    return d


def judge(cfg: Cfg, call: Call, where: confine.Decide | None = None) -> Decision:
    """The decision before headless and `never` turn an ask into a denial; `where`: the
    confine rule it asks (None: `rules.confine.decide`, looked up now)."""
    return guarded(ruled(cfg, call, where), call)


def ruled(cfg: Cfg, call: Call, where: confine.Decide | None = None) -> Decision:
    """What the rules, the policy and the mode say of the call, before a guard's ask."""
    plan = planned(cfg, call)
    if plan is not None:
        return plan
    placed: Decision | None = None  # the first place `confine` asks of
    for r in call.reaches:
        d = (where or confine.decide)(cfg, r)
        if d.verdict is Verdict.DENY:
            return d
        if d.verdict is Verdict.ASK and placed is None:
            placed = d
    i = _first(cfg.rules, Kind.DENY, call)
    if i >= 0:
        return Decision(Verdict.DENY, Why.DENY_RULE, i)
    if not call.whole:
        return Decision(Verdict.ASK, Why.UNREADABLE)
    if any(runs_a_script(w) for w in call.commands) and _all_allowed(cfg.rules, call) < 0:
        return Decision(Verdict.ASK, Why.UNREADABLE)  # its script is unread: only a rule naming it allows it
    if call.outside and cfg.mode is not Mode.FULL:
        return Decision(Verdict.ASK, Why.ESCAPE)
    i = _first(cfg.rules, Kind.ASK, call)
    if i >= 0:
        return Decision(Verdict.ASK, Why.ASK_RULE, i)
    if placed is not None:
        return placed
    i = _all_allowed(cfg.rules, call)
    if i >= 0:
        out = cfg.mode is Mode.FULL or (call.tool in FILE_TOOLS and call.writes and not call.in_workspace)
        return Decision(Verdict.OUTSIDE if out else Verdict.ALLOW, Why.ALLOW_RULE, i)
    if call.tool in SESSION_TOOLS and not call.writes:
        return Decision(Verdict.ALLOW, Why.SESSION_STATE)
    reads = not call.writes and all(read_only(w) for w in call.commands) and call.tool != "ipython"
    if cfg.policy is Policy.UNTRUSTED and not reads:
        return Decision(Verdict.ASK, Why.UNTRUSTED)
    if cfg.mode is Mode.FULL:
        return Decision(Verdict.OUTSIDE, Why.FULL_ACCESS)
    if call.tool in NETWORK_TOOLS:
        return Decision(Verdict.ASK, Why.NETWORK)
    if call.tool.startswith(MCP_PREFIX) and call.writes:
        return Decision(Verdict.ASK, Why.MCP)
    if call.tool in RUNS_CODE and not cfg.sandbox:
        return Decision(Verdict.ASK, Why.NO_SANDBOX)
    if call.tool in FILE_TOOLS and call.writes and cfg.mode is Mode.READ_ONLY:
        return Decision(Verdict.ASK, Why.READ_ONLY)
    return Decision(Verdict.ALLOW, Why.READS if reads else Why.SANDBOXED)


def decide(cfg: Cfg, call: Call, where: confine.Decide | None = None) -> Decision:
    """The decision on a call: allow (in the sandbox, or outside it), deny with why, or
    ask; an ask nobody can answer, or that the `never` policy forbids, is a denial now."""
    d = judge(cfg, call, where)
    if d.verdict is not Verdict.ASK:
        return d
    if d.why is Why.PLAN_EXIT and (cfg.policy is Policy.NEVER or not cfg.person):
        return Decision(Verdict.DENY, Why.PLAN_HEADLESS)  # not run: the run ends with the plan
    if call.guard_asks and (cfg.policy is Policy.NEVER or not cfg.person):
        return Decision(Verdict.DENY, Why.HOOK_UNASKED)  # the hook's cause: no rule allows it
    if cfg.policy is Policy.NEVER:
        return Decision(Verdict.DENY, Why.NEVER, d.rule)
    if not cfg.person:
        return Decision(Verdict.DENY, Why.HEADLESS, d.rule)
    return d


# ---------------------------------------------------------------- the ask


class Answer(Choice):
    ONCE = "once"  # y: this call
    SESSION = "session"  # a: always, this session
    PROJECT = "project"  # p: always, this project
    NO = "no"  # n (with a reason) or Esc


def settle(asked: Decision, call: Call, cfg: Cfg, end: End, answer: Answer) -> Decision:
    """How an ask ended (the wait's end: its answer, its deadline, the run's abort) as the
    call's decision: never an ask again. A yes to a call that must leave the sandbox (it
    asked to, or writes outside the workspace, or code with no sandbox here, or full
    access) runs it outside; a yes to the rest runs it in the sandbox (a guard's ask over what
    would run: where the rules would have run it)."""
    if end is End.EVENT and answer is not Answer.NO:
        out = (
            asked.why
            in (Why.ESCAPE, Why.OUTSIDE_WORKSPACE, Why.NO_SANDBOX, Why.READ_ONLY, Why.GIT, Why.LOADED)
            or cfg.mode is Mode.FULL
            or (call.tool in FILE_TOOLS and call.writes and not call.in_workspace)
        )
        return Decision(Verdict.OUTSIDE if out else Verdict.ALLOW, Why.ANSWERED, asked.rule)
    if end is End.EVENT:
        return Decision(Verdict.DENY, Why.REFUSED, asked.rule)
    if end is End.CANCEL:
        return Decision(Verdict.DENY, Why.ABORTED, asked.rule)
    return Decision(Verdict.DENY, Why.TIMEOUT, asked.rule)  # the deadline (LIVE never reaches here)


def granted(call: Call, answer: Answer) -> tuple[Rule, ...]:
    """The rules a person's "always" adds: one allow rule a simple command (as it finally
    runs), the tool's paths, or the host a web fetch names; none for a call that asked to
    leave the sandbox (an escape is asked each time), that the parser could not read whole,
    or that a guard asked about (a guard asks each time)."""
    if answer in (Answer.ONCE, Answer.NO) or call.outside or not call.whole or call.protected:
        return ()
    if call.guard_asks:  # the guard asks each time whatever is kept: the yes is this call's alone
        return ()
    if call.tool == EXIT_PLAN:  # each plan is a person's to approve
        return ()
    source = Source.SESSION if answer is Answer.SESSION else Source.APPROVED
    tool = tool_of(call)
    if call.tool == "bash":
        return tuple(Rule(Kind.ALLOW, "Bash", " ".join(final(w)), source) for w in call.commands if final(w))
    if call.paths:
        return tuple(Rule(Kind.ALLOW, tool, p, source) for p in call.paths)
    if call.tool in NETWORK_TOOLS:  # the host it names, never every host (none: nothing kept)
        return tuple(Rule(Kind.ALLOW, tool, address.DOMAIN + h, source) for h in call.hosts)
    return (Rule(Kind.ALLOW, tool, None, source),)


# ---------------------------------------------------------------- the session


@dataclass(frozen=True)
class PermissionState:
    """The rules in force and the ask pending (one at a time: a run's calls run one by
    one), and the last decision made."""

    cfg: Cfg
    pending: Call | None = None
    asked: Decision | None = None
    last: Decision | None = None


Decide = Callable[[Cfg, Call], Decision]
Settle = Callable[[Decision, Call, Cfg, End, Answer], Decision]
Grant = Callable[[Call, Answer], tuple[Rule, ...]]


def call_step(s: PermissionState, call: Call, rule: Decide = decide) -> PermissionState:
    """A tool call comes: decided now, or asked about. It changes no rule."""
    if s.pending is not None:
        return s  # one ask at a time: the run waits for it
    d = rule(s.cfg, call)
    if d.verdict is Verdict.ASK:
        return PermissionState(s.cfg, call, d, None)
    return PermissionState(s.cfg, None, None, d)


def end_step(
    s: PermissionState, end: End, answer: Answer, ended: Settle = settle, grant: Grant = granted
) -> PermissionState:
    """The pending ask ends: a person's answer (its "always" adds rules), its deadline, or
    the run's abort. A yes to a plan ends plan mode; a yes to what plan mode denies (it came
    on while the call asked) does not run it."""
    if s.pending is None or s.asked is None or end is End.LIVE:
        return s
    d = ended(s.asked, s.pending, s.cfg, end, answer)
    plan = planned(s.cfg, s.pending)
    if plan is not None and plan.verdict is Verdict.DENY and d.verdict in (Verdict.ALLOW, Verdict.OUTSIDE):
        d = plan  # plan mode came on while it asked: what writes or runs does not run, even on a yes
    added = grant(s.pending, answer) if end is End.EVENT else ()
    cfg = replace(s.cfg, rules=(*s.cfg.rules, *added))
    if s.asked.why is Why.PLAN_EXIT and d.verdict in (Verdict.ALLOW, Verdict.OUTSIDE):
        cfg = replace(cfg, plan=False)  # the plan approved: back to the mode it was over
    return PermissionState(cfg, None, None, d)


def mode_step(s: PermissionState, plan: bool) -> PermissionState:
    """A person turns plan mode on or off (the agent's Shift+Tab, an editor's mode): from the
    next call on; the sandbox mode, the policy and the rules stay as they are, and a pending
    ask stays pending (its call was judged already)."""
    return replace(s, cfg=replace(s.cfg, plan=plan))


def only_a_person(asked: Decision, call: Call) -> bool:
    """Whether only a person may answer the ask (no PermissionRequest hook answers it for
    them): a plan's, and one a guard asked for."""
    return asked.why is Why.PLAN_EXIT or call.guard_asks


def answers_run(d: Decision) -> bool:
    """Whether the call's plan is the run's answer: nobody here can approve it, so the run
    ends with it."""
    return d.why is Why.PLAN_HEADLESS
