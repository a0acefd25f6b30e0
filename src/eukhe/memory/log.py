"""The chat's log: every message of every root session, append-only.

A message is `{id, kind, text, size, date}`; `id` counts from 0 in the order the
store took the messages, `size` is the text's UTF-8 bytes. Kinds:

- `user`: the user's words, and the reports of subagents and background work
  (which start with `[id] `);
- `talk`: the agent's replies;
- `tool`: a tool call, as its name and JSON input;
- `echo`: a tool result, capped at CAP characters (head and tail kept);
- `note`: an imported memory.

Each append carries a key (a run's id and the message's place in it, or an
import's source and record), so a replayed step or a second import logs nothing
twice.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from enum import Enum

from eukhe.json_types import JsonValue


class EntryKind(Enum):
    USER = "user"
    TALK = "talk"
    TOOL = "tool"
    ECHO = "echo"
    NOTE = "note"


CAP = 30_000
"""Characters of a tool result the log keeps: its head and tail, and a mark where it was cut."""


@dataclass(frozen=True)
class Message:
    id: int
    kind: EntryKind
    text: str
    size: int  # UTF-8 bytes of `text`
    date: str  # ISO 8601, as the writer's clock had it


@dataclass(frozen=True)
class Entry:
    """A message to append: `key` makes the append idempotent."""

    key: str
    kind: EntryKind
    text: str
    date: str

    def json(self) -> dict[str, str]:
        """The entry as the owner's wire carries it."""
        return {"key": self.key, "kind": self.kind.value, "text": self.text, "date": self.date}

    @staticmethod
    def of(obj: JsonValue) -> Entry:
        """An entry from its JSON form; a malformed one raises KeyError or ValueError."""
        return Entry(str(obj["key"]), EntryKind(obj["kind"]), str(obj["text"]), str(obj["date"]))


def capped(text: str, cap: int = CAP) -> str:
    """`text` at most `cap` characters: head and tail kept, with a mark saying how
    much of the middle was cut."""
    if len(text) <= cap:
        return text
    keep = cap
    for _ in range(3):  # the mark's own length depends on the count it names
        mark = f"\n[… {len(text) - keep} characters cut …]\n"
        keep = max(cap - len(mark), 0)
    mark = f"\n[… {len(text) - keep} characters cut …]\n"
    tail = keep // 2
    return text[: keep - tail] + mark + (text[len(text) - tail :] if tail else "")


def tool_text(name: str, arguments: JsonValue) -> str:
    """A tool call as the log keeps it: its name and JSON input."""
    try:
        shown = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        shown = repr(arguments)
    return f"{name} {shown}"


def now() -> str:
    """A message's date: this writer's clock, UTC, ISO 8601 to the second."""
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
