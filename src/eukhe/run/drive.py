"""The session loop's runtime (issue 52): `SessionDriver` holds the rule's `drive.Work` as
its live state, feeds it what happens (a person's request, a run's end and what a look
found after it, a look's result, a cancel, a permission request and its answer, the clock,
no more requests, the face gone) and does what the rule says (start a run, queue a
request in the session's inbox or keep it past a cancel, give the queued ones back, abort
the run, look at the session's subagents, say a run's outcome, answer the work, fire
SessionEnd, detach the subagents on a cut). It decides nothing itself: every decision is
`drive.step`'s. Every face (`eukhe run`, `--control`, the editor, the interactive agent)
hands it inputs and shows what it says; none keeps a loop of its own.

Every wait is raced with the rule's next wake on the loop clock, and with the stop."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from eukhe import waits
from eukhe.errors import Code
from eukhe.humanize import counted
from eukhe.ids import name_of
from eukhe.rules import drive
from eukhe.rules.child import Fate
from eukhe.rules.wait import End
from eukhe.run.context import ProcessContext
from eukhe.run.deadline import TIMEOUT, Deadline, left_in_flight
from eukhe.run.outcome import Ending, RunOutcome
from eukhe.run.spec import RunSpec
from eukhe.store.reports import FOLLOWUP


class Runs(Protocol):
    """What the driver asks of the process's runtime (`run.runtime.Runtime`)."""

    process: ProcessContext
    deadline: Deadline | None

    async def start(self, spec: RunSpec, session: str) -> str: ...

    async def result(self, run: str) -> RunOutcome: ...

    async def live_children(self, session: str) -> list[str]: ...

    async def session_end(self, cwd: Path, session: str, run: str, reason: str) -> None: ...


@dataclass(frozen=True)
class Answer:
    """A work's answer: its reason, and its last run's outcome (None: none ended);
    `withdrawn`: the request, queued, went back to the person (a cancel's WITHDRAW)."""

    reason: drive.Reason
    outcome: RunOutcome | None
    withdrawn: bool = False


@dataclass
class Request:
    """A person's request: its run's spec, or the run `started` already (the face began it
    to say its id); queued while a work goes on, its `text` as `sender` (a steer or a
    follow-up), kept past a cancel as the next work's (its spec's prompt). `answer`: the answer
    of the work that takes it; `did`: what the rule made of it (RUN, QUEUE or HOLD); `id`: its
    message in the inbox, once queued."""

    spec: RunSpec | None = None
    started: str | None = None
    text: str = ""
    sender: str = FOLLOWUP
    answer: asyncio.Future[Answer] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    did: drive.Do | None = None
    id: str = ""


