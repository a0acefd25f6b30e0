"""Hooks (issue 42): the user's commands at fixed points of a session, in Claude Code's
format, and what eukhe's laws say of them: every hook ends, its failure is shown, a guard
that fails denies, a Stop hook cannot keep a run alive, and each event fires once.

The runtime (`eukhe.hooks`) spawns a hook, feeds it its payload and reads what it
answers; this module decides everything else:

- `step`: one hook's process over time (`Proc`): at its timeout its process group gets
  SIGTERM, at the timeout plus `GRACE_MS` SIGKILL, and the turn goes on then whatever the
  process does (a child holding its pipes, a handler that ignores SIGTERM); the run's abort
  ends the wait at once (`hook_ends`);
- `verdict`: what one hook's end means for its event (`Ran` -> `Verdict`): exit 0 with
  its answer, exit 2 a block with its stderr as the reason, anything else a failure shown
  with its status and the tail of its stderr (`hook_failure_shown`); a guard's failure
  denies the call unless the hook says `"onFailure": "allow"` (`hook_guard_fails_closed`);
- `combine`: the verdicts of an event's hooks, run in parallel, as Claude Code combines
  them (a deny wins over an ask, an ask over an allow); a PreToolUse `ask` is a person's
  decision (`asks_a_person`: `rules.permission` asks it, and denies it headless);
- `after_stop`: a Stop (or SubagentStop) hook's block keeps the run going, counted; past
  `MAX_STOP_BLOCKS` blocks the run ends with a named failure (`stop_hook_bounded`);
- `fire`: a hook's answer recorded in the durable step it belongs to is read on a replay,
  never asked again (`hook_fires_once`);
- `matches`: Claude Code's matchers, against Claude Code's names of eukhe's tools.

Pure: standard library only. Times are integer milliseconds given by the runtime.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from eukhe.rules.states import Choice

TIMEOUT_MS = 60_000
"""A hook's timeout when it declares none (Claude Code's 60 s; `timeout` is in seconds)."""

GRACE_MS = 2_000
"""Between the timeout's SIGTERM and the SIGKILL: the turn goes on at the timeout plus this, whatever
the process does."""

MAX_STOP_BLOCKS = 8
"""`hooks.maxStopBlocks`: the Stop blocks a run takes before it ends with `STOP_LIMIT`."""

STDERR_SHOWN = 400
"""The characters of a hook's stderr shown with its failure at most (its tail, "…" included)."""

BLOCKS = 2
"""The exit status that blocks (Claude Code's)."""

STOP_LIMIT = "stop_hook_limit"
"""The failure's kind of a run whose Stop hooks blocked past the cap."""


class Event(Choice):
    """The events eukhe fires, in the order a session meets them."""

    SESSION_START = "SessionStart"
    USER_PROMPT_SUBMIT = "UserPromptSubmit"
    SUBAGENT_START = "SubagentStart"
    PRE_TOOL_USE = "PreToolUse"
    PERMISSION_REQUEST = "PermissionRequest"
    POST_TOOL_USE = "PostToolUse"
    POST_TOOL_USE_FAILURE = "PostToolUseFailure"
    PRE_COMPACT = "PreCompact"
    POST_COMPACT = "PostCompact"
    NOTIFICATION = "Notification"
    SUBAGENT_STOP = "SubagentStop"
    STOP = "Stop"
    STOP_FAILURE = "StopFailure"
    SESSION_END = "SessionEnd"


