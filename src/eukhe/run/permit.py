"""Every tool call through the permission rule (`rules.permission`) before it runs.

The gate reads a call the way the rule wants it (bash's simple commands, split by the
syntax tree; the paths a call names, resolved; whether it writes, inside the workspace
or not; whether it touches eukhe's own files), asks the rule, and when the rule asks,
asks a person: the ask is a wait (`waits.race`) that its answer, its deadline
(`permissions.askTimeoutMs`) or the run's abort ends, exactly once. The gate's state IS
the model's `PermissionState`: every call, every answer and a person's mode change (`plan`) is the
model's step, and only a person's "always" adds a rule.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from eukhe import waits
from eukhe.ai.reply import ToolCall
from eukhe.bash.reader import split
from eukhe.children.tools import MERGE_CHILD
from eukhe.json_types import JsonObject
from eukhe.rules import address, confine
from eukhe.rules import permission as rule
from eukhe.rules.confine import WRITES, Act, Name, Place, Reach, Where, reach
from eukhe.rules.hook import Event as HookEvent
from eukhe.rules.hook import Kind as HookKind
from eukhe.rules.hook import answers_ask, asks_a_person
from eukhe.rules.permission import Answer, Call, Decision, PermissionState, Rule, Verdict, Why
from eukhe.rules.wait import End
from eukhe.run import notes
from eukhe.run.hook_events import RunHooks
from eukhe.tools.reach import where_of

SEARCH_TOOLS = frozenset({"grep", "glob", "ls"})
"""The tools that read under a folder they are given (`tools.search`)."""


class Asker(Protocol):
    """Who answers a run's asks: the interactive agent's person (`ui.approvals`)."""

    async def ask(self, asked: Asked) -> tuple[Answer, str]:
        """A person's answer to an ask, and their reason for a no ("" none); the gate races it."""


@dataclass(frozen=True)
class Asked:
    """What a person is asked: the call, what the rule said, in words."""

    tool: str
    arguments: str
    why: str
    text: str  # the call whole: the command, or the file and what changes
    run: str = ""  # the run that asks (a face with several sessions answers in the right one)
    timeout: float = 0.0  # seconds the gate waits for the answer (its race ends the ask then)
    call: str = ""  # the call's id, as the run's events name it


@dataclass(frozen=True)
class Permit:
    """The gate's answer on a call: run it (in the sandbox, or outside it), or the result a
    denied call gets instead (its cause, how to allow it); `answer`: the call is not run and
    the run ends with this answer (a plan nobody here can approve)."""

    runs: bool
    outside: bool = False
    result: str = ""
    why: str = ""
    rule: str = ""
    answer: str = ""

    def json(self) -> JsonObject:
        out: JsonObject = {
            "runs": self.runs,
            "outside": self.outside,
            "result": self.result,
            "why": self.why,
            "rule": self.rule,
        }
        if self.answer:
            out["answer"] = self.answer
        return out

    @staticmethod
    def of(obj: Any) -> Permit:
        return Permit(
            bool(obj["runs"]),
            bool(obj["outside"]),
            str(obj["result"]),
            str(obj["why"]),
            str(obj["rule"]),
            str(obj.get("answer") or ""),
        )


def rule_text(r: Rule) -> str:
    return f"{r.tool}({r.pattern})" if r.pattern is not None else r.tool


def _guarded(r: Reach) -> bool:
    """A place bash's parser reads for the confine rule: eukhe's home, or a protected name."""
    return r.place is Place.HOME or r.name is not Name.PLAIN


