"""What reading a session file gives: items, diagnostics, and a report per file."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from eukhe.json_types import JsonObject

Kind = Literal["user", "talk"]


@dataclass(frozen=True)
class Format:
    """A session format: `name` as keys and reports use it, `label` as people read it."""

    name: str
    label: str


EUKHE = Format("eukhe", "eukhe")
CLAUDE = Format("claude-code", "Claude Code")
CODEX = Format("codex", "Codex")
PI = Format("pi", "pi")
FORMATS: tuple[Format, ...] = (EUKHE, CLAUDE, CODEX, PI)


@dataclass(frozen=True)
class Item:
    """One thing worth logging: the user's words (`user`) or the agent's final reply
    to them (`talk`). `key` is stable across imports of the same file (format, the
    session's identity, the record's id or line), so the chat's idempotent append
    logs it once. `date`: the source's timestamp as ISO 8601 in UTC, or None when
    the source has none. `line`: the source line it came from (None for eukhe's
    whole-document export)."""

    kind: Kind
    text: str
    key: str
    date: str | None
    line: int | None = None

    def json(self) -> JsonObject:
        return {"kind": self.kind, "text": self.text, "key": self.key, "date": self.date, "line": self.line}


@dataclass(frozen=True)
class Diagnostic:
    """Something in a file that was not taken, and why. `path` as the caller gave it;
    `line` when one line is at fault."""

    path: str
    message: str
    line: int | None = None

    @property
    def text(self) -> str:
        """One line for a person: `path: line N: message`, or `path: message`."""
        where = f"{self.path}: line {self.line}" if self.line is not None else self.path
        return f"{where}: {self.message}"

    def __str__(self) -> str:
        return self.text

    def json(self) -> JsonObject:
        return {"path": self.path, "line": self.line, "message": self.message}


@dataclass(frozen=True)
class FileReport:
    """What was taken from one file. `refused`: nothing was read, because the file
    could not be read or is not a session of a known format; `diagnostics[0]` says
    why. Otherwise `items` are in the file's order and `diagnostics` name every
    line that was skipped for a fault."""

    path: str
    format: Format | None
    session: str | None = None
    items: tuple[Item, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    refused: bool = False
    notes: tuple[str, ...] = field(default=())  # what was skipped on purpose, counted
    faults: int | None = None  # diagnostics in all, those past the cap included (None: len(diagnostics))

    @property
    def users(self) -> int:
        return sum(1 for i in self.items if i.kind == "user")

    @property
    def replies(self) -> int:
        return sum(1 for i in self.items if i.kind == "talk")

    @property
    def summary(self) -> str:
        """One line for the CLI: what was taken from the file, or why nothing was."""
        if self.refused:
            return self.diagnostics[0].text if self.diagnostics else f"{self.path}: not read"
        assert self.format is not None
        what = f"{self.format.label} session" + (f" {self.session}" if self.session else "")
        took = f"{plural(self.users, 'user message')}, {plural(self.replies, 'reply', 'replies')}"
        faults = len(self.diagnostics) if self.faults is None else self.faults
        tail = f"; {plural(faults, 'diagnostic')}" if faults else ""
        notes = f" ({'; '.join(self.notes)})" if self.notes else ""
        return f"{self.path}: {what}: {took}{tail}{notes}"

    def json(self) -> JsonObject:
        return {
            "path": self.path,
            "format": self.format.name if self.format else None,
            "session": self.session,
            "refused": self.refused,
            "users": self.users,
            "replies": self.replies,
            "items": [i.json() for i in self.items],
            "diagnostics": [d.json() for d in self.diagnostics],
            "notes": list(self.notes),
        }


def plural(n: int, one: str, many: str | None = None) -> str:
    """`n` and the noun, singular or plural."""
    return f"{n} {one if n == 1 else (many or one + 's')}"
