"""A long session: 100 turns of one session against the faux server with a small view
budget; the first 96 in this process, through the same code `eukhe run --session`
runs (the durable store and `Runtime.drive`), the last 4 through the CLI (`eukhe run`
processes, forked from the tests' template: tests/forks.py). Every
turn's request carries a view that fits the budget (the run's own messages come
after it), no request holds a tool call without its result or the reverse, and no
turn waits past its settle deadline.

100 turns (300 before, 90 s) take the chat through eight merges that fold its view
back: a turn that meets merges under way, the case this test first caught (aec718b),
comes again every few turns."""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest

from eukhe.ai.faux import FauxServer, parse
from tests.proc import eukhe
from tests.sinks import Kept

BUDGET = 1_500
TURNS, CLI_TURNS = 100, 4
SETTLE_MS = 5_000
CLI = ["run", "--model", "vllm/m"]


def script() -> dict[str, Any]:
    """Every third turn reads a file first; the compactor's requests get a short line."""
    return {
        "replies": [
            {"when": "Compress this message", "text": "a short summary line.", "results": 0},
            {"when": "Merge these two", "text": "a merged summary line.", "results": 0},
            {
                "when": "read please",
                "results": 0,
                "calls": [{"name": "read", "arguments": {"path": "notes.txt"}}],
            },
            {"when": "read please", "results": 1, "text": "The notes say hello."},
            {"results": 0, "text": "Done: " + "the answer is long enough to need a summary. " * 14},
        ]
    }


def prompt(n: int) -> str:
    return f"turn {n}: " + ("read please" if n % 3 == 0 else "tell me something")


def views_and_pairs(seen: list[Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The turns' requests (not the compactor's): each one's view and its messages."""
    out = []
    for s in seen:
        if not isinstance(s.body, dict) or "messages" not in s.body:
            continue  # a request cut short by a process that ended (the server answered 400)
        messages = s.body["messages"]
        system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
        if system.endswith("</chat>"):  # a turn's (the compactor's has no view at its end)
            view = system[system.rindex("<chat>\n") :]
            out.append((view, messages))
    return out


def pairs_whole(messages: list[dict[str, Any]]) -> bool:
    calls = [c["id"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    results = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    return sorted(calls) == sorted(results)


@pytest.mark.slow
def test_a_hundred_turns_keep_the_view_in_its_budget(tmp_path: Path) -> None:
    from eukhe.ids import new_session
    from eukhe.run import workflow
    from eukhe.run.runtime import Runtime
    from eukhe.run.spec import RunSpec
    from eukhe.store import durable

    home = tmp_path / "home"
    home.mkdir()
    settings = {"memory": {"viewBytes": BUDGET, "settleTimeoutMs": SETTLE_MS}}
    (home / "settings.json").write_text(json.dumps(settings))
    (tmp_path / "notes.txt").write_text("hello\n")
    os.environ["EUKHE_HOME"] = str(home)
    session = new_session()
    waits: list[float] = []
    with FauxServer(parse(script())) as server:
        store = durable.open_store(home, settings)
        kept = Kept()
        runtime = Runtime(home, store, workflow.begin(workflow.ProcessContext(chat_url=store.url, sink=kept)))
        try:
            for n in range(TURNS - CLI_TURNS):
                spec = RunSpec(prompt=prompt(n), model="vllm/m", base_url=server.url, cwd=str(tmp_path))
                kept.outcomes.clear()
                began = time.monotonic()
                asyncio.run(runtime.drive(spec, session, by_owner=False))
                waits.append(time.monotonic() - began)
                got = [out for _, out in kept.outcomes]
                assert got and got[0].outcome == "answered", (n, got)
        finally:
            workflow.begin(workflow.ProcessContext())
            store.close()
            os.environ.pop("EUKHE_HOME", None)
        for n in range(TURNS - CLI_TURNS, TURNS):
            done = eukhe(
                *CLI,
                "--base-url",
                server.url,
                "--session",
                session,
                "--json",
                prompt(n),
                cwd=tmp_path,
                home=home,
            )
            assert done.returncode == 0, done.stderr
            assert "settle deadline passed" not in done.stderr
        seen = list(server.seen)
    turns = views_and_pairs(seen)
    assert len(turns) >= TURNS  # every turn's request, follow-ups after a tool round included
    sizes = [len(view.encode()) for view, _ in turns]
    over = [(i, s, turns[i][0]) for i, s in enumerate(sizes) if s > BUDGET]
    assert not over, (len(sizes), over[:3])
    # the view is full, not empty: the chat did grow. Its size is a saw (it grows with each
    # turn and falls when a merge lands, about every 16 views here): one tooth is looked at.
    assert max(sizes[-20:]) > BUDGET // 2
    falls = [i for i in range(1, len(sizes)) if sizes[i] < sizes[i - 1] // 2]  # a merge just landed
    assert len(falls) >= 4, sizes  # merges land again and again
    assert sizes[falls[-1]] > sizes[falls[0]], sizes  # and what the last one leaves grew with the chat
    assert all(pairs_whole(messages) for _, messages in turns)
    assert all(
        pairs_whole(s.body["messages"]) for s in seen if isinstance(s.body, dict) and "messages" in s.body
    )
    assert max(waits) < SETTLE_MS / 1000 + 10  # no turn waits past its deadline (plus the run itself)
    ids = [int(m.group(1)) for m in re.finditer(r"^(\d+)\+\d+\|", turns[-1][0], re.M)]
    assert ids[0] == 0 and ids == sorted(ids)  # the view still starts at the chat's first message