@dataclass
class SessionDriver:
    """One session's loop: `work` (the rule's state, its face in it) IS its live state.

    `spec`: the spec of the runs of what waits for the session (their prompt is None);
    `stop`: a cancel from outside (Ctrl-C, `--control`'s abort, the deadline), fed to the
    rule once set; `reason`: the SessionEnd hooks' reason; `clock`: the loop's."""

    runs: Runs
    session: str
    cwd: Path
    work: drive.Work
    spec: RunSpec
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    reason: str = "other"
    clock: waits.Clock = field(default_factory=waits.LoopClock)
    run: str = ""  # the last run, once started
    out: RunOutcome | None = None  # its outcome, once ended
    shown: list[str] = field(default_factory=list)  # the subagents last said to be at work
    inputs: asyncio.Queue[tuple[int, drive.Input]] = field(default_factory=asyncio.Queue)
    looks: int = 0  # the looks' generation: one begun before an answer or a new work is dropped
    stopped: bool = False  # the stop was fed to the rule as its cancel
    taking: list[Request] = field(default_factory=list)  # the requests the work at hand answers
    changed: asyncio.Event = field(default_factory=asyncio.Event)  # set once a step's actions are done
    pump: asyncio.Task[None] | None = None
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    asks: int = 0  # the permission requests sent, for their ids
    last: Answer | None = None  # the last work's answer
    kept: list[Request] = field(default_factory=list)  # kept past a cancel (HOLD): the next work's
    starting: bool = False  # a run the rule said to RUN is starting: it has no id yet
    aborting: bool = False  # the rule said ABORT while it was starting: done once it has one

    def ms(self) -> int:
        return int(self.clock.now() * 1000)

    # ---------------------------------------------------------------- what faces hand it

    async def submit(self, request: Request) -> asyncio.Future[Answer]:
        """A person's request: the session's next run when no work goes on, else queued for
        the run at work or after it; the future of the answer of the work that takes it."""
        self._pumping()
        before = self.work
        actions = self._step(drive.Input(drive.Kind.PROMPT, self.ms()))
        made = (drive.Do.RUN, drive.Do.QUEUE, drive.Do.HOLD)
        request.did = next((a.do for a in actions if a.do in made), None)
        try:
            await self._do(actions, request)
        except Exception:  # its run did not start (a busy session): the request never came
            self.work = before
            raise
        return request.answer

    async def request(self, request: Request) -> bool:
        """A request and all it leads to, until its work is answered and its last look is
        over (`eukhe run`, `--control`'s turn); whether it was cut (it left a run, a
        subagent at work or a message waiting)."""
        await self.submit(request)
        await self.settled()
        return self.work.left

    async def settled(self) -> None:
        """Until no work goes on (its answer given, its last look over); the loop's own
        failure, raised (every other wait is the loop's, raced with the rule's wake)."""
        while not self.work.idle() and not self.work.closed:
            self.changed.clear()
            step = asyncio.ensure_future(self.changed.wait())
            assert self.pump is not None
            await asyncio.wait({step, self.pump}, return_when=asyncio.FIRST_COMPLETED)
            step.cancel()
            if self.pump.done() and not self.work.closed:
                self.pump.result()  # raises what ended it
                raise RuntimeError(f"session {self.session}: its loop ended with its work going on")

    def open(self) -> None:
        """The session is open: its loop runs, the rule's wake driving it (a face that watches
        looks at once at its subagents and at what waits)."""
        self._pumping()

    def cancel(self) -> None:
        """The person cancels the work (the editor's session/cancel, the agent's Ctrl-C), as
        the rule's next step at once: a request sent right after it is one after the cancel."""
        self._keep(self._do(self._step(drive.Input(drive.Kind.CANCEL, self.ms()))))

    def ask(self, timeout: float) -> tuple[int, bool]:
        """A permission request sent (its deadline `timeout` s on): its id, and whether the
        rule ended it at once (nobody waits on it)."""
        self.asks += 1
        now = self.ms()
        ended = self._step(
            drive.Input(drive.Kind.ASK, now, ask=self.asks, deadline=now + int(timeout * 1000))
        )
        self.inputs.put_nowait((self.looks, drive.Input(drive.Kind.TICK, now)))  # its deadline's wake
        return self.asks, bool(ended)

    def chosen(self, ask: int) -> bool:
        """The person answered the permission request `ask`: whether it was still pending."""
        return bool(self._step(drive.Input(drive.Kind.CHOSEN, self.ms(), ask=ask)))

    async def finish(self) -> None:
        """No more requests come: the session ends with its work (SessionEnd once it is over)."""
        await self._do(self._step(drive.Input(drive.Kind.FINISH, self.ms())))
        await self.settled()

    async def closed(self) -> bool:
        """The face is gone: whether a run at work is left to the home's owner; with none at
        work, the session ends (SessionEnd)."""
        actions = self._step(drive.Input(drive.Kind.CLOSED, self.ms()))
        await self._do(actions)
        self.close()
        return any(a.do is drive.Do.LEAVE for a in actions)

    def close(self) -> None:
        """The loop's tasks end: nothing more is fed to the rule."""
        if self.pump is not None:
            self.pump.cancel()
        for task in list(self.tasks):
            task.cancel()

    # ---------------------------------------------------------------- the loop

    def _pumping(self) -> None:
        if self.pump is None or self.pump.done():
            self.pump = asyncio.ensure_future(self._pump())

    async def _pump(self) -> None:
        """The rule's inputs in order, each its step and what it says, until the face is gone."""
        while not self.work.closed:
            wake = drive.wake(self.work)
            ends = None if wake is None else wake / 1000
            cancel = None if self.stopped else self.stop
            got = await waits.race(self.inputs.get(), ends, cancel, self.clock)
            if got.end is End.CANCEL:
                self.stopped = True
                x = drive.Input(drive.Kind.CANCEL, self.ms())
            elif got.end is End.EVENT:
                looks, x = got.result()
                if x.kind is drive.Kind.CHILDREN and looks != self.looks:
                    continue  # begun before the work's answer or a new work: stale
            else:
                x = drive.Input(drive.Kind.TICK, self.ms())
            await self._do(self._step(x))

    def _step(self, x: drive.Input) -> list[drive.Action]:
        before = self.work
        self.work, actions = drive.step(self.work, x)
        answered = self.work.answered is not None and before.answered is None
        if answered or self.work.started != before.started:
            self.looks += 1  # a new answer or a new work: looks begun before are stale
        return actions

    async def _do(self, actions: list[drive.Action], request: Request | None = None) -> None:
        """What the rule says, in its order."""
        for a in actions:
            if a.do is drive.Do.RUN:
                await self._start(request)
                request = None
            elif a.do is drive.Do.QUEUE and request is not None:
                await self._queue(request)
            elif a.do is drive.Do.HOLD and request is not None:
                self.kept.append(request)
            elif a.do is drive.Do.WITHDRAW:
                await self._withdraw()
            elif a.do is drive.Do.ABORT:
                # a stop's setter has aborted it (Ctrl-C's interrupt), or it ends by its own
                # deadline (--timeout), which its outcome says: only the face's cancel aborts
                if self.starting:
                    self.aborting = True
                elif self.run and not self.stopped:
                    self.runs.process.abort(self.run)
            elif a.do is drive.Do.LOOK:
                self._keep(self._look(self.looks))
            elif a.do is drive.Do.SAY:
                self.runs.process.sink.ended(self.run, self._said())
            elif a.do is drive.Do.END:
                try:  # each hook bounded; their failures shown as they happen
                    await self.runs.session_end(self.cwd, self.session, self.run, self.reason)
                except Exception as e:
                    self.runs.process.sink.say(f"the session's SessionEnd hooks did not run: {e}")
            elif a.do is drive.Do.DETACH:
                await self._detach()
            elif a.do is drive.Do.RESPOND:
                self._answered(Answer(a.reason or drive.Reason.FAILED, self.out))
            elif a.do is drive.Do.LEAVE:
                self.runs.process.sink.say(f"run {self.run} is left to the home's owner")
            # END_ASK: the permission request's own wait ends (`ask`, `chosen`, its deadline)
        self._relinked()
        self.changed.set()  # done: `settled` looks again

    # ---------------------------------------------------------------- what the rule asks

    async def _start(self, request: Request | None) -> None:
        """The session's next run: the request's (or the run it `started`), else one of what
        waits for the session, or of the requests kept past a cancel (one run, their prompts
        joined); its end, and what a look then finds, come back as input."""
        kept, self.kept = (self.kept, []) if request is None else ([], self.kept)
        if kept:
            request = joined(kept)
        spec = request.spec if request is not None and request.spec is not None else next_spec(self.spec)
        started = request.started if request is not None else None
        self.starting, self.aborting = True, False
        try:
            if started is None:
                started = await self.runs.start(spec, self.session)
        except Exception as e:  # a run of what waits could not start: it ends failed, with its cause
            self.starting = False
            if request is not None and not kept:
                raise  # the request's own: the face says why (`submit`)
            for r in kept:  # the face gives them back
                if not r.answer.done():
                    r.answer.set_exception(e)
            out = RunOutcome(Ending.FAILED, code=Code.RUN.kind, message=f"{type(e).__name__}: {e}")
            self._keep(self._ended(out, self.looks))
            return
        self.starting = False
        self.runs.process.sink.started(started, spec.prompt)
        self.run, self.out = started, None
        self.taking += kept or ([request] if request is not None else [])
        if self.aborting and not self.stopped:  # the rule's ABORT came while it started
            self.runs.process.abort(started)
        self._keep(self._run_to_end(started, self.looks))

    async def _queue(self, request: Request) -> None:
        """A request while a work goes on: in the session's inbox, for the run at work (a
        steer at its next round's end) or the next; answered with the work that takes it."""
        try:
            said = await asyncio.to_thread(
                self.runs.process.reports().say, self.session, request.sender, request.text
            )
        except Exception as e:
            if not request.answer.done():
                request.answer.set_exception(e)
            return
        request.id = str(said)
        self.taking.append(request)

    async def _withdraw(self) -> None:
        """The requests queued in the work that no run took go back to the person: each
        answered as withdrawn (one a run took, or one the store cannot withdraw, is answered
        with the work)."""
        keep = []
        for r in self.taking:
            if r.id and not r.answer.done() and await self._withdrawn(r.id):
                r.answer.set_result(Answer(drive.Reason.CANCELLED, self.out, withdrawn=True))
            else:
                keep.append(r)
        self.taking = keep

    async def _withdrawn(self, message: str) -> bool:
        try:
            fate = await asyncio.to_thread(self.runs.process.reports().withdraw, message)
        except Exception as e:
            self.runs.process.sink.say(f"message {message} could not be withdrawn: {e}")
            return False
        return bool(fate is Fate.WITHDRAWN)

    async def _run_to_end(self, run: str, looks: int) -> None:
        """The run's end, as the rule's input."""
        try:
            out = await self.runs.result(run)
        except Exception as e:  # the wait itself broke: a failure with its cause
            out = RunOutcome(Ending.FAILED, code=Code.RUN.kind, message=f"run {run} broke: {e}")
        await self._ended(out, looks)

    async def _ended(self, out: RunOutcome, looks: int) -> None:
        self.out = out
        live, waiting = await self._subagents()
        reason = drive.answer_of(out.outcome.value, out.code, out.cut)
        x = drive.Input(drive.Kind.RUN_ENDED, self.ms(), reason, live=live, waiting=waiting)
        self.inputs.put_nowait((looks, x))

    async def _look(self, looks: int) -> None:
        live, waiting = await self._subagents()
        x = drive.Input(drive.Kind.CHILDREN, self.ms(), live=live, waiting=waiting)
        self.inputs.put_nowait((looks, x))

    async def _subagents(self) -> tuple[bool, bool]:
        """Whether some subagent of the session is at work and a message waits for its next
        run: the subagents first, so that one that ends between the two reads has its report
        seen; said when the ones at work change. A store that cannot be read: neither, said
        (the work is answered; what waits goes to the session's next request)."""
        try:
            live = await self.runs.live_children(self.session)
            waiting = await asyncio.to_thread(self.runs.process.reports().queued, self.session)
        except Exception as e:
            self.runs.process.sink.say(f"session {self.session}: its subagents could not be read: {e}")
            return False, False
        if live and live != self.shown and self.work.face.waits:  # said where they are waited for
            self.runs.process.sink.say(
                f"waiting for {counted(len(live), 'subagent')}: {', '.join(map(name_of, live))}"
            )
        self.shown = live
        return bool(live), bool(waiting)

    async def _detach(self) -> None:
        """The subagents are left at work: the session admits no report until its next run."""
        await asyncio.to_thread(self.runs.process.reports().close_parent, self.session)
        left = counted(len(self.shown), "subagent")
        self.runs.process.sink.say(f"left {left} running: their reports wait for this session's next run")

    def _answered(self, answer: Answer) -> None:
        """The work's answer, to the requests it took; those queued in it wait for its last
        look, when it looks (`_relinked`): the next work may take them."""
        following = self.work.following
        keep = []
        for r in self.taking:
            if following and r.started is None and r.spec is None:
                keep.append(r)  # queued: the next work may be the one that takes it
            elif not r.answer.done():
                r.answer.set_result(answer)
        self.taking = keep
        self.last = answer

    def _relinked(self) -> None:
        """Requests queued in an answered work whose last look is over: answered with it
        when no new work began, else taken by the new one (kept in `taking`)."""
        if self.work.idle() and self.taking and self.last is not None:
            for r in self.taking:
                if not r.answer.done():
                    r.answer.set_result(self.last)
            self.taking = []

    def _said(self) -> RunOutcome:
        """The last run's outcome as said: still in flight when it outlived the cancel's
        grace; when a cut left the session's subagents at work past the deadline, it says so."""
        deadline = self.runs.deadline
        passed = deadline is not None and deadline.passed(time.time())
        out = self.out
        if out is None:
            return left_in_flight(self.run, deadline, time.time())
        if self.work.left and deadline is not None and passed and out.code != TIMEOUT:
            return deadline.ended(out, "the session's subagents were still at work")
        return out

    def _keep(self, work: Coroutine[object, object, None]) -> None:
        """`work` runs, kept until it ends (a task nobody holds may be collected mid-way)."""
        task = asyncio.ensure_future(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)


def joined(kept: list[Request]) -> Request:
    """The requests kept past a cancel as one: the first's spec, their prompts joined."""
    prompts = [r.spec.prompt for r in kept if r.spec is not None and r.spec.prompt]
    first = next((r.spec for r in kept if r.spec is not None), None)
    spec = None if first is None else dataclasses.replace(first, prompt="\n\n".join(prompts))
    return Request(spec, text="\n\n".join(r.text for r in kept if r.text))


def next_spec(spec: RunSpec) -> RunSpec:
    """The spec of a run of what waits for the session: the first run's, with no prompt."""
    return dataclasses.replace(spec, prompt=None)
