"""What every format's reader shares: the diagnostics of a file, dates, and the
pairing of the user's words with the agent's final reply."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from eukhe.json_types import JsonValue
from eukhe.memory.imports._types import Diagnostic, Item

MAX_DIAGNOSTICS = 100
"""Diagnostics kept per file; past that they are counted in one last diagnostic."""


class Diagnostics:
    """The diagnostics of one file, at most MAX_DIAGNOSTICS of them kept."""

    def __init__(self, path: str, cap: int = MAX_DIAGNOSTICS) -> None:
        self.path = path
        self.cap = cap
        self._kept: list[Diagnostic] = []
        self._dropped = 0

    def add(self, message: str, line: int | None = None) -> None:
        if len(self._kept) < self.cap:
            self._kept.append(Diagnostic(self.path, message, line))
        else:
            self._dropped += 1

    def all(self) -> tuple[Diagnostic, ...]:
        if not self._dropped:
            return tuple(self._kept)
        more = Diagnostic(self.path, f"{self._dropped} more diagnostics not shown")
        return (*self._kept, more)

    def __len__(self) -> int:
        return len(self._kept) + self._dropped


class Unknown:
    """Lines of a type a reader does not know: the first of each type gets a
    diagnostic, the later ones are counted (a newer version of an agent may write
    a new type on every line)."""

    def __init__(self, diags: Diagnostics, what: str = "record type") -> None:
        self.diags = diags
        self.what = what
        self.seen: set[str] = set()
        self.later = 0

    def __call__(self, kind: str, line: int) -> None:
        if kind in self.seen:
            self.later += 1
            return
        self.seen.add(kind)
        self.diags.add(f"unknown {self.what} {kind!r}; skipped, as is every later line of it", line)

    def notes(self) -> tuple[str, ...]:
        if not self.later:
            return ()
        return (f"{self.later} more {'line' if self.later == 1 else 'lines'} of unknown types skipped",)


def iso_date(value: JsonValue) -> str | None:
    """A source timestamp as ISO 8601 in UTC (milliseconds), or None: an ISO 8601
    string (a trailing Z allowed), or a number of milliseconds since the epoch."""
    try:
        if isinstance(value, str) and value:
            when = datetime.datetime.fromisoformat(value)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            when = datetime.datetime.fromtimestamp(value / 1000, datetime.UTC)
        else:
            return None
    except (ValueError, OverflowError, OSError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return when.astimezone(datetime.UTC).isoformat(timespec="milliseconds")


class Transcript:
    """The user's words and, after each, the agent's final reply: the last text the
    agent wrote before the user's next words (or before the end of the file).
    Text the agent wrote before the user's first words in the file counts as a
    reply too (a file that starts mid-conversation)."""

    def __init__(self) -> None:
        self.items: list[Item] = []
        self._reply: Item | None = None
        self._group: object = None

    def user(self, text: str, key: str, date: str | None, line: int | None) -> None:
        self._flush()
        self.items.append(Item("user", text, key, date, line))

    def reply(self, text: str, key: str, date: str | None, line: int | None, group: object = None) -> None:
        """A text the agent wrote. One with the same non-None `group` as the pending
        reply (one message streamed as several records) is added to it; any other
        replaces it."""
        if group is not None and self._reply is not None and group == self._group:
            kept = self._reply
            self._reply = Item("talk", kept.text + "\n\n" + text, kept.key, date or kept.date, line)
            return
        self._reply = Item("talk", text, key, date, line)
        self._group = group

    def finish(self) -> tuple[Item, ...]:
        self._flush()
        return tuple(self.items)

    def _flush(self) -> None:
        if self._reply is not None:
            self.items.append(self._reply)
        self._reply = None
        self._group = None


@dataclass(frozen=True)
class Taken:
    """What a format's reader took from a file: the session's id (None if the file
    names none), the items in order, and counts of what it skipped on purpose."""

    session: str | None
    items: tuple[Item, ...]
    notes: tuple[str, ...] = ()


def text_of(value: JsonValue) -> str | None:
    """A string, stripped, or None when it is not a string or is blank."""
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def text_blocks(content: JsonValue, types: tuple[str, ...] = ("text",)) -> list[str]:
    """The non-blank texts of a content that is a string, or a list of blocks
    `{"type": one of types, "text": ...}` (other blocks: thinking, tool calls,
    images, passed over)."""
    if isinstance(content, str):
        return [t] if (t := text_of(content)) else []
    if not isinstance(content, list):
        return []
    found = []
    for block in content:
        if isinstance(block, dict) and block.get("type") in types and (t := text_of(block.get("text"))):
            found.append(t)
    return found
