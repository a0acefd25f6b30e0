"""What a durable run records (`run.spec.STEPS`): under layouts 3 and 4 a tool round is two steps,
the reply and the call, every message riding on the step after it; a run that began under
layout 2 records (and so replays) a step a message and a `permit` step, as it did; one that
began under layout 1 (eukhe 0.1) the steps 0.1 recorded, the gate's decision inside them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from dbos import DBOS

from eukhe.ai.faux import FauxServer, parse
from eukhe.run.runtime import Runtime
from eukhe.run.spec import STEPS, RunSpec
from eukhe.store import session_runs

SCRIPT = [
    {"results": 0, "calls": [{"name": "read", "arguments": {"path": "a.txt"}}]},
    {"results": 1, "calls": [{"name": "read", "arguments": {"path": "b.txt"}}]},
    {"results": 2, "text": "They say alpha and beta."},
]
ROUND = {
    4: ["model", "tool"],
    3: ["model", "tool"],
    2: ["model", "message", "permit", "tool", "message"],
    1: ["model", "message", "tool", "message"],
}


def recorded(runtime: Runtime, cwd: Path, layout: int) -> list[dict[str, Any]]:
    (cwd / "a.txt").write_text("alpha\n")
    (cwd / "b.txt").write_text("beta\n")
    with FauxServer(parse(SCRIPT)) as server:
        spec = RunSpec(prompt="read both", model="vllm/m", base_url=server.url, cwd=str(cwd), steps=layout)

        async def run() -> list[dict[str, Any]]:
            await runtime.drive(spec, "s", by_owner=False)
            [w] = await session_runs.runs("s")
            return sorted(await DBOS.list_workflow_steps_async(w.workflow_id), key=lambda s: s["function_id"])

        steps = asyncio.run(run())
    got = [out for _, out in runtime.process.sink.outcomes]
    assert got and got[0].outcome == "answered", got
    return steps


def test_eukhe_starts_its_runs_under_the_layout_of_two_steps_a_round_with_its_hooks() -> None:
    assert STEPS == 4


@pytest.mark.parametrize("layout", [4, 3, 2, 1])
def test_a_tool_round_records_its_layouts_steps_and_every_message_once(
    durable_runtime: Runtime, tmp_path: Path, layout: int
) -> None:
    steps = recorded(durable_runtime, tmp_path, layout)
    names = [s["function_name"] for s in steps]
    if layout >= 3:  # 4: no hook is configured, so none records a step
        # the pinned view, the reports waiting (none), two rounds, the answer, the chat's log
        assert names == ["view", "reports", *ROUND[layout], *ROUND[layout], "model", "log"], names
    else:
        assert names[:2] == ["view", "reports"] and names[-1] == "log", names
        assert names[2:-1] == ["message", *ROUND[layout], *ROUND[layout], "model", "message"], names
    got = [(m.role, m.content) for m in session_runs.messages_of(steps)]
    assert got == [
        ("user", "read both"),
        ("assistant", ""),
        ("tool", "1\talpha"),
        ("assistant", ""),
        ("tool", "1\tbeta"),
        ("assistant", "They say alpha and beta."),
    ], got


def test_a_layout_1_run_asks_the_gate_inside_its_calls_own_steps(
    durable_runtime: Runtime, tmp_path: Path
) -> None:
    """A run of eukhe 0.1's layout (as one begun then resumes) has no `permit` step, and its
    calls go through the gate all the same: a read the rules deny is not run."""
    (tmp_path / "home" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Read"]}}))
    steps = recorded(durable_runtime, tmp_path, 1)
    names = [s["function_name"] for s in steps]
    assert names[2:-1] == ["message", *ROUND[1], *ROUND[1], "model", "message"], names
    results = [m.content for m in session_runs.messages_of(steps) if m.role == "tool"]
    assert len(results) == 2 and all(
        r.startswith("Tool read was not run: permission denied") for r in results
    ), results