NOT_FIRED: Mapping[str, str] = {
    "Setup": "eukhe has no --init or --maintenance run to set a project up",
    "UserPromptExpansion": "eukhe's slash commands are the agent's own, none expands into a prompt",
    "PostToolBatch": "eukhe runs a round's calls one after another; each call's PostToolUse follows it",
    "PermissionDenied": "eukhe has no auto mode whose classifier denies calls; its rules' denials "
    "reach the model as the call's result",
    "TeammateIdle": "eukhe has no agent teams",
    "TaskCreated": "eukhe has no agent teams' shared task list",
    "TaskCompleted": "eukhe has no agent teams' shared task list",
    "Elicitation": "eukhe's MCP client asks no elicitation of a person",
    "ElicitationResult": "eukhe's MCP client asks no elicitation of a person",
    "WorktreeCreate": "eukhe makes a subagent's worktree itself; no hook stands in for git",
    "WorktreeRemove": "eukhe makes a subagent's worktree itself; no hook stands in for git",
    "ConfigChange": "a run takes its settings once, as it starts; eukhe watches none for changes",
    "InstructionsLoaded": "eukhe reads its instruction files as a run is put together, "
    "not as Claude Code loads CLAUDE.md into a conversation",
    "CwdChanged": "a run's working directory never changes; each bash call starts in it",
    "FileChanged": "eukhe watches no files",
}
"""Claude Code's events eukhe reads in settings and never fires, each with why: none has a
meaning in eukhe. Their hooks are left out, with a notice that says why."""


GUARDS = frozenset({Event.PRE_TOOL_USE, Event.PERMISSION_REQUEST})
"""The events whose hooks decide whether a call runs: a failure denies (fails closed)."""

STOPS = frozenset({Event.STOP, Event.SUBAGENT_STOP})
"""The events whose block keeps a run going (counted against `MAX_STOP_BLOCKS`)."""

BLOCKABLE = frozenset(
    {
        Event.USER_PROMPT_SUBMIT,
        Event.PRE_TOOL_USE,
        Event.PERMISSION_REQUEST,
        Event.POST_TOOL_USE,
        Event.POST_TOOL_USE_FAILURE,
        Event.STOP,
        Event.SUBAGENT_STOP,
    }
)
"""The events a hook's exit 2 blocks (Claude Code's; at PostToolUse and PostToolUseFailure its
reason follows the call's result, for the model); at the others its stderr is only shown."""

MATCHED = frozenset(
    {Event.PRE_TOOL_USE, Event.PERMISSION_REQUEST, Event.POST_TOOL_USE, Event.POST_TOOL_USE_FAILURE}
)
"""The events whose matcher names a tool."""

MATCHED_ON: Mapping[Event, str] = {
    Event.SESSION_START: "source",
    Event.SUBAGENT_START: "agent_type",
    Event.PRE_COMPACT: "trigger",
    Event.POST_COMPACT: "trigger",
    Event.NOTIFICATION: "notification_type",
    Event.SUBAGENT_STOP: "agent_type",
    Event.STOP_FAILURE: "error",
    Event.SESSION_END: "reason",
}
"""The events whose matcher is over one of their payload's fields, as Claude Code's are
(`startup|resume`, `auto`, `permission_prompt`, a subagent's type, a failure's kind); the
events in neither set match everything (UserPromptSubmit, Stop)."""


def has_matcher(event: Event) -> bool:
    return event in MATCHED or event in MATCHED_ON


CLAUDE_NAMES: Mapping[str, str] = {
    "bash": "Bash",
    "read": "Read",
    "write": "Write",
    "edit": "Edit",
    "grep": "Grep",
    "glob": "Glob",
    "ls": "LS",
    "web_fetch": "WebFetch",
    "spawn": "Task",
    "exit_plan": "ExitPlanMode",
    "todo": "TodoWrite",
    "job_output": "BashOutput",
    "job_kill": "KillShell",
}
"""eukhe's tools under Claude Code's names, for matching and for `tool_name`; an MCP tool is
`mcp__<server>__<tool>`; any other tool keeps its own name."""


def claude_name(tool: str) -> str:
    return CLAUDE_NAMES.get(tool, tool)


def after_tool(error: bool) -> Event:
    """The event after a call ends: PostToolUse when it succeeded, PostToolUseFailure when
    its result is an error (Claude Code's: a non-zero exit is a failure)."""
    return Event.POST_TOOL_USE_FAILURE if error else Event.POST_TOOL_USE


