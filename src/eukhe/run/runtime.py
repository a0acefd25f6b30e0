"""A process's durable runtime (`Runtime`): starting runs, recovering the ones a dead
process left in flight, and waiting for them, in the process that runs work (`eukhe run`,
`eukhe resume`, the interactive agent, the owner's recovery). It is opened once by
`eukhe.runtime.open_runtime`; what it shows goes to its process's `RunSink`."""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from dbos import DBOS, SetWorkflowID, WorkflowHandleAsync

from eukhe import waits
from eukhe.client.client import ask_once
from eukhe.client.protocol import RequestKind
from eukhe.errors import Code, EukheError
from eukhe.humanize import counted
from eukhe.ids import is_root, name_of, run_id
from eukhe.json_types import JsonObject
from eukhe.rules import drive as rule
from eukhe.rules import job
from eukhe.rules.wait import End
from eukhe.run import instructed
from eukhe.run.assemble import session_hooks
from eukhe.run.context import ProcessContext
from eukhe.run.deadline import Deadline, left_in_flight
from eukhe.run.drive import Request, SessionDriver
from eukhe.run.loop import ABORT_GRACE
from eukhe.run.outcome import Ending, RunOutcome
from eukhe.run.session_service import Sessions
from eukhe.run.spec import RunSpec
from eukhe.run.tool_runner import run_to_end
from eukhe.run.workflow import run_workflow
from eukhe.store import session_runs
from eukhe.store.durable import Store, takes_recovered
from eukhe.store.executor_lease import host_of
from eukhe.store.session_runs import CHILD_TASK, IN_FLIGHT, NAMES
from eukhe.timing import timing

Say = Callable[[str], None]
T = TypeVar("T")


class Busy(EukheError, RuntimeError):
    """A session's run is in flight in a live process."""

    code = Code.RUN


"""Every workflow of eukhe: a crash cuts off a run, its subagents' runs and their tasks alike."""


def is_task(wid: str) -> bool:
    return wid.endswith(".task")


_CLOCK = waits.LoopClock()

RESULT_POLL = 0.005
"""Seconds between two looks at the store for the end of a run that says it is ending."""


def taken_from(executor: str | None, how: dict[str, str]) -> str:
    """Where a recovered run comes from, as its line says: another host's executor gone,
    or this host's process ended (a run a recovery left queued: cut off before)."""
    if executor is None or executor not in how:
        return "cut off when its process ended"
    if host_of(executor) != socket.gethostname():
        return f"taken up from {how[executor]}"
    return "cut off when its process ended"


@dataclass
class TakenUp:
    """The runs a dead process left, taken up: their ids (oldest first), and whether the
    home's owner took them (it runs them; this process only waits for its session's)."""

    runs: list[str]
    by_owner: bool


