"""pi sessions (the pi coding agent, badlogic/pi-mono, earendil-works/pi):
`~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl`.

The first line is the header `{"type": "session", "id", "version", "cwd", …}`;
each later line an entry with a `type`. Since version 2 entries carry an 8-hex
`id` and a `parentId`: they form a tree, and going back with /tree leaves the
old branch in the file. Version 1 entries have no id.

What is taken, in the file's order (every branch, the abandoned ones too):

- The user's words: `message` entries of role `user` (`content`, a string or
  text blocks, joined).
- The final reply: the text blocks of the last `message` entry of role
  `assistant` before the user's next words. pi writes an assistant message
  whole, one entry, once it has ended (even one that stopped with an error or
  was aborted: its text is what the agent wrote).

What is skipped: tool results (`toolResult`), `!` shell commands
(`bashExecution`), extensions' messages (`custom`, `hookMessage`) and entries
(`custom`, `custom_message`), summaries (`branchSummary`, `compactionSummary`
messages, `compaction` and `branch_summary` entries), thinking and tool-call
blocks, and the model, thinking-level, label and session-name changes. pi has
no subagents of its own: an extension that runs one starts another pi whose
session is another file.

Keys are `pi:<session id>:<entry id>`, or `pi:<session id>:line<N>` for a
version-1 entry.
"""

from __future__ import annotations

from typing import IO

from eukhe.json_types import JsonValue
from eukhe.memory.imports._common import Diagnostics, Taken, Transcript, Unknown, iso_date, text_blocks
from eukhe.memory.imports._lines import records

TYPES = frozenset(
    {
        "session",
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
    }
)
"""Entry types pi writes; only `message` carries words."""

ROLES = frozenset(
    {
        "user",
        "assistant",
        "toolResult",
        "bashExecution",
        "custom",
        "hookMessage",
        "branchSummary",
        "compactionSummary",
    }
)


def read(f: IO[bytes], ident: str, diags: Diagnostics) -> Taken:
    transcript = Transcript()
    session: str | None = None
    unknown = Unknown(diags, "entry type")
    roles = Unknown(diags, "message role")
    for line, d in records(f, diags):
        kind = d.get("type")
        if not isinstance(kind, str):
            diags.add("a record with no type; skipped", line)
            continue
        if kind not in TYPES:
            unknown(kind, line)
            continue
        if kind == "session":
            if session is None and isinstance(d.get("id"), str) and d["id"]:
                session = d["id"]
            continue
        if kind != "message":
            continue
        message = d.get("message")
        if not isinstance(message, dict):
            diags.add("a message entry without a message object; skipped", line)
            continue
        role = message.get("role")
        if role not in ROLES:
            roles(role if isinstance(role, str) else repr(role), line)
            continue
        if role not in ("user", "assistant"):
            continue
        entry = d.get("id") if isinstance(d.get("id"), str) and d.get("id") else f"line{line}"
        key = f"pi:{session or ident}:{entry}"
        date = iso_date(d.get("timestamp")) or iso_date(message.get("timestamp"))
        text = _text(message.get("content"))
        if text is None:
            continue
        if role == "user":
            transcript.user(text, key, date, line)
        else:
            transcript.reply(text, key, date, line)
    return Taken(session, transcript.finish(), (*unknown.notes(), *roles.notes()))


def _text(content: JsonValue) -> str | None:
    return "\n\n".join(text_blocks(content)) or None