FAILS = ("model_error", "run_limit")
"""The failed runs' codes that fire StopFailure: the model failed the run, or it ran out of rounds
(a hook's own block, a stop's cap and an abort fire none: they are the hooks' or a person's)."""

_FAILURE_WORDS = (
    ("rate_limit", ("429", "rate limit", "rate_limited", "too many requests")),
    ("authentication_failed", ("401", "403", "auth", "api key", "unauthorized", "forbidden")),
    ("billing_error", ("billing", "credit", "quota", "payment")),
    ("max_output_tokens", ("output limit", "max_tokens", "length stop", "cut at")),
    ("invalid_request", ("400", "404", "422", "bad request", "not found", "invalid")),
    ("server_error", ("500", "502", "503", "529", "overloaded", "server", "timed out", "connection")),
)


def failure_kind(code: str, message: str) -> str | None:
    """StopFailure's `error` for a failed run (`code`, `message`: its outcome's), in Claude
    Code's kinds (`rate_limit`, `authentication_failed`, `billing_error`, `invalid_request`,
    `server_error`, `max_output_tokens`, `unknown`), the first whose words the message holds;
    None: the run's failure fires no StopFailure (`FAILS`)."""
    if code not in FAILS:
        return None
    low = message.lower()
    for kind, words in _FAILURE_WORDS:
        if any(w in low for w in words):
            return kind
    return "unknown"


def permission_mode(plan: bool, mode: str, policy: str) -> str:
    """Claude Code's `permission_mode` for eukhe's mode in force: `plan` in plan mode; with
    the sandbox off (`danger-full-access`) and nobody asked unless a rule says so,
    `bypassPermissions`; where nothing is ever asked (policy `never`: an ask is a denial),
    `dontAsk`; writes in the workspace run unasked (`workspace-write`, `on-request`),
    `acceptEdits`; anything else (`untrusted`, `read-only`) asks for edits: `default`."""
    if plan:
        return "plan"
    if mode == "danger-full-access" and policy in ("on-request", "never"):
        return "bypassPermissions"
    if policy == "never":
        return "dontAsk"
    if mode == "workspace-write" and policy == "on-request":
        return "acceptEdits"
    return "default"


def matches(matcher: str, tool: str) -> bool:
    """Whether a matcher takes the tool (its Claude Code name): empty or `*` takes every
    tool, else the matcher is a regular expression over the whole name (`Edit|Write`,
    `mcp__github__.*`). A matcher that is no regular expression takes none (the settings
    say so when they are read): `re` raises `re.error` for most, `OverflowError` for a
    repetition too large (`a{4294967296}`), `RecursionError` for one nested too deep."""
    if matcher in ("", "*"):
        return True
    try:
        return re.fullmatch(matcher, claude_name(tool)) is not None
    except (re.error, OverflowError, RecursionError, ValueError):
        return False


# ---------------------------------------------------------------- hook_ends


class Phase(Choice):
    RUNNING = "running"
    TERMED = "termed"  # its timeout came: SIGTERM sent
    ENDED = "ended"  # it exited (and its pipes closed): its answer is read
    GONE = "gone"  # the turn went on without it: SIGKILL at the timeout plus the grace, or the abort


class Action(Choice):
    WAIT = "wait"  # until the process ends, or `Proc.wake`
    TERM = "term"  # SIGTERM to its process group
    KILL = "kill"  # SIGKILL to its process group, and stop waiting: the turn goes on
    DONE = "done"  # nothing more: read its answer (ENDED) or go on (GONE)


class Input(Choice):
    TICK = "tick"  # the clock, at `now`
    EXITED = "exited"  # the process exited and its pipes closed
    ABORT = "abort"  # the run's abort


