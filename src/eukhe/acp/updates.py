"""A session's events (`eukhe.events`) as the Agent Client Protocol's `session/update`s: the
answer as message chunks, each tool call as a `tool_call` (with the file it touches and the
change it makes) and its result as a `tool_call_update`, a denied call as a failed one, the
task list as the `plan`, and
eukhe's own lines (notes, retries, hooks, subagents, notices) as thought chunks the editor
shows beside the answer. A stored session's transcript is replayed the same way
(`replayed`)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence

from acp.helpers import SessionUpdate, update_current_mode
from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    PlanEntryStatus,
    ToolCallLocation,
    ToolKind,
    UnstructuredCommandInput,
    UsageUpdate,
)

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from eukhe.ai.request import Message
from eukhe.events import QUIET, Event
from eukhe.ids import is_root
from eukhe.json_types import JsonMapping
from eukhe.run.spec import SessionSetup

KINDS: Mapping[str, ToolKind] = {
    "read": "read",
    "write": "edit",
    "edit": "edit",
    "bash": "execute",
    "ipython": "execute",
    "grep": "search",
    "glob": "search",
    "ls": "search",
    "web_fetch": "fetch",
    "spawn": "think",
    "merge_child": "edit",
}
"""eukhe's tools as the protocol's kinds of tool call (an editor picks its icon); any other: other."""

SAID = frozenset(
    QUIET | {"text", "tool", "result", "denied", "calls", "ask", "outcome", "run", "usage", "todo"}
)
"""Events that are not said as eukhe's lines: the answer, the calls, the waits the status shows."""

Update = SessionUpdate | UsageUpdate
"""One of the protocol's session updates (the SDK's models)."""


def call_id(run: str | None, call: object) -> str:
    """A tool call's id in the editor: the run's and the call's (two runs of a session may
    both have a call `call_0`)."""
    return f"{run or ''}#{call}"


def _path(cwd: str, arguments: JsonMapping) -> str | None:
    p = arguments.get("path")
    return os.path.join(cwd, p) if isinstance(p, str) and p else None


def _started(e: Event, cwd: str) -> Update:
    name = str(e.data.get("name") or "")
    arguments = e.data.get("arguments")
    args: JsonMapping = arguments if isinstance(arguments, Mapping) else {}
    path = _path(cwd, args)
    content = []
    if name == "edit" and path is not None:
        content = [tool_diff_content(path, str(args.get("new_text") or ""), str(args.get("old_text") or ""))]
    elif name == "write" and path is not None:
        content = [tool_diff_content(path, str(args.get("content") or ""))]
    return start_tool_call(
        call_id(e.run, e.data.get("id")),
        e.text,
        kind=KINDS.get(name, "other"),
        status="in_progress",
        content=content or None,
        locations=[ToolCallLocation(path=path)] if path is not None else None,
        raw_input=dict(args) if args else None,
    )


def of_event(e: Event, cwd: str) -> Iterator[Update]:
    """What the editor is sent for one event of the session (as `events.seen_by` gives it)."""
    if e.type == "text":
        if e.text:
            yield update_agent_message_text(e.text)
    elif e.type == "tool":
        yield _started(e, cwd)
    elif e.type == "result":
        failed = bool(e.data.get("error"))
        yield update_tool_call(
            call_id(e.run, e.data.get("id")),
            status="failed" if failed else "completed",
            content=[tool_content(text_block(e.text))],
        )
    elif e.type == "denied":
        yield start_tool_call(
            call_id(e.run, e.data.get("id")),
            f"{e.data.get('tool', '')} (denied)",
            kind=KINDS.get(str(e.data.get("tool") or ""), "other"),
            status="failed",
            content=[tool_content(text_block(e.text))],
        )
    elif e.type == "todo":
        items = e.data.get("items")
        yield plan(items if isinstance(items, list) else [])
    elif e.type == "mode" and is_root(e.run or ""):  # the editor's mode picker follows plan mode
        mode = "plan" if e.data.get("plan") else str(e.data.get("mode") or "")
        if mode in ("plan", "read-only", "workspace-write"):
            yield update_current_mode(mode)
        yield line(e.type, e.text)
    elif e.type not in SAID and e.text:
        yield line(e.type, e.text)


STATUS: Mapping[str, PlanEntryStatus] = {
    "pending": "pending",
    "in_progress": "in_progress",
    "done": "completed",
}
"""A task's state as the protocol's plan entry has it."""


def line(kind: str, text: str) -> Update:
    """One of eukhe's own lines, as a thought chunk the editor shows beside the answer."""
    return update_agent_thought_text(f"[eukhe {kind}] {text}\n")


def plan(items: Sequence[object]) -> Update:
    """The session's task list (a `todo` event's items) as the protocol's `plan` update: the
    whole list each time, as the protocol wants it (an empty one clears it)."""
    return update_plan(
        plan_entry(str(i.get("text") or ""), status=STATUS.get(str(i.get("state")), "pending"))
        for i in items
        if isinstance(i, Mapping)
    )


def commands(made: SessionSetup) -> list[AvailableCommand]:
    """The session's prompt templates (`/name`) and skills (`/skill:name`), as the editor's
    slash commands: the prompt that starts with one runs it (`SessionSetup.expand`)."""
    out = [
        AvailableCommand(
            name=t.name,
            description=t.description or f"the prompt template {t.name}",
            input=AvailableCommandInput(root=UnstructuredCommandInput(hint=t.argument_hint or "arguments")),
        )
        for t in made.snapshot.prompts
    ]
    out += [AvailableCommand(name=f"skill:{k.name}", description=k.description) for k in made.snapshot.skills]
    return out


def replayed(messages: list[Message]) -> Iterator[Update]:
    """A stored session's conversation, as `session/load` sends it: the person's words, the
    answers, and each tool call with its result."""
    for m in messages:
        if m.role == "user":
            yield update_user_message_text(m.content)
        elif m.role == "assistant":
            if m.content:
                yield update_agent_message_text(m.content)
            for c in m.calls:
                yield start_tool_call(
                    call_id("", c.id), c.name, kind=KINDS.get(c.name, "other"), status="completed"
                )
        elif m.role == "tool":
            content = [tool_content(text_block(m.content))]
            yield update_tool_call(
                call_id("", m.call_id), status="failed" if m.is_error else "completed", content=content
            )
