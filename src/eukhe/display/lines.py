"""How each kind of event reads as a line, for every printer of lines: `eukhe run`
and the interactive agent's scrollback mark and style them the same way."""

from __future__ import annotations

from eukhe.admission import UNLIMITED
from eukhe.json_types import JsonMapping
from eukhe.terminal import neutralized

MARKS = {
    "calls": ("→ calls", "cyan"),
    "tool": ("  tool", "dim"),
    "result": ("  ←", "dim"),
    "note": ("↻ note", "yellow"),
    "retry": ("⏳ retry", "magenta"),
    "interrupted": ("⚠ interrupted", "red"),
    "denied": ("⛔ denied", "red"),
    "ask": ("? ask", "yellow"),
    "mode": ("⏸ mode", "cyan"),
    "diagnostic": ("⚠ not loaded", "yellow"),
    "sandbox": ("⚠ sandbox", "yellow"),
    "cut": ("✂ cut", "yellow"),
    "memory": ("◷", "dim"),
    "compact": ("⇣ compact", "yellow"),
    "notice": ("ⓘ notice", "yellow"),
    "lease": ("⧗ lease", "yellow"),
    "slot": ("⧗ slot", "yellow"),
    "child": ("⑂ child", "cyan"),
    "steer": ("↳ steer", "cyan"),
    "todo": ("☐ tasks", "cyan"),
    "say": ("·", "dim"),
}
"""How each kind of line is marked and styled."""

LINE = 400
"""Characters a line shows at most (a tool's arguments can be long)."""


BARE = frozenset({"result", "say", "memory"})
"""Kinds whose mark is a sign, not a word: no colon after it."""


def marked(kind: str, text: str) -> tuple[str, str]:
    """The line of an event of `kind` and its style: its mark, then its text, cut to LINE."""
    mark, style = MARKS.get(kind, (kind, ""))
    line = f"{mark} {text}" if kind in BARE else f"{mark}: {text}"
    return (line if len(line) <= LINE else line[: LINE - 1] + "…"), style


def printable(text: str) -> str:
    """Text as the interactive agent's view shows it: tabs as spaces, and every other
    control character (an escape sequence in a model's text or a tool's output) shown as
    its code, never sent to the terminal to act on (eukhe.terminal's one rule)."""
    return neutralized(text.expandtabs(4))


def provider_line(name: str, p: JsonMapping) -> str:
    """A provider's slots in the owner's status, in words: held against its limit ("no
    limit" for a provider with none set), and what is queued in each class."""
    limit = p.get("limit")
    of = "no limit" if not isinstance(limit, int) or limit >= UNLIMITED else f"a limit of {limit}"
    q = p.get("queued") or {}
    return (
        f"provider {name}: {p.get('held', 0)} slots held ({of}), "
        f"{q.get('interactive', 0)} interactive and {q.get('background', 0)} background queued"
    )
