"""Starting runs, recovering the ones a dead process left in flight, and waiting
for them, in the process that runs work (`eukhe run`, `eukhe resume`)."""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from dbos import DBOS, SetWorkflowID, WorkflowHandleAsync

from eukhe import waits
from eukhe.errors import Code, EukheError
from eukhe.humanize import counted
from eukhe.ids import is_root, name_of, run_id, run_line
from eukhe.json_types import JsonObject
from eukhe.rules.wait import End
from eukhe.run.loop import ABORT_GRACE
from eukhe.run.outcome import Ending, RunOutcome
from eukhe.run.spec import RunSpec
from eukhe.run.workflow import process, run_workflow
from eukhe.store import sessions
from eukhe.store.durable import gone, takes_recovered
from eukhe.store.sessions import CHILD_TASK, IN_FLIGHT, NAMES
from eukhe.timing import timing

Say = Callable[[str], None]


class Busy(EukheError, RuntimeError):
    """A session's run is in flight in a live process."""

    code = Code.RUN


"""Every workflow of eukhe: a crash cuts off a run, its subagents' runs and their tasks alike."""


def is_task(wid: str) -> bool:
    return wid.endswith(".task")


def _stop() -> asyncio.Event:
    """The event Ctrl-C sets for the runs this process waits on (a new one when none)."""
    stop = process().stop
    return stop[1] if stop is not None else asyncio.Event()


async def cut_off() -> list[str]:
    """The workflows a dead process left in flight, or a recovery left queued (a look,
    no change): runs, subagents' runs and their tasks."""
    pending = await DBOS.list_workflows_async(status=["PENDING"], name=NAMES, load_input=False)
    queued = await DBOS.list_workflows_async(status=["ENQUEUED"], name=NAMES, load_input=False)
    return sorted([w.workflow_id for w in pending if gone(w.executor_id)] + [w.workflow_id for w in queued])


async def recover(say: Say) -> list[str]:
    """Re-enqueue every workflow whose process is gone, and take in the ones a recovery
    already re-enqueued (a process that died before picking one up leaves it so); the
    ids of the runs among them (subagents' runs too, not their tasks, which go on in
    the background here), oldest first. DBOS admits one runner for each, even when two
    processes recover at once; the one that recovers takes them from then on."""
    takes_recovered(True)
    pending = await DBOS.list_workflows_async(status=["PENDING"], name=NAMES)
    queued = await DBOS.list_workflows_async(status=["ENQUEUED"], name=NAMES)
    dead = sorted({w.executor_id for w in pending if w.executor_id is not None and gone(w.executor_id)})
    if dead:
        await asyncio.to_thread(DBOS._recover_pending_workflows, dead)
    cut = [w for w in pending if w.executor_id in dead] + queued
    for w in sorted(cut, key=lambda w: w.workflow_id):
        if is_root(w.workflow_id):
            say(f"resuming run {w.workflow_id}, cut off when its process ended: {sessions.prompt_of(w)[:80]}")
        elif not is_task(w.workflow_id):
            say(f"resuming subagent {name_of(w.workflow_id)} ({w.workflow_id}): {sessions.prompt_of(w)[:80]}")
    return sorted(w.workflow_id for w in cut if not is_task(w.workflow_id))


async def start(spec: RunSpec, session: str) -> str:
    """Start the session's next run; its id. Refuses while the session has a run in
    flight (a recovered one is awaited by the caller first).

    The run executes on DBOS's own event loop, where recovered runs execute too:
    every run of the process shares one loop, and with it the admission
    controllers (which belong to one loop)."""
    runs = await sessions.runs(session)
    live = [w for w in runs if w.status not in sessions.ENDED]
    if live:
        w = live[-1]
        raise Busy(
            f"session {session} has run {w.workflow_id} in flight (process {w.executor_id}); "
            "wait for it to end, or run `eukhe resume` if that process is gone"
        )
    for image in spec.images:  # kept once in the store's image table; the run reads them there
        await asyncio.to_thread(process().images().keep, image, spec.image_data[image.sha256])
    rid = run_id(session, len(runs) + 1)
    # two processes may count the same next id: DBOS then hands the second the run the first
    # started, so each start carries a claim of its own and checks the run under the id is its
    claim = secrets.token_hex(8)

    marked = rid not in process().own
    process().own.add(rid)  # the user's own: a session request, aborted by Ctrl-C

    def begin() -> str | None:  # the synchronous start hands the run to DBOS's loop
        with SetWorkflowID(rid):
            DBOS.start_workflow(run_workflow, dataclasses.replace(spec, session=session, claim=claim).json())
        st = DBOS.get_workflow_status(rid)
        args = (st.input or {}).get("args") if st is not None and isinstance(st.input, dict) else None
        return str(args[0].get("claim")) if args and isinstance(args[0], dict) else None

    if await asyncio.to_thread(begin) != claim:
        if marked:
            process().own.discard(rid)
        raise Busy(
            f"session {session}: another process started run {rid} at the same moment; "
            "wait for it to end, then send your prompt again"
        )
    return rid


