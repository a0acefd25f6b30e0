"""The generation loop: one user turn, run against a model, with tools, until it
ends answered, aborted or failed with its cause (H4, H4.8).

The loop decides nothing itself. Each phase's outcome becomes an input of the H4
model (`rules.run.step`), each reply is first read by the H4.8 recoveries
(`rules.recovery.step`, whose act becomes the reply the run reads), and the
texts come from `notes`. The loop moves bytes, keeps time and runs tools.

Notes go with the request only, never into the transcript; a failed reply stays
in the transcript as a failed message and out of the next context.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import math
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from eukhe import waits
from eukhe.admission import Registry, Slots
from eukhe.ai.image import Image
from eukhe.ai.jobs import Job, PollFailed
from eukhe.ai.jobs import deadline as ai_deadline
from eukhe.ai.provider import Deferred, Provider
from eukhe.ai.reply import Failure, FailureKind, Reply, Stop, ToolCall
from eukhe.ai.request import Message, Request, Tool
from eukhe.hooks.transcript import Transcript
from eukhe.json_types import JsonMapping, JsonObject
from eukhe.rules import classify, recovery
from eukhe.rules import run as run_rule
from eukhe.rules.recovery import Act, Out
from eukhe.rules.retry import Retry, model_retry, retry_wait_ms
from eukhe.rules.wait import End
from eukhe.run import notes
from eukhe.run import secrets as redacted
from eukhe.run.call import ModelCall, refused
from eukhe.run.effects import Direct, Effects
from eukhe.run.hook_events import RunHooks, followed
from eukhe.run.leak import Scan as Scanned
from eukhe.run.outcome import Ending, RunOutcome
from eukhe.run.repeat import rounds_in_a_row, same_calls
from eukhe.settings.run import Settings
from eukhe.settings.secrets import Redaction

ABORT_GRACE = run_rule.ABORT_GRACE
"""Seconds a phase handler that ignores the cancel is given before it is dropped (H4.6)."""

RequestHook = Callable[[Request], Awaitable[Request]]
"""A change to each request before it is sent (a test's, to stall or break one): not the user's
hooks, which are `RunHooks`."""
ToolRunner = Callable[..., Awaitable[tuple[str, bool]]]
"""(call) -> (result, is_error); called with `outside=True` for a call the permission rule
lets run outside the sandbox."""
Scan = Callable[[str, Mapping[str, JsonMapping]], Scanned]
"""The leak scan (`run.leak.scan`): tool-call markup in a reply's text, against the offered tools."""
Compact = Callable[[Sequence[Message]], Awaitable[Mapping[str, str]]]
"""A compaction (H4): given the run's messages so far, log them into the chat and give
the run's new system prompt with the newly pinned view, `{"system": ...}` (and `"note"`, the
message the run goes on from, when not `notes.compacted`'s), or say why not, `{"error": ...}`."""


@dataclass(frozen=True)
class RunRules:
    """The rules the loop asks: H4's step, the H4.8 recoveries' step, the classifier of replies.
    A tie test swaps one to show the loop does what the rule says."""

    step: Callable[[run_rule.Cfg, run_rule.Run, run_rule.Input], run_rule.Run] = run_rule.step
    recover: Callable[[recovery.RCfg, recovery.Rec, recovery.Reply], recovery.Step] = recovery.step
    classify: Callable[[classify.Seen], classify.Read] = classify.classify


class Decided(Protocol):
    """The gate's decision on a call (`run.permit.Permit`), as its step records it."""

    def json(self) -> JsonObject: ...


class Permits(Protocol):
    """The run's permission gate (`run.permit.Gate`): whether a call runs, and where."""

    async def permit(self, c: ToolCall) -> Decided: ...


class Inbox(Protocol):
    """What waits for a run at its round ends (`run.delivery.Delivery`)."""

    async def round_end(self, steers: bool) -> list[str]:
        """The user messages placed at this round end, oldest first: its children's reports, and
        the person's steers when the run takes them here (`steers`)."""
        ...


BYTES_PER_TOKEN = 3
"""The threshold's estimate of a request's tokens from its bytes: low, so it errs early."""

RESULT_SHOWN = 2_000
"""Characters of a tool's result its event carries: the view shows a line of it, and opens it."""

ARGUMENTS_SHOWN = 64 * 1024
"""The most of a call's arguments (bytes of JSON) its `tool` event carries whole: an editor
shows the file it names and the change it makes; a bigger call shows only its text."""

RESERVE = 16_384
"""Tokens of the context window kept free for the reply (at most a quarter of it), unless
maxOutputTokens says how many a reply may have."""


async def race(
    work: Awaitable[Any],
    cancel: asyncio.Event,
    grace: float = ABORT_GRACE,
    stop: asyncio.Future[Any] | None = None,
) -> tuple[bool, Any]:
    """`waits.race` of `work` against the run's cancel, with no deadline (each phase
    bounds its own work): (True, result) if it finished first; (False, None) once
    cancelled, after giving `work` up to `grace` seconds to honour its own
    cancellation. `stop`: the run's one waiter on its cancel, shared by its races."""
    raced = await waits.race(work, None, cancel, grace=grace, watch=stop)
    if raced.end is End.EVENT:
        return True, raced.result()
    return False, None


@dataclass
class _LiveRun:
    """The live state of one run: the H4 model's state and what the phases carry
    from one to the next (the request, the job, the calls to run, the note)."""

    cfg: run_rule.Cfg
    state: run_rule.Run
    ctx: list[Message]
    out: RunOutcome
    stop: asyncio.Future[Any]  # the run's one waiter on its cancel signal
    prompt: str = ""
    system: str = ""  # the system prompt: a compaction gives a new one (the newly pinned view)
    rec: recovery.Rec = recovery.START
    prepared: Request | None = None
    note: str | None = None
    idle: float = 0.0  # the stream idle deadline, doubled after each stall
    job: Job | None = None
    sent_at: float = 0.0
    deadline: float = 0.0
    pending: list[ToolCall] = field(default_factory=list)
    cut: bool = False  # the calls came with a length stop: none runs
    tokens: int | None = None
    retries_used: int = 0
    failure_text: str = ""
    overflow: str = ""  # the provider's words when it said the context is too long
    streamed: list[str] = field(default_factory=list)  # the text the request in flight has shown
    # the calls of the reply in flight as the model sent them, by id: its step records them
    # redacted, and only the tools (and the permission gate that decides on them) get these
    sent: dict[str, ToolCall] = field(default_factory=dict)
    offered: dict[str, JsonObject] = field(default_factory=dict)
    answer: str | None = None  # the round gave the run's answer (a plan nobody here can approve)

    def go(
        self, step: Callable[[run_rule.Cfg, run_rule.Run, run_rule.Input], run_rule.Run], x: run_rule.Input
    ) -> None:
        """The model's step for input `x`."""
        self.state = step(self.cfg, self.state, x)


@dataclass
class RunLoop:
    provider: Provider  # a `Deferred` one when `background`
    model: str
    tools: Sequence[Tool]
    run_tool: ToolRunner
    settings: Settings = field(default_factory=Settings)
    request_hooks: Sequence[RequestHook] = ()
    scan: Scan | None = None
    # (kind, text, data): what the run shows (`eukhe.events`), with its event's fields if any
    show: Callable[..., None] = lambda kind, text, data=None: None
    cancel: asyncio.Event = field(default_factory=asyncio.Event)
    background: bool = False  # deferred answers: start a job and poll it (a provider with start/poll/cancel)
    window: str | None = None  # the requested window: "15m", "1h", "24h"
    poll_interval: float = 5.0
    rules: RunRules = field(default_factory=RunRules)  # swapped only by tie tests
    effects: Effects = field(default_factory=Direct)  # the workflow's recorded steps; else in memory
    system: str = ""  # the system prompt (e.g. the skills offered)
    interactive: bool = True  # admission class (H3): a session turn; compaction, subagents: False
    # every model request holds a slot of its provider while it runs (the owner's, in a durable run)
    admission: Slots = field(default_factory=Registry)
    replay_safe: frozenset[str] = frozenset()  # tools a crash may run again (H7.4)
    compact: Compact | None = None  # None: no memory to compact into (an overflow then fails the run)
    # the user messages placed at a round end (`run.delivery`: its place, a durable step of its own,
    # so a replay takes the same): the reports of the run's children (H5.4), and the user's steers when
    # the flag says the run takes them (`rules.run.takes_steers`)
    inbox: Inbox | None = None
    # every secret value the process knows (`run.secrets`): out of every message, reply, tool
    # result, call's arguments, error and event before it is stored, shown or sent
    redact: Redaction = field(default_factory=Redaction)
    gate: Permits | None = None  # None: every call runs (in memory, tests); a run's: its permission gate
    # the bytes of the images the prompt attaches (`Message.images`), by SHA-256: read from the
    # store's image table, they ride on each request, never on a recorded step
    image_data: Mapping[str, bytes] = field(default_factory=dict)
    # the user's hooks of the run (`run.hook_events`), here its PostToolUse: what they say follows a
    # call's result
    user_hooks: RunHooks | None = None
    # the session's transcript in Claude Code's format (`hooks.transcript`), which its hooks read:
    # each message the run logs goes into it as it is logged (None: none kept)
    transcript: Transcript | None = None

    def __post_init__(self) -> None:
        shown = self.show  # every event the run shows goes through here, its text and fields redacted
        self.show = lambda kind, text, data=None: shown(kind, self.redact(text), self.redact.deep(data))

    async def run(
        self,
        prompt: str,
        context: Sequence[Message] = (),
        earlier: Sequence[Message] = (),
        images: Sequence[Image] = (),
    ) -> RunOutcome:
        """A run of `prompt` after `context` (new messages, logged with it: the reports
        placed at its start) and `earlier` (its conversation so far, logged before);
        `images`: the prompt's attached images (their bytes in `image_data`)."""
        stop = asyncio.ensure_future(self.cancel.wait())
        try:
            return await self._run(prompt, context, earlier, stop, tuple(images))
        finally:
            stop.cancel()

    async def _run(
        self,
        prompt: str,
        context: Sequence[Message],
        earlier: Sequence[Message],
        stop: asyncio.Future[Any],
        images: tuple[Image, ...],
    ) -> RunOutcome:
        s = self.settings
        polls = max(int(self.window_seconds() / max(self.poll_interval, 1e-3)), 1) if self.background else 0
        cfg = run_rule.limits(s.max_tool_rounds, s.max_retries, s.retry_enabled, polls=polls)
        prompt = self.redact(prompt)  # the run's messages hold no secret, from the first on
        new = [*(self._clean(m) for m in context), Message("user", prompt, images=images)]
        ctx: list[Message] = [*earlier, *new]
        t = _LiveRun(
            cfg,
            run_rule.start(cfg),
            ctx,
            RunOutcome(Ending.FAILED, transcript=list(ctx)),
            stop,
            prompt,
            self.system,
        )
        t.idle = s.stream_idle_timeout_ms / 1000.0
        t.offered = {tool.name: dict(tool.schema) for tool in self.tools}
        for msg in new:
            await self.effects.append(msg)
            self._transcribe(msg)
        caps = {"rounds": cfg.cap, "notes": cfg.notes, "retries": cfg.retries}
        self.show("run", prompt[:200], {"caps": caps})
        phases = {
            run_rule.Phase.PREPARE: self._prepare_phase,
            run_rule.Phase.CALL: self._call_phase,
            run_rule.Phase.POLL: self._poll_phase,
            run_rule.Phase.TOOLS: self._tools_phase,
            run_rule.Phase.COMPACT: self._compact_phase,
            run_rule.Phase.OVERFLOW: self._compact_phase,
        }
        while t.state.live:
            if self.cancel.is_set():
                t.go(self.rules.step, run_rule.ABORT)
                break
            if not await phases[t.state.phase](t):
                break
        return self._ended(t.state, t.out, t.failure_text)

    # ---------------------------------------------------------------- the phases
    # Each runs one phase of the H4 model and feeds its outcome to the model as an
    # input; False: the run ends now (aborted).

    async def _prepare_phase(self, t: _LiveRun) -> bool:
        finished, got = await race(self._prepare(self._request(t)), self.cancel, stop=t.stop)
        if not finished:
            t.go(self.rules.step, run_rule.ABORT)
            return False
        if isinstance(got, BaseException):
            t.failure_text = f"a before_request hook failed: {type(got).__name__}: {got}"
            t.go(self.rules.step, run_rule.Input(run_rule.Kind.HOOK_FAILED))
            return True
        t.prepared = got
        t.go(self.rules.step, run_rule.Input(run_rule.Kind.PREPARED, compact=self._past_threshold(got)))
        return True

    async def _compact_phase(self, t: _LiveRun) -> bool:
        """A threshold or overflow compaction (H4): the run's messages so far go into the
        chat, and the run goes on from the newly pinned view (its entry) with one user
        message that says so. The context always ends a round here (every call has its
        result), so no call is ever cut from its result."""
        overflow = t.state.phase is run_rule.Phase.OVERFLOW
        self.show("compact", notes.compacting(overflow, t.overflow))
        got: Mapping[str, str] | BaseException = {}
        if len(t.ctx) <= 1:  # only the request itself: nothing of the run to move (none found)
            got = {"none": "the context holds nothing of this run but its request, so nothing can move"}
        elif self.compact is not None:
            work = self.effects.step("compact", functools.partial(self._compacted, tuple(t.out.transcript)))
            finished, got = await race(work, self.cancel, stop=t.stop)
            if not finished:
                t.go(self.rules.step, run_rule.ABORT)
                return False
        if isinstance(got, BaseException):
            got = {"error": f"{type(got).__name__}: {got}"}
        entry = "system" in got
        if entry:
            t.system = got["system"]
            t.ctx = [Message("user", got.get("note") or notes.compacted(t.prompt))]
            finished, prepared = await race(self._prepare(self._request(t)), self.cancel, stop=t.stop)
            if not finished:  # the new request's hooks, under the run's cancel as in prepare
                t.go(self.rules.step, run_rule.ABORT)
                return False
            if isinstance(prepared, BaseException):
                got = {"error": f"a before_request hook failed: {type(prepared).__name__}: {prepared}"}
            else:
                t.prepared = prepared
        failed = "error" in got
        t.go(self.rules.step, run_rule.Input(run_rule.Kind.COMPACTED, entry=entry, failed=failed))
        if not t.state.live:
            cause = (
                got.get("error")
                or got.get("none")
                or "there is no chat memory to move the run's messages into"
            )
            t.failure_text = notes.compaction_failed(overflow, cause, t.overflow)
        return True

    async def _compacted(self, transcript: Sequence[Message]) -> Mapping[str, str] | BaseException:
        assert self.compact is not None
        try:
            got: Mapping[str, str] = self.redact.deep(dict(await self.compact(transcript)))
            return got  # recorded by its step: the new system prompt, or why not
        except Exception as e:  # a compaction that breaks fails it, shown with its cause
            return e

    async def _call_phase(self, t: _LiveRun) -> bool:
        """The request goes out: streamed, or (deferred) started as a job."""
        assert t.prepared is not None
        t.out.requests.append(t.prepared)
        if self.background:
            start = functools.partial(self._deferred.start, t.prepared, self.window)
            t.sent = {}
            work = self.effects.step("start", functools.partial(self._model.kept, start, refused, t.sent))
        else:
            t.streamed, t.sent = [], {}
            work = self.effects.step(
                "model", functools.partial(self._model.stream, t.prepared, t.idle, t.streamed, t.sent)
            )
        finished, got = await race(work, self.cancel, stop=t.stop)
        return await self._answered(t, finished, got)

    async def _poll_phase(self, t: _LiveRun) -> bool:
        """The deferred job is polled after its interval."""
        got = None
        until = {"deadline": round(t.deadline, 3) if t.deadline else None}  # epoch seconds
        text = f"deferred job {t.job.id if t.job else ''}: next poll in {self.poll_interval:.0f} s"
        self.show("poll", text, {"wait": "poll", "next": _at(self.poll_interval), **until})
        finished, _ = await race(self.effects.sleep(self.poll_interval), self.cancel, stop=t.stop)
        self.show("waited", "", {"wait": "poll"})
        if finished:
            assert t.job is not None, "a poll is of the job the deferred request started"
            poll = functools.partial(self._deferred.poll, t.job)
            t.sent = {}
            work = self.effects.step("poll", functools.partial(self._model.kept, poll, PollFailed, t.sent))
            finished, got = await race(work, self.cancel, stop=t.stop)
        return await self._answered(t, finished, got)

    async def _answered(self, t: _LiveRun, finished: bool, got: Any) -> bool:
        """What a request or a poll gave: a job still deferred, a failed poll, or a reply."""
        if not finished:
            await self._cancel_job(t.job)
            t.go(self.rules.step, run_rule.ABORT)
            if "".join(t.streamed).strip():  # what the person saw stream stays in the transcript,
                # marked cut and failed: a failed reply stays out of the chat's memory (H4.6)
                cut = Message("assistant", "".join(t.streamed) + notes.CUT_BY_ABORT, is_error=True)
                await self._log(t.out, cut)
            return False
        if isinstance(got, Job):  # still deferred: poll it until its deadline
            if t.job is None:
                t.job, t.sent_at = got, await self.effects.now()
                t.deadline = ai_deadline(got, self.window, t.sent_at)
            t.go(self.rules.step, run_rule.Input(run_rule.Kind.DEFERRED))
            if t.state.end is run_rule.End.NOT_READY:
                await self._cancel_job(t.job)
                t.failure_text = notes.not_ready(await self.effects.now() - t.sent_at)
            return True
        if isinstance(got, PollFailed):  # the same job is polled again, never resent
            return await self._poll_failed(t, got)
        t.job = None
        assert isinstance(got, Reply)
        return await self._reply(t, got)

    async def _poll_failed(self, t: _LiveRun, got: PollFailed) -> bool:
        t.retries_used += 1
        wait = self._retry_wait(t.retries_used, got.failure)
        late = await self.effects.now() + wait >= t.deadline
        t.go(
            self.rules.step,
            run_rule.Input(run_rule.Kind.POLL_FAILED, retryable=got.failure.retryable, late=late),
        )
        if t.state.live:
            t.out.retries += 1
            self._budget(t)
            text = f"{got.failure.message}; polling again in {wait:.1f} s"
            self.show("retry", text, {"wait": "retry", "deadline": _at(wait), "seconds": wait})
            await race(self.effects.sleep(wait), self.cancel, stop=t.stop)
            self.show("waited", "", {"wait": "retry"})
        else:
            await self._cancel_job(t.job)
            t.failure_text = (
                notes.not_ready(await self.effects.now() - t.sent_at) if late else got.failure.message
            )
        return True

    async def _reply(self, t: _LiveRun, reply: Reply) -> bool:
        """Read a reply: recoveries first, then the run."""
        self._used(t.out, reply)
        x, rx, rebuilt, leak = self._classify(reply, t.ctx, t.offered)
        retry = self._model_retry(t.retries_used + 1, reply.failure)
        if x.kind is run_rule.Kind.ERROR and x.retryable and not x.noted and retry.refused:
            x = run_rule.Input(run_rule.Kind.ERROR, retryable=False)  # a wait past the cap fails the run now
        r = self.rules.recover(recovery.CAPS, t.rec, rx)
        t.rec = r.rec
        y = recovery.act_reply(r.act, x)
        before = t.state
        t.go(self.rules.step, y)
        state = t.state
        if r.act is Act.EXEC or (r.act is Act.PASS and y.kind is run_rule.Kind.CALLS):
            calls = rebuilt if rebuilt is not None else reply.calls
            text = leak.text if rebuilt is not None and leak is not None else reply.all_text
            msg = Message("assistant", self.redact(text), tuple(calls))
            t.ctx.append(msg)
            await self._log(t.out, msg)
            t.pending = list(calls)
            t.cut = reply.stop is Stop.LENGTH  # arguments may be cut: no call runs (H4.1)
            t.tokens = (reply.usage.output or None) if t.cut else None
            names = ", ".join(c.name for c in calls)
            self.show("calls", names + (" (rebuilt from markup in the text)" if rebuilt is not None else ""))
        elif state.end is run_rule.End.ANSWERED:
            t.out.answer = self.redact(reply.all_text)
            t.out.cut = reply.stop is Stop.LENGTH  # a length stop with text answers, cut (H4.7)
            if t.out.cut:
                self.show("cut", notes.answer_cut(reply.usage.output or None))
            msg = Message("assistant", t.out.answer)
            t.ctx.append(msg)
            await self._log(t.out, msg)
        elif state.live and state.attempt > before.attempt:
            t.note = self._note(r.act, t.rec, reply, state.attempt + 1, t.ctx, leak)
            t.out.notes += 1
            await self._log(t.out, Message("assistant", self._failed_text(reply), is_error=True))
            if reply.failure is not None and reply.failure.kind is FailureKind.STALL:
                t.idle *= 2
            self.show("note", t.note, {"attempt": state.attempt + 1})
            self._budget(t)
        elif state.live and state.retries < before.retries:
            t.retries_used += 1
            t.out.retries += 1
            self._budget(t)
            wait = retry.wait_ms / 1000.0
            text = f"{reply.failure.message if reply.failure else 'retry'}; waiting {wait:.1f} s"
            self.show("retry", text, {"wait": "retry", "deadline": _at(wait), "seconds": wait})
            finished, _ = await race(self.effects.sleep(wait), self.cancel, stop=t.stop)
            self.show("waited", "", {"wait": "retry"})
            if not finished:
                t.go(self.rules.step, run_rule.ABORT)
                return False
        elif state.phase is run_rule.Phase.OVERFLOW:
            t.overflow = reply.failure.message if reply.failure else ""
            await self._log(t.out, Message("assistant", self._failed_text(reply), is_error=True))
        elif not state.live and x.kind is run_rule.Kind.OVERFLOW:
            t.failure_text = notes.overflow_after_compaction(reply.failure.message if reply.failure else "")
        elif not state.live:
            t.failure_text = self._end_text(r.act, reply, rx, t.ctx)
            f = reply.failure
            if retry.refused and f is not None and f.retryable:
                t.failure_text = (
                    notes.refused_again(f.message)
                    if retry.local
                    else notes.wait_too_long(retry.server_ms, retry.max_ms, f.message)
                )
        return True

    async def _tools_phase(self, t: _LiveRun) -> bool:
        finished, results = await race(
            self._tools(t.pending, t.cut, t.tokens, t.out, t), self.cancel, stop=t.stop
        )
        if not finished:
            t.go(self.rules.step, run_rule.ABORT)
            return False
        # a round that gave the run's answer stops it there, answered (uncounted)
        ends = t.answer is not None
        end = run_rule.Input(run_rule.Kind.ROUND_END, stop=ends, answered=ends)
        users: list[str] = []
        if self.inbox is not None:
            users = await self.inbox.round_end(run_rule.takes_steers(t.cfg, t.state, end))
        done = zip(t.pending, results, strict=True)
        entered = {
            run_rule.Entry.RESULT: iter(
                [Message("tool", text, call_id=c.id, is_error=e) for c, (text, e) in done]
            ),
            run_rule.Entry.USER: iter([Message("user", text) for text in users]),
        }
        for entry in run_rule.round_log(len(t.pending), len(users)):  # never between a call and its result
            msg = next(entered[entry])
            t.ctx.append(msg)
            await self._log(t.out, msg)
        t.out.rounds += 1
        like = rounds_in_a_row(t.ctx) > 1
        t.rec = self.rules.recover(recovery.CAPS, t.rec, recovery.Reply(Out.RESULTS, like)).rec
        if users:  # a user message ends the repeat row (H4.8.4)
            t.rec = self.rules.recover(recovery.CAPS, t.rec, recovery.Reply(Out.USER)).rec
        t.go(self.rules.step, end)
        self._budget(t)
        if t.state.attempt == 0:
            t.note = None
        if t.state.end is run_rule.End.RUN_LIMIT:
            t.failure_text = notes.run_limit(t.cfg.cap)
        if t.state.end is run_rule.End.ANSWERED and t.answer is not None:
            t.out.answer = self.redact(t.answer)
            self.show("text", t.out.answer)  # shown as an answer streams: every face shows its text
            msg = Message("assistant", t.out.answer)
            t.ctx.append(msg)
            await self._log(t.out, msg)
        return True

    # ---------------------------------------------------------------- helpers

    def _request(self, t: _LiveRun) -> Request:
        """The request of the run's context now, with the note if one is due."""
        messages = tuple(t.ctx) + ((Message("user", t.note),) if t.note else ())
        return Request(
            self.model,
            messages,
            tuple(self.tools),
            system=t.system,
            max_tokens=self.settings.max_output_tokens or None,
            effort=self.settings.reasoning_effort,
            image_data=self.image_data,
        )

    def _past_threshold(self, request: Request) -> bool:
        """Whether the request's estimated tokens leave too little of the context window
        for the reply (the blocking threshold of H4). Unknown window: never."""
        window = self.settings.context_window
        if window <= 0 or self.compact is None:
            return False
        reserve = self.settings.max_output_tokens or min(RESERVE, window // 4)
        return request_bytes(request) / BYTES_PER_TOKEN > window - reserve

    def _used(self, out: RunOutcome, reply: Reply) -> None:
        """The reply's tokens into the run's tally, and the tally as an event (the status line's)."""
        out.usage.add(reply.usage)
        out.price = self.settings.price
        window = self.settings.context_window
        data = {**out.usage.json(out.price), "context": out.usage.last_input, "window": window}
        self.show("usage", out.usage.line(out.price, window), data)

    def window_seconds(self) -> float:
        """How long a deferred job may run: the requested window, else 24 hours (H4.4)."""
        return ai_deadline(Job("", "queued", None, None), self.window, 0.0)

    async def _cancel_job(self, job: Job | None) -> None:
        if job is not None:
            with contextlib.suppress(Exception):
                work = self.effects.step("cancel", lambda: self._deferred.cancel(job))
                await asyncio.wait_for(work, timeout=ABORT_GRACE)

    async def _prepare(self, request: Request) -> Request | BaseException:
        """Every before_request hook in turn; a failure fails the run and sends nothing."""
        try:
            for hook in self.request_hooks:
                request = await hook(request)
        except Exception as e:  # a failing hook is the run's failure, shown with its cause
            return e
        return request

    @property
    def _model(self) -> ModelCall:
        """The call phase's view of this run: its provider, admission, events and redaction."""
        return ModelCall(self.provider, self.admission, self.show, self.redact, self.interactive)

    def _clean(self, m: Message) -> Message:
        """A message as the run keeps, logs and sends it: the secret values out."""
        return redacted.message(m, self.redact)

    def _as_sent(self, t: _LiveRun | None, c: ToolCall) -> ToolCall:
        """The call as the model sent it (what the tool runs), if this process read its reply."""
        return t.sent.get(c.id, c) if t is not None else c

    @property
    def _deferred(self) -> Deferred:
        """The provider as one that answers in the background (`background` runs only)."""
        return cast(Deferred, self.provider)

    async def _tools(
        self,
        calls: Sequence[ToolCall],
        cut: bool,
        tokens: int | None,
        outcome: RunOutcome,
        t: _LiveRun | None = None,
    ) -> list[tuple[str, bool]]:
        """Each call in turn (as recorded: redacted), the gate and the tool given it as the
        model sent it (`_LiveRun.sent`)."""
        out = []
        for c in calls:
            if cut:
                out.append((notes.truncated(c.name, tokens), True))
                continue
            as_sent = self._as_sent(t, c)
            if self.gate is None:
                work = functools.partial(self._run_tool, c, False, as_sent)
                out.append(await self.effects.tool(c, c.name in self.replay_safe, work))
                continue
            # the permission rule first (recorded: a replay asks nothing)
            permit = functools.partial(self._permitted, as_sent)
            run = functools.partial(self._run_tool, c, sent=as_sent)
            got, ran = await self.effects.gated(c, c.name in self.replay_safe, permit, run)
            if ran is not None:
                out.append(ran)
                continue
            if got.get("answer") and t is not None:  # not run, and not denied: the run ends with it
                t.answer = str(got["answer"])
                out.append((str(got["result"]), False))
                continue
            out.append((str(got["result"]), True))
            arguments = c.raw or json.dumps(c.arguments)
            denial = {"tool": c.name, "arguments": arguments, "cause": got["why"], "rule": got["rule"]}
            outcome.denials.append(denial)
            self.show("denied", str(got["result"]), {**denial, "id": c.id})
        return out

    async def _permitted(self, c: ToolCall) -> JsonObject:
        """The gate's decision on the call as sent, as its step records it (redacted: its
        reasons may quote the call)."""
        assert self.gate is not None
        got = await self.gate.permit(c)
        return dict(self.redact.deep(dict(got.json())))

    async def _run_tool(
        self, c: ToolCall, outside: bool = False, sent: ToolCall | None = None
    ) -> tuple[str, bool]:
        """Shown as it runs (`c`, as recorded), and its result as it ends (a replay after a
        crash shows only what runs again); the tool runs `sent`, the call as the model sent it
        (None: `c`)."""
        shown_call: JsonObject = {"id": c.id, "name": c.name}
        if (
            c.arguments is not None and len(c.raw or "") <= ARGUMENTS_SHOWN
        ):  # an editor shows the file and diff
            shown_call["arguments"] = self.redact.deep(c.arguments)
        self.show("tool", f"{c.name} {self.redact(c.raw or json.dumps(c.arguments))[:200]}", shown_call)
        call = c if sent is None else sent
        content, error = await (self.run_tool(call, outside=True) if outside else self.run_tool(call))
        if self.user_hooks is not None:  # inside the call's step: a replay reads what they said
            content = followed(content, await self.user_hooks.post_tool(call, content, error), error)
        content = self.redact(content)  # what is stored, shown and sent back to the model
        shown = {"id": c.id, "name": c.name, "error": error, "chars": len(content)}
        self.show("result", content[:RESULT_SHOWN], shown)
        return content, error

    def _budget(self, t: _LiveRun) -> None:
        """The run's counts against its caps, as the model has them: rounds made, and this
        generation's notes and retries spent."""
        s, cfg = t.state, t.cfg
        used = {"rounds": t.out.rounds, "notes": cfg.notes - s.notes, "retries": cfg.retries - s.retries}
        caps = {"rounds": cfg.cap, "notes": cfg.notes, "retries": cfg.retries}
        text = ", ".join(f"{k} {used[k]}/{caps[k]}" for k in used)
        self.show("budget", text, {"used": used, "caps": caps})

    async def _log(self, out: RunOutcome, msg: Message) -> None:
        """Into the transcript (and the chat's log from it), the secret values out: the one
        place every message of the run is kept."""
        msg = self._clean(msg)
        out.transcript.append(msg)
        await self.effects.append(msg)
        self._transcribe(msg)

    def _transcribe(self, msg: Message) -> None:
        """The message into the session's transcript, before any hook fires after it; a file
        that cannot be written is said once, and the run goes on."""
        if self.transcript is not None and (failed := self.transcript.append(msg)) is not None:
            self.show("notice", failed)

    # ---------------------------------------------------------------- reading replies

    def _classify(
        self, reply: Reply, ctx: Sequence[Message], offered: Mapping[str, JsonMapping]
    ) -> tuple[run_rule.Input, recovery.Reply, tuple[ToolCall, ...] | None, Scanned | None]:
        """The run's input for the reply as it came, and what recovery reads of it: the
        runtime reads the reply (the leak scan, the repeat check), the rule says what it is
        (`rules.classify`)."""
        f = reply.failure
        found = (
            self.scan(reply.all_text, offered)
            if f is None and not reply.calls and reply.has_text and self.scan
            else None
        )
        rebuilt = _calls(found) if found is not None and found.calls else None
        seen = classify.Seen(
            failure=classify.Failure(f.kind.value) if f is not None else classify.Failure.NONE,
            retryable=f.retryable if f is not None else False,
            calls=bool(reply.calls),
            like=same_calls(reply.calls, ctx) if reply.calls and f is None else False,
            text=reply.has_text,
            rebuilt=rebuilt is not None,
            rebuilt_like=same_calls(rebuilt, ctx) if rebuilt is not None else False,
            leak=found is not None and found.leak is not None,
            length=reply.stop is Stop.LENGTH,
        )
        read = self.rules.classify(seen)
        return (
            read.input,
            read.reply,
            rebuilt if read.rebuilt else None,
            found if read.rebuilt or read.leak else None,
        )

    def _note(
        self,
        act: Act,
        rec: recovery.Rec,
        reply: Reply,
        attempt: int,
        ctx: Sequence[Message],
        leak: Scanned | None,
    ) -> str:
        f = reply.failure
        if act is Act.REDO and rec.cause is recovery.Cause.LENGTH:
            return notes.length(attempt, rec.row, reply.usage.output or None)
        if (
            act is Act.REDO
            and rec.cause is recovery.Cause.LEAK
            and leak is not None
            and leak.leak is not None
        ):
            return notes.leak(attempt, rec.row, leak.leak.markup, leak.leak.reason)
        if act is Act.REDO and rec.cause is recovery.Cause.REJECTED and f is not None:
            return notes.rejected(attempt, rec.row, f.message)
        if act is Act.REDO and rec.cause is recovery.Cause.REDIRECT:
            return notes.redirect(attempt, rec.row, rounds_in_a_row(ctx) + 1, reply.calls or _calls(leak))
        if f is not None and f.kind is FailureKind.STALL:
            return notes.stalled(attempt, f.waited or 0.0)
        if f is not None and f.kind is FailureKind.REPEATING:
            return notes.repeating(attempt, f.line or "", f.cycle or 1)
        return notes.empty(attempt)

    def _failed_text(self, reply: Reply) -> str:
        """A failed reply as the transcript keeps it, the keys out."""
        if reply.failure is not None:
            return self.redact(reply.failure.message)
        if not reply.has_text and not reply.calls:
            return notes.no_answer(reply.stop.value, sum(len(t.text) for t in reply.thinking))
        return self.redact(reply.all_text)

    def _end_text(
        self,
        act: Act,
        reply: Reply,
        rx: recovery.Reply,
        ctx: Sequence[Message],
    ) -> str:
        thinking = sum(len(t.text) for t in reply.thinking)
        if act is Act.QUIT and rx.out is Out.LENGTH:
            return notes.length_gave_up(thinking)
        if act is Act.QUIT and rx.out is Out.REJECTED and reply.failure is not None:
            return notes.rejected_gave_up(reply.failure.message)
        if act is Act.QUIT:
            names = sorted({c.name for c in reply.calls})
            return notes.repeat_gave_up(names, rounds_in_a_row(ctx) + 1)
        if reply.failure is not None:
            return reply.failure.message
        return notes.no_answer(reply.stop.value, thinking)

    def _retry_wait(self, used: int, failure: Failure | None) -> float:
        """Seconds to wait before a failed poll's retry `used`, as rules.retry says."""
        s = self.settings
        return retry_wait_ms(s.base_delay_ms, s.max_retry_delay_ms, used, _server_ms(failure)) / 1000.0

    def _model_retry(self, used: int, failure: Failure | None) -> Retry:
        """A failed model request's retry `used`, as rules.retry says (refused past the cap)."""
        s = self.settings
        local = failure is not None and failure.local_refusal
        return model_retry(s.base_delay_ms, s.max_retry_delay_ms, used, _server_ms(failure), local)

    def _ended(self, state: run_rule.Run, out: RunOutcome, failure_text: str) -> RunOutcome:
        if state.end is run_rule.End.ANSWERED:
            out.outcome = Ending.ANSWERED
        elif state.end is run_rule.End.ABORTED:
            out.outcome = Ending.ABORTED
        else:
            out.outcome = Ending.FAILED
            out.code = run_rule.ERROR_CODES.get(state.end, "model_error")
            out.message = self.redact(failure_text or state.end.value)
        return out


def _at(seconds: float) -> float:
    """The epoch time `seconds` from now: a wait's deadline as its event shows it."""
    return round(time.time() + seconds, 3)


def _server_ms(failure: Failure | None) -> int | None:
    """The server's wait in whole milliseconds (rounded up), if it asked for one."""
    server = failure.retry_after if failure is not None else None
    if server is None or math.isnan(server):
        return None
    return math.ceil(server * 1000) if math.isfinite(server) else 2**63  # forever: past any cap


def request_bytes(request: Request) -> int:
    """The bytes a request's content takes: system prompt, messages with their calls, tools."""
    n = len(request.system.encode())
    for m in request.messages:
        n += len(m.content.encode())
        n += sum(len(c.raw or json.dumps(c.arguments)) + len(c.name) for c in m.calls)
    return n + sum(len(json.dumps(dict(t.schema))) + len(t.name) + len(t.description) for t in request.tools)


def _calls(found: Scanned | None) -> tuple[ToolCall, ...]:
    if found is None:
        return ()
    return tuple(ToolCall(f"leak_{i}", c.name, "", dict(c.arguments)) for i, c in enumerate(found.calls))
