"""The task list is the session's, derived from what its runs recorded (`Sessions.pins`):
the list its last shown run ended with, a run with no `todo` call keeping the one it
started with; a rewind's ended runs take their lists with them, and a fork begins with its
parent's at its point; the person's last request is the last prompt, a follow-up's the one
before."""

from __future__ import annotations

import asyncio
from pathlib import Path

from dbos import DBOS

from eukhe.ai.faux import FauxServer, parse
from eukhe.rules.pinned import Pins
from eukhe.rules.todo import State, Task
from eukhe.run.runtime import Runtime
from eukhe.run.session_service import Sessions
from eukhe.run.spec import STEPS, RunSpec
from eukhe.store.lineage import Lineages


def todo_call(*texts: str) -> dict[str, object]:
    items = [{"text": t, "state": "done"} for t in texts]
    return {"calls": [{"name": "todo", "arguments": {"items": items}}]}


def test_the_list_follows_the_sessions_runs_its_rewinds_and_forks(
    durable_runtime: Runtime, tmp_path: Path
) -> None:
    script = [
        {"when": "first", "results": 0, **todo_call("one")},
        {"when": "first", "results": 1, "text": "ok"},
        {"when": "second", "results": 0, **todo_call("two", "three")},
        {"when": "second", "results": 1, "text": "ok"},
        {"when": "third", "text": "no call"},
    ]
    sessions = Sessions(durable_runtime.store.url, durable_runtime.home, DBOS)

    def pins(session: str) -> Pins:
        return asyncio.run(sessions.pins(session))

    with FauxServer(parse(script)) as server:
        for prompt in ("first", "second", "third"):
            spec = RunSpec(prompt=prompt, model="vllm/m", base_url=server.url, cwd=str(tmp_path), steps=STEPS)
            asyncio.run(durable_runtime.drive(spec, "s", by_owner=False))
    assert pins("s") == Pins((Task("two", State.DONE), Task("three", State.DONE)), "third")
    lines = Lineages(durable_runtime.store.url)
    try:
        lines.fork("f", "s", 1)
        lines.rewind("s", 2, 3)
    finally:
        lines.close()
    assert pins("s") == Pins((Task("one", State.DONE),), "first") == pins("f")
    assert pins("nobody") == Pins()