_CLOCK = waits.LoopClock()

RESULT_POLL = 0.005
"""Seconds between two looks at the store for the end of a run that says it is ending."""


async def _ended(run: str) -> Any:
    """The run's result from the store. A run this process executes says when it is
    ending, so the store is read then, not polled all along (every read competes
    with the run's own writes)."""
    loop = asyncio.get_running_loop()
    ending: asyncio.Future[None] = loop.create_future()
    process().ending[run] = (loop, ending)
    try:
        handle: WorkflowHandleAsync[JsonObject] = await DBOS.retrieve_workflow_async(run)
        slow = asyncio.ensure_future(handle.get_result(polling_interval_sec=timing().idle_poll))
        try:
            parts: set[asyncio.Future[Any]] = {slow, ending}
            done, _ = await asyncio.wait(parts, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not slow.done():
                slow.cancel()
        if slow in done:
            return slow.result()
        return await handle.get_result(polling_interval_sec=RESULT_POLL)
    finally:
        process().ending.pop(run, None)


async def result(run: str) -> JsonObject:
    """How a run ended. The wait ends on Ctrl-C too: the runs this process executes
    are aborted (and end within their grace); a run another process picked up is
    left to it, with a line that says so."""
    stop = _stop()
    task = asyncio.ensure_future(_ended(run))
    raced = await waits.race(asyncio.shield(task), None, stop)
    if raced.end is End.CANCEL:  # Ctrl-C: a run this process executes ends within its grace
        await waits.race(asyncio.shield(task), _CLOCK.now() + 2 * ABORT_GRACE, None, _CLOCK)
    if not task.done():
        task.cancel()
        message = f"run {run} is still in flight elsewhere; eukhe resume finishes it once that one is gone"
        return RunOutcome(Ending.ABORTED, code="aborted", message=message).json()
    try:
        out = task.result()
    except Exception as e:  # the workflow itself broke: a failure with its cause, not a traceback
        broke = f"run {run} broke: {type(e).__name__}: {e}"
        return RunOutcome(Ending.FAILED, code=Code.RUN.kind, message=broke).json()
    if not isinstance(out, dict):
        return RunOutcome(
            Ending.FAILED, code=Code.RUN.kind, message=f"run {run} ended without an outcome"
        ).json()
    return out


async def finish(ids: list[str], say: Say) -> bool:
    """Wait for recovered runs to end, saying how each ended. Ctrl-C leaves the rest
    in flight, resumable, and says so; whether it did."""
    stop = _stop()
    for n, rid in enumerate(ids):
        task = asyncio.ensure_future(_ended(rid))
        await waits.race(asyncio.shield(task), None, stop)
        if not task.done():
            task.cancel()
            left = len(ids) - n
            say(f"left {counted(left, 'recovered run')} in flight: `eukhe resume` finishes them")
            return True
        try:
            out = task.result()
        except Exception as e:  # the workflow itself broke: its cause, not a traceback
            out = {"outcome": "failed", "error": {"message": f"{type(e).__name__}: {e}"}}
        error = (out.get("error") if isinstance(out, dict) else None) or {}
        outcome = out.get("outcome") if isinstance(out, dict) else "without an outcome"
        say(f"run {rid} ended {outcome}" + (f": {error.get('message')}" if error else ""))
    return False


async def drive(
    spec: RunSpec | None,
    session: str | None,
    say: Say,
    ended: Callable[[JsonObject], None] = lambda out: None,
    recover_with: Callable[[list[str]], Awaitable[JsonObject]] | None = None,
    announced: str | None = None,
) -> bool:
    """Take up what a dead process left, run `spec` (if any) as the session's next
    run, and wait for what must be waited for; whether some were left in flight
    (Ctrl-C). `announced`: the line the caller already showed for the run it expects
    to start (a new session's first), not said again when it is that run.

    With `recover_with` (the home's owner), the owner takes the cut-off runs up and
    finishes them: a run waits only for the session's own cut-off run, which must
    end first, as the session's order wants; `eukhe resume` (no spec) waits for them
    all. Without an owner, this process recovers them, and the session's own run
    never waits behind other sessions' recovered runs: they run beside it as
    background work, and are waited for after its outcome."""
    process().stop = (asyncio.get_running_loop(), asyncio.Event())
    recovered, by_owner = await _taken_up(say, recover_with)
    mine = [r for r in recovered if session is not None and r.startswith(f"{session}/") and is_root(r)]
    rest = [r for r in recovered if r not in mine]
    if spec is not None and mine:
        say(f"waiting for run {mine[-1]} of this session to end first")
    if await finish(mine, say):
        if spec is not None:
            ended(RunOutcome(Ending.ABORTED, code="aborted", message="not started: Ctrl-C came first").json())
        return True
    if spec is not None and session is not None:
        rid = await start(spec, session)
        if run_line(session, rid) != announced:
            say(run_line(session, rid))
        ended(await result(rid))
        if await _followups(spec, session, say, ended):
            return True
        if rest and by_owner:
            n = len(rest)
            say(f"the owner finishes {counted(n, 'recovered run')}; `eukhe status` shows them")
            return False
        if rest:
            n = len(rest)
            say(f"finishing {counted(n, 'recovered run')}; Ctrl-C leaves them for `eukhe resume`")
    return await finish(rest, say)


async def live_children(session: str) -> list[str]:
    """The session's children whose task has not ended: still watched, or owing a report."""
    found = await DBOS.list_workflows_async(
        status=list(IN_FLIGHT), name=CHILD_TASK, workflow_id_prefix=f"{session}/", load_input=False
    )
    return sorted(w.workflow_id.removesuffix(".task") for w in found)


async def _followups(spec: RunSpec, session: str, say: Say, ended: Callable[[JsonObject], None]) -> bool:
    """While the session's children work, wait for their reports; reports waiting (none
    placed by a run) start the session's next run, whose prompt they are. Ctrl-C closes
    the session: what is waiting is withdrawn and stays owed, delivered once the session
    runs again, and the children go on (`eukhe status` lists them); whether it came."""
    reports = process().reports()
    stop = _stop()
    shown: list[str] = []
    while True:
        live = await live_children(session)
        if live != shown and live:
            say(f"waiting for {counted(len(live), 'subagent')}: {', '.join(map(name_of, live))}")
        shown = live
        if await asyncio.to_thread(reports.queued, session):
            rid = await start(dataclasses.replace(spec, prompt=None), session)
            say(f"{run_line(session, rid)}: the reports of its subagents")
            ended(await result(rid))
            continue
        if not live:
            return False
        raced = await waits.race(stop.wait(), _CLOCK.now() + timing().child_poll, None, _CLOCK)
        if raced.end is End.EVENT:
            await asyncio.to_thread(reports.close_parent, session)
            n = len(live)
            say(f"left {counted(n, 'subagent')} running: their reports wait for this session's next run")
            return True


async def _taken_up(
    say: Say, recover_with: Callable[[list[str]], Awaitable[JsonObject]] | None
) -> tuple[list[str], bool]:
    """The runs a dead process left, taken up by the owner (it runs them) when there is
    one, else here; and whether the owner took them. The owner is told which runs this
    process found cut off (it opens the store only when there are some) and answers
    with every run it is finishing, those it took up before included."""
    if recover_with is not None:
        try:
            got = await recover_with(await cut_off())
        except Exception as e:  # no owner answers: this process takes them up itself
            say(f"the owner could not take up cut-off runs ({e}); this process does")
        else:
            for line in got.get("said") or []:
                say(str(line))
            return [str(r) for r in got.get("runs") or []], True
    return await recover(say), False
