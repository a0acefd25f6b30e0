"""The tie of the editor face to its model (`rules.acp`): the face (`acp.agent.Editor`, in
this process, its runtime and its editor stand-ins) does what `rule.step` says: swap the
step and the same cancel gets another answer, and the run is not aborted."""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from acp import text_block
from eukhe.acp.agent import Editor
from eukhe.acp.turns import Session
from eukhe.rules import acp as rule
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

    def attach(self, prompt: str, typed: str, pictures: object = ()) -> Attached:
        return Attached(prompt)

    def spec(self, prompt: str | None, attached: object = None) -> RunSpec:
        return RunSpec(model="vllm/m", cwd=str(self.cwd), prompt=prompt)


@dataclass
class Process:
    aborted: list[str] = field(default_factory=list)
    stop: asyncio.Event = field(default_factory=asyncio.Event)

    def abort(self, run: str) -> None:
        self.aborted.append(run)
        self.stop.set()


@dataclass
class Runtime:
    """Runs that work until their abort, then end aborted."""

    editor: Editor
    process: Process = field(default_factory=Process)

    async def run(self, spec: RunSpec, session: str) -> RunOutcome:
        self.editor.started(f"{session}/0001")
        await self.process.stop.wait()
        return RunOutcome(Ending.ABORTED, code="aborted", message="aborted")


class Conn:
    async def session_update(self, **kwargs: Any) -> None:
        return None


def cancelled_turn(tmp_path: Path) -> tuple[str, list[str]]:
    """A prompt, then a cancel: the prompt's answer, and the runs the face aborted."""

    async def go() -> tuple[str, list[str]]:
        editor = Editor()
        editor.conn = Conn()
        runtime = Runtime(editor)
        editor.runtime = runtime  # type: ignore[assignment]
        editor.sessions["s"] = Session("s", tmp_path, Made(tmp_path))  # type: ignore[arg-type]
        prompt = asyncio.ensure_future(editor.prompt([text_block("go")], "s"))
        while editor.sessions["s"].run is None:
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

    def ends_the_turn_on_cancel(t: rule.Turn, x: rule.Input) -> tuple[rule.Turn, list[rule.Action]]:
        if x.kind is rule.Kind.CANCEL and t.answered is None:
            answered = dataclasses.replace(t, answered=rule.Reason.END_TURN)
            return answered, [rule.Action(rule.Do.RESPOND, rule.Reason.END_TURN)]
        return real(t, x)

    monkeypatch.setattr(rule, "step", ends_the_turn_on_cancel)
    assert cancelled_turn(tmp_path) == ("end_turn", [])
