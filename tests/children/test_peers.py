"""One test per way other harnesses lose or double a subagent's result (issue 14's
list), each showing eukhe does not fail so. They run the child's task on a clock the
test controls; the same scenarios with the real `eukhe` process are in test_spawn.py
and test_crash.py."""

from __future__ import annotations

import asyncio

from eukhe.children.watch import Seen
from eukhe.rules import child
from eukhe.rules.child import Abort, Fate, Owe, Phase, Reading
from eukhe.store.reports import Reports, submission
from tests.children.test_watch import Port, deliver, placed, reports, watcher

__all__ = ["reports"]  # the fixture


def answered(text: str = "the result") -> Seen:
    return Seen(Reading.ANSWERED, detail=text)


def test_claude_code_80727_a_finished_childs_final_message_arrives(reports: Reports) -> None:
    port = Port(
        lambda now: answered("the final message") if now > 1010 else Seen(Reading.TOKEN, int(now)), reports
    )
    deliver(watcher(port), reports)
    assert placed(reports) == ["[child-exited: no-reply child:c1.1] Last assistant text: the final message"]


def test_claude_code_76021_a_report_is_never_injected_twice(reports: Reports) -> None:
    """A task that restarts after submitting (a replay) resends under the same id: the
    parent drops the id it knows, and a run's take replayed takes the same, once."""
    port = Port(lambda now: answered(), reports)
    w = watcher(port)
    states: list[child.Task] = []
    w.on_step = states.append
    deliver(w, reports)
    submitted = next(t for t in states if t.sub == 0)
    deliver(watcher(port, task=child.Task(Phase.REPORT, submitted.mode, submitted.w, submitted.owe)), reports)
    assert len(placed(reports)) == 1
    assert reports.take("s", "run#r1") == reports.take("s", "run#r1")  # the same take, the same reports


def test_claude_code_75438_a_result_survives_a_restart(reports: Reports) -> None:
    """The task dies after its report is submitted and before it is placed; the next task,
    from the recorded state, sees it queued and waits for it: it is placed once."""
    port = Port(lambda now: answered(), reports)
    w = watcher(port)

    async def until_submitted() -> None:
        run = asyncio.ensure_future(w.run())
        while reports.fate(submission(port.cid, 0)) is not Fate.QUEUED:
            await asyncio.sleep(0.001)
        run.cancel()

    asyncio.run(until_submitted())
    deliver(watcher(port, task=w.task), reports)
    assert len(placed(reports)) == 1


def test_claude_code_49150_a_hung_child_never_holds_its_parent_past_the_budget(reports: Reports) -> None:
    port = Port(lambda now: Seen(Reading.TOKEN, 1), reports)
    t = deliver(watcher(port, stall_ms=30_000), reports)
    assert t.owe is Owe.STALLED and port.stopped_at - 1000.0 <= 30.0 + 2.0


def test_claude_code_85615_a_productive_child_is_never_stopped(reports: Reports) -> None:
    """New work every 59 s against a 60 s budget, for ten minutes: never stopped."""
    port = Port(lambda now: answered() if now > 1600 else Seen(Reading.TOKEN, int(now // 59)), reports)
    t = deliver(watcher(port, stall_ms=60_000), reports)
    assert port.stops == 0 and t.owe is Owe.EXITED


def test_codex_24951_an_unreachable_child_ends_the_wait_in_about_a_minute(reports: Reports) -> None:
    port = Port(lambda now: Seen(Reading.FAILED), reports)
    t = deliver(watcher(port), reports)
    assert t.owe is Owe.UNREACHABLE and port.stopped_at - 1000.0 <= 62.0


def test_codex_15732_a_parent_that_stops_keeps_its_child_and_hears_from_it(reports: Reports) -> None:
    """The parent closes (its run stopped) while its child works: the child goes on, its
    report waits, and the reopened parent gets it once."""
    reports.close_parent("s")
    port = Port(lambda now: answered() if now > 1100 else Seen(Reading.TOKEN, int(now)), reports)
    w = watcher(port)

    async def closed_then_reopened() -> None:
        run = asyncio.ensure_future(w.run())
        while w.task.phase is not Phase.REPORT or len(port.pauses) < 200:
            await asyncio.sleep(0)
        assert placed(reports) == [] and port.stops == 0  # admitted nothing while closed
        reports.reopen("s")
        while not run.done():
            reports.take("s", "run#start")
            await asyncio.sleep(0.001)

    asyncio.run(closed_then_reopened())
    assert len(placed(reports)) == 1 and w.task.phase is Phase.DONE


def test_oh_my_pi_5006_an_abort_racing_a_finished_child_keeps_its_result(reports: Reports) -> None:
    """The child has answered; its parent's delete comes while the report waits: the
    report goes on as it was (the answer, not a cancelled report)."""
    port = Port(lambda now: answered("the real result"), reports)
    w = watcher(port)

    async def race() -> None:
        run = asyncio.ensure_future(w.run())
        while w.task.phase is not Phase.REPORT:
            await asyncio.sleep(0)
        port.aborts.append(Abort.DELETE)
        while not run.done():
            if not port.aborts:
                reports.take("s", "run#r1")
            await asyncio.sleep(0.001)

    asyncio.run(race())
    assert placed(reports) == ["[child-exited: no-reply child:c1.1] Last assistant text: the real result"]
    assert port.stops == 0


def test_temporal_10639_a_completion_after_the_parent_closed_is_not_dropped(reports: Reports) -> None:
    """The child ends after its parent closed: its task submits nothing to a closed
    parent (a submission racing the close is refused, kept withdrawn), and once the
    parent reopens the report is submitted and placed, once."""
    reports.close_parent("s")
    port = Port(lambda now: answered(), reports)
    w = watcher(port)

    async def late() -> None:
        run = asyncio.ensure_future(w.run())
        while w.task.phase is not Phase.REPORT or len(port.pauses) < 20:
            await asyncio.sleep(0)
        reports.reopen("s")
        while not run.done():
            reports.take("s", "run#start")
            await asyncio.sleep(0.001)

    asyncio.run(late())
    assert len(placed(reports)) == 1
