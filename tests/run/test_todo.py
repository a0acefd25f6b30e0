"""The task list (`todo`) through the real `eukhe run`: the model writes its list, then its
context outgrows the window twice, and every request the run sends after each compaction
still holds the list and the person's request (issue 44; the peers' agents forget their
task there: anthropics/claude-code #91351, openai/codex #25792, #6077, pi #4274). The same
run's `--events` carry the list. The list is the session's: the next run starts with it,
and a run with no `todo` call of its own keeps it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eukhe.ai.faux import FauxServer, parse
from eukhe.ai.reply import ToolCall
from eukhe.ai.request import Message
from eukhe.rules import todo
from eukhe.rules.todo import State, Task
from eukhe.run import tasks
from tests.proc import eukhe

BIG = "the same line of the big file, again and again\n" * 200  # ~9 600 bytes
WINDOW = 26_000  # a request with one BIG result fits; one with two does not
PROMPT = "plan it, then read big.txt twice and summarise it"
ITEMS = [
    {"text": "read big.txt twice", "state": "in_progress"},
    {"text": "summarise big.txt", "state": "pending"},
]
NOTE = "After the chat come your task list"  # the note a compacted run goes on from
LISTED = "- [in progress] read big.txt twice\n- [pending] summarise big.txt"


def read(n: int) -> dict[str, Any]:
    return {"calls": [{"name": "read", "arguments": {"path": "big.txt"}, "id": f"r{n}"}]}


def script() -> dict[str, Any]:
    return {
        "window": WINDOW,
        "replies": [
            {"when": "Compress this message", "results": 0, "text": "a short summary line."},
            {"when": "Merge these two", "results": 0, "text": "a merged summary line."},
            {
                "when": PROMPT,
                "results": 0,
                "calls": [{"name": "todo", "arguments": {"items": ITEMS}, "id": "t1"}],
            },
            {"when": PROMPT, "results": 1, **read(1)},
            {"when": PROMPT, "results": 2, **read(2)},
            {"when": NOTE, **read(3)},  # after the first compaction: each once, in turn
            {"when": NOTE, **read(4)},
            {"when": NOTE, "text": "big.txt repeats one line."},  # after the second
        ],
    }


def system_of(body: Any) -> str:
    return str(body["messages"][0]["content"])


def test_a_run_that_compacts_twice_shows_its_list_and_request_in_every_request_after(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(
        json.dumps({"memory": {"viewBytes": 3_000, "settleTimeoutMs": 5_000}})
    )
    (tmp_path / "big.txt").write_text(BIG)
    with FauxServer(parse(script())) as server:
        run = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "--events", PROMPT, cwd=tmp_path, home=home
        )
        seen = [s.body for s in server.seen if s.method == "POST"]
    assert run.returncode == 0, run.stderr
    events = [json.loads(line) for line in run.stdout.splitlines()]
    assert events[-1]["outcome"] == "answered" and events[-1]["answer"] == "big.txt repeats one line.", (
        events[-1]
    )
    turns = [b for b in seen if b.get("tools")]  # the run's requests (the compactor's offer no tools)
    compacted = [k for k, b in enumerate(turns) if NOTE in str(b["messages"][-1]["content"])]
    # the todo call, two reads, the request that overflowed; then two reads, the one that
    # overflowed again, and the answer: each after a compaction goes on from its note
    assert len(turns) == 8 and compacted[0] == 4, [len(json.dumps(b)) for b in turns]
    assert [e["type"] for e in events].count("compact") == 2
    for b in turns[4:]:
        system = system_of(b)
        after = system[system.rindex("</chat>") :]
        assert (
            LISTED in after and f"<request>\nThe person's last request, word for word:\n{PROMPT}\n" in after
        )
        assert len(system[system.rindex("<chat>\n") :].encode()) <= 3_000  # the view fits, pins and all
    for b in turns[:4]:  # before any compaction: the request is the run's own first message
        assert "<request>" not in system_of(b)
    shown = [e for e in events if e["type"] == "todo"]
    assert [(e["text"], e["items"]) for e in shown] == [
        ("0 of 2 done; in progress: read big.txt twice", ITEMS)
    ]
    assert "todo" in {e["name"] for e in events if e["type"] == "tool"}

    # the session's next run starts with the list: it pins it in its first view
    session = next(e["run"] for e in events if e["run"]).rpartition("/")[0]
    with FauxServer(parse(["ok"])) as server:
        again = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "--json", "--session", session, "and now?",
            cwd=tmp_path, home=home,
        )  # fmt: skip
        [first] = [s.body for s in server.seen if s.method == "POST"]
    assert again.returncode == 0, again.stderr
    system = system_of(first)
    assert system.endswith(f"<tasks>\n{todo_head()}\n{LISTED}\n</tasks>") and "<request>" not in system


def todo_head() -> str:
    from eukhe.rules.pinned import TASKS_HEAD

    return TASKS_HEAD


def call(cid: str, args: Any, name: str = "todo") -> Message:
    parsed = args if isinstance(args, dict) else None
    return Message("assistant", "", calls=(ToolCall(cid, name, json.dumps(args), parsed),))


def test_the_list_a_run_holds_comes_from_its_calls_that_ran() -> None:
    one, two = {"items": ITEMS}, {"items": [{"text": "done now", "state": "done"}]}
    transcript = [
        Message("user", "go"),
        call("a", one),
        Message("tool", "ok", call_id="a"),
        call("b", two),
        Message("tool", "denied: a rule", call_id="b", is_error=True),  # denied: the list stays
        call("c", {"items": "nope"}),
        Message("tool", "todo: items must be an array", call_id="c", is_error=True),
    ]
    made = tasks.writes(transcript)
    assert made == [one, None, None]
    start = (Task("from before", State.DONE),)
    assert todo.current(start, made) == (
        Task("read big.txt twice", State.IN_PROGRESS),
        Task("summarise big.txt"),
    )
    assert todo.current(start, []) == start
