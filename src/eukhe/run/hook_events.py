"""A run's hooks (issue 42): the events it fires, each with its payload in Claude Code's
field names, through `hooks.runner` (every hook bounded) and judged by `rules.hook`.

Where each fires, and where its answer is recorded, so that a replay after a crash reads
what the hooks answered instead of running them again (`hook_fires_once`):

- `SessionStart` (the first run a face starts in a session, `RunSpec.session_start`),
  `SubagentStart` (a subagent's run) and `UserPromptSubmit`, before the run's first round:
  one `hook` step of their own (a block ends the run failed with `HOOK_BLOCKED`, the reason
  its message; context joins the prompt);
- `PreToolUse`, in the permission gate, inside the step that records the call's decision
  (a deny is the call's denial, the hook's reason given to the model; a guard that fails
  denies, `hook_guard_fails_closed`); eukhe's own rules still judge what the hooks let by;
- `PermissionRequest`, in the same step, where the rules would ask a person: the hooks may
  answer for them; `Notification` (`permission_prompt`) runs beside the ask, unrecorded,
  and ends with the run (`RunHooks.close`);
- `PostToolUse` (a call that succeeded) or `PostToolUseFailure` (one whose result is an
  error, `rules.hook.after_tool`), inside the call's own step: a block's reason and any
  context follow the tool's result, for the model to read;
- `PreCompact` and `PostCompact` (`auto`), inside the compaction's step, before and after
  it: shown, they block nothing;
- `Stop` (a root session's run) and `SubagentStop` (a subagent's), when the run answers:
  their own `hook` step; a block is the run's next prompt, counted against
  `hookLimits.maxStopBlocks` (`stop_hook_bounded`); `StopFailure`, when the model failed
  the run (`rules.hook.failure_kind`): its own `hook` step, shown, it changes nothing;
- `SessionEnd`, outside any run (`run.runtime.Runtime.session_end`): `eukhe run`'s once its
  run has ended, the agent's as it is left.

Every payload names the session's transcript in Claude Code's format (`transcript_path`,
`hooks.transcript`), which the run's loop keeps whole as it logs each message, so a hook
reads every message up to the event; a subagent's names its parent's, and SubagentStop its
own (`agent_transcript_path`).

Only runs begun under step layout 4 (`run.spec.STEPS`) fire hooks in steps of their own: a
run begun earlier replays the steps it recorded, none of them a hook's.

Every hook's start, end and failure is one of the run's `hook` events."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from eukhe import fault_injection, waits
from eukhe.ai.reply import ToolCall
from eukhe.events import ShowEvent
from eukhe.hooks import payload
from eukhe.hooks.config import Hooks
from eukhe.hooks.runner import run_event
from eukhe.json_types import JsonMapping, JsonObject
from eukhe.rules import hook as rule
from eukhe.settings.secrets import NO_SECRETS, Redaction
from eukhe.store.hook_answers import HookAnswerError, HookAnswers

HOOK_BLOCKED = "hook_blocked"
"""The failure's kind of a run whose prompt a UserPromptSubmit hook blocked."""

FIRST_LAYOUT = 4
"""The step layout from which a run records its hooks' answers in steps of their own."""


class StepIds(Protocol):
    """The run's workflow as its hooks see it (`run.steps.Steps`): which recorded step runs now."""

    def step_id(self) -> int | None:
        """The recorded step in progress (None: none)."""
        ...


