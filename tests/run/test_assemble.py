"""A run's parts, built once (`run.assemble`): what a run is made of, the failures that stop
it before it starts (each with the code of what failed), and its servers let go on exit."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from eukhe.client.client import Client, OwnerError
from eukhe.run.assemble import Unassembled, assemble
from eukhe.run.context import ProcessContext
from eukhe.run.effects import Direct
from eukhe.run.outcome import Ending, RunOutcome
from eukhe.run.spec import RunSpec
from tests.steps import Kept

NO_STEPS = Kept(starts=False)  # no child is started, no view is pinned while a run is put together


class NothingWaits:
    """A run's inbox (`run.loop.Inbox`) where nothing ever waits."""

    async def round_end(self, steers: bool) -> list[str]:
        return []


def _spec(tmp_path: Path, sandbox: str | None = None, tools: tuple[str, ...] | None = None) -> RunSpec:
    """A run on a model that is never asked: putting a run together sends nothing."""
    cwd = tmp_path / "project"
    cwd.mkdir(exist_ok=True)
    url = "http://127.0.0.1:9/v1"
    return RunSpec(
        model="vllm/m", base_url=url, cwd=str(cwd), system="be brief", sandbox=sandbox, tools=tools
    )


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EUKHE_HOME", str(tmp_path / "home"))


def _held(here: ProcessContext) -> tuple[object, object]:
    """What run r1's handle holds of its parts: its gate and its servers."""
    handle = here.runs.get("r1")
    assert handle is not None and handle.running is not None
    return handle.running.gate, handle.running.servers


def _failure(spec: RunSpec, here: ProcessContext | None = None) -> RunOutcome:
    """The failure a run that cannot be put together returns."""

    async def go() -> RunOutcome:
        try:
            at = here or ProcessContext()
            async with assemble(spec, at.runs.begin("r1", asyncio.Event()), at, NO_STEPS):
                raise AssertionError("put together")
        except Unassembled as e:
            return e.outcome

    return asyncio.run(go())


def test_a_run_is_put_together_once_and_lets_its_parts_go_on_exit(tmp_path: Path) -> None:
    here = ProcessContext()  # no chat, no owner: as `eukhe run` with no store's chat

    async def go() -> None:
        async with assemble(_spec(tmp_path), here.runs.begin("r1", asyncio.Event()), here, NO_STEPS) as parts:
            assert _held(here) == (parts.gate, None)  # a person's mode change reaches its gate
            assert parts.chat is None and parts.compact is None and parts.servers is None
            assert parts.system == "be brief"  # no view pinned, no server's instructions
            assert {"read", "bash", "ipython"} <= parts.tools.keys() and "zoom" not in parts.tools
            assert parts.context.sandbox is parts.sandbox and parts.context.kernel is parts.kernel
            assert parts.children.system == "be brief"
            loop = parts.loop(Direct(), NothingWaits(), here.admission, {})
            assert loop.model == "m" and loop.system == "be brief" and loop.gate is parts.gate
            await parts.provider.close()

    asyncio.run(go())
    assert _held(here) == (None, None)  # its parts let go: no gate, no servers in its handle


def test_only_the_tools_a_run_names_are_offered(tmp_path: Path) -> None:
    async def go() -> list[str]:
        spec = _spec(tmp_path, tools=("read",))
        here = ProcessContext()
        async with assemble(spec, here.runs.begin("r1", asyncio.Event()), here, NO_STEPS) as parts:
            await parts.provider.close()
            return list(parts.tools)

    assert asyncio.run(go()) == ["read"]


def test_a_sandbox_mode_nobody_knows_fails_the_run_with_the_settings_code(tmp_path: Path) -> None:
    got = _failure(_spec(tmp_path, sandbox="nowhere"))
    assert got.outcome is Ending.FAILED
    assert got.code == "settings_error" and "nowhere" in str(got.message)


def test_a_model_nobody_serves_fails_the_run_with_the_model_code(tmp_path: Path) -> None:
    got = _failure(RunSpec(model="nowhere/m", cwd=str(tmp_path)))
    assert got.outcome is Ending.FAILED and got.code == "model_error"


def test_an_owner_that_does_not_answer_for_the_chat_fails_the_run_with_the_chat_code(tmp_path: Path) -> None:
    async def gone() -> Client:
        raise OwnerError("the owner is gone")

    here = ProcessContext(chat_url=f"sqlite:///{tmp_path / 'runs.db'}", owner=gone)
    got = _failure(_spec(tmp_path), here)
    assert got.outcome is Ending.FAILED and got.code == "chat_error"
    assert got.message == "the chat memory: the owner is gone"
    assert _held(here) == (None, None)  # its parts let go: no gate, no servers in its handle
