"""Every payload eukhe gives a hook has the shape Claude Code's has (issue 55): one fixture an
event (`fixtures/claude`, written from Claude Code's hooks reference), and eukhe's payload of
that event, as a real hook reads it on its stdin, fired the way a run fires it (`RunHooks`,
after real calls of eukhe's tools): every key of the fixture is there with a value of the
same JSON type, all the way down (`tool_response` in each tool's own shape, key for key);
beside them eukhe adds only its own (`run_id`, PermissionRequest's `permission_reason`, and
its own argument names in `tool_input`)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from eukhe.ai.reply import ToolCall
from eukhe.hooks import payload
from eukhe.hooks.config import Hook, Hooks, Matcher
from eukhe.json_types import JsonObject
from eukhe.rules import hook as rule
from eukhe.run.hook_events import RunHooks
from eukhe.tools import BUILTIN, Context, call

FIXTURES = Path(__file__).parent / "fixtures" / "claude"

OWN = {"run_id"}
"""The fields eukhe adds to every payload."""
OWN_BY_EVENT = {"PermissionRequest": {"permission_reason"}}
"""And to one event's."""


def shape(v: Any) -> Any:
    """A JSON value's shape: each object's keys with their values' shapes, an array's first
    element's shape (an empty one: no element), each scalar's type."""
    if isinstance(v, dict):
        return {k: shape(x) for k, x in v.items()}
    if isinstance(v, list):
        return [shape(v[0])] if v else []
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int | float):
        return "number"
    return "null" if v is None else "string"


def differs(want: Any, got: Any, where: str = "") -> list[str]:
    """Where `got`'s shape is not `want`'s: a key missing, a type other, a key too many."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return [f"{where or 'the payload'}: an object wanted, {got!r} got"]
        out = [f"{where}.{k}: missing" for k in want if k not in got]
        out += [d for k in want if k in got for d in differs(want[k], got[k], f"{where}.{k}")]
        return out
    if isinstance(want, list):
        if not isinstance(got, list):
            return [f"{where}: an array wanted, {got!r} got"]
        return differs(want[0], got[0], f"{where}[0]") if want and got else []
    return [] if want == got else [f"{where}: {want} wanted, {got} got"]


def compare(fixture: str, got: JsonObject) -> None:
    want = json.loads((FIXTURES / f"{fixture}.json").read_text())
    event = want["hook_event_name"]
    wrong = differs(shape(want), shape(got))
    extra = set(got) - set(want) - OWN - OWN_BY_EVENT.get(event, set())
    assert not wrong and not extra, f"{fixture}: {wrong}, keys of eukhe's own: {sorted(extra)}\n{got}"
    if "tool_response" in want:  # each tool's own shape, key for key
        assert set(got["tool_response"]) == set(want["tool_response"]), got["tool_response"]
    assert got["hook_event_name"] == event


class Fired:
    """RunHooks whose one hook of every event writes its stdin to a file, and what it read
    (each read on a loop of its own, with RunHooks of its own: a run's cancel is its loop's)."""

    def __init__(self, tmp_path: Path, subagent: bool = False) -> None:
        self.out = tmp_path / "payload.json"
        self.shown: list[str] = []
        self.tmp_path, self.subagent = tmp_path, subagent

    def made(self) -> RunHooks:
        tmp_path, subagent = self.tmp_path, self.subagent
        command = f"cat > {self.out}"
        source = tmp_path / "settings.json"
        matchers = tuple(Matcher(e, "", (Hook(command, 10_000, False, (), source),)) for e in rule.Event)
        return RunHooks(
            Hooks(matchers),
            "s-1" if not subagent else "r-1.c1",
            "r-1" if not subagent else "r-1.c1",
            tmp_path,
            {"PATH": "/usr/bin:/bin"},
            asyncio.Event(),
            lambda kind, text, data=None: self.shown.append(text),
            subagent,
            transcript=str(tmp_path / "transcripts" / "s-1.jsonl"),
            agent_transcript=str(tmp_path / "transcripts" / "r-1.c1.jsonl") if subagent else "",
            agent_type="Explore" if subagent else "general-purpose",
            model="vllm/m",
        )

    def read(self, fire: Callable[[RunHooks], Awaitable[object]]) -> JsonObject:
        self.out.unlink(missing_ok=True)
        asyncio.run(_fired(fire, self.made()))
        assert self.out.exists(), self.shown
        got: JsonObject = json.loads(self.out.read_text())
        return got


async def _fired(fire: Callable[[RunHooks], Awaitable[object]], made: RunHooks) -> None:
    await fire(made)


def ran(tmp_path: Path, name: str, arguments: JsonObject) -> tuple[ToolCall, str, bool]:
    """A call of eukhe's tool, run for real here: the call, its result, whether it failed."""
    got = asyncio.run(call(BUILTIN, name, arguments, Context(tmp_path)))
    return ToolCall(f"call-{name}", name, json.dumps(arguments), arguments), got.content, got.is_error


