"""Codex CLI rollouts: `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`.

Each line is `{"timestamp", "type", "payload"}`; `type` is `session_meta` (the
session's id, first), `response_item` (what the model saw: messages, reasoning,
tool calls and their output), `event_msg` (what the UI showed), `turn_context`
or `compacted`. Rollouts before Codex 0.44 have no envelope: a first line
`{"id", "timestamp", "instructions"}`, then bare response items and
`{"record_type": "state"}` lines.

What is taken:

- The user's words: the `user_message` events (`payload.message`), exactly what
  the user typed. A rollout with no such event (an old one) takes the
  `response_item` messages of role `user` instead, without the parts Codex adds
  itself (`<environment_context>`, `# AGENTS.md instructions …`,
  `<user_instructions>`, …).
- The final reply: the text (`output_text`) of the last `response_item` message
  of role `assistant` before the user's next words, whatever its `phase`
  (`commentary` or `final_answer`): a turn cut short ends on its last commentary.
  A rollout with no such item takes the `agent_message` events instead.

What is skipped: reasoning, tool calls and their output, developer and system
messages, every other event, turn contexts, compaction summaries; and a whole
rollout whose `session_meta` says it is a sub-agent's (`source.subagent`).

Keys are `codex:<session id>:line<N>`: rollouts are only appended to, so a line
keeps its number.
"""

from __future__ import annotations

from typing import IO

from eukhe.json_types import JsonObject, JsonValue
from eukhe.memory.imports._common import (
    Diagnostics,
    Taken,
    Transcript,
    Unknown,
    iso_date,
    text_blocks,
    text_of,
)
from eukhe.memory.imports._lines import records

TYPES = frozenset(
    {
        "session_meta",
        "response_item",
        "event_msg",
        "turn_context",
        "compacted",
        "world_state",
        "inter_agent_communication_metadata",
    }
)
"""The envelope types of a rollout line."""

INJECTED = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions for ",
    "<INSTRUCTIONS>",
    "<permissions instructions>",
    "<collaboration_mode>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagent_notification>",
    "<skill>",
)
"""How the user-role parts begin that Codex adds to the context itself."""

Said = tuple[int, str, str | None]  # line, text, date


def read(f: IO[bytes], ident: str, diags: Diagnostics) -> Taken:
    session: str | None = None
    subagent = False
    metas = 0
    user_events: list[Said] = []
    user_items: list[Said] = []
    agent_events: list[Said] = []
    agent_items: list[Said] = []
    unknown = Unknown(diags)
    for line, d in records(f, diags):
        kind = d.get("type")
        payload = d.get("payload")
        date = iso_date(d.get("timestamp"))
        if isinstance(kind, str) and isinstance(payload, dict):
            if kind not in TYPES:
                unknown(kind, line)
                continue
            if kind == "session_meta":
                metas += 1
                if metas == 1:
                    session = payload.get("id") if isinstance(payload.get("id"), str) else None
                    source = payload.get("source")
                    subagent = isinstance(source, dict) and "subagent" in source
            elif kind == "event_msg":
                said = text_of(payload.get("message"))
                if payload.get("type") == "user_message" and said:
                    user_events.append((line, said, date))
                elif payload.get("type") == "agent_message" and said:
                    agent_events.append((line, said, date))
            elif kind == "response_item":
                _item(payload, line, date, user_items, agent_items)
            continue
        if "record_type" in d:  # an old rollout's state line
            continue
        if isinstance(kind, str):  # an old rollout's bare response item
            _item(d, line, date, user_items, agent_items)
            continue
        if session is None and metas == 0 and isinstance(d.get("id"), str):  # an old rollout's first line
            metas += 1
            session = d["id"]
            continue
        diags.add("a record with no type; skipped", line)
    if subagent:
        note = "the file is a Codex sub-agent's rollout (session_meta source: subagent): nothing is taken"
        return Taken(session, (), (note, *unknown.notes()))
    users = user_events or user_items
    agents = agent_items or agent_events
    order = sorted([("user", *u) for u in users] + [("talk", *a) for a in agents], key=lambda s: s[1])
    transcript = Transcript()
    who = session or ident
    for kind, line, text, date in order:
        key = f"codex:{who}:line{line}"
        if kind == "user":
            transcript.user(text, key, date, line)
        else:
            transcript.reply(text, key, date, line)
    return Taken(session, transcript.finish(), unknown.notes())


def _item(payload: JsonObject, line: int, date: str | None, users: list[Said], agents: list[Said]) -> None:
    if payload.get("type") != "message":
        return
    role = payload.get("role")
    content = payload.get("content")
    if role == "user":
        parts = [t for t in _texts(content) if not t.startswith(INJECTED)]
        if parts:
            users.append((line, "\n\n".join(parts), date))
    elif role == "assistant":
        parts = list(_texts(content))
        if parts:
            agents.append((line, "\n\n".join(parts), date))


def _texts(content: JsonValue) -> list[str]:
    return text_blocks(content, ("input_text", "output_text", "text"))
