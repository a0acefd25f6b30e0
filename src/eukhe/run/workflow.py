"""A run as a DBOS workflow: the generation loop with every effect a recorded step.

Steps, by name: `message` (a transcript append: its output IS the message, so a
transcript is the run's `message` steps in order and a crash never leaves half of
one), `model`, `start`, `poll`, `cancel` (model requests), `clock` (a clock read),
`intent` and `tool` (a tool call), and DBOS's durable sleep for waits. A restart
replays the recorded results, so every count the rules keep (rounds, notes spent,
retries, a job's send time, deadline and failures in a row) comes back as it was,
without a copy kept anywhere else.

A tool that is not replay-safe records its intent first; when the restart finds
the intent recorded and the call not finished, the call is not run again and its
result says it was interrupted (H7.4).

What a run is made of, and in which order, is `run.assemble`'s; this module is its
durable glue.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

from dbos import DBOS, SetWorkflowID

from eukhe import fault_injection
from eukhe.ai.reply import ToolCall
from eukhe.ai.request import Message
from eukhe.children.tools import SPAWN, STOP_CHILD
from eukhe.children.worktree import WorktreeError, make_worktree
from eukhe.client.client import OwnerError
from eukhe.client.lease import LeaseStopped
from eukhe.errors import Code
from eukhe.events import ShowEvent
from eukhe.json_types import JsonObject
from eukhe.memory import run_memory
from eukhe.memory.access import Memory, settle
from eukhe.memory.log import now
from eukhe.rules import job
from eukhe.rules.child import At, Place
from eukhe.rules.child import key as place_key
from eukhe.rules.hook import STOP_LIMIT, StopNext, after_stop, combine, failure_kind
from eukhe.rules.hook import Event as HookEvent
from eukhe.rules.hook import Kind as HookKind
from eukhe.rules.hook import Verdict as HookVerdict
from eukhe.run import fence, instructed, notes
from eukhe.run.assemble import RunParts, Unassembled, assemble
from eukhe.run.checkpoint import CheckpointError, Shadow, project_of
from eukhe.run.children import child_task, task_id
from eukhe.run.context import ProcessContext, begin, process
from eukhe.run.deadline import abort_at
from eukhe.run.delivery import Delivery
from eukhe.run.handles import RunHandle
from eukhe.run.hook_events import HOOK_BLOCKED, RunHooks, recorded
from eukhe.run.loop import RunLoop
from eukhe.run.outcome import Ending, RunOutcome
from eukhe.run.permit import Permit
from eukhe.run.spec import STEPS, RunSpec
from eukhe.settings import home
from eukhe.store.reports import USERS
from eukhe.store.session_runs import CHILD_RUN, IN_FLIGHT, WORKFLOW, Carried

START = place_key(Place(At.START))
"""The key of a run's start, where it takes what waited for it (`rules.child.key`)."""

__all__ = ["ProcessContext", "RecordedEffects", "begin", "process", "run_workflow"]

T = TypeVar("T")


