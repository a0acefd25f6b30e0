"""The session loop's runtime (issue 52): `SessionDriver` holds the rule's `drive.Work` as
its live state, feeds it what happens (a run's end and what a look found after it, a
look's result, the person's cancel, the clock) and does what the rule says (start a run,
abort it, look at the session's subagents, say a run's outcome, fire SessionEnd, detach
the subagents on a cut). It decides nothing itself: every decision is `drive.step`'s.

Every wait is raced with the rule's next wake on the loop clock, and with the cancel."""

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
from eukhe.rules.wait import End
from eukhe.run.context import ProcessContext
from eukhe.run.deadline import TIMEOUT, Deadline
from eukhe.run.outcome import Ending, RunOutcome
from eukhe.run.spec import RunSpec


class Runs(Protocol):
    """What the driver asks of the process's runtime (`run.driver.Runtime`)."""

    process: ProcessContext
    deadline: Deadline | None

    async def start(self, spec: RunSpec, session: str) -> str: ...

    async def result(self, run: str) -> RunOutcome: ...

    async def live_children(self, session: str) -> list[str]: ...

    async def session_end(self, cwd: Path, session: str, run: str, reason: str) -> None: ...


@dataclass
class SessionDriver:
    """One session's loop: `work` (the rule's state, its face in it) IS its live state.

    `spec`: the session's next runs' spec (their prompt is what waits for the session);
    `stop`: the cancel (Ctrl-C, an abort, the deadline), fed to the rule once it is set;
    `reason`: the SessionEnd hooks' reason; `clock`: the loop's, which tests control."""

    runs: Runs
    session: str
    cwd: Path
    work: drive.Work
    spec: RunSpec
    stop: asyncio.Event
    reason: str = "other"
    clock: waits.Clock = field(default_factory=waits.LoopClock)
    run: str = ""  # the last run, once started
    out: RunOutcome | None = None  # its outcome, once ended
    shown: list[str] = field(default_factory=list)  # the subagents last said to be at work
    inputs: asyncio.Queue[tuple[int, drive.Input]] = field(default_factory=asyncio.Queue)
    looks: int = 0  # the looks' generation: a look begun before an answer or a new work is dropped
    work_tasks: set[asyncio.Task[None]] = field(default_factory=set)
    stopped: bool = False  # the stop was fed to the rule as its cancel

    def ms(self) -> int:
        return int(self.clock.now() * 1000)

    # ---------------------------------------------------------------- the loop

    async def request(self, started: str | None = None) -> bool:
        """A person's request (`spec`, or the run `started`, which `Runs.start` began) and all
        it leads to, until its work is answered and its last look is over; whether it was
        cut (it left a run, a subagent at work or a message waiting)."""
        await self._do(self._step(drive.Input(drive.Kind.PROMPT, self.ms())), started)
        while not (self.work.answered is not None and not self.work.following):
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
        return self.work.left

    def _step(self, x: drive.Input) -> list[drive.Action]:
        before = self.work
        self.work, actions = drive.step(self.work, x)
        if (
            self.work.answered is not None and before.answered is None
        ) or self.work.started != before.started:
            self.looks += 1  # a new answer or a new work: looks begun before are stale
        return actions

    async def _do(self, actions: list[drive.Action], started: str | None = None) -> None:
        """What the rule says, in its order."""
        for a in actions:
            if a.do is drive.Do.RUN:
                await self._start(started)
                started = None
            elif a.do is drive.Do.ABORT:
                # a stop's setter has aborted it (Ctrl-C's interrupt), or it ends by its own
                # deadline (--timeout), which its outcome says: only the face's cancel aborts
                if self.run and not self.stopped:
                    self.runs.process.abort(self.run)
            elif a.do is drive.Do.LOOK:
                self._keep(self._look(self.looks))
            elif a.do is drive.Do.SAY:
                self.runs.process.sink.ended(self.run, self._said())
            elif a.do is drive.Do.END:
                await self.runs.session_end(self.cwd, self.session, self.run, self.reason)
            elif a.do is drive.Do.DETACH:
                await self._detach()
            # RESPOND: the loop's end (`request` returns); END_ASK, LEAVE, QUEUE: the face's

    # ---------------------------------------------------------------- what the rule asks

    async def _start(self, started: str | None) -> None:
        """The session's next run: `started` (begun by the face), or one of `spec`; its end,
        and what a look then finds, come back as the rule's input."""
        spec = self.spec if not self.run else dataclasses.replace(self.spec, prompt=None)
        if started is None:
            started = await self.runs.start(spec, self.session)
        self.runs.process.sink.started(started, spec.prompt)
        self.run, self.out = started, None
        self._keep(self._run_to_end(started, self.looks))

    async def _run_to_end(self, run: str, looks: int) -> None:
        try:
            out = await self.runs.result(run)
        except Exception as e:  # the wait itself broke: a failure with its cause
            out = RunOutcome(Ending.FAILED, code=Code.RUN.kind, message=f"run {run} broke: {e}")
        self.out = out
        live, waiting = await self._subagents()
        reason = drive.answer_of(out.outcome.value, out.code, out.cut)
        x = drive.Input(drive.Kind.RUN_ENDED, self.ms(), reason, live=live, waiting=waiting)
        self.inputs.put_nowait((looks, x))

    async def _look(self, looks: int) -> None:
        live, waiting = await self._subagents()
        self.inputs.put_nowait(
            (looks, drive.Input(drive.Kind.CHILDREN, self.ms(), live=live, waiting=waiting))
        )

    async def _subagents(self) -> tuple[bool, bool]:
        """Whether some subagent of the session is at work and a message waits for its next
        run: the subagents first, so that one that ends between the two reads has its report
        seen; said when the ones at work change."""
        live = await self.runs.live_children(self.session)
        waiting = await asyncio.to_thread(self.runs.process.reports().queued, self.session)
        if live and live != self.shown:
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

    def _said(self) -> RunOutcome:
        """The last run's outcome as said: still in flight when it outlived the cancel's
        grace; when a cut left the session's subagents at work past the deadline, it says so."""
        deadline = self.runs.deadline
        passed = deadline is not None and deadline.passed(time.time())
        out = self.out
        if out is None:
            message = (
                f"run {self.run} is still in flight elsewhere; eukhe resume finishes it once that one is gone"
            )
            if deadline is not None and passed:
                return deadline.failure(message)
            return RunOutcome(Ending.ABORTED, code="aborted", message=message)
        if self.work.left and deadline is not None and passed and out.code != TIMEOUT:
            return deadline.ended(out, "the session's subagents were still at work")
        return out

    def _keep(self, work: Coroutine[object, object, None]) -> None:
        """`work` runs, kept until it ends (a task nobody holds may be collected mid-way)."""
        task = asyncio.ensure_future(work)
        self.work_tasks.add(task)
        task.add_done_callback(self.work_tasks.discard)
