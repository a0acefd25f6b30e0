"""How each kind of event reads as a line, for every printer of lines: `eukhe run`
and the interactive agent's scrollback mark and style them the same way."""

from __future__ import annotations

MARKS = {
    "calls": ("→ calls", "cyan"),
    "tool": ("  tool", "dim"),
    "result": ("  ←", "dim"),
    "note": ("↻ note", "yellow"),
    "retry": ("⏳ retry", "magenta"),
    "interrupted": ("⚠ interrupted", "red"),
    "diagnostic": ("⚠ not loaded", "yellow"),
    "cut": ("✂ cut", "yellow"),
    "memory": ("◷", "dim"),
    "compact": ("⇣ compact", "yellow"),
    "notice": ("ⓘ notice", "yellow"),
    "lease": ("⧗ lease", "yellow"),
    "slot": ("⧗ slot", "yellow"),
    "child": ("⑂ child", "cyan"),
    "steer": ("↳ steer", "cyan"),
    "say": ("·", "dim"),
}
"""How each kind of line is marked and styled."""

LINE = 400
"""Characters a line shows at most (a tool's arguments can be long)."""


def marked(kind: str, text: str) -> tuple[str, str]:
    """The line of an event of `kind` and its style: its mark, then its text, cut to LINE."""
    mark, style = MARKS.get(kind, (kind, ""))
    line = f"{mark}: {text}" if mark != "·" else f"{mark} {text}"
    return (line if len(line) <= LINE else line[: LINE - 1] + "…"), style