@dataclass(frozen=True)
class Proc:
    """One hook's process: started at `started` ms, with its timeout (ms); `phase` since `since`;
    `timed_out`: its timeout came before it ended; `aborted`: the run's abort ended the wait."""

    started: int
    timeout: int
    phase: Phase = Phase.RUNNING
    since: int = 0
    timed_out: bool = False
    aborted: bool = False

    @property
    def wake(self) -> int:
        """When the runtime must look again (ms) if nothing happens before: running, at its
        timeout (SIGTERM); signalled, at `deadline` (SIGKILL, and the turn goes on), however
        late the SIGTERM went; settled, never again (`since`)."""
        if self.phase is Phase.RUNNING:
            return self.started + self.timeout
        if self.phase is Phase.TERMED:
            return deadline(self)
        return self.since

    @property
    def settled(self) -> bool:
        return self.phase in (Phase.ENDED, Phase.GONE)


def begin(now: int, timeout_ms: int | None) -> Proc:
    """A hook's process, just started (its payload written to stdin, and stdin closed); a
    `timeout_ms` of None (or not above 0): `TIMEOUT_MS`."""
    timeout = TIMEOUT_MS if timeout_ms is None or timeout_ms <= 0 else timeout_ms
    return Proc(now, timeout, Phase.RUNNING, now)


def deadline(p: Proc) -> int:
    """The latest the turn waits for this hook (ms): its timeout plus the grace."""
    return p.started + p.timeout + GRACE_MS


def step(p: Proc, x: Input, now: int) -> tuple[Proc, Action]:
    """The process after one input at `now` (inputs come at times that never go back), and
    what the runtime does. Settled, nothing changes (DONE). An abort settles at once (KILL).
    An exit settles (DONE); one at or after the timeout is a timeout still, whichever input
    the runtime read first. At or after `deadline` the turn goes on (KILL); at or after the
    timeout, before it, SIGTERM once (TERM); else WAIT until `Proc.wake`."""
    if p.settled:
        return p, Action.DONE
    if x is Input.EXITED:
        late = p.timed_out or now >= p.started + p.timeout
        return Proc(p.started, p.timeout, Phase.ENDED, now, late, p.aborted), Action.DONE
    if x is Input.ABORT:
        return Proc(p.started, p.timeout, Phase.GONE, now, p.timed_out, True), Action.KILL
    if now >= deadline(p):
        return Proc(p.started, p.timeout, Phase.GONE, now, True, p.aborted), Action.KILL
    if p.phase is Phase.RUNNING and now >= p.started + p.timeout:
        return Proc(p.started, p.timeout, Phase.TERMED, now, True, p.aborted), Action.TERM
    return p, Action.WAIT


# ---------------------------------------------------------------- what a hook answered


class Kind(Choice):
    PASS = "pass"  # nothing to say: the event goes on as it would
    ALLOW = "allow"  # a guard's allow: the call runs without an ask
    ASK = "ask"  # a guard's ask: a person decides (headless: denied)
    DENY = "deny"  # a guard's deny: the call does not run, the reason goes to the model
    BLOCK = "block"  # a prompt blocked, a Stop refused (the run goes on), a tool's result answered


RANK = {Kind.PASS: 0, Kind.ALLOW: 1, Kind.ASK: 2, Kind.BLOCK: 3, Kind.DENY: 4}
"""What wins when an event's hooks answer differently: a deny over an ask over an allow."""


@dataclass(frozen=True)
class Answer:
    """A hook's JSON answer on stdout (exit 0), as the runtime parsed it; Claude Code's
    fields: `decision` ("block" or "approve"), `reason`, `continue`, `stopReason`,
    `systemMessage`, `hookSpecificOutput.permissionDecision` (allow, deny, ask) and its
    reason, `additionalContext`, whether it gave `updatedInput`. `plain`: stdout that is no
    JSON object (added as context where Claude Code adds it)."""

    decision: str | None = None
    reason: str = ""
    proceed: bool = True  # `continue`
    stop_reason: str = ""
    system_message: str = ""
    permission: str | None = None
    permission_reason: str = ""
    context: str = ""
    updated_input: bool = False
    plain: str = ""