@dataclass
class RunHooks:
    """The hooks of one run: who it is (`session`, `run`), where it runs, the environment its
    tools get, its cancel, and where its events go."""

    hooks: Hooks
    session: str
    run: str
    cwd: Path
    env: Mapping[str, str]
    cancel: asyncio.Event
    show: ShowEvent
    subagent: bool = False
    clock: waits.Clock = field(default_factory=waits.LoopClock)
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    # where their answers are kept by the step they fire in (None: nowhere, a run with no store),
    # through the process's secrets
    answers: HookAnswers | None = None
    redact: Redaction = NO_SECRETS
    # the run's workflow, which says the recorded step the hooks fire in (`run.steps.Steps`:
    # DBOS's step id); None: no workflow (SessionEnd's hooks, outside any run)
    steps: StepIds | None = None
    beside: set[asyncio.Future[rule.Verdict]] = field(default_factory=set)  # notifications running
    # the session's transcript (`hooks.transcript`: a subagent's parent's), and a subagent's own
    transcript: str = ""
    agent_transcript: str = ""
    agent_type: str = "general-purpose"  # a subagent's agent (its SubagentStart/Stop's matcher's subject)
    model: str = ""  # the run's model, as SessionStart gives it
    # Claude Code's name of the permission mode in force now (`rules.hook.permission_mode`)
    mode: Callable[[], str] = lambda: "default"

    def has(self, event: rule.Event, subject: str | None = None) -> bool:
        return bool(self.hooks.for_event(event, subject))

    @property
    def stop_event(self) -> rule.Event:
        """The event of the run's answer: a subagent's SubagentStop, else Stop."""
        return rule.Event.SUBAGENT_STOP if self.subagent else rule.Event.STOP

    @property
    def stop_subject(self) -> str | None:
        """What the stop event's matcher is over: a subagent's agent (None: Stop's, none)."""
        return self.agent_type if self.subagent else None

    def _payload(self, event: rule.Event, fields: JsonMapping) -> JsonObject:
        here = payload.base(event, self.session, self.run, self.cwd, self.transcript, self.mode())
        return {**here, **fields}

    async def fire(
        self, event: rule.Event, fields: JsonMapping, subject: str | None = None, *, waited: bool = True
    ) -> rule.Verdict:
        """The event's hooks run (those its matcher takes of `subject`: a tool event's tool, a
        SessionStart's source, ...), each bounded, their verdicts combined; each one's start,
        end and failure shown. `waited`: the run waits for them, so their wait is shown with
        its deadline, and their answer is kept by the step they fire in; else (a
        notification) they run beside the run, neither."""
        hooks = self.hooks.for_event(event, subject)
        if not hooks:
            return rule.Verdict()
        tool = subject if event in rule.MATCHED else None
        what = f"{event.value}" + (f" {rule.claude_name(tool)}" if tool else "")
        key = self._key(event) if waited else None
        kept = await self._kept(key) if key is not None else None
        if rule.fire(kept is not None) is rule.Fire.REPLAY:  # answered before a crash: read, not run
            v = verdict_of(kept)
            self.show(
                "hook", f"{what}: {v.kind.value}, as answered before the run was cut off", {"state": "ended"}
            )
            return v
        # a wait with its exit, as every wait of a run shows: the latest the turn waits for them
        # (their longest timeout plus the grace), ended by `waited` (the status line's countdown)
        longest = max(rule.deadline(rule.begin(0, h.timeout_ms)) for h in hooks) / 1000
        until: JsonObject = {"state": "started"}
        if waited:
            until |= {"wait": "hook", "deadline": round(time.time() + longest, 3)}
        self.show("hook", f"{what}: {len(hooks)} hook{'s' if len(hooks) > 1 else ''}", until)
        try:
            got = await run_event(
                event,
                hooks,
                self._payload(event, fields),
                cwd=self.cwd,
                env=self.env,
                environ=self.environ,
                cancel=self.cancel,
                clock=self.clock,
            )
        finally:
            if waited:
                self.show("waited", "", {"wait": "hook"})
        for failure in got.verdict.failures:
            self.show("hook", failure, {"state": "failed"})
        for message in got.verdict.messages:
            self.show("hook", message, {"state": "message"})
        took = max((r.seconds for r in got.runs), default=0.0)
        said = f"{what}: {got.verdict.kind.value}" + (
            f": {got.verdict.reason[:200]}" if got.verdict.reason else ""
        )
        self.show(
            "hook", said, {"state": "ended", "verdict": got.verdict.kind.value, "seconds": round(took, 3)}
        )
        if key is not None:
            await self._keep(key, got.verdict)
        return got.verdict

    def _key(self, event: rule.Event) -> tuple[str, int, str] | None:
        """Where the event's answer is kept: the run, the recorded step the hooks fire in, the
        event (None: no store, or not inside a step: nothing to replay)."""
        step = self.steps.step_id() if self.steps is not None else None
        return None if self.answers is None or step is None else (self.run, step, event.value)

    async def _kept(self, key: tuple[str, int, str]) -> JsonObject | None:
        assert self.answers is not None
        try:
            return await asyncio.to_thread(self.answers.get, *key)
        except HookAnswerError as e:  # the store cannot say: the hooks run (said)
            self.show("hook", f"the hooks' earlier answer could not be read: {e}", {"state": "failed"})
            return None

    async def _keep(self, key: tuple[str, int, str], v: rule.Verdict) -> None:
        """The answer kept before the step's own record: a crash in between reads it again
        (`hook_fires_once`). A store that cannot keep it is said; the run goes on."""
        assert self.answers is not None
        try:
            await asyncio.to_thread(self.answers.keep, *key, self.redact.deep(verdict_json(v)))
        except HookAnswerError as e:
            self.show("hook", f"the hooks' answer could not be kept: {e}", {"state": "failed"})
            return
        fault_injection.reached("hook_answered")  # kept, the step not yet recorded

    async def pre_tool(self, c: ToolCall) -> rule.Verdict:
        fields = payload.tool_fields(c.name, c.arguments or {}, self.cwd, c.id)
        return await self.fire(rule.Event.PRE_TOOL_USE, fields, c.name)

    async def post_tool(self, c: ToolCall, content: str, error: bool) -> rule.Verdict:
        """After a call: PostToolUse with its answer in its tool's shape, or, when its result
        is an error, PostToolUseFailure with the error (`rules.hook.after_tool`)."""
        args = c.arguments or {}
        event = rule.after_tool(error)
        fields = payload.tool_fields(c.name, args, self.cwd, c.id)
        if event is rule.Event.POST_TOOL_USE:
            fields |= payload.response_fields(c.name, args, content, error, self.cwd)
        else:
            fields |= payload.failure_fields(c.name, content)
        return await self.fire(event, fields, c.name)

    async def prompt(self, text: str) -> rule.Verdict:
        return await self.fire(rule.Event.USER_PROMPT_SUBMIT, payload.prompt_fields(text))

    async def subagent_start(self) -> rule.Verdict:
        """A subagent's run begins: its context joins the subagent's prompt."""
        fields = payload.subagent_fields(self.run, self.agent_type)
        return await self.fire(rule.Event.SUBAGENT_START, fields, self.agent_type)

    async def stop(self, blocks: int, answer: str) -> rule.Verdict:
        fields = payload.stop_fields(blocks, answer)
        if self.subagent:
            fields |= payload.subagent_fields(self.run, self.agent_type, self.agent_transcript)
        return await self.fire(self.stop_event, fields, self.stop_subject)

    async def stop_failure(self, kind: str, details: str, answer: str) -> rule.Verdict:
        """The model failed the run (`kind`: `rules.hook.failure_kind`): shown, it changes nothing."""
        fields = payload.stop_failure_fields(kind, details, answer)
        return await self.fire(rule.Event.STOP_FAILURE, fields, kind)

    async def permission_request(self, c: ToolCall, why: str) -> rule.Verdict:
        """Before a person is asked about a call: the hooks may answer for them."""
        fields = payload.tool_fields(c.name, c.arguments or {}, self.cwd) | payload.asked_fields(why)
        return await self.fire(rule.Event.PERMISSION_REQUEST, fields, c.name)

    async def session_start(self, source: str) -> rule.Verdict:
        return await self.fire(
            rule.Event.SESSION_START, payload.session_start_fields(source, self.model), source
        )

    async def pre_compact(self, trigger: str) -> rule.Verdict:
        return await self.fire(rule.Event.PRE_COMPACT, payload.compact_fields(trigger), trigger)

    async def post_compact(self, trigger: str, summary: str) -> rule.Verdict:
        return await self.fire(rule.Event.POST_COMPACT, payload.compact_fields(trigger, summary), trigger)

    async def session_end(self, reason: str) -> rule.Verdict:
        return await self.fire(rule.Event.SESSION_END, {"reason": reason}, reason)

    def notify(self, kind: str, message: str) -> None:
        """A Notification's hooks, beside the run (a person is asked meanwhile): each bounded
        as every hook is; `close` ends those still running with the run."""
        if not self.has(rule.Event.NOTIFICATION, kind):
            return
        fields = payload.notification_fields(kind, message)
        task = asyncio.ensure_future(self.fire(rule.Event.NOTIFICATION, fields, kind, waited=False))
        self.beside.add(task)
        task.add_done_callback(self.beside.discard)

    async def close(self) -> None:
        """The run ends: the notifications' hooks still running are ended (their process
        groups killed, `hooks.runner`)."""
        for task in list(self.beside):
            task.cancel()
        await asyncio.gather(*self.beside, return_exceptions=True)


