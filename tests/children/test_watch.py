"""The watch and the report phase of a child's task (H5.2-H5.4) on a clock the test
controls: the pauses and `subagentStallMs` pass in no time, and every poll, stop and
submission is seen."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from eukhe.children import texts
from eukhe.children.watch import Seen, Watcher
from eukhe.rules import child
from eukhe.rules.child import Abort, Fate, Mode, Owe, Phase, Reading, Task
from eukhe.store.reports import FOLLOWUP, STEER, Reports, submission


@dataclass
class Port:
    """A port on a clock of its own: a pause moves it on at once."""

    reads: Callable[[float], Seen]
    reports: Reports
    session: str = "s"
    cid: str = "s/0001.c1"
    clock: float = 1000.0
    pauses: list[float] = field(default_factory=list)
    stops: int = 0
    stopped_at: float = 0.0
    shown: list[str] = field(default_factory=list)
    published: list[dict[str, object]] = field(default_factory=list)
    aborts: list[Abort] = field(default_factory=list)  # told at the next pause
    hold: asyncio.Event | None = None  # a pause once a report is in waits for it (aborted there)
    held: bool = False

    async def now(self) -> float:
        return self.clock

    async def pause(self, seconds: float) -> Abort | None:
        self.pauses.append(seconds)
        if self.hold is not None and self.reports.all(self.session):  # a report waits: hold here
            self.held = True
            await self.hold.wait()
        await asyncio.sleep(0)  # the parent's run may place meanwhile
        self.clock += seconds
        return self.aborts.pop(0) if self.aborts else None

    async def read(self) -> Seen:
        return self.reads(self.clock)

    async def stop(self) -> None:
        self.stops += 1
        self.stopped_at = self.clock

    async def fate(self, rid: str) -> Fate:
        return self.reports.fate(rid)

    async def is_open(self) -> bool:
        return self.reports.is_open(self.session)

    async def submit(self, rid: str, text: str) -> Fate:
        return self.reports.submit(rid, self.session, self.cid, text)

    def show(self, text: str) -> None:
        self.shown.append(text)

    async def publish(self, state: dict[str, object]) -> None:
        self.published.append(state)

    async def changes(self) -> str:
        return ""


@pytest.fixture
def reports(tmp_path: Path) -> Reports:
    return Reports(f"sqlite:///{tmp_path / 'store.sqlite'}")


def watcher(port: Port, stall_ms: int = 0, mode: Mode = Mode.REPORT, task: Task | None = None) -> Watcher:
    cfg = child.limits(stall_ms)
    return Watcher(cfg, port, port.cid, "c1.1", task or child.task(cfg, mode))


def placed(reports: Reports, session: str = "s") -> list[str]:
    """Every report placed so far."""
    return [r.text for r in reports.all(session) if r.fate is Fate.PLACED]


def deliver(w: Watcher, reports: Reports) -> Task:
    """The task run to its end beside a parent's run that places what waits."""

    async def both() -> Task:
        run = asyncio.ensure_future(w.run())
        n = 0
        while not run.done():
            n += 1
            reports.take("s", f"run#r{n}")
            await asyncio.sleep(0.001)
        return run.result()

    return asyncio.run(both())


def test_a_hung_child_is_stopped_and_reported_stalled(reports: Reports) -> None:
    port = Port(lambda now: Seen(Reading.TOKEN, 7), reports)
    t = deliver(watcher(port), reports)
    assert port.stops == 1  # its run aborted, its worker stopped: once
    assert t.phase is Phase.DONE and t.owe is Owe.STALLED
    assert 600.0 <= port.stopped_at - 1000.0 <= 602.0  # subagentStallMs, and at most one pause past it
    [text] = placed(reports)
    assert text.startswith("[child-failed child:c1.1] stalled: no progress for 600 s")


def test_failing_polls_report_the_child_unreachable(reports: Reports) -> None:
    port = Port(lambda now: Seen(Reading.FAILED, detail="connection refused"), reports)
    t = deliver(watcher(port), reports)
    assert port.pauses[:5] == [2.0, 4.0, 8.0, 16.0, 32.0]  # doubling per failed poll
    assert t.owe is Owe.UNREACHABLE and port.stops == 1
    assert port.stopped_at - 1000.0 == 62.0  # about a minute
    [text] = placed(reports)
    assert text == f"[child-failed child:c1.1] {texts.unreachable(5)}"


