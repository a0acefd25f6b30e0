"""A parent's poll of its child and its stop of it, on the real store (DBOS on SQLite, in
this process): what a poll reads, in each state a child's run can be in."""

from __future__ import annotations

import asyncio
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dbos import DBOS, SetWorkflowID

from eukhe.children.ledger import Ledger
from eukhe.rules.child import Reading
from eukhe.run import children, workflow
from tests.steps import Kept


@DBOS.workflow(name="eukhe.test.child")
async def a_child(seconds: float, outcome: str) -> dict[str, Any]:
    """A stand-in for a child's run: it runs `seconds` (or until its cancel), then ends so."""
    here = workflow.process()
    cancel = asyncio.Event()
    here.runs.begin(str(DBOS.workflow_id), cancel)
    try:
        await DBOS.run_step_async({"name": "message"}, functools.partial(_said, "working"))
        try:
            await asyncio.wait_for(cancel.wait(), timeout=seconds)
            return {"outcome": "aborted", "error": {"message": "aborted by its parent"}}
        except TimeoutError:
            return {"outcome": outcome, "answer": "its answer", "error": None}
    finally:
        here.runs.end(str(DBOS.workflow_id))


async def _said(text: str) -> str:
    return text


@DBOS.workflow(name="eukhe.test.stop")
async def stops(cid: str) -> None:
    port = children.DurablePort({"child": cid, "session": "s"}, workflow.process())
    await port.stop()


def test_a_live_child_whose_probes_fail_is_a_failed_poll(store: Any) -> None:
    """A child whose run is in flight where this process cannot read its token (another
    process runs it, or it waits to be recovered) is a failed poll, never `Running`
    forever; one this process runs gives its token; an ended one how it ended; an id with
    no run, a gone worker."""

    async def polls() -> list[Any]:
        with SetWorkflowID("s/0001.c1"):
            handle = await DBOS.start_workflow_async(a_child, 1.0, "answered")
        elsewhere = await children.read(
            "s/0001.c1", workflow.process().children
        )  # in flight, its ledger not here
        ledger = Ledger()
        ledger.note("a first note")
        workflow.process().children["s/0001.c1"] = ledger
        here = await children.read("s/0001.c1", workflow.process().children)
        del workflow.process().children["s/0001.c1"]
        await handle.get_result()
        ended = await children.read("s/0001.c1", workflow.process().children)
        with SetWorkflowID("s/0001.c2"):
            failed = await DBOS.start_workflow_async(a_child, 0.0, "failed")
        await failed.get_result()
        return [
            elsewhere,
            here,
            ended,
            await children.read("s/0001.c2", workflow.process().children),
            await children.read("s/0001.c9", workflow.process().children),
        ]

    elsewhere, here, ended, failed, gone = asyncio.run(polls())
    assert elsewhere.reading is Reading.FAILED and "in another process" in elsewhere.detail
    assert (here.reading, here.token) == (Reading.TOKEN, 1)
    assert (ended.reading, ended.detail) == (Reading.ANSWERED, "its answer")
    assert failed.reading is Reading.ERRORED
    assert gone.reading is Reading.GONE


def test_stopping_a_child_kills_its_worker_once_and_keeps_its_session(store: Any) -> None:
    """The watch's stop (a recorded step of its workflow) gives the child's run its cancel,
    once: the run ends aborted, its worker released, and its transcript stays."""
    aborted: list[str] = []
    here = workflow.process()
    real = here.runs.abort

    def counted(run: str) -> bool:
        aborted.append(run)
        return real(run)

    here.runs.abort = counted  # type: ignore[method-assign]

    async def stop() -> Any:
        with SetWorkflowID("s/0002.c1"):
            handle = await DBOS.start_workflow_async(a_child, 60.0, "answered")
        while (begun := here.runs.get("s/0002.c1")) is None or begun.running is None:
            await asyncio.sleep(0.01)
        with SetWorkflowID("s/0002.c1.stop"):
            await (await DBOS.start_workflow_async(stops, "s/0002.c1")).get_result()
        out = await asyncio.wait_for(handle.get_result(), timeout=10)
        steps = await DBOS.list_workflow_steps_async("s/0002.c1")
        return out, steps

    out, steps = asyncio.run(stop())
    assert aborted == ["s/0002.c1"]
    assert out["outcome"] == "aborted"
    assert [s["output"] for s in steps if s["function_name"] == "message"] == ["working"]


def test_a_run_at_the_depth_limit_is_offered_no_spawn() -> None:
    from eukhe.children.tools import SPAWN
    from eukhe.tools import Context

    kids = children.Children({"model": "vllm/m"}, "s/0001.c1", "s", 2, 2, 0, Kept(starts=False))
    assert not kids.may_spawn
    got = asyncio.run(SPAWN.run({"task": "more"}, Context(Path("."), children=kids)))
    assert got.is_error and got.content == "spawn: this run is at the subagent depth limit (2)"


@dataclass
class Mode:
    """A parent's gate, as its subagents see it (`run.children.PlanMode`)."""

    planning: bool


def test_a_subagent_starts_in_the_mode_its_parent_is_in_at_its_spawn() -> None:
    from eukhe.run.spec import RunSpec

    steps = Kept()
    gate = Mode(planning=True)  # the parent's gate: in plan mode, then its plan approved
    kids = children.Children(RunSpec("vllm/m", "."), "s/0001", "s", 0, 2, 0, steps, mode=gate)
    asyncio.run(kids.spawn("look around", None))
    gate.planning = False
    asyncio.run(kids.spawn("do it", None))
    assert [s.permission_mode for s in steps.started] == ["plan", "default"]