def verdict_json(v: rule.Verdict) -> JsonObject:
    """A verdict as its step records it."""
    return {
        "kind": v.kind.value,
        "reason": v.reason,
        "context": v.context,
        "failures": list(v.failures),
        "stop": v.stop,
        "stopReason": v.stop_reason,
        "messages": list(v.messages),
    }


def verdict_of(obj: object) -> rule.Verdict:
    """A verdict as a step recorded it (anything else: nothing to say)."""
    if not isinstance(obj, dict):
        return rule.Verdict()
    try:
        kind = rule.Kind(obj.get("kind"))
    except ValueError:
        return rule.Verdict()
    return rule.Verdict(
        kind,
        str(obj.get("reason") or ""),
        str(obj.get("context") or ""),
        tuple(str(x) for x in obj.get("failures") or ()),
        bool(obj.get("stop")),
        str(obj.get("stopReason") or ""),
        tuple(str(x) for x in obj.get("messages") or ()),
    )


async def recorded(
    step: Callable[[str, Callable[[], Awaitable[JsonObject]]], Awaitable[JsonObject]],
    fire: Callable[[], Awaitable[rule.Verdict]],
) -> rule.Verdict:
    """The hooks' verdict as the run's `hook` step: a replay reads the record and runs nothing."""

    async def work() -> JsonObject:
        return verdict_json(await fire())

    return verdict_of(await step("hook", work))


def followed(content: str, v: rule.Verdict, error: bool = False) -> str:
    """A tool's result with what its PostToolUse (`error`: PostToolUseFailure) hooks said
    after it, for the model."""
    event = rule.after_tool(error).value
    said = [f"[{event} hook] {v.reason}"] if v.kind is rule.Kind.BLOCK and v.reason else []
    said += [f"[{event} hook context] {v.context}"] if v.context else []
    return "\n\n".join([content, *said]) if said else content