@pytest.mark.parametrize(
    ("fixture", "fire"),
    [
        ("SessionStart", lambda h: h.session_start("startup")),
        ("UserPromptSubmit", lambda h: h.prompt("Write a function")),
        ("PreCompact", lambda h: h.pre_compact("auto")),
        ("PostCompact", lambda h: h.post_compact("auto", "the view the run goes on from")),
        ("Stop", lambda h: h.stop(1, "done")),
        ("StopFailure", lambda h: h.stop_failure("rate_limit", "429 Too Many Requests", "")),
        ("SessionEnd", lambda h: h.session_end("other")),
        ("PreToolUse", lambda h: h.pre_tool(ToolCall("c1", "bash", "", {"command": "npm test"}))),
        (
            "PermissionRequest",
            lambda h: h.permission_request(ToolCall("c1", "bash", "", {"command": "rm -rf x"}), "it writes"),
        ),
    ],
)
def test_each_events_payload_has_claude_codes_shape(tmp_path: Path, fixture: str, fire: Any) -> None:
    compare(fixture, Fired(tmp_path).read(fire))


def test_a_notifications_payload_has_claude_codes_shape(tmp_path: Path) -> None:
    fired = Fired(tmp_path)

    async def notified(h: RunHooks) -> None:
        h.notify("permission_prompt", "eukhe needs your permission to use bash")
        await asyncio.gather(*h.beside)

    compare("Notification", fired.read(notified))


def test_a_subagents_start_and_stop_have_claude_codes_shape(tmp_path: Path) -> None:
    fired = Fired(tmp_path, subagent=True)
    start = fired.read(lambda h: h.subagent_start())
    compare("SubagentStart", start)
    assert (start["agent_id"], start["agent_type"]) == ("r-1.c1", "Explore")
    stop = fired.read(lambda h: h.stop(0, "found 3 issues"))
    compare("SubagentStop", stop)
    assert stop["agent_transcript_path"].endswith("r-1.c1.jsonl")
    assert stop["transcript_path"].endswith("s-1.jsonl")  # its parent's session's, as Claude Code's


def test_each_tools_response_has_its_own_shape_after_a_real_call(tmp_path: Path) -> None:
    """Bash, Write, Edit and Read run for real; PostToolUse gives each answer in its tool's own
    shape, with its values read from eukhe's answer."""
    fired = Fired(tmp_path)
    calls = {
        "Bash": ran(tmp_path, "bash", {"command": "echo All tests passed"}),
        "Write": ran(tmp_path, "write", {"path": "file.txt", "content": "hello\n"}),
        "Edit": ran(tmp_path, "edit", {"path": "file.txt", "old_text": "hello", "new_text": "hello, world"}),
        "Read": ran(tmp_path, "read", {"path": "file.txt"}),
    }
    got = {}
    for tool, (c, content, error) in calls.items():
        assert not error, content
        got[tool] = fired.read(lambda h, c=c, content=content: h.post_tool(c, content, False))
        compare(f"PostToolUse-{tool}", got[tool])
        assert got[tool]["tool_use_id"] == c.id
    assert got["Bash"]["tool_response"]["stdout"] == "All tests passed"
    assert got["Write"]["tool_response"] == {
        "type": "create",
        "filePath": str(tmp_path / "file.txt"),
        "content": "hello\n",
        "structuredPatch": [],
    }
    [hunk] = got["Edit"]["tool_response"]["structuredPatch"]
    assert hunk["lines"] == ["-hello", "+hello, world"] and hunk["oldStart"] == 1
    assert got["Read"]["tool_response"]["file"]["content"] == "hello, world"
    assert got["Read"]["tool_response"]["file"]["totalLines"] == 1


def test_glob_and_todo_answers_have_the_shapes_claude_codes_sessions_record(tmp_path: Path) -> None:
    """Glob and TodoWrite, as the real Claude Code sessions of the import's fixtures record
    their answers: Glob's paths found and counted, TodoWrite's list in its own words."""
    fired = Fired(tmp_path)
    (tmp_path / "file.txt").write_text("hello\n")
    c, content, error = ran(tmp_path, "glob", {"pattern": "*.txt"})
    assert not error, content
    got = fired.read(lambda h: h.post_tool(c, content, False))
    compare("PostToolUse-Glob", got)
    assert got["tool_response"]["filenames"] == [str(tmp_path / "file.txt")]
    assert got["tool_response"]["numFiles"] == 1 and got["tool_response"]["truncated"] is False
    items = [{"text": "read the notes", "state": "done"}, {"text": "write the fix", "state": "in_progress"}]
    todo = payload.tool_response("todo", {"items": items}, "the list", False, tmp_path)
    assert todo == {
        "oldTodos": [],
        "newTodos": [
            {"content": "read the notes", "status": "completed", "activeForm": "read the notes"},
            {"content": "write the fix", "status": "in_progress", "activeForm": "write the fix"},
        ],
    }


def test_a_failed_call_fires_post_tool_use_failure_with_its_error(tmp_path: Path) -> None:
    """A call whose result is an error is Claude Code's PostToolUseFailure, not PostToolUse."""
    fired = Fired(tmp_path)
    c, content, error = ran(tmp_path, "bash", {"command": "exit 3"})
    assert error
    got = fired.read(lambda h: h.post_tool(c, content, True))
    compare("PostToolUseFailure", got)
    assert "exit code 3" in got["error"] and got["is_interrupt"] is False


def test_permission_mode_follows_eukhes_mode() -> None:
    assert rule.permission_mode(True, "danger-full-access", "never") == "plan"
    assert rule.permission_mode(False, "danger-full-access", "on-request") == "bypassPermissions"
    assert rule.permission_mode(False, "workspace-write", "on-request") == "acceptEdits"
    assert rule.permission_mode(False, "workspace-write", "never") == "dontAsk"
    assert rule.permission_mode(False, "read-only", "untrusted") == "default"