@dataclass
class Gate:
    """One run's gate. `session`: the rules in force (the model's state); `workspace`: the
    project; `writable`: more folders the sandbox lets a call write; `home`: eukhe's home;
    `ask`: a person (None: headless); `timeout`: seconds an ask waits; `cancel`: the run's
    abort; `approve`: keeps a person's "always for this project" rules; `user`: the user's
    home. Its `opened` is the boundary the tools ask at open time (`tools.reach`)."""

    session: PermissionState
    workspace: Path
    home: Path
    ask: Asker | None = None
    timeout: float = rule.ASK_TIMEOUT_MS / 1000
    cancel: asyncio.Event = field(default_factory=asyncio.Event)
    writable: Sequence[Path] = ()
    approve: Callable[[tuple[Rule, ...]], object] = lambda rules: None
    clock: waits.Clock = field(default_factory=waits.LoopClock)
    # (kind, text, data): the ask as the run's events: "ask" with its deadline, "waited" when it ends
    show: Callable[..., None] = lambda kind, text, data=None: None
    label: str = ""  # who asks: a subagent's name, shown with its call at the root session's prompt
    reads: frozenset[str] = frozenset()  # MCP tools that only read: their home server says so
    user: Path = field(default_factory=Path.home)  # the user's home, where their secret places are
    approved: tuple[str, ...] = ()  # the real paths a person said yes to, this run
    # the run's hooks: PreToolUse may deny a call first, PermissionRequest answer an ask, and a
    # Notification's run beside the ask
    hooks: RunHooks | None = None
    run: str = ""  # the run whose calls it judges, named in its asks
    code: tuple[str, ...] = ()  # what the run loads as code beyond the registry's names (`run.code_paths`)
    fenced: Sequence[Path] = ()  # a subagent's parent's checkout, when it works in a worktree: read-only

    # ------------------------------------------------------------ plan mode

    @property
    def planning(self) -> bool:
        """Whether the run is in plan mode now (a subagent it spawns starts so)."""
        return self.session.cfg.plan

    def plan(self, on: bool) -> None:
        """A person turns plan mode on or off (the agent's Shift+Tab): the model's step, from
        the run's next call on (called on the run's loop)."""
        before = self.session.cfg.plan
        self.session = rule.mode_step(self.session, on)
        if self.session.cfg.plan != before:
            self.show_mode("you")

    def show_mode(self, by: str = "") -> None:
        """Plan mode as it is now, and who made it so ("": the run starts so), as the run's
        event (the faces' status lines read it)."""
        cfg = self.session.cfg
        said = f" ({by})" if by else ""
        text = (
            f"plan mode on{said}: nothing that writes or runs code runs until a plan is approved"
            if cfg.plan
            else f"plan mode off{said}: back to {cfg.mode.value}"
        )
        self.show("mode", text, {"plan": cfg.plan, "mode": cfg.mode.value})

    # ------------------------------------------------------------ reading a call

    @functools.cached_property
    def where(self) -> Where:
        """The roots `rules.confine` places a path against, read once."""
        return where_of(
            self.workspace, self.home, self.user, tuple(self.writable), self.code, tuple(self.fenced)
        )

    def _resolved(self, p: str) -> str:
        full = os.path.expanduser(p)
        return os.path.realpath(full if os.path.isabs(full) else os.path.join(self.workspace, full))

    def _reach(self, act: Act, path: str) -> Reach:
        return reach(act, path, self.where)

    def _named(self, words: tuple[str, ...]) -> list[str]:
        """The files a simple command names: its arguments that are paths that exist."""
        found = (self._resolved(w) for w in words[1:] if w and not w.startswith("-"))
        return [p for p in found if os.path.lexists(p)]

    def readable(self, path: Path) -> bool:
        """Whether a search may read a file it comes upon (`path`: absolute, beneath the root
        the search was allowed, walked without following a link): no deny or ask rule names
        it, and its place is not one no tool reaches (the home, a secret place, /proc)."""
        p = os.path.abspath(path)
        d = rule.judge(self.session.cfg, Call("read", paths=(p,)))
        placed = confine.decide(self.session.cfg, self._reach(Act.SEARCH, p))
        return d.verdict in (Verdict.ALLOW, Verdict.OUTSIDE) and placed.verdict is not Verdict.DENY

    def names_host(self, host: str) -> bool:
        """Whether an allow rule of the settings in force names the host itself
        (`rules.address.named`; a person's "always" does not): what lets a web fetch reach a
        loopback, private or link-local address (`tools.web`)."""
        return address.named(self.session.cfg.rules, host)

    def opened(self, act: Act, real: str) -> str | None:
        """The boundary on the object a tool has opened (`tools.reach.Check`): None when it
        may touch it, else why not. Nobody is asked now: what would ask is touched only
        when it is what a person said yes to in this run."""
        d = confine.opened(self.session.cfg, self._reach(act, real), self.approved)
        return None if d.verdict is Verdict.ALLOW else d.why.value

    def call_of(self, c: ToolCall) -> Call:
        """A tool call as the rule reads it, with the places it would reach."""
        args = c.arguments or {}
        if c.name == "bash":
            command = str(args.get("command") or "")
            got = split(command)
            named = [self._named(cmd) for cmd in got.commands]  # the files each command names
            targets = [self._resolved(w) for w in got.writes]  # what its redirections write
            paths = tuple(dict.fromkeys([*(p for ps in named for p in ps), *targets]))
            writers = [ps for cmd, ps in zip(got.commands, named, strict=True) if not rule.read_only(cmd)]
            touched = [*targets, *(p for ps in writers for p in ps)]  # what it may change
            writes = bool(touched) or not all(rule.read_only(w) for w in got.commands)
            # the sandbox confines the rest of bash; what it may change of eukhe's own, or a
            # protected name, is the confine rule's
            kept = [r for r in (self._reach(Act.WRITE, p) for p in touched) if _guarded(r)]
            return Call("bash", got.commands, got.whole, paths, writes, bool(args.get("outside_sandbox")),
                        tuple(dict.fromkeys(kept)))  # fmt: skip
        if c.name in ("read", "write", "edit") and isinstance(args.get("path"), str):
            path = self._resolved(args["path"])
            act = Act.READ if c.name == "read" else Act.WRITE
            return Call(c.name, paths=(path,), writes=c.name != "read", reaches=(self._reach(act, path),))
        if c.name in SEARCH_TOOLS:  # it reads under its path; what the rules keep from reading, it skips
            path = self._resolved(str(args.get("path") or "."))
            act = Act.LIST if c.name == "ls" else Act.SEARCH
            return Call(c.name, paths=(path,), reaches=(self._reach(act, path),))
        if c.name == MERGE_CHILD.name:  # it writes the checkout's files, and its .git: a person asked
            ws = os.path.realpath(self.workspace)
            reaches = (self._reach(Act.WRITE, ws), self._reach(Act.WRITE, os.path.join(ws, ".git")))
            return Call(c.name, paths=(ws,), writes=True, reaches=reaches)
        if c.name.startswith(rule.MCP_PREFIX):  # it may do anything, unless its home server says it reads
            return Call(c.name, writes=c.name not in self.reads)
        if c.name in rule.NETWORK_TOOLS:  # the host its URL names, as the fetch reads it (`tools.web`)
            host = address.host_of(str(args.get("url") or ""))
            return Call(c.name, hosts=(host,) if host else ())
        return Call(c.name, writes=c.name == "ipython")

    # ------------------------------------------------------------ deciding

    async def permit(self, c: ToolCall) -> Permit:
        """Whether the call runs (and where), or what it gets instead. An ask waits for the
        person's answer, its deadline or the run's abort, whichever comes first. The run's
        PreToolUse hooks come first: their deny (a guard that fails denies) is the call's
        denial; their ask goes with the call to the rule, which asks a person (headless: denies);
        what they let by, eukhe's own rules still judge."""
        call = self.call_of(c)
        if self.hooks is not None:
            v = await self.hooks.pre_tool(c)
            if v.kind is HookKind.DENY:
                return Permit(
                    False,
                    result=notes.hook_denied(c.name, v.reason, HookEvent.PRE_TOOL_USE),
                    why="hook",
                    rule="PreToolUse hook",
                )
            if asks_a_person(v):
                call = dataclasses.replace(call, guard_asks=True, guard_reason=v.reason)
        s = self.session = rule.call_step(self.session, call)
        if s.pending is None:
            assert s.last is not None
            return self._permit(c, call, s.last, "")
        asked = s.asked
        assert asked is not None
        answer, reason = Answer.NO, ""
        # a plan's ask, and one a guard asked for, is the person's alone: no hook answers it for them
        hooked = None if rule.only_a_person(asked, call) else await self._hooks_answer(c, asked.why.value)
        if hooked is not None:  # the PermissionRequest hooks answered for the person
            end, (answer, reason) = End.EVENT, hooked
        elif self.ask is None:  # the rule says headless asks never come here; a gate without a person denies
            end = End.CANCEL
        else:
            who = f"{self.label} · {c.name}" if self.label else c.name
            q = Asked(
                who, c.raw or str(c.arguments), _why(asked, call), _whole(c), self.run, self.timeout, c.id
            )
            until = {
                "wait": "ask",
                "tool": c.name,
                "why": q.why,
                "deadline": round(time.time() + self.timeout, 3),
            }
            self.show("ask", f"{c.name}: {q.text[:200]} ({q.why})", until)
            if self.hooks is not None:  # the person's Notification hooks, beside the ask
                self.hooks.notify("permission_prompt", f"eukhe needs your permission to use {c.name}")
            try:
                raced = await waits.race(
                    self.ask.ask(q), self.clock.now() + self.timeout, self.cancel, self.clock
                )
            finally:
                self.show("waited", "", {"wait": "ask"})
            end = raced.end
            if end is End.EVENT:
                answer, reason = raced.result()
        before = self.session.cfg.plan  # a person may have changed the mode while it asked
        self.session = rule.end_step(self.session, end, answer)
        if self.session.cfg.plan != before:
            self.show_mode("the plan approved")
        d = self.session.last
        assert d is not None
        if d.verdict in (Verdict.ALLOW, Verdict.OUTSIDE):  # the objects it reaches, at open time
            self.approved = (*self.approved, *(r.path for r in call.reaches))
        if end is End.EVENT and answer is Answer.PROJECT and (kept := rule.granted(call, answer)):
            self.approve(kept)
        if hooked is not None and answer is Answer.NO:
            why = notes.hook_denied(c.name, reason, HookEvent.PERMISSION_REQUEST)
            return Permit(False, result=why, why="hook", rule="PermissionRequest hook")
        return self._permit(c, call, d, reason)

    async def _hooks_answer(self, c: ToolCall, why: str) -> tuple[Answer, str] | None:
        """What the PermissionRequest hooks answer for the person asked about `c`: their
        allow, a yes to this call; their deny (a guard that fails denies), a no with its
        reason; anything else (an ask, nothing), None: the person is asked."""
        if self.hooks is None:
            return None
        v = await self.hooks.permission_request(c, why)
        said = answers_ask(v)
        if said is None:
            return None
        return (Answer.NO, v.reason) if said is HookKind.DENY else (Answer.ONCE, "")

    def _permit(self, c: ToolCall, call: Call, d: Decision, reason: str) -> Permit:
        ruled = rule_text(self.session.cfg.rules[d.rule]) if 0 <= d.rule < len(self.session.cfg.rules) else ""
        if d.verdict in (Verdict.ALLOW, Verdict.OUTSIDE):
            return Permit(True, d.verdict is Verdict.OUTSIDE, why=d.why.value, rule=ruled)
        if rule.answers_run(d):  # not run: the run ends with the plan as its answer
            plan = str((c.arguments or {}).get("plan") or "")
            return Permit(False, result=notes.PLAN_ANSWERED, why=d.why.value, answer=plan or notes.NO_PLAN)
        how = notes.HOW_TO_ALLOW.get(d.why.name, "")
        if c.name == rule.EXIT_PLAN:
            how = notes.PLAN_NOT_APPROVED.get(d.why.name, how)
        if d.why is Why.HEADLESS and c.name.startswith(rule.MCP_PREFIX):
            how = notes.mcp_headless(c.name)
        if d.why is Why.TIMEOUT:
            how = f"nobody answered within {self.timeout:g} s (permissions.askTimeoutMs)"
        if d.why is Why.HOOK_UNASKED:  # the hook's reason is the cause; no rule of the user's decided
            why = notes.guard_why(d.why.value, d.why.value, call.guard_reason)
            return Permit(
                False, result=notes.denied(c.name, why, "", how), why=d.why.value, rule="PreToolUse hook"
            )
        if d.why in (Why.HEADLESS, Why.NEVER):  # a place that asked: the very rule to add, if any
            how = self._unasked(call) or how
        return Permit(False, result=notes.denied(c.name, d.why.value, ruled, how, reason), why=d.why.value,
                      rule=ruled)  # fmt: skip

    def _unasked(self, call: Call) -> str:
        """How to allow a call whose place asked where nobody can answer ("": not a place)."""
        asked = rule.judge(self.session.cfg, call)
        if asked.why is Why.GIT:
            return notes.git_unasked(asked.why.value)
        if asked.why is Why.LOADED and call.reaches:
            return notes.loaded_unasked(asked.why.value, call.reaches[0].root or call.reaches[0].path)
        if asked.why is Why.NETWORK and call.hosts:
            return notes.fetch_unasked(asked.why.value, call.hosts[0])
        if asked.why not in (Why.OUTSIDE_READ, Why.OUTSIDE_WORKSPACE) or not call.reaches:
            return ""
        r = call.reaches[0]
        return notes.outside_unasked(asked.why.value, "Edit" if r.act in WRITES else "Read", r.path)


def _why(asked: Decision, call: Call) -> str:
    """Why a person is asked: the rule's cause, and a guard's with its reason if one asked."""
    if not call.guard_asks:
        return asked.why.value
    return notes.guard_why(asked.why.value, Why.HOOK_ASK.value, call.guard_reason)


def _whole(c: ToolCall) -> str:
    """The call as a person reads it before answering: the command, or the file and its change."""
    args = c.arguments or {}
    if c.name == "bash":
        why = f"\n(outside the sandbox: {args['justification']})" if args.get("justification") else ""
        return str(args.get("command") or "") + why
    if c.name == "write":
        return f"write {args.get('path')}:\n{args.get('content') or ''}"
    if c.name == "edit":
        return f"edit {args.get('path')}:\n- {args.get('old_text') or ''}\n+ {args.get('new_text') or ''}"
    if c.name in rule.NETWORK_TOOLS:
        return f"fetch {args.get('url')}"
    if c.name == rule.EXIT_PLAN:
        return str(args.get("plan") or "(no plan given)")
    return f"{c.name} {c.raw or c.arguments}"
