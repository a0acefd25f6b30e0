"""The tie of the editor face to its model (`rules.drive`, the session loop's rule with the
editor's face): the face (`acp.agent.Editor` over its `run.drive.SessionDriver`, in this
process, its runtime and its editor stand-ins) does what `rule.step` says: swap the
step and the same cancel gets another answer, and the run is not aborted; and a turn whose
subagents work is answered after the run their report starts, or, with a step that does
not hold it, at its first run's end."""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from acp import text_block
from eukhe.acp.agent import Editor
from eukhe.acp.editor_session import EditorSession
from eukhe.rules import drive as rule
from eukhe.run.drive import SessionDriver
from eukhe.run.mentions import Attached
from eukhe.run.outcome import Ending, RunOutcome
from eukhe.run.spec import RunSpec


@dataclass
class Made:
    """A session's setup as the face uses it: a spec of the prompt."""

    cwd: Path
    steers: bool = True
    sandbox: str | None = None

    def expand(self, text: str) -> str:
        return text

    def attach(self, prompt: str, typed: str, pictures: object = (), given: str = "") -> Attached:
        return Attached(prompt)

    def spec(self, prompt: str | None, attached: object = None) -> RunSpec:
        return RunSpec(model="vllm/m", cwd=str(self.cwd), prompt=prompt)


@dataclass
class Reports:
    """The session's messages waiting: one report, once `Runtime.child` has ended."""

    runtime: Runtime

    def queued(self, session: str) -> int:
        return int(self.runtime.child is not None and self.runtime.child.is_set() and not self.runtime.taken)


class Sink:
    def event(self, e: object) -> None:
        pass

    def say(self, text: str) -> None:
        pass

    def started(self, run: str, prompt: str | None) -> None:
        pass

    def ended(self, run: str | None, outcome: RunOutcome) -> None:
        pass


@dataclass
class Process:
    runtime: Runtime
    aborted: list[str] = field(default_factory=list)
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    sink: Sink = field(default_factory=Sink)

    def abort(self, run: str) -> None:
        self.aborted.append(run)
        self.stop.set()

    def reports(self) -> Reports:
        return Reports(self.runtime)


@dataclass
class Runtime:
    """Runs that work until their abort, then end aborted; or (`child`) a first run that
    answers while its subagent works (until `child` is set), and one more that takes its
    report."""

    editor: Editor
    child: asyncio.Event | None = None
    taken: bool = False
    runs: list[str | None] = field(default_factory=list)  # each run's prompt
    process: Process = field(init=False)

    def __post_init__(self) -> None:
        self.process = Process(self)

    deadline: None = None

    async def start(self, spec: RunSpec, session: str) -> str:
        self.runs.append(spec.prompt)
        return f"{session}/{len(self.runs):04d}"

    async def session_end(self, cwd: Path, session: str, run: str, reason: str) -> None:
        return None

    async def result(self, run: str) -> RunOutcome:
        spec_prompt = self.runs[-1]
        if self.child is None:
            await self.process.stop.wait()
            return RunOutcome(Ending.ABORTED, code="aborted", message="aborted")
        if spec_prompt is None:
            self.taken = True
        return RunOutcome(Ending.ANSWERED, answer="done")

    async def live_children(self, session: str) -> list[str]:
        return [] if self.child is None or self.child.is_set() else [f"{session}/0001.c1"]


class Conn:
    async def session_update(self, **kwargs: Any) -> None:
        return None


def editor_with(tmp_path: Path, child: asyncio.Event | None = None) -> tuple[Editor, Runtime]:
    editor = Editor()
    editor.conn = Conn()
    runtime = Runtime(editor, child)
    editor.runtime = runtime  # type: ignore[assignment]
    made = Made(tmp_path)
    driver = SessionDriver(runtime, "s", tmp_path, rule.idle(rule.EDITOR, 500), made.spec(None))  # type: ignore[arg-type]
    editor.sessions["s"] = EditorSession("s", tmp_path, made, driver)  # type: ignore[arg-type]
    return editor, runtime


def cancelled_turn(tmp_path: Path) -> tuple[str, list[str]]:
    """A prompt, then a cancel: the prompt's answer, and the runs the face aborted."""

    async def go() -> tuple[str, list[str]]:
        editor, runtime = editor_with(tmp_path)
        prompt = asyncio.ensure_future(editor.prompt([text_block("go")], "s"))
        while not editor.sessions["s"].driver.run:
            if prompt.done():  # it failed before its run started: say why
                prompt.result()
            await asyncio.sleep(0.01)
        await editor.cancel("s")
        got = await asyncio.wait_for(prompt, 10)
        if not runtime.process.stop.is_set():
            runtime.process.stop.set()
        return got.stop_reason, runtime.process.aborted

    return asyncio.run(asyncio.wait_for(go(), 20))


def test_the_model_aborts_the_run_and_answers_cancelled(tmp_path: Path) -> None:
    assert cancelled_turn(tmp_path) == ("cancelled", ["s/0001"])


def test_swapping_the_step_changes_what_the_face_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = rule.step

    def ends_the_turn_on_cancel(t: rule.Work, x: rule.Input) -> tuple[rule.Work, list[rule.Action]]:
        if x.kind is rule.Kind.CANCEL and t.answered is None:
            answered = dataclasses.replace(t, answered=rule.Reason.END_TURN)
            return answered, [rule.Action(rule.Do.RESPOND, rule.Reason.END_TURN)]
        return real(t, x)

    monkeypatch.setattr(rule, "step", ends_the_turn_on_cancel)
    assert cancelled_turn(tmp_path) == ("end_turn", [])


def held_turn(tmp_path: Path) -> tuple[str, list[str | None], bool]:
    """A prompt whose run answers while its subagent works: its answer, the runs' prompts,
    and whether it came only after the subagent ended."""

    async def go() -> tuple[str, list[str | None], bool]:
        child = asyncio.Event()
        editor, runtime = editor_with(tmp_path, child)
        prompt = asyncio.ensure_future(editor.prompt([text_block("go")], "s"))
        await asyncio.sleep(0.3)  # the first run has ended: the turn holds its answer, or not
        early = prompt.done()
        child.set()
        got = await asyncio.wait_for(prompt, 10)
        return got.stop_reason, runtime.runs, not early

    return asyncio.run(asyncio.wait_for(go(), 20))


def test_a_turn_whose_subagent_works_is_answered_after_the_run_its_report_starts(tmp_path: Path) -> None:
    assert held_turn(tmp_path) == ("end_turn", ["go", None], True)


def test_a_step_that_does_not_hold_answers_at_the_first_runs_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = rule.step

    def answers_at_once(t: rule.Work, x: rule.Input) -> tuple[rule.Work, list[rule.Action]]:
        return real(t, dataclasses.replace(x, live=False, waiting=False))

    monkeypatch.setattr(rule, "step", answers_at_once)
    assert held_turn(tmp_path) == ("end_turn", ["go"], False)