class RecordedEffects:
    """The effects of a run inside its workflow (see `eukhe.run.effects`).
    `show`: where a call the restart does not run again is shown."""

    def __init__(
        self,
        show: Callable[[str, str], None] = lambda kind, text: None,
        in_workflow: frozenset[str] = frozenset(),
        layout: int = STEPS,
        checkpoint: Callable[[], Awaitable[object]] | None = None,
    ) -> None:
        self.show = show
        self.in_workflow = in_workflow  # tools that make their own recorded steps (spawn: child workflows)
        self.layout = layout  # the run's step layout (`run.spec.STEPS`): a replay must meet its steps
        self.carries = layout >= 3  # step layout 3: messages ride on the next step, not a step each
        self.unlogged: list[Message] = []
        self.checkpoint = checkpoint  # the run's files, taken before its first call that may write
        self.checkpointed = False  # this process took (or found) the run's checkpoint

    async def step(self, name: str, work: Callable[[], Awaitable[T]]) -> T:
        if not self.unlogged:
            return await self._step(name, work)
        held = tuple(self.unlogged)
        self.unlogged.clear()

        async def carried() -> Carried:
            return Carried(await work(), held)

        try:
            got = await self._step(name, carried)
        except BaseException:  # the step recorded its error, not them: the next step carries them
            self.unlogged[:0] = held
            raise
        return cast(T, got.value)

    async def _step(self, name: str, work: Callable[[], Awaitable[T]]) -> T:
        async def run() -> T:  # a coroutine function, whatever `work` is: DBOS awaits it on this loop
            fence.check(process())  # a step begins only while the lease allows its record
            got = await work()
            fence.check(process())  # and one whose work outlived the fence is not recorded
            return got

        result: T = await DBOS.run_step_async({"name": name}, run)
        return result

    async def flush(self) -> None:
        """Record the messages no step has carried yet (the run's last ones)."""
        if self.unlogged:
            await self.step("messages", _nothing)

    async def now(self) -> float:
        async def clock() -> float:
            return time.time()

        return await self.step("clock", clock)

    async def sleep(self, seconds: float) -> None:
        await DBOS.sleep_async(seconds)

    async def tool(
        self, call: ToolCall, replay_safe: bool, work: Callable[[], Awaitable[tuple[str, bool]]]
    ) -> tuple[str, bool]:
        if call.name in self.in_workflow:  # DBOS starts workflows only from the workflow itself
            done = await work()

            async def result() -> tuple[str, bool]:
                return done

            return await self.step("tool", result)
        if replay_safe:
            return await self.step("tool", work)

        async def intent() -> str:
            return call.id

        _, ran = await self._intent(intent)
        return await self._once(call, ran, work)

    async def gated(
        self,
        call: ToolCall,
        replay_safe: bool,
        permit: Callable[[], Awaitable[JsonObject]],
        work: Callable[[bool], Awaitable[tuple[str, bool]]],
    ) -> tuple[JsonObject, tuple[str, bool] | None]:
        if self.layout < 2:
            return await self._gated_in_place(call, replay_safe, permit, work)
        if not self.carries or call.name in self.in_workflow:  # layout 2: the decision a step of its own
            got = await self.step("permit", permit)
            if not got["runs"]:
                return got, None
            return got, await self.tool(call, replay_safe, functools.partial(work, bool(got["outside"])))
        if replay_safe:  # one step, the decision and the call: a crash in it asks and runs it again
            done = await self.step("tool", _both(permit, work))
            return done["permit"], done["result"]
        got, ran = await self._intent(permit)  # the decision is the call's intent, recorded before it runs
        if not got["runs"]:
            return got, None
        return got, await self._once(call, ran, functools.partial(work, bool(got["outside"])))

    async def _gated_in_place(
        self,
        call: ToolCall,
        replay_safe: bool,
        permit: Callable[[], Awaitable[JsonObject]],
        work: Callable[[bool], Awaitable[tuple[str, bool]]],
    ) -> tuple[JsonObject, tuple[str, bool] | None]:
        """`gated` for a run of layout 1 (eukhe 0.1), which had no `permit` step: the
        decision rides in the call's own first step (a replay-safe call's `tool`, another's
        `intent`), so the run's recorded steps replay by their names and order, and a call
        it had not recorded goes through the gate. A step 0.1 recorded holds no decision
        (its call ran with none, then): it replays as it ran."""
        if call.name in self.in_workflow:  # its child workflows come before its one step, and no step
            got = await permit()  # may come before them: the gate is asked again on a replay
            if not got["runs"]:
                return got, None
            return got, await self.tool(call, replay_safe, functools.partial(work, bool(got["outside"])))
        if replay_safe:
            done: Any = await self.step("tool", _both(permit, work))
            if isinstance(done, dict):
                return done["permit"], done["result"]
            text, error = done  # 0.1's own record: the call's result
            return _ungated(), (str(text), bool(error))
        got, ran = await self._intent(permit)
        if not isinstance(got, dict):  # 0.1's intent (the call's id): the call was begun with no gate
            got = _ungated()
        if not got["runs"]:
            return got, None
        return got, await self._once(call, ran, functools.partial(work, bool(got["outside"])))

    async def _intent(self, decide: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
        """The `intent` step before a call that is not replay-safe: what `decide` gave, and
        whether it ran here (False: a process now gone recorded it, and the call may have run)."""
        ran = False

        async def intent() -> T:
            nonlocal ran
            ran = True
            got = await decide()
            if not (isinstance(got, dict) and not got.get("runs", True)):  # a call that runs: files first
                await self._checkpoint()
            return got

        return await self.step("intent", intent), ran

    async def _checkpoint(self) -> None:
        """The run's checkpoint of its files, inside the intent step of its first call that may
        write (a replay finds the one taken); one that fails is said, and the run goes on."""
        if self.checkpoint is None or self.checkpointed:
            return
        self.checkpointed = True
        try:
            await self.checkpoint()
            fault_injection.reached("checkpointed")  # in the shadow repository, the intent not yet recorded
        except (CheckpointError, OSError) as e:
            self.show(
                "checkpoint", f"no checkpoint of the files before this run (eukhe rewind cannot undo it): {e}"
            )

    async def _once(
        self, call: ToolCall, ran: bool, work: Callable[[], Awaitable[tuple[str, bool]]]
    ) -> tuple[str, bool]:
        async def once() -> tuple[str, bool]:
            if not ran:  # the intent was recorded by a process that is gone: the call may have run
                text = notes.interrupted(call.name, restart=True)
                self.show("interrupted", text)
                return text, True
            return await work()

        return await self.step("tool", once)

    async def append(self, message: Message) -> None:
        if self.carries:  # a message derives from the steps before it: a replay makes it again
            self.unlogged.append(message)
            return

        async def message_() -> Message:
            return message

        await self.step("message", message_)


async def _nothing() -> None:
    return None


def _both(
    permit: Callable[[], Awaitable[JsonObject]], work: Callable[[bool], Awaitable[tuple[str, bool]]]
) -> Callable[[], Awaitable[JsonObject]]:
    """A call's decision and, if it runs, the call, as one step's work."""

    async def both() -> dict[str, Any]:
        got = await permit()
        return {"permit": got, "result": await work(bool(got["outside"])) if got["runs"] else None}

    return both


def _ungated() -> JsonObject:
    """The permit of a call eukhe 0.1 recorded: it ran (in the sandbox) with no gate."""
    return Permit(True, why="begun under eukhe 0.1, before its calls had a permission gate").json()


@DBOS.workflow(name=WORKFLOW)
async def run_workflow(spec: JsonObject) -> JsonObject:
    """A run of a root session (`run_workflow_body`); its outcome as DBOS records it (JSON:
    `RunOutcome.json`, read back by `RunOutcome.of`), the one place it is a dict."""
    return (await run_workflow_body(spec)).json()


@DBOS.workflow(name=CHILD_RUN)
async def child_run(spec: JsonObject) -> JsonObject:
    """A subagent's run (`run_workflow_body`), started by its parent's run (`_start_child`)."""
    return (await run_workflow_body(spec)).json()


@dataclass(frozen=True)
class DurableSteps:
    """What a run's parts ask of this workflow (`run.steps.Steps`), each a DBOS step or a
    durable wait of the run `run` of `spec`, in the process `here`."""

    here: ProcessContext
    spec: RunSpec
    run: str

    async def view(
        self, chat: Memory, settle_ms: int, show: ShowEvent, cancel: asyncio.Event, pinned: int
    ) -> str:
        """The settled view, as a durable step: a replay sends the same view byte for byte.
        The wait ends at its deadline, or at once on Ctrl-C (the run then ends aborted).
        `show` (kind, text, data): the wait as the run's events (`memory.access.settle`);
        `pinned`: the bytes the run pins beside the view (`rules.pinned`)."""

        async def view() -> str:
            fence.check(process())
            got = await settle(chat, settle_ms, show, cancel, pinned)
            fence.check(process())
            return str(got.text)

        result: str = await DBOS.run_step_async({"name": "view"}, view)
        return result

    async def start_child(self, cid: str, spec: RunSpec, watch: JsonObject) -> None:
        """A child's run and its task started, under their ids, from the parent's workflow."""
        with SetWorkflowID(cid):
            await DBOS.start_workflow_async(child_run, spec.json())
        with SetWorkflowID(task_id(cid)):
            await DBOS.start_workflow_async(child_task, watch)

    async def worktree(self, cid: str, project: str) -> JsonObject:
        """A subagent's worktree made, as a recorded step: its json, or {"error": why}."""

        async def made() -> JsonObject:
            try:
                return (await make_worktree(Path(project), home(), cid)).json()
            except WorktreeError as e:
                return {"error": str(e)}

        return dict(await DBOS.run_step_async({"name": "worktree"}, made))

    async def take(self, key: str, steers: bool, followups: bool) -> list[str]:
        """A take of the run at the place `key` names, as a recorded step (a replay reaches
        the same place and gets what the step recorded). A run with a prompt takes at its
        start only the user's messages queued before it was asked for: one sent after it
        (a steer, a follow-up) is for a later place, never placed before its prompt."""
        spec = self.spec
        until = spec.asked if key == START and spec.prompt is not None else None
        session = spec.session or self.run
        got = functools.partial(_take, self.here, session, self.run, key, steers, followups, until)
        return list(await DBOS.run_step_async({"name": "reports"}, got))

    async def working(self, children: Sequence[str]) -> bool:
        """Whether any of the run's children is still at work (its task in flight), as a step."""

        async def live() -> bool:
            found = await DBOS.list_workflows_async(
                workflow_ids=[task_id(c) for c in children], status=list(IN_FLIGHT)
            )
            return bool(found)

        return bool(await DBOS.run_step_async({"name": "children"}, live))

    async def sleep(self, seconds: float) -> None:
        await DBOS.sleep_async(seconds)

    def step_id(self) -> int | None:
        return DBOS.step_id


async def run_workflow_body(input: JsonObject) -> RunOutcome:
    """One run of a session. `input`: its `RunSpec` as the store holds it. The
    provider's key is read from this process's environment, never stored.

    The user's own turn holds the root-turn lease for its whole run (H6.2): root
    turns of the home run one at a time, first come first served. A run recovered
    from a dead process holds none: it runs beside the user's turn, which never
    waits for it. Its model requests are session requests all the same (H3 makes
    only the compactor's background): preempted, it would stream its reply again."""
    here = process()
    spec = RunSpec.of(input)
    run_id = str(DBOS.workflow_id)
    deadline = spec.deadline
    if deadline is not None and deadline.passed(time.time()):
        # begun, or taken up after a crash, past its deadline: it ends now, before any step (a
        # replay cut short would meet its recorded steps out of order)
        here.runs.end(run_id)
        return deadline.failure("its deadline had passed when it was to go on")
    # its handle: Ctrl-C and `eukhe abort` set its cancel, a person's mode change reaches its gate
    handle = here.runs.begin(run_id, asyncio.Event())
    cancel = handle.cancel
    timer = asyncio.ensure_future(abort_at(deadline, cancel)) if deadline is not None else None
    try:
        out = await _body(spec, run_id, handle, here)
    finally:
        if timer is not None and not timer.done():
            timer.cancel()
    fired = timer is not None and timer.done() and not timer.cancelled() and timer.result()
    if deadline is not None and fired and out.outcome is Ending.ABORTED:  # its deadline aborted it
        return deadline.ended(out)
    return out


async def _body(spec: RunSpec, run_id: str, handle: RunHandle, here: ProcessContext) -> RunOutcome:
    """The run under its id, through its `handle` in the process's table (Ctrl-C and `eukhe
    abort` set its cancel), the root-turn lease held for a user's own run; it leaves the table
    as it returns, its waiters told."""
    session, cancel = spec.session or run_id, handle.cancel
    await here.running(run_id, session, "started")
    try:
        if here.lease is None or not handle.own:
            return await _assembled_run(spec, run_id, handle, here)
        events = functools.partial(here.show, run_id)  # its wait for the lease: whose turn, then waited
        async with here.lease.held(session, run_id, cancel, events=events):
            return await _assembled_run(spec, run_id, handle, here)
    except LeaseStopped:
        return RunOutcome(
            Ending.ABORTED,
            code="aborted",
            message="not started: aborted (Ctrl-C or eukhe abort) while it waited for the root-turn lease",
        )
    except OwnerError as e:
        return RunOutcome(Ending.FAILED, code=Code.LEASE.kind, message=f"the root-turn lease: {e}")
    finally:
        await here.running(run_id, session, "ended")
        here.runs.end(run_id)


async def _assembled_run(spec: RunSpec, run_id: str, handle: RunHandle, here: ProcessContext) -> RunOutcome:
    """The run's parts made once (`run.assemble`), then the run over them (`_run`); a part
    that cannot be made is the run's failure, with its code."""
    try:
        async with assemble(spec, handle, here, DurableSteps(here, spec, run_id)) as parts:
            return await _run(spec, run_id, here, parts)
    except Unassembled as e:
        return e.outcome


async def _run(spec: RunSpec, run_id: str, here: ProcessContext, parts: RunParts) -> RunOutcome:
    """What waits for the run placed, its loop run, its provider and kernel closed, its
    messages logged into the chat."""
    session, parent, chat, children = spec.session or run_id, spec.child, parts.chat, parts.children
    # a run that spawned children, or whose user may steer it (an interactive session's), takes
    # what waits for it at each round end (a step only then: the rounds of the others cost nothing
    # more); the rest waits for the session's next run's start, or starts it
    delivery = Delivery(DurableSteps(here, spec, run_id), children.spawned, spec.steers)
    in_workflow = frozenset({SPAWN.name, STOP_CHILD.name})  # they start and tell child workflows
    with contextlib.suppress(Exception):  # a run of the session: it admits its children's reports again
        await asyncio.to_thread(here.reports().reopen, session)
    placed = await delivery.start()
    prompt = spec.prompt
    if prompt is None:  # a follow-up run: its children's reports are its prompt
        if not placed:
            return RunOutcome(Ending.ANSWERED, answer="", message="no report was waiting")
        prompt, placed = placed[-1], placed[:-1]
    shadow = Shadow(project_of(parts.context.cwd), home())  # a subagent's worktree, when it has one
    effects = RecordedEffects(
        functools.partial(here.show, run_id),
        in_workflow,
        layout=spec.steps,
        checkpoint=functools.partial(shadow.take, run_id),
    )
    # by SHA-256, so what a replay reads is what the run first read
    images = await asyncio.to_thread(here.images().read, spec.images) if spec.images else {}
    loop = parts.loop(effects, delivery, here.admission, images)
    if parent:
        here.children[run_id] = parts.ledger  # its parent's polls read its token here
    hooks = parts.hooks  # their answers kept by the step they fire in (`DurableSteps.step_id`)
    try:
        start = spec.session_start
        asked = (
            await _submitted(hooks, effects, str(prompt), start, bool(parent))
            if spec.prompt is not None
            else str(prompt)
        )
        if isinstance(asked, RunOutcome):  # a UserPromptSubmit hook blocked it: no round is made
            out = asked
        else:
            out = await loop.run(asked, [Message("user", text) for text in placed], images=spec.images)
        if parent and children.spawned:  # a child ends once its own children have reported
            out = await delivery.until_reported(loop, out, parts.context.cancel)
        if hooks is not None:  # its Stop (a subagent's: SubagentStop) hooks may keep it going, counted
            out = await _stopped(hooks, effects, loop, out)
        if hooks is not None:  # the model failed it: its StopFailure hooks are told (a step of theirs)
            await _failed(hooks, effects, out)
    finally:
        here.children.pop(run_id, None)
        if hooks is not None:  # its notifications' hooks end with it
            await hooks.close()
        if effects.checkpointed:  # its files at its end: what differs later, a person changed
            with contextlib.suppress(Exception):
                await shadow.record(f"{run_id}.after")
        # the instruction files its model changed, recorded for the next session to say
        shown = functools.partial(here.show, run_id)
        await asyncio.to_thread(instructed.ended, spec, run_id, shown)
        with contextlib.suppress(Exception):
            await parts.provider.close()
        with contextlib.suppress(Exception):  # its jobs and their processes end with it
            removed = await parts.kernel.close()  # what its sandbox's guard removed since, said
            if removed:
                here.show(run_id, "sandbox", removed)
        why = _jobs_end(spec, parts.context.cancel)
        if why is not None:  # each told and waited for, within the rule's bound
            for line in await here.jobs.end_scope(run_id if parent else session, why):
                here.show(run_id, "notice", line)
    if chat is not None:  # the run's last messages ride on its log step
        await _logged(
            chat, run_id, out.transcript, functools.partial(here.show, run_id, "memory"), effects.step
        )
    await effects.flush()
    return out


def _jobs_end(spec: RunSpec, cancel: asyncio.Event) -> job.Why | None:
    """Why the run's end ends its background jobs: its abort or its --timeout, or, a subagent's,
    its report (its run is its session); None: a session's run that answered leaves them to its
    next runs, and to the session's end (`Runtime.session_end`)."""
    if cancel.is_set():
        passed = spec.deadline is not None and spec.deadline.passed(time.time())
        return job.Why.TIMEOUT if passed else job.Why.ABORT
    return job.Why.SESSION_END if spec.child else None


async def _submitted(
    hooks: RunHooks | None, effects: RecordedEffects, prompt: str, start: str | None, child: bool = False
) -> str | RunOutcome:
    """The prompt as the run's SessionStart hooks (the first run a face starts in a session:
    `start` its source), SubagentStart hooks (a subagent's run: `child`) and UserPromptSubmit
    hooks leave it (their context after it), or the run's failure when they block it (or say
    `continue: false`); their answers one `hook` step of the run."""
    starts = hooks is not None and start is not None and hooks.has(HookEvent.SESSION_START, start)
    spawned = hooks is not None and child and hooks.has(HookEvent.SUBAGENT_START, hooks.agent_type)
    if hooks is None or not (starts or spawned or hooks.has(HookEvent.USER_PROMPT_SUBMIT)):
        return prompt

    async def fired() -> HookVerdict:
        assert hooks is not None
        first = await hooks.session_start(start) if starts and start is not None else HookVerdict()
        begun = await hooks.subagent_start() if spawned else HookVerdict()
        return combine([first, begun, await hooks.prompt(prompt)])

    v = await recorded(effects.step, fired)
    if v.kind is HookKind.BLOCK or v.stop:
        why = v.reason or v.stop_reason or "no reason given"
        what = (
            "a UserPromptSubmit hook blocked the prompt"
            if v.kind is HookKind.BLOCK
            else "a hook stopped the run"
        )
        return RunOutcome(Ending.FAILED, code=HOOK_BLOCKED, message=f"{what}: {why}")
    return f"{prompt}\n\n{v.context}" if v.context else prompt


async def _stopped(hooks: RunHooks, effects: RecordedEffects, loop: RunLoop, out: RunOutcome) -> RunOutcome:
    """The run after its Stop hooks: each block (a `hook` step) its next prompt, the run going
    on from its conversation so far, until the hooks let it end or its blocks pass the cap
    (`rules.hook.after_stop`): then it fails with `STOP_LIMIT`, whatever the hooks say."""
    event = hooks.stop_event
    blocks = 0
    while (
        out.outcome is Ending.ANSWERED and hooks.has(event, hooks.stop_subject) and not hooks.cancel.is_set()
    ):
        v = await recorded(effects.step, functools.partial(hooks.stop, blocks, out.answer))
        blocks, next_ = after_stop(blocks, hooks.hooks.max_stop_blocks, v)
        if next_ is StopNext.END:
            return out
        if next_ is StopNext.FAIL:
            cap = hooks.hooks.max_stop_blocks
            why = f": {v.reason[:200]}" if v.reason else ""
            message = (
                f"the {event.value} hooks blocked the run's end {cap} times (hookLimits.maxStopBlocks){why}"
            )
            return dataclasses.replace(out, outcome=Ending.FAILED, code=STOP_LIMIT, message=message)
        earlier = out
        out = await loop.run(v.reason or f"A {event.value} hook asked to go on.", (), earlier.transcript)
        out.usage.merge(earlier.usage)  # every reply's tokens, the runs before the block's too
    return out


async def _failed(hooks: RunHooks, effects: RecordedEffects, out: RunOutcome) -> None:
    """A run the model failed (`rules.hook.failure_kind`): its StopFailure hooks, one `hook`
    step of the run (a replay reads their answer), given the failure and the last text the run
    wrote; what they say is shown, and the run's outcome stays as it is."""
    kind = failure_kind(out.code or "", out.message or "") if out.outcome is Ending.FAILED else None
    if kind is None or not hooks.has(HookEvent.STOP_FAILURE, kind):
        return
    said = next((m.content for m in reversed(out.transcript) if m.role == "assistant" and m.content), "")
    await recorded(effects.step, functools.partial(hooks.stop_failure, kind, out.message or "", said))


async def _take(
    here: ProcessContext,
    session: str,
    run: str,
    key: str,
    steers: bool = True,
    followups: bool = True,
    until: float | None = None,
) -> list[str]:
    """The messages waiting for the session's run, placed by this run at the place `key`
    names (`rules.child.key`): its children's reports, and the user's steers and
    follow-ups as asked (`until`: those queued by then); the same key again takes the same.
    A store that cannot be read places none now; they wait for the next take."""
    try:
        take = functools.partial(here.reports().take, steers=steers, followups=followups, until=until)
        got = await asyncio.to_thread(take, session, f"{run}#{key}")
        if got:
            fault_injection.reached("taken")  # placed in the store, the step not yet recorded
    except Exception as e:
        here.show(run, "child", f"the reports of subagents and the steers could not be read: {e}")
        return []
    for r in got:  # what the run takes shows as it enters: a steer, or a child's report
        if r.child in USERS:
            here.show(run, "steer", r.text, {"state": "placed", "id": r.id})
        else:
            here.show(run, "child", f"report: {r.text}", {"state": "placed", "id": r.id})
    return [r.text for r in got]


async def _logged(
    chat: Memory,
    run: str,
    transcript: list[Message],
    show: Callable[[str], None],
    step: Callable[[str, Callable[[], Awaitable[int]]], Awaitable[int]],
) -> None:
    """The run's messages into the chat, as a durable step (idempotent by key). A store
    that cannot take them is shown, and never fails the run."""

    async def log() -> int:
        try:
            return int(await chat.log(run_memory.entries(run, transcript, now())))
        except Exception as e:
            show(f"the run's messages were not logged into the chat: {e}")
            return 0

    await step("log", log)
