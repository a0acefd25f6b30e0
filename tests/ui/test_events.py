"""`eukhe run --events` and the interactive agent report the same events: one scripted
run through each, the stream's events drawn by the view, line for line as the terminal
shows them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eukhe.ai.faux import FauxServer, parse
from eukhe.display.view import View
from eukhe.events import SCHEMA, TYPES, VERSION, Event
from tests.proc import eukhe
from tests.ui.term import Term, faux_home, needs_tmux

ITEMS = [{"text": "read a.txt", "state": "in_progress"}, {"text": "say what it says", "state": "pending"}]
SCRIPT: list[Any] = [
    {
        "calls": [
            {"name": "todo", "arguments": {"items": ITEMS}},
            {"name": "read", "arguments": {"path": "a.txt"}},
        ]
    },
    {"error": {"status": 503, "body": {"error": {"message": "busy, try again"}}}},
    {"thinking": "only thinking, no answer"},
    {"text": "The file says alpha.\nThat is all.", "chunks": 4},
]
SETTINGS = {"retry": {"baseDelayMs": 200}}
PROMPT = "what does a.txt say?"


def stream(tmp: Path) -> list[dict[str, Any]]:
    home = tmp / "home-events"
    with FauxServer(parse(SCRIPT)) as server:
        faux_home(home, server.url, SETTINGS)
        done = eukhe("run", "--events", PROMPT, cwd=tmp, home=home)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def drawn(events: list[dict[str, Any]]) -> list[str]:
    """The stream's events as the interactive view draws them."""
    view = View()
    for e in events:
        if e["type"] in ("say", "diagnostic"):  # the process's own lines, not the run's
            continue
        data = {k: v for k, v in e.items() if k not in ("v", "type", "run", "text", "at")}
        view.add(Event(e["type"], e["text"], e["run"], data, e["at"]))
    view.ended()
    return [line.text for line in view.take()]


def test_the_event_stream_has_its_schema(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    events = stream(tmp_path)
    assert all(e["v"] == VERSION and e["type"] in TYPES and isinstance(e["at"], float) for e in events)
    assert events[-1]["type"] == "outcome" and events[-1]["outcome"] == "answered"
    assert events[-1]["answer"] == "The file says alpha.\nThat is all."
    kinds = [e["type"] for e in events]
    for kind in ("run", "stream", "calls", "tool", "result", "retry", "note", "budget", "waited", "text"):
        assert kind in kinds, kind
    retry = next(e for e in events if e["type"] == "retry")
    assert retry["wait"] == "retry" and retry["deadline"] > retry["at"]
    result = next(e for e in events if e["type"] == "result" and e["name"] == "read")
    assert result["error"] is False and result["text"] == "1\talpha"
    [listed] = [e for e in events if e["type"] == "todo"]  # the task list, as the todo call wrote it
    assert listed["items"] == ITEMS and listed["text"] == "0 of 2 done; in progress: read a.txt"
    assert SCHEMA.endswith(f"/{VERSION}") and (Path(__file__).parents[2] / "docs" / "events.md").exists()


@needs_tmux
def test_the_view_and_the_event_stream_report_the_same_events(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    expected = drawn(stream(tmp_path))
    home = tmp_path / "home"
    with FauxServer(parse(SCRIPT)) as server, Term(tmp_path, home) as t:
        faux_home(home, server.url, SETTINGS)
        t.ready()
        t.send(PROMPT)
        text = t.until("✓ answered")
        # the task list stays above the prompt: after the run, just above the idle status line
        idle = t.until(
            "the list above the idle prompt", lambda h: "◐ read a.txt\n☐ say what it says\n ready" in h
        )
    lines = [ln.rstrip() for ln in text.splitlines()]
    start = lines.index(f"› {PROMPT}") + 1
    end = next(i for i, ln in enumerate(lines) if ln.startswith("✓ answered")) + 1
    assert lines[start:end] == expected
    assert "☐ tasks: 0 of 2 done; in progress: read a.txt" in expected
    assert idle.rindex("◐ read a.txt") > idle.rindex("✓ answered")
    assert any(ln.startswith("↻ note:") for ln in expected)
    assert any(ln.startswith("⏳ retry:") for ln in expected)