def test_a_progressing_child_outlives_the_stall_budget(reports: Reports) -> None:
    """New work every 5 minutes, for an hour (six stall budgets), then its answer."""

    def reads(now: float) -> Seen:
        if now - 1000.0 >= 3600.0:
            return Seen(Reading.ANSWERED, detail="all done")
        return Seen(Reading.TOKEN, int((now - 1000.0) // 300))

    port = Port(reads, reports)
    t = deliver(watcher(port), reports)
    assert port.stops == 0
    assert t.owe is Owe.EXITED
    assert placed(reports) == ["[child-exited: no-reply child:c1.1] Last assistant text: all done"]
    assert max(float(p["quietSeconds"]) for p in port.published) < 600  # type: ignore[arg-type]


def test_a_child_that_replied_or_a_silent_one_reports_nothing(reports: Reports) -> None:
    port = Port(lambda now: Seen(Reading.REPLIED), reports)
    assert deliver(watcher(port), reports).phase is Phase.DONE
    port = Port(lambda now: Seen(Reading.TOKEN, 1), reports)
    t = deliver(watcher(port, mode=Mode.SILENT), reports)
    assert t.phase is Phase.DONE and port.stops == 1  # stalled, stopped, and silent
    assert reports.all("s") == []


def test_a_deleted_child_reports_cancelled_and_a_cancelled_one_nothing(reports: Reports) -> None:
    port = Port(lambda now: Seen(Reading.TOKEN, int(now)), reports, aborts=[Abort.DELETE])
    t = deliver(watcher(port), reports)
    assert t.owe is Owe.CANCELLED and port.stops == 1
    assert placed(reports) == [f"[child-exited: cancelled child:c1.1] {texts.DELETED_BY_PARENT}"]
    port = Port(lambda now: Seen(Reading.TOKEN, int(now)), reports, cid="s/0001.c2", aborts=[Abort.CANCEL])
    t = deliver(watcher(port), reports)
    assert t.phase is Phase.DONE and port.stops == 1
    assert len(reports.all("s")) == 1  # the cancel owed nothing


def test_a_report_withdrawn_as_its_task_aborts_is_delivered_once(reports: Reports) -> None:
    """Three stops in a row: each time the parent closes (withdrawing the queued report)
    as the task that owes it is aborted. Each next task goes on from the state the last
    one reached (as a replay restores it), resubmits under the next id once the parent
    admits again, and the report is placed exactly once."""
    states: list[Task] = []

    async def stops() -> Task:
        port = Port(lambda now: Seen(Reading.ANSWERED, detail="the answer"), reports)
        state: Task | None = None
        for _ in range(3):
            port.hold, port.held = asyncio.Event(), False  # its next pause waits: it is aborted there
            w = watcher(port, task=state)
            w.on_step = states.append
            run = asyncio.ensure_future(w.run())
            while not port.held:
                await asyncio.sleep(0.001)
            assert reports.fate(submission(port.cid, w.task.sub)) is Fate.QUEUED
            reports.close_parent("s")  # the parent's run stops: it withdraws what waits
            run.cancel()  # ... as the task that owes the report is aborted
            with pytest.raises(asyncio.CancelledError):
                await run
            state = child.aborted(w.task, Abort.TASK)  # handed on, ids and all
            reports.reopen("s")
        port.hold = None
        w = watcher(port, task=state)
        done = asyncio.ensure_future(w.run())
        while w.task.phase is not Phase.DONE:
            await asyncio.sleep(0.001)
            reports.take("s", "run#start")
        return await done

    t = asyncio.run(stops())
    every = reports.all("s")
    assert [r.id for r in every] == [submission("s/0001.c1", n) for n in range(4)]  # one new id a stop
    assert [r.fate for r in every] == [Fate.WITHDRAWN] * 3 + [Fate.PLACED]
    assert t.phase is Phase.DONE and t.tasks == 4
    live = [sum(r.fate in (Fate.QUEUED, Fate.PLACED) for r in every)]
    assert live == [1]


def test_a_resend_under_a_known_id_is_dropped_and_a_closed_parent_admits_nothing(reports: Reports) -> None:
    assert reports.submit("x:report:0", "s", "x", "one") is Fate.QUEUED
    assert reports.submit("x:report:0", "s", "x", "one again") is Fate.QUEUED  # the same id: nothing new
    assert [r.text for r in reports.take("s", "run#1")] == ["one"]
    assert reports.take("s", "run#1") != [] and reports.take("s", "run#2") == []  # a replay, then nothing
    assert reports.withdraw("x:report:0") is Fate.PLACED  # a withdrawal that lost to placement
    reports.close_parent("s")
    assert reports.submit("x:report:1", "s", "x", "two") is Fate.WITHDRAWN


def test_a_runs_start_takes_only_the_users_messages_queued_before_it_was_asked_for(reports: Reports) -> None:
    """A steer or a follow-up sent just after a prompt is for a later place of its run (a
    round end) or the next run, never placed before the prompt at its start; a child's
    report is taken whenever it came."""
    reports.say("s", FOLLOWUP, "queued before")
    asked = time.time()
    time.sleep(0.01)
    reports.say("s", STEER, "sent after")
    reports.submit("x:report:0", "s", "x", "a report")
    assert [r.text for r in reports.take("s", "s/0001#start", until=asked)] == ["queued before", "a report"]
    assert [r.text for r in reports.take("s", "s/0001#start", until=asked)] == ["queued before", "a report"]
    assert [r.text for r in reports.take("s", "s/0001#g1r1")] == ["sent after"]  # its next round end


def test_the_watch_asks_the_rules(reports: Reports, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tie: with another rule in rules.child, the runtime does what that rule says (a
    watch that never ends keeps a hung child watched; a report rule that ends at once
    delivers nothing)."""
    port = Port(lambda now: Seen(Reading.TOKEN, 7), reports)
    real = child.watched
    monkeypatch.setattr(child, "watched", lambda cfg, t, p: (t, child.Verdict.WATCH))
    w = watcher(port)

    async def some_polls() -> None:
        run = asyncio.ensure_future(w.run())
        while len(port.pauses) < 1000:
            await asyncio.sleep(0)
        run.cancel()

    asyncio.run(some_polls())
    assert port.stops == 0  # never told to stop: the runtime did not decide on its own
    monkeypatch.setattr(child, "watched", real)
    monkeypatch.setattr(child, "carry", lambda t, f, o: (child.reported(t, child.Move.END), child.Move.END))
    t = deliver(watcher(Port(lambda now: Seen(Reading.ANSWERED), reports, cid="s/0001.c5")), reports)
    assert t.phase is Phase.DONE and reports.all("s") == []


def test_a_stall_under_a_second_says_its_tenths() -> None:
    assert texts.stalled(0.5).startswith("stalled: no progress for 0.5 s (subagentStallMs)")