@dataclass(frozen=True)
class Ran:
    """How one hook ended: `proc` settled; `status` its exit status (-N for a signal, None
    when the turn went on without it); its stderr's tail; its answer (None: stdout looked
    like JSON and was not a JSON object); whether the hook opens a guard on failure."""

    command: str
    proc: Proc
    status: int | None
    stderr: str = ""
    answer: Answer | None = Answer()
    open_on_failure: bool = False


@dataclass(frozen=True)
class Verdict:
    """An event's hooks, judged: `kind`; the reason given to the model; the context added;
    each failure's line, shown once; `stop`: a hook said `continue: false` (the run ends,
    answered, with `stop_reason`); the people's lines (`systemMessage`)."""

    kind: Kind = Kind.PASS
    reason: str = ""
    context: str = ""
    failures: tuple[str, ...] = ()
    stop: bool = False
    stop_reason: str = ""
    messages: tuple[str, ...] = ()


def stderr_tail(text: str) -> str:
    """The end of a hook's stderr shown with its failure: at most `STDERR_SHOWN` characters,
    "…" first when it was cut."""
    text = text.strip()
    return text if len(text) <= STDERR_SHOWN else "…" + text[len(text) - STDERR_SHOWN + 1 :]


def _seconds(ms: int) -> str:
    return f"{ms // 1000} s" if ms % 1000 == 0 else f"{ms} ms"


def failure_line(event: Event, r: Ran) -> str | None:
    """The line that shows a hook's failure (None: it did not fail): what it was, how it
    ended, the tail of its stderr. A hook fails when it timed out, ended with no exit status,
    was killed by a signal, exited with anything but 0 or `BLOCKS`, or exited 0 with stdout
    that looked like JSON and was no JSON object; an aborted hook did not fail (the run's
    abort is shown once, as the run's). Exit 2's stdout is not read (its stderr is the
    reason), so it never fails for it."""
    if r.proc.aborted:
        return None
    if r.proc.timed_out:
        how = f"timed out after {_seconds(r.proc.timeout)}"
    elif r.status is None:
        how = "ended with no exit status"
    elif r.status == BLOCKS or (r.status == 0 and r.answer is not None):
        return None
    elif r.status == 0:
        how = "answered with output that is no JSON object"
    elif r.status < 0:
        how = f"was killed by signal {-r.status}"
    else:
        how = f"exited {r.status}"
    err = stderr_tail(r.stderr)
    return f"{event.value} hook `{r.command[:80]}` {how}" + (f": {err}" if err else "")


def verdict(event: Event, r: Ran) -> Verdict:
    """What one hook's end means for its event: aborted, nothing (PASS); failed, its failure
    line, and a guard's failure denies with the line as the reason unless the hook opens on
    failure; exit 2 blocks where the event can be blocked (a guard: DENY), with its stderr as
    the reason, and elsewhere shows its stderr; exit 0, its answer."""
    if r.proc.aborted:
        return Verdict()
    failed = failure_line(event, r)
    if failed is not None:
        if event in GUARDS and not r.open_on_failure:
            return Verdict(Kind.DENY, f"denied: the guard failed ({failed})", failures=(failed,))
        return Verdict(failures=(failed,))
    if r.status == BLOCKS:
        reason = stderr_tail(r.stderr)
        if event not in BLOCKABLE:
            return Verdict(messages=(reason,) if reason else ())
        reason = reason or f"blocked by the {event.value} hook"
        return Verdict(Kind.DENY if event in GUARDS else Kind.BLOCK, reason)
    a = r.answer if r.answer is not None else Answer()
    messages = (a.system_message,) if a.system_message else ()
    stop = not a.proceed
    plain = a.plain if event in (Event.USER_PROMPT_SUBMIT, Event.SESSION_START) else ""
    context = a.context or plain
    if event in GUARDS and a.permission in ("allow", "deny", "ask"):
        kind = {"allow": Kind.ALLOW, "deny": Kind.DENY, "ask": Kind.ASK}[a.permission]
        reason = a.permission_reason or a.reason
        if kind is Kind.DENY and not reason:
            reason = f"denied by the {event.value} hook"
        return Verdict(kind, reason, context, (), stop, a.stop_reason, messages)
    if a.decision == "block" and event in BLOCKABLE:
        kind = Kind.DENY if event in GUARDS else Kind.BLOCK
        reason = a.reason or f"blocked by the {event.value} hook"
        return Verdict(kind, reason, context, (), stop, a.stop_reason, messages)
    if a.decision == "approve" and event in GUARDS:
        return Verdict(Kind.ALLOW, a.reason, context, (), stop, a.stop_reason, messages)
    return Verdict(Kind.PASS, "", context, (), stop, a.stop_reason, messages)


