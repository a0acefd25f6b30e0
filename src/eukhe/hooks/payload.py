"""A hook's stdin, in Claude Code's field names: what every event's payload holds (`base`),
each event's own fields (`tool_fields`, `response_fields`, `prompt_fields`, `stop_fields`),
made here once for a run's events (`run.hook_events`) and for `eukhe hooks test`, whose
payload is a plausible one of the event's (`sample`)."""

from __future__ import annotations

from pathlib import Path

from eukhe.json_types import JsonMapping, JsonObject
from eukhe.rules import hook as rule

__all__ = [
    "SAMPLE_INPUTS",
    "asked_fields",
    "base",
    "eukhe_name",
    "prompt_fields",
    "response_fields",
    "sample",
    "stop_fields",
    "subject",
    "tool_fields",
    "tool_input",
]

_EUKHE_NAMES = {claude.lower(): ours for ours, claude in rule.CLAUDE_NAMES.items()}

SAMPLE_INPUTS: dict[str, JsonObject] = {
    "bash": {"command": "echo hello"},
    "read": {"path": "README.md"},
    "write": {"path": "hello.txt", "content": "hello\n"},
    "edit": {"path": "hello.txt", "old_text": "hello", "new_text": "hello, world"},
    "grep": {"pattern": "TODO"},
    "glob": {"pattern": "**/*.py"},
    "ls": {"path": "."},
    "web_fetch": {"url": "https://example.com"},
    "spawn": {"task": "say hello"},
    "exit_plan": {"plan": "1. Say hello."},
    "todo": {"items": [{"text": "say hello", "state": "in_progress"}]},
}
"""A plausible call of each of eukhe's tools, in eukhe's argument names (`tool_input` adds
Claude Code's); any other tool's: `{}`."""


def eukhe_name(tool: str) -> str:
    """A tool's eukhe name, given either name in any case (`Bash`, `bash`: `bash`;
    `WebFetch`: `web_fetch`); a name of neither (an MCP tool's `mcp__<server>__<tool>`) as
    given."""
    if tool in rule.CLAUDE_NAMES:
        return tool
    return _EUKHE_NAMES.get(tool.lower(), tool)


def base(event: rule.Event, session: str, run: str, cwd: Path) -> JsonObject:
    """What every event's payload holds."""
    return {
        "session_id": session,
        "transcript_path": "",
        "cwd": str(cwd),
        "hook_event_name": event.value,
        "run_id": run,
    }


def tool_input(tool: str, arguments: JsonMapping, cwd: Path) -> JsonObject:
    """A call's arguments (`tool`: eukhe's name), with Claude Code's names beside eukhe's
    where they differ (`file_path`, absolute; `old_string`, `new_string`): a hook written
    for Claude Code reads them where it looks."""
    given: JsonObject = dict(arguments)
    path = given.get("path")
    if tool in ("read", "write", "edit") and isinstance(path, str):
        given["file_path"] = str(cwd / path)
    for ours, theirs in (("old_text", "old_string"), ("new_text", "new_string")):
        if tool == "edit" and ours in given:
            given[theirs] = given[ours]
    return given


def tool_fields(tool: str, arguments: JsonMapping, cwd: Path) -> JsonObject:
    """A tool event's fields: the tool's Claude Code name and its input."""
    return {"tool_name": rule.claude_name(tool), "tool_input": tool_input(tool, arguments, cwd)}


def response_fields(content: str, error: bool) -> JsonObject:
    """PostToolUse's own field: what the tool answered."""
    return {"tool_response": {"content": content, "is_error": error}}


def asked_fields(why: str) -> JsonObject:
    """PermissionRequest's own field beside the call's: why eukhe's rules ask about it."""
    return {"permission_reason": why}


def prompt_fields(text: str) -> JsonObject:
    return {"prompt": text}


def stop_fields(blocks: int, answer: str) -> JsonObject:
    """Stop's (and SubagentStop's) fields: whether a Stop hook's block keeps the run going,
    and the answer the run gave."""
    return {"stop_hook_active": rule.stop_hook_active(blocks), "last_assistant_message": answer}


_SAMPLE_FIELDS: dict[rule.Event, JsonObject] = {
    rule.Event.USER_PROMPT_SUBMIT: prompt_fields("hello (a sample prompt from eukhe hooks test)"),
    rule.Event.STOP: stop_fields(0, "hello (a sample answer from eukhe hooks test)"),
    rule.Event.SUBAGENT_STOP: stop_fields(0, "hello (a sample answer from eukhe hooks test)"),
    rule.Event.SESSION_START: {"source": "startup"},
    rule.Event.SESSION_END: {"reason": "other"},
    rule.Event.PRE_COMPACT: {"trigger": "auto", "custom_instructions": ""},
    rule.Event.NOTIFICATION: {
        "message": "a sample notification from eukhe hooks test",
        "notification_type": "permission_prompt",
    },
}


def sample(event: rule.Event, tool: str | None, arguments: JsonMapping | None, cwd: Path) -> JsonObject:
    """A plausible payload of `event` in `cwd`, for session and run `test`: for a tool event
    (`rule.MATCHED`), `tool`'s (eukhe's name) call with `arguments` (None: its
    `SAMPLE_INPUTS`), and PostToolUse's answer to it; for any other, its own fields."""
    out = base(event, "test", "test", cwd)
    if event in rule.MATCHED:
        name = tool or ""
        given = SAMPLE_INPUTS.get(name, {}) if arguments is None else arguments
        out |= tool_fields(name, given, cwd)
        if event is rule.Event.POST_TOOL_USE:
            out |= response_fields("hello\n" if name == "bash" and arguments is None else "", False)
        return out
    return out | _SAMPLE_FIELDS.get(event, {})


def subject(event: rule.Event, fields: JsonMapping) -> str | None:
    """What an event's matcher is over, in its payload (`rule.MATCHED_ON`); a tool event's
    tool is eukhe's name, given apart (None: neither)."""
    key = rule.MATCHED_ON.get(event)
    got = fields.get(key) if key is not None else None
    return got if isinstance(got, str) else None
