"""The tie of the pins' rule to a run (`rules.todo`, `rules.pinned`, through the durable
runtime in this process): swap the rule's functions and what the run sends after its
compaction is what the swapped ones say, so the list a compaction pins, the request it
pins and how they read are the rule's to decide, not a copy of it in the runtime."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from eukhe.ai.faux import FauxServer, parse
from eukhe.rules import pinned, todo
from eukhe.rules.pinned import Pins
from eukhe.rules.todo import Task
from eukhe.run.runtime import Runtime
from eukhe.run.spec import STEPS, RunSpec
from tests.run.test_todo import BIG, ITEMS, read

WINDOW = 20_000  # the todo call's and one read's request fits; one with two reads does not
PROMPT = "plan, then read big.txt"


def script() -> dict[str, Any]:
    todo_call = {"calls": [{"name": "todo", "arguments": {"items": ITEMS}, "id": "t1"}]}
    return {
        "window": WINDOW,
        "replies": [
            {"when": "Compress this message", "results": 0, "text": "a short summary line."},
            {"when": "Merge these two", "results": 0, "text": "a merged summary line."},
            {"when": PROMPT, "results": 0, **todo_call},
            {"when": PROMPT, "results": 1, **read(1)},
            {"when": PROMPT, "results": 2, **read(2)},
            {"when": "Harness note", "text": "read."},  # after the compaction
        ],
    }


def after_compaction(runtime: Runtime, cwd: Path, session: str) -> str:
    """The system prompt of the run's request after its compaction."""
    with FauxServer(parse(script())) as server:
        spec = RunSpec(prompt=PROMPT, model="vllm/m", base_url=server.url, cwd=str(cwd), steps=STEPS)
        asyncio.run(runtime.drive(spec, session, by_owner=False))
        turns = [s.body for s in server.seen if s.method == "POST" and s.body.get("tools")]
    assert "Harness note" in str(turns[-1]["messages"][-1]["content"]), [t["messages"][-1] for t in turns]
    return str(turns[-1]["messages"][0]["content"])


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    (tmp_path / "home" / "settings.json").write_text(
        json.dumps({"memory": {"viewBytes": 3_000, "settleTimeoutMs": 5_000}})
    )
    (tmp_path / "big.txt").write_text(BIG)
    return tmp_path


def test_the_run_pins_what_the_rule_says(
    durable_runtime: Runtime, cwd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(The rule's own pins, through `eukhe run`: tests/run/test_todo.py.)"""

    def kept_start(start: tuple[Task, ...], writes: Any) -> tuple[Task, ...]:
        return (Task("what the swapped rule says"),)

    def asked(previous: str, prompt: str | None) -> str:
        return "the swapped request"

    def block(p: Pins) -> str:
        return f"<pins: {'; '.join(t.text for t in p.tasks)}; {p.request}>"

    monkeypatch.setattr(todo, "current", kept_start)
    monkeypatch.setattr(pinned, "asked", asked)
    monkeypatch.setattr(pinned, "block", block)
    system = after_compaction(durable_runtime, cwd, "s")
    assert system.endswith("</chat>\n\n<pins: what the swapped rule says; the swapped request>"), system[
        -300:
    ]
