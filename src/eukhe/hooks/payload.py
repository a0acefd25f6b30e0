"""A hook's stdin, in Claude Code's field names: what every event's payload holds (`base`:
`session_id`, `transcript_path`, `cwd`, `permission_mode`, `hook_event_name`, and eukhe's
`run_id`), each event's own fields (`tool_fields`, `response_fields`, `failure_fields`,
`prompt_fields`, `stop_fields`, `subagent_fields`, ...), made here once for a run's events
(`run.hook_events`) and for `eukhe hooks test`, whose payload is a plausible one of the
event's (`sample`).

`tool_response` is each tool's own shape, as Claude Code's hooks read it (`tool_response`):
Bash `{stdout, stderr, interrupted, isImage}`, Write `{type, filePath, content,
structuredPatch}`, Edit `{filePath, oldString, newString, originalFile, structuredPatch,
userModified, replaceAll}`, Read `{type, file: {filePath, content, numLines, startLine,
totalLines}}`, an MCP tool's content blocks; any other tool's `{content, is_error}`."""

from __future__ import annotations

import re
from pathlib import Path

from eukhe.json_types import JsonMapping, JsonObject, JsonValue
from eukhe.rules import hook as rule

__all__ = [
    "SAMPLE_INPUTS",
    "asked_fields",
    "base",
    "compact_fields",
    "eukhe_name",
    "failure_fields",
    "notification_fields",
    "prompt_fields",
    "response_fields",
    "sample",
    "session_start_fields",
    "stop_failure_fields",
    "stop_fields",
    "subagent_fields",
    "subject",
    "tool_fields",
    "tool_input",
    "tool_response",
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


def base(
    event: rule.Event,
    session: str,
    run: str,
    cwd: Path,
    transcript: str = "",
    mode: str = "default",
) -> JsonObject:
    """What every event's payload holds: `transcript`, the session's transcript
    (`hooks.transcript`); `mode`, Claude Code's name of the permission mode in force
    (`rules.hook.permission_mode`)."""
    return {
        "session_id": session,
        "transcript_path": transcript,
        "cwd": str(cwd),
        "permission_mode": mode,
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


def tool_fields(tool: str, arguments: JsonMapping, cwd: Path, call_id: str | None = None) -> JsonObject:
    """A tool event's fields: the tool's Claude Code name, its input, and the call's id
    (`tool_use_id`, as the transcript's `tool_use` block has it; None: none, PermissionRequest's)."""
    out: JsonObject = {"tool_name": rule.claude_name(tool), "tool_input": tool_input(tool, arguments, cwd)}
    if call_id is not None:
        out["tool_use_id"] = call_id
    return out


_STATUS = re.compile(r"(exit code -?\d+|timed out after .*|aborted \(.*|killed by .*|exit status unknown .*)")


def _bash(content: str) -> JsonObject:
    """Bash's answer: what the command wrote (its stdout and stderr share one pipe in eukhe:
    `stdout` holds both) without eukhe's last line (its exit), and whether it was cut off."""
    body, _, last = content.rstrip("\n").rpartition("\n")
    if not _STATUS.fullmatch(last):
        body, last = content, ""
    body = "" if body == "(no output)" else body
    interrupted = last.startswith(("timed out", "aborted"))
    return {"stdout": body, "stderr": "", "interrupted": interrupted, "isImage": False}


def _lines(text: str) -> list[str]:
    return text.split("\n") if text else []


_SPAN = re.compile(r"(?:replaced|deleted) lines? (\d+)")
_NUMBERED = re.compile(r"\s*(\d+)\t(.*)", re.S)
_OF = re.compile(r"\[showed lines \d+-\d+ of ([\d,]+)|; showed lines \d+-\d+ of ([\d,]+)")


def _edit(arguments: JsonMapping, path: str, content: str) -> JsonObject:
    """Edit's answer: the change, and its one hunk at the line eukhe's answer names."""
    old, new = str(arguments.get("old_text") or ""), str(arguments.get("new_text") or "")
    at = _SPAN.search(content)
    first = int(at.group(1)) if at else 1
    hunk: JsonObject = {
        "oldStart": first,
        "oldLines": len(_lines(old)),
        "newStart": first,
        "newLines": len(_lines(new)),
        "lines": [*(f"-{x}" for x in _lines(old)), *(f"+{x}" for x in _lines(new))],
    }
    return {
        "filePath": path,
        "oldString": old,
        "newString": new,
        "originalFile": "",  # eukhe does not keep the file as it was: the hunk says what changed
        "structuredPatch": [hunk],
        "userModified": False,
        "replaceAll": False,
    }


def _read(path: str, content: str) -> JsonObject:
    """Read's answer: the lines shown, without eukhe's numbers, where they start, and how many
    the file has (when eukhe said)."""
    shown: list[tuple[int, str]] = []
    for line in content.split("\n"):
        got = _NUMBERED.fullmatch(line)
        if got:
            shown.append((int(got.group(1)), got.group(2)))
    total_at = _OF.search(content)
    total = len(shown)
    if total_at:
        total = int((total_at.group(1) or total_at.group(2)).replace(",", ""))
    file: JsonObject = {
        "filePath": path,
        "content": "\n".join(t for _, t in shown),
        "numLines": len(shown),
        "startLine": shown[0][0] if shown else 1,
        "totalLines": total,
    }
    return {"type": "text", "file": file}


def tool_response(tool: str, arguments: JsonMapping, content: str, error: bool, cwd: Path) -> JsonValue:
    """What a call answered, in its tool's own shape as Claude Code gives it to PostToolUse
    (see the module's docstring): read from eukhe's answer and the call's arguments."""
    path = arguments.get("path")
    where = str(cwd / path) if isinstance(path, str) else ""
    if tool == "bash":
        return _bash(content)
    if tool == "write" and not error:
        kind = "update" if content.startswith("overwrote") else "create"
        text = arguments.get("content")
        return {
            "type": kind,
            "filePath": where,
            "content": text if isinstance(text, str) else "",
            "structuredPatch": [],
        }
    if tool == "edit" and not error:
        return _edit(arguments, where, content)
    if tool == "read" and not error:
        return _read(where, content)
    if tool == "glob" and not error:
        return _glob(content, cwd / path if isinstance(path, str) else cwd)
    if tool == "todo" and not error:
        return _todos(arguments)
    if tool.startswith("mcp__"):
        return [{"type": "text", "text": content}]
    return {"content": content, "is_error": error}


def _glob(content: str, under: Path) -> JsonObject:
    """Glob's answer as Claude Code's sessions record it: the paths found (absolute: eukhe names
    those under the folder searched from it), how many, whether the list was cut (eukhe's note
    in brackets says so)."""
    lines = [] if content.startswith("no file under '") else content.split("\n")
    found: list[JsonValue] = [str(under / line) for line in lines if line and not line.startswith("[")]
    cut = any(line.startswith("[") for line in lines)
    return {"filenames": found, "durationMs": 0, "numFiles": len(found), "truncated": cut}


_TODO_STATES = {"pending": "pending", "in_progress": "in_progress", "done": "completed"}


def _todos(arguments: JsonMapping) -> JsonObject:
    """TodoWrite's answer as Claude Code's sessions record it: the list written, each item's
    content, status (Claude Code's words: `completed` for eukhe's `done`) and active form.
    eukhe keeps no list from before in the call: `oldTodos` is empty."""
    items = arguments.get("items")
    new: list[JsonValue] = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            text = str(item.get("text") or "")
            state = _TODO_STATES.get(str(item.get("state") or ""), "pending")
            new.append({"content": text, "status": state, "activeForm": text})
    return {"oldTodos": [], "newTodos": new}


def response_fields(tool: str, arguments: JsonMapping, content: str, error: bool, cwd: Path) -> JsonObject:
    """PostToolUse's own field: what the tool answered, in its own shape."""
    return {"tool_response": tool_response(tool, arguments, content, error, cwd)}


def failure_fields(tool: str, content: str) -> JsonObject:
    """PostToolUseFailure's own fields: the call's error (its result), and whether a person's
    abort cut it off (`is_interrupt`)."""
    interrupted = tool == "bash" and content.rstrip("\n").rpartition("\n")[2].startswith("aborted")
    return {"error": content, "is_interrupt": interrupted}


def asked_fields(why: str) -> JsonObject:
    """PermissionRequest's own fields beside the call's: why eukhe's rules ask about it
    (eukhe's own field), and Claude Code's `permission_suggestions` (eukhe's ask offers its
    own answers: none here)."""
    return {"permission_reason": why, "permission_suggestions": []}


def prompt_fields(text: str) -> JsonObject:
    return {"prompt": text}


def stop_fields(blocks: int, answer: str) -> JsonObject:
    """Stop's (and SubagentStop's) fields: whether a Stop hook's block keeps the run going,
    and the answer the run gave."""
    return {"stop_hook_active": rule.stop_hook_active(blocks), "last_assistant_message": answer}


def subagent_fields(agent_id: str, agent_type: str, transcript: str | None = None) -> JsonObject:
    """SubagentStart's (and, with the subagent's own transcript, SubagentStop's) fields: the
    subagent's id (its run's), and its agent's name (`general-purpose`: none)."""
    out: JsonObject = {"agent_id": agent_id, "agent_type": agent_type}
    if transcript is not None:
        out["agent_transcript_path"] = transcript
    return out


def stop_failure_fields(error: str, details: str, answer: str) -> JsonObject:
    """StopFailure's fields: the failure's kind (`rules.hook.failure_kind`), its message, and
    the last text the run wrote."""
    return {"error": error, "error_details": details, "last_assistant_message": answer}


def compact_fields(trigger: str, summary: str | None = None) -> JsonObject:
    """PreCompact's fields (`summary` None), or PostCompact's (the view the run goes on from)."""
    if summary is None:
        return {"trigger": trigger, "custom_instructions": ""}
    return {"trigger": trigger, "compact_summary": summary}


def session_start_fields(source: str, model: str) -> JsonObject:
    return {"source": source, "model": model}


def notification_fields(kind: str, message: str) -> JsonObject:
    return {"message": message, "title": "eukhe", "notification_type": kind}


_SAMPLE_ANSWER = "hello (a sample answer from eukhe hooks test)"
_SAMPLE_FIELDS: dict[rule.Event, JsonObject] = {
    rule.Event.USER_PROMPT_SUBMIT: prompt_fields("hello (a sample prompt from eukhe hooks test)"),
    rule.Event.STOP: stop_fields(0, _SAMPLE_ANSWER),
    rule.Event.SUBAGENT_START: subagent_fields("test.c1", "general-purpose"),
    rule.Event.SUBAGENT_STOP: stop_fields(0, _SAMPLE_ANSWER)
    | subagent_fields("test.c1", "general-purpose", ""),
    rule.Event.STOP_FAILURE: stop_failure_fields(
        "server_error", "a sample failure from eukhe hooks test", ""
    ),
    rule.Event.SESSION_START: session_start_fields("startup", ""),
    rule.Event.SESSION_END: {"reason": "other"},
    rule.Event.PRE_COMPACT: compact_fields("auto"),
    rule.Event.POST_COMPACT: compact_fields("auto", "a sample summary from eukhe hooks test"),
    rule.Event.NOTIFICATION: notification_fields(
        "permission_prompt", "a sample notification from eukhe hooks test"
    ),
}


def sample(event: rule.Event, tool: str | None, arguments: JsonMapping | None, cwd: Path) -> JsonObject:
    """A plausible payload of `event` in `cwd`, for session and run `test`: for a tool event
    (`rule.MATCHED`), `tool`'s (eukhe's name) call with `arguments` (None: its
    `SAMPLE_INPUTS`), and PostToolUse's answer to it (PostToolUseFailure's error); for any
    other, its own fields."""
    out = base(event, "test", "test", cwd)
    if event in rule.MATCHED:
        name = tool or ""
        given = SAMPLE_INPUTS.get(name, {}) if arguments is None else arguments
        asked = event is rule.Event.PERMISSION_REQUEST
        out |= tool_fields(name, given, cwd, None if asked else "test-call")
        answer = "hello\nexit code 0" if name == "bash" and arguments is None else ""
        if event is rule.Event.POST_TOOL_USE:
            out |= response_fields(name, given, answer, False, cwd)
        if event is rule.Event.POST_TOOL_USE_FAILURE:
            out |= failure_fields(name, "exit code 1" if name == "bash" else "a sample failure")
        if asked:
            out |= asked_fields("a sample ask from eukhe hooks test")
        return out
    return out | _SAMPLE_FIELDS.get(event, {})


def subject(event: rule.Event, fields: JsonMapping) -> str | None:
    """What an event's matcher is over, in its payload (`rule.MATCHED_ON`); a tool event's
    tool is eukhe's name, given apart (None: neither)."""
    key = rule.MATCHED_ON.get(event)
    got = fields.get(key) if key is not None else None
    return got if isinstance(got, str) else None