def combine(verdicts: Sequence[Verdict]) -> Verdict:
    """An event's hooks together: the strongest kind wins (`RANK`), with its reasons; every
    context, failure and message is kept, in the hooks' order; any stop stops."""
    if not verdicts:
        return Verdict()
    top = max((v.kind for v in verdicts), key=RANK.__getitem__)
    reasons = [v.reason for v in verdicts if v.kind is top and v.reason]
    stops = [v for v in verdicts if v.stop]
    return Verdict(
        top,
        "\n".join(reasons),
        "\n".join(v.context for v in verdicts if v.context),
        tuple(f for v in verdicts for f in v.failures),
        bool(stops),
        "\n".join(v.stop_reason for v in stops if v.stop_reason),
        tuple(m for v in verdicts for m in v.messages),
    )


def asks_a_person(v: Verdict) -> bool:
    """Whether a PreToolUse verdict asks a person about the call (its hooks' strongest answer
    is `ask`): the call then carries the guard's ask and its reason to the permission rule
    (`rules.permission.Call.guard_asks`), which asks whatever else would have let it run,
    and denies it where nobody can answer. An `allow` asks nothing and opens nothing: the
    rules judge the call as if the hooks had said nothing."""
    return v.kind is Kind.ASK


def answers_ask(v: Verdict) -> Kind | None:
    """What a PermissionRequest verdict does to the ask it came before: a deny (a guard that
    failed included) is a no with its reason, an allow a yes to this call (ALLOW); anything
    else (an ask, nothing to say) leaves the ask to the person (None)."""
    return v.kind if v.kind in (Kind.DENY, Kind.ALLOW) else None


# ---------------------------------------------------------------- stop_hook_bounded


class StopNext(Choice):
    END = "end"  # the run ends as it would have
    GO_ON = "go_on"  # a hook blocked the stop: the run goes on, the reason its next input
    FAIL = "fail"  # blocked past the cap: the run ends failed, `STOP_LIMIT`


def after_stop(blocks: int, cap: int, v: Verdict) -> tuple[int, StopNext]:
    """After a Stop (or SubagentStop) event: the run's blocks so far and what it does. A
    block counts; past `cap` blocks (`hooks.maxStopBlocks`) the run fails, whatever the
    hooks say; a stop (`continue: false`) ends it."""
    if v.stop or v.kind is not Kind.BLOCK:
        return blocks, StopNext.END
    if blocks >= max(cap, 0):
        return blocks, StopNext.FAIL
    return blocks + 1, StopNext.GO_ON


def stop_hook_active(blocks: int) -> bool:
    """Claude Code's `stop_hook_active`: the run goes on because a Stop hook blocked it."""
    return blocks > 0


# ---------------------------------------------------------------- hook_fires_once


class Fire(Choice):
    RUN = "run"  # no record: run the hooks, then record what they answered
    REPLAY = "replay"  # the step recorded it: read that, run nothing


def fire(recorded: bool) -> Fire:
    """Whether an event's hooks run: not when the durable step they belong to has their
    answer recorded (a replay after a crash reads it)."""
    return Fire.REPLAY if recorded else Fire.RUN
