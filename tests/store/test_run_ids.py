"""A run's id is counted from its session's runs (`<session>/0002`): two processes that
count at the same moment must not both take the same id, or one user's prompt would be
the other's run (DBOS hands back the workflow already started under an id)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from eukhe.run.runtime import Busy, Runtime
from eukhe.run.spec import RunSpec
from eukhe.store import session_runs


def test_two_starts_that_count_the_same_next_id_never_merge_two_prompts(
    durable_runtime: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counted = session_runs.runs
    both = asyncio.Event()
    arrived: list[int] = []

    async def at_once(session: str, db: Any = None) -> list[Any]:
        """Both starts read the session's runs before either starts its own."""
        got = await counted(session)
        arrived.append(1)
        if len(arrived) == 2:
            both.set()
        await asyncio.wait_for(both.wait(), 10)
        return got

    monkeypatch.setattr(session_runs, "runs", at_once)

    def spec(prompt: str) -> RunSpec:  # a model no provider has: each run fails at once
        return RunSpec(prompt=prompt, model="nowhere/m", cwd=str(tmp_path))

    async def start_both() -> list[Any]:
        return list(
            await asyncio.gather(
                durable_runtime.start(spec("A"), "s"),
                durable_runtime.start(spec("B"), "s"),
                return_exceptions=True,
            )
        )

    a, b = asyncio.run(start_both())
    started = [x for x in (a, b) if isinstance(x, str)]
    refused = [x for x in (a, b) if isinstance(x, BaseException)]
    assert started == ["s/0001"] and len(refused) == 1, (a, b)
    assert isinstance(refused[0], Busy)
    assert str(refused[0]) == (
        "session s: another process started run s/0001 at the same moment; "
        "wait for it to end, then send your prompt again"
    )
