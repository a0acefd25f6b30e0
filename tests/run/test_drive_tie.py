"""The tie of the session loop's runtime to its rule (issue 52): `run.drive.SessionDriver`
does what `rules.drive.step` says, in its order, and nothing else: every run it starts, every
outcome it says, every SessionEnd, abort and detach is an action the rule returned; swap
the step and the driver does otherwise."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from eukhe.rules import drive as rule
from eukhe.rules.child import Fate
from eukhe.run.drive import Answer, Request, SessionDriver
from eukhe.run.outcome import Ending, RunOutcome
from eukhe.run.spec import RunSpec


@dataclass
class Did:
    """What the runtime did, in order, as (what, detail)."""

    log: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Sink:
    did: Did

    def event(self, e: object) -> None:
        pass

    def say(self, text: str) -> None:
        if text.startswith("left "):
            self.did.log.append(("detach-said", text))

    def started(self, run: str, prompt: str | None) -> None:
        self.did.log.append(("started", run))

    def ended(self, run: str | None, outcome: RunOutcome) -> None:
        self.did.log.append(("said", f"{run} {outcome.outcome.value}"))


@dataclass
class Reports:
    runs: Runs

    def queued(self, session: str) -> int:
        return int(self.runs.child.is_set() and not self.runs.taken)

    def close_parent(self, session: str) -> int:
        self.runs.did.log.append(("detach", session))
        return 0


@dataclass
class Process:
    runs: Runs
    sink: Sink

    def reports(self) -> Reports:
        return Reports(self.runs)

    def abort(self, run: str) -> None:
        self.runs.did.log.append(("abort", run))
        self.runs.stopped.set()


@dataclass
class Runs:
    """A runtime whose first run answers while its subagent works (until `child` is set, or
    for ever), then one more that takes its report; `endless`: runs end only when aborted."""

    did: Did = field(default_factory=Did)
    child: asyncio.Event = field(default_factory=asyncio.Event)
    live: bool = True
    endless: bool = False
    taken: bool = False
    stopped: asyncio.Event = field(default_factory=asyncio.Event)
    deadline: None = None
    prompts: list[str | None] = field(default_factory=list)
    process: Process = field(init=False)

    def __post_init__(self) -> None:
        self.process = Process(self, Sink(self.did))

    async def start(self, spec: RunSpec, session: str) -> str:
        self.prompts.append(spec.prompt)
        return f"{session}/{len(self.prompts):04d}"

    async def result(self, run: str) -> RunOutcome:
        if self.endless:
            await asyncio.Event().wait()  # ignores its abort: only the grace answers for it
        if self.prompts[-1] is None:
            self.taken = True
        return RunOutcome(Ending.ANSWERED, answer="done")

    async def live_children(self, session: str) -> list[str]:
        return [f"{session}/0001.c1"] if self.live and not self.child.is_set() else []

    async def session_end(self, cwd: Path, session: str, run: str, reason: str) -> None:
        self.did.log.append(("end", run))


SPEC = RunSpec(model="vllm/m", cwd="/tmp", prompt="go")


def recorded(monkeypatch: pytest.MonkeyPatch) -> list[rule.Action]:
    """Every action the rule returns, in order (the step itself unchanged)."""
    said: list[rule.Action] = []
    real = rule.step

    def step(t: rule.Work, x: rule.Input) -> tuple[rule.Work, list[rule.Action]]:
        u, acts = real(t, x)
        said.extend(acts)
        return u, acts

    monkeypatch.setattr(rule, "step", step)
    return said


def driven(runs: Runs, face: rule.Face = rule.COMMAND, poll: int = 20) -> bool:
    """One request through a driver of `face`; the child ends a little after the first run."""

    async def go() -> bool:
        driver = SessionDriver(runs, "s", Path("/tmp"), rule.idle(face, poll), SPEC)  # type: ignore[arg-type]
        runs.process.sink = Sink(runs.did)

        async def later() -> None:
            await asyncio.sleep(0.2)
            runs.child.set()

        ending = asyncio.ensure_future(later())
        try:
            return await asyncio.wait_for(driver.request(Request(SPEC)), 10)
        finally:
            ending.cancel()
            driver.close()

    return asyncio.run(go())


def test_the_driver_does_what_the_rule_says_in_its_order(monkeypatch: pytest.MonkeyPatch) -> None:
    said = recorded(monkeypatch)
    runs = Runs()
    assert driven(runs) is False
    done = [(a.do, a.reason) for a in said]
    performed = {rule.Do.RUN: "started", rule.Do.SAY: "said", rule.Do.END: "end"}
    # each of these actions, in the rule's order, is what the runtime did, in its order
    assert [performed[d] for d, _ in done if d in performed] == [what for what, _ in runs.did.log]
    assert runs.did.log == [
        ("started", "s/0001"),
        ("said", "s/0001 answered"),  # said before the run its subagent's report starts
        ("started", "s/0002"),
        ("end", "s/0002"),  # SessionEnd once, before the last outcome is said
        ("said", "s/0002 answered"),
    ]
    assert runs.prompts == ["go", None]
    assert done[-1] == (rule.Do.RESPOND, rule.Reason.END_TURN)


def test_swapping_the_step_changes_what_the_driver_does(monkeypatch: pytest.MonkeyPatch) -> None:
    real = rule.step

    def never_waits(t: rule.Work, x: rule.Input) -> tuple[rule.Work, list[rule.Action]]:
        return real(
            t, rule.Input(x.kind, x.now, x.reason, x.ask, x.deadline)
        )  # nothing at work, nothing waits

    monkeypatch.setattr(rule, "step", never_waits)
    runs = Runs()
    assert driven(runs) is False
    assert runs.did.log == [("started", "s/0001"), ("end", "s/0001"), ("said", "s/0001 answered")]
    assert runs.prompts == ["go"]


def test_a_cancel_aborts_and_the_grace_answers_for_a_run_that_never_ends() -> None:
    face = rule.Face(ends=True, holds=rule.EVERY, says=True, detaches=True, grace=300)
    runs = Runs(live=False, endless=True)

    async def go() -> tuple[rule.Work, float]:
        driver = SessionDriver(runs, "s", Path("/tmp"), rule.idle(face, 20), SPEC)  # type: ignore[arg-type]
        answer = await driver.submit(Request(SPEC))
        loop = asyncio.get_running_loop()
        began = loop.time()
        driver.cancel()
        got = await asyncio.wait_for(answer, 5)
        took = loop.time() - began
        driver.close()
        assert got.reason is rule.Reason.CANCELLED and got.outcome is None
        return driver.work, took

    work, took = asyncio.run(go())
    assert 0.25 < took < 2, took  # at the face's grace, not before
    assert work.outlived and not work.fired  # no SessionEnd while its run is still at work
    assert runs.did.log[:2] == [("started", "s/0001"), ("abort", "s/0001")]
    assert runs.did.log[2][0] == "said" and runs.did.log[2][1].endswith("aborted")  # still in flight
    assert ("end", "s/0001") not in runs.did.log


@dataclass
class SlowStart(Runs):
    """Runs whose start takes a while (the store's write): a cancel comes meanwhile."""

    starting: asyncio.Event = field(default_factory=asyncio.Event)

    async def start(self, spec: RunSpec, session: str) -> str:
        self.starting.set()
        await asyncio.sleep(0.1)
        return await super().start(spec, session)

    async def result(self, run: str) -> RunOutcome:
        await self.stopped.wait()  # ends only once aborted
        return RunOutcome(Ending.ABORTED)


def test_a_cancel_while_the_run_starts_aborts_it_once_it_has_its_id(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rule says ABORT on the cancel (its run is at work: it said RUN); the driver, whose
    run has no id yet, aborts it the moment it has one: not at the face's grace, 5 s on."""
    said = recorded(monkeypatch)
    face = rule.Face(ends=True, holds=rule.EVERY, says=True, detaches=True, grace=5000)
    runs = SlowStart(live=False)

    async def go() -> float:
        driver = SessionDriver(runs, "s", Path("/tmp"), rule.idle(face, 20), SPEC)  # type: ignore[arg-type]
        submitted = asyncio.ensure_future(driver.submit(Request(SPEC)))
        await asyncio.wait_for(runs.starting.wait(), 5)
        loop = asyncio.get_running_loop()
        began = loop.time()
        driver.cancel()  # the run is starting: it has no id yet
        try:
            await asyncio.wait_for(runs.stopped.wait(), 2)  # aborted, well before the grace
            took = loop.time() - began
            got = await asyncio.wait_for(await submitted, 5)
            assert got.reason is rule.Reason.CANCELLED
            return took
        finally:
            driver.close()

    assert asyncio.run(go()) < 1.5
    assert [a.do for a in said][:2] == [rule.Do.RUN, rule.Do.ABORT]
    assert runs.did.log[:2] == [("started", "s/0001"), ("abort", "s/0001")]


def test_a_stop_cuts_a_held_work_and_detaches_its_subagents() -> None:
    runs = Runs()  # its subagent never ends

    async def go() -> bool:
        stop = asyncio.Event()
        driver = SessionDriver(runs, "s", Path("/tmp"), rule.idle(rule.COMMAND, 20), SPEC, stop)  # type: ignore[arg-type]
        asyncio.get_running_loop().call_later(0.2, stop.set)
        try:
            return await asyncio.wait_for(driver.request(Request(SPEC)), 5)
        finally:
            driver.close()

    assert asyncio.run(go()) is True  # cut: its subagent left at work
    assert runs.did.log == [
        ("started", "s/0001"),
        ("detach", "s"),
        ("detach-said", "left 1 subagent running: their reports wait for this session's next run"),
        ("said", "s/0001 answered"),
    ]


@dataclass
class Inbox:
    """The store's inbox as the agent's driver uses it: messages said, withdrawn while no
    run took them."""

    said: list[tuple[str, str]] = field(default_factory=list)
    withdrawn: list[str] = field(default_factory=list)
    waiting: int = 0  # a subagent's report, until a run takes it

    def say(self, session: str, sender: str, text: str) -> str:
        self.said.append((sender, text))
        return f"m{len(self.said)}"

    def withdraw(self, message: str) -> Fate:
        self.withdrawn.append(message)
        return Fate.WITHDRAWN

    def queued(self, session: str) -> int:
        return self.waiting

    def close_parent(self, session: str) -> int:
        return 0


@dataclass
class AgentProcess:
    runs: AgentRuns
    sink: Sink
    inbox: Inbox = field(default_factory=Inbox)

    def reports(self) -> Inbox:
        return self.inbox

    def abort(self, run: str) -> None:
        self.runs.did.log.append(("abort", run))
        self.runs.aborted.set()


@dataclass
class AgentRuns:
    """Runs that end when aborted (aborted) or at once (answered); a subagent at work while
    `live` (its report, once in the inbox, taken by the next run)."""

    did: Did = field(default_factory=Did)
    aborted: asyncio.Event = field(default_factory=asyncio.Event)
    live: bool = False
    deadline: None = None
    prompts: list[str | None] = field(default_factory=list)
    process: AgentProcess = field(init=False)

    def __post_init__(self) -> None:
        self.process = AgentProcess(self, Sink(self.did))

    async def start(self, spec: RunSpec, session: str) -> str:
        self.prompts.append(spec.prompt)
        if spec.prompt is None:
            self.process.inbox.waiting = 0  # the report, taken
        return f"{session}/{len(self.prompts):04d}"

    async def result(self, run: str) -> RunOutcome:
        if self.prompts[-1] == "long":
            await self.aborted.wait()
            self.aborted.clear()
            return RunOutcome(Ending.ABORTED, code="aborted")
        return RunOutcome(Ending.ANSWERED, answer="done")

    async def live_children(self, session: str) -> list[str]:
        return [f"{session}/0001.c1"] if self.live else []

    async def session_end(self, cwd: Path, session: str, run: str, reason: str) -> None:
        self.did.log.append(("end", f"{run} {reason}"))


def agent_driver(runs: AgentRuns) -> SessionDriver:
    work = rule.idle(rule.AGENT, 20)
    return SessionDriver(runs, "s", Path("/tmp"), work, SPEC, reason="prompt_input_exit")  # type: ignore[arg-type]


async def until(check: Callable[[], bool]) -> None:
    async with asyncio.timeout(5):
        while not check():
            await asyncio.sleep(0.01)


def test_the_agents_face_answers_at_once_watches_its_subagent_and_runs_its_report() -> None:
    runs = AgentRuns(live=True)

    async def go() -> tuple[rule.Reason, list[tuple[str, str]]]:
        driver = agent_driver(runs)
        driver.open()
        first = await asyncio.wait_for(await driver.submit(Request(replace(SPEC, prompt="spawn"))), 5)
        assert driver.work.idle() and runs.prompts == ["spawn"]  # answered, its subagent at work
        runs.live, runs.process.inbox.waiting = False, 1  # its subagent ends, its report in the inbox
        await until(lambda: len(runs.prompts) == 2)  # the idle session's look ran it
        await until(lambda: driver.work.idle())
        assert await driver.closed() is False
        return first.reason, runs.did.log

    reason, log = asyncio.run(go())
    assert reason is rule.Reason.END_TURN
    assert runs.prompts == ["spawn", None]
    assert log == [
        ("started", "s/0001"),
        ("said", "s/0001 answered"),
        ("started", "s/0002"),
        ("said", "s/0002 answered"),
        ("end", "s/0002 prompt_input_exit"),
    ]


def test_ctrl_c_gives_the_queued_steer_back_and_what_is_typed_after_it_is_the_next_run() -> None:
    runs = AgentRuns()

    async def go() -> tuple[Answer, Answer, list[tuple[str, str]]]:
        driver = agent_driver(runs)
        driver.open()
        await driver.submit(Request(replace(SPEC, prompt="long")))
        steer = Request(replace(SPEC, prompt="shorter"), text="shorter", sender="steer")
        steered = await driver.submit(steer)
        assert steer.did is rule.Do.QUEUE and steer.id == "m1"
        driver.cancel()  # Ctrl-C
        after = Request(replace(SPEC, prompt="and now?"), text="and now?")
        kept = await driver.submit(after)
        assert after.did is rule.Do.HOLD  # not a steer of the run it stops
        got = await asyncio.wait_for(steered, 5), await asyncio.wait_for(kept, 5)
        driver.close()
        return got[0], got[1], runs.process.inbox.said

    steered, kept, said = asyncio.run(go())
    assert steered.withdrawn and steered.reason is rule.Reason.CANCELLED  # back to the prompt
    assert runs.process.inbox.withdrawn == ["m1"]
    assert said == [("steer", "shorter")]  # what came after the Ctrl-C was never queued
    assert runs.prompts == ["long", "and now?"] and kept.reason is rule.Reason.END_TURN
    assert runs.did.log == [
        ("started", "s/0001"),
        ("abort", "s/0001"),
        ("said", "s/0001 aborted"),
        ("started", "s/0002"),
        ("said", "s/0002 answered"),
    ]


def test_the_agents_face_is_the_rules_a_face_that_waits_holds_the_answer() -> None:
    runs = AgentRuns(live=True)

    async def go() -> bool:
        work = rule.idle(replace(rule.AGENT, waits=True), 20)
        driver = SessionDriver(runs, "s", Path("/tmp"), work, SPEC)  # type: ignore[arg-type]
        driver.open()
        answer = await driver.submit(Request(replace(SPEC, prompt="spawn")))
        await asyncio.sleep(0.3)
        held = not answer.done()
        driver.close()
        return held

    assert asyncio.run(go()) is True  # the same driver, another face: held while it works