@dataclass
class Runtime:
    """A process's durable runtime: its home, its store and its `ProcessContext` (whose
    sink is where everything it shows goes). Every face and the owner's recovery run
    runs through `run`."""

    home: Path
    store: Store
    process: ProcessContext
    deadline: Deadline | None = None  # `--timeout`: when its waits on runs end (`stop_at`)

    def close(self) -> None:
        self.store.close()

    def to_end(self, work: Awaitable[T]) -> T:
        """`work` on a loop of its own (the command line's), Ctrl-C interrupting this
        process's runs (`ProcessContext.interrupt`); its result."""

        async def main() -> T:
            waits.on_ctrl_c(asyncio.get_running_loop(), self.process.interrupt)
            return await work

        return run_to_end(main())

    def _stop(self) -> asyncio.Event:
        """The event Ctrl-C sets for the runs this process waits on (a new one when none)."""
        stop = self.process.stop
        return stop[1] if stop is not None else asyncio.Event()

    # ---------------------------------------------------------------- runs cut off

    async def cut_off(self) -> list[str]:
        """The workflows a dead process left in flight, or a recovery left queued (a look,
        no change): runs, subagents' runs and their tasks."""
        found = await DBOS.list_workflows_async(status=["PENDING", "ENQUEUED"], name=NAMES, load_input=False)
        pending = [w for w in found if w.status == "PENDING"]
        queued = [w for w in found if w.status == "ENQUEUED"]
        dead = await self._gone({w.executor_id for w in pending if w.executor_id})
        return sorted(
            [w.workflow_id for w in pending if w.executor_id in dead] + [w.workflow_id for w in queued]
        )

    async def _gone(self, executors: set[str]) -> dict[str, str]:
        """The executors among these that are gone (`Store.gone`: their leases on a shared
        store, their pids on SQLite), each with how it went."""
        if not executors:
            return {}
        return await asyncio.to_thread(self.store.gone, sorted(executors))

    async def recover(self, say: Say) -> list[str]:
        """Re-enqueue every workflow whose process is gone, and take in the ones a recovery
        already re-enqueued (a process that died before picking one up leaves it so); the
        ids of the runs among them (subagents' runs too, not their tasks, which go on in
        the background here), oldest first. DBOS admits one runner for each, even when two
        processes recover at once; the one that recovers takes them from then on. `say`:
        where its lines go (the owner keeps what it said of each run)."""
        takes_recovered(True)
        pending = await DBOS.list_workflows_async(status=["PENDING"], name=NAMES)
        queued = await DBOS.list_workflows_async(status=["ENQUEUED"], name=NAMES)
        # a queued run keeps the executor it was cut off from till some process takes it: how
        # that one went is said too (another owner re-enqueued it, this one may run it)
        how = await self._gone({w.executor_id for w in pending + queued if w.executor_id})
        dead = sorted({w.executor_id for w in pending if w.executor_id in how})
        for executor in dead:  # what is left of its connections ends first: it writes no more
            await asyncio.to_thread(self.store.cut, executor)
        if dead:
            await asyncio.to_thread(DBOS._recover_pending_workflows, dead)
        cut = [w for w in pending if w.executor_id in dead] + queued
        for w in sorted(cut, key=lambda w: w.workflow_id):
            wid, prompt = w.workflow_id, session_runs.prompt_of(w)[:80]
            whence = taken_from(w.executor_id, how)
            if is_root(wid):
                say(f"resuming run {wid}, {whence}: {prompt}")
            elif not is_task(wid):
                say(f"resuming subagent {name_of(wid)} ({wid}), {whence}: {prompt}")
        return sorted(w.workflow_id for w in cut if not is_task(w.workflow_id))

    async def owner_takes_up(self) -> tuple[list[str], list[str]]:
        """The runs dead processes left, handed to the home's owner (started if none runs),
        which finishes them: every run it is finishing (those it took up before included),
        and what it said of them. The owner opens the store only when there are some."""
        got = await ask_once(self.home, RequestKind.RECOVER, spawn=True, runs=await self.cut_off())
        return [str(r) for r in got.get("runs") or []], [str(line) for line in got.get("said") or []]

    async def _taken_up(self, by_owner: bool) -> TakenUp:
        """The runs a dead process left, taken up by the owner (it runs them) when
        `by_owner`, else here (and here too when no owner answers)."""
        say = self.process.sink.say
        if by_owner:
            try:
                runs, said = await self.owner_takes_up()
            except Exception as e:  # no owner answers: this process takes them up itself
                say(f"the owner could not take up cut-off runs ({e}); this process does")
            else:
                for line in said:
                    say(line)
                return TakenUp(runs, True)
        return TakenUp(await self.recover(say), False)

    # ---------------------------------------------------------------- one run

    async def start(self, spec: RunSpec, session: str) -> str:
        """Start the session's next run; its id. Refuses while the session has a run in
        flight (a recovered one is awaited by the caller first).

        The run executes on DBOS's own event loop, where recovered runs execute too:
        every run of the process shares one loop, and with it the admission
        controllers (which belong to one loop)."""
        runs = await session_runs.runs(session)
        live = [w for w in runs if w.status not in session_runs.ENDED]
        if live:
            w = live[-1]
            raise Busy(
                f"session {session} has run {w.workflow_id} in flight (process {w.executor_id}); "
                "wait for it to end, or run `eukhe resume` if that process is gone"
            )
        for image in spec.images:  # kept once in the store's image table; the run reads them there
            await asyncio.to_thread(self.process.images().keep, image, spec.image_data[image.sha256])
        # what its views pin: the list its session's last run ended with, the person's last request
        pins = await Sessions(self.store.url, self.home, DBOS).pins(session)
        # its instruction files as it starts: its end records those its model changed (`run.instructed`)
        digests = await asyncio.to_thread(instructed.taken, spec.cwd)
        pinned = dataclasses.replace(
            spec,
            tasks=pins.tasks,
            request="" if spec.prompt is not None else pins.request,
            instructions=digests,
        )
        rid = run_id(session, len(runs) + 1)
        # two processes may count the same next id: DBOS then hands the second the run the first
        # started, so each start carries a claim of its own and checks the run under the id is its
        claim = secrets.token_hex(8)

        self.process.runs.open(rid)  # the user's own: a session request, aborted by Ctrl-C

        def begin() -> str | None:  # the synchronous start hands the run to DBOS's loop
            with SetWorkflowID(rid):
                asked = dataclasses.replace(pinned, session=session, claim=claim, asked=time.time())
                DBOS.start_workflow(run_workflow, asked.json())
            st = DBOS.get_workflow_status(rid)
            args = (st.input or {}).get("args") if st is not None and isinstance(st.input, dict) else None
            return str(args[0].get("claim")) if args and isinstance(args[0], dict) else None

        try:
            claimed = await asyncio.to_thread(begin)
        except BaseException:
            self.process.runs.forget(rid)  # not started: its handle goes
            raise
        if claimed != claim:
            self.process.runs.forget(rid)  # another process's run, under the same id
            raise Busy(
                f"session {session}: another process started run {rid} at the same moment; "
                "wait for it to end, then send your prompt again"
            )
        return rid

    async def run(self, spec: RunSpec | None, session: str, follow: str | None = None) -> RunOutcome:
        """One run of `session` to its end: `spec` as its next run (its id to the sink's
        `started`), or the run `follow`, in flight already (one the session left, a
        recovered one). The wait ends on Ctrl-C too (`result`)."""
        if follow is None:
            if spec is None:
                raise ValueError("a run needs its spec, or the run in flight to follow")
            return (await self._asked(spec, session))[1]
        return await self.result(follow)

    async def _asked(self, spec: RunSpec, session: str) -> tuple[str, RunOutcome]:
        rid = await self.start(spec, session)
        self.process.sink.started(rid, spec.prompt)
        return rid, await self.result(rid)

    async def _ended(self, run: str) -> object:
        """The run's result from the store. A run this process executes says when it is
        ending, through its handle (`run.handles`), so the store is read then, not polled all
        along (every read competes with the run's own writes)."""
        ending = self.process.runs.handle(run).ending()
        try:
            handle: WorkflowHandleAsync[JsonObject] = await DBOS.retrieve_workflow_async(run)
            slow = asyncio.ensure_future(handle.get_result(polling_interval_sec=timing().idle_poll))
            told = asyncio.ensure_future(ending.wait())
            try:
                await asyncio.wait({slow, told}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiting in (slow, told):
                    if not waiting.done():
                        waiting.cancel()
            if slow.done() and not slow.cancelled():
                return slow.result()
            return await handle.get_result(polling_interval_sec=RESULT_POLL)
        finally:
            self.process.runs.forget(run)  # a run that never began here: no one waits for it now

    async def result(self, run: str) -> RunOutcome:
        """How a run ended, read back from the store (`RunOutcome.of`: the one place). The
        wait ends on Ctrl-C too: the runs this process executes are aborted (and end within
        their grace); a run another process picked up is left to it, with an outcome that
        says so."""
        stop = self._stop()
        task = asyncio.ensure_future(self._ended(run))
        raced = await waits.race(asyncio.shield(task), None, stop)
        if raced.end is End.CANCEL:  # Ctrl-C: a run this process executes ends within its grace
            await waits.race(asyncio.shield(task), _CLOCK.now() + 2 * ABORT_GRACE, None, _CLOCK)
        if not task.done():
            task.cancel()
            return left_in_flight(run, self.deadline, time.time())
        try:
            out = task.result()
        except Exception as e:  # the workflow itself broke: a failure with its cause, not a traceback
            return RunOutcome(
                Ending.FAILED, code=Code.RUN.kind, message=f"run {run} broke: {type(e).__name__}: {e}"
            )
        if not isinstance(out, dict):
            return RunOutcome(
                Ending.FAILED, code=Code.RUN.kind, message=f"run {run} ended without an outcome"
            )
        return RunOutcome.of(out)

    # ---------------------------------------------------------------- many runs

    async def finish(self, ids: list[str], say: Say) -> bool:
        """Wait for recovered runs to end (`run`), saying how each ended. Ctrl-C (or the
        deadline) leaves the rest in flight, resumable, and says so; whether it did."""
        stop = self._stop()
        for n, rid in enumerate(ids):
            task = asyncio.ensure_future(self.run(None, rid.partition("/")[0], follow=rid))
            await waits.race(asyncio.shield(task), None, stop)
            if not task.done():
                task.cancel()
                left = len(ids) - n
                say(f"left {counted(left, 'recovered run')} in flight: `eukhe resume` finishes them")
                return True
            out = task.result()
            say(f"run {rid} ended {out.outcome}" + (f": {out.message}" if out.message else ""))
        return False

    async def drive(self, spec: RunSpec | None, session: str | None, by_owner: bool = True) -> bool:
        """Take up what a dead process left, run `spec` (if any) as the session's next run,
        and wait for what must be waited for; whether some were left in flight (Ctrl-C, or
        the spec's deadline). Each run it starts shows its start and its end through the
        sink, and with a spec the last thing it says is always a run's outcome.

        `by_owner`: the home's owner takes the cut-off runs up and finishes them: a run
        waits only for the session's own cut-off run, which must end first, as the
        session's order wants; `eukhe resume` (no spec) waits for them all. Else this
        process recovers them, and the session's own run never waits behind other
        sessions' recovered runs: they run beside it as background work, and what is left
        of them when the session's work ends, `eukhe resume` (or the owner) finishes."""
        sink = self.process.sink
        self.process.stop = (asyncio.get_running_loop(), asyncio.Event())
        timer = self.stop_at(spec.deadline if spec is not None else None)
        try:
            mine, rest = await self.take_up(session, by_owner, runs=spec is not None)
            if await self.finish(mine, sink.say):
                if spec is not None:
                    sink.ended(None, self.not_started(mine))
                return True
            if spec is None or session is None:
                return await self.finish(rest, sink.say)
            return await self.request(spec, session)
        finally:
            if timer is not None:
                timer.cancel()

    async def take_up(self, session: str | None, by_owner: bool, runs: bool) -> tuple[list[str], list[str]]:
        """The runs dead processes left, taken up (`_taken_up`): the session's own, which its
        next run waits for, and the rest. `runs`: a run of the session is to come, so what
        happens to the rest is said now, before it (its outcome is the last thing said)."""
        sink = self.process.sink
        taken = await self._taken_up(by_owner)
        mine = [r for r in taken.runs if session is not None and r.startswith(f"{session}/") and is_root(r)]
        rest = [r for r in taken.runs if r not in mine]
        if runs and rest:
            some = counted(len(rest), "recovered run")
            sink.say(
                f"the owner finishes {some}; `eukhe status` shows them"
                if taken.by_owner
                else f"{some} of other sessions run beside this one; "
                "what is left of them at its end, `eukhe resume` finishes"
            )
        if runs and mine:
            sink.say(f"waiting for run {mine[-1]} of this session to end first")
        return mine, rest

    def not_started(self, mine: list[str]) -> RunOutcome:
        """The outcome of a run that never started: the wait for the session's cut-off run
        was cut, by Ctrl-C or by the deadline."""
        if self.deadline is not None and self.deadline.passed(time.time()):
            why = f"not started: run {mine[-1]} of this session was still at work"
            return self.deadline.failure(why)
        return RunOutcome(Ending.ABORTED, code="aborted", message="not started: Ctrl-C came first")

    def stop_at(self, deadline: Deadline | None) -> asyncio.Task[None] | None:
        """`--timeout`: at `deadline` this process stops waiting on runs (`stop`, as Ctrl-C
        does), while each run ends by its own deadline (`run.workflow`) within its grace;
        the timer's task (None: no deadline), to cancel once the waits are over."""
        self.deadline = deadline
        if deadline is None:
            return None

        async def at() -> None:
            await _CLOCK.sleep_until(_CLOCK.now() + (deadline.at - time.time()))
            if self.process.stop is not None:  # the one of the waits now (a control session's turn's)
                self.process.stop[1].set()

        return asyncio.ensure_future(at())

    async def request(self, spec: RunSpec, session: str) -> bool:
        """The session's request of `spec` and all it leads to, as the session loop's rule
        says with the command line's face (`run.drive.SessionDriver`, `drive.COMMAND`): the
        runs its subagents' reports start, each run's outcome said once, the last thing said
        always one, after the session's SessionEnd hooks when its work leaves nothing.
        Whether it was cut (Ctrl-C, the deadline, leaving work behind)."""
        work = rule.idle(rule.COMMAND, int(timing().child_poll * 1000))
        driver = SessionDriver(self, session, Path(spec.cwd), work, spec, self._stop(), clock=_CLOCK)
        try:
            return await driver.request(Request(spec))
        finally:
            driver.close()

    async def session_end(self, cwd: Path, session: str, run: str, reason: str) -> None:
        """The session's background jobs ended (each within the rule's bound), then its
        SessionEnd hooks (`reason`: Claude Code's, "other" for `eukhe run`,
        "prompt_input_exit" for the agent), each bounded, Ctrl-C ending them; shown as its
        last run's (`run`)."""
        for line in await self.process.jobs.end_scope(session, job.Why.SESSION_END):
            self.process.show(run, "notice", line)
        hooks = session_hooks(cwd, session, run, self.process, self._stop())
        if hooks is not None:
            await hooks.session_end(reason)

    async def live_children(self, session: str) -> list[str]:
        """The session's children whose task has not ended: still watched, or owing a report."""
        found = await DBOS.list_workflows_async(
            status=list(IN_FLIGHT), name=CHILD_TASK, workflow_id_prefix=f"{session}/", load_input=False
        )
        return sorted(w.workflow_id.removesuffix(".task") for w in found)
