"""Text from outside eukhe (a project's files and settings, an MCP server's names and
results, a model's answers and tool calls, a tool's output, an error that quotes any of
them) may hold escape sequences: a window title, the clipboard through OSC 52, a cleared
screen. A terminal acts on them, and so does the terminal that later shows a pipe's or a
log file's bytes (`cat`, `less -R`, `tail -f`). Such text is data: every face shows each
control character in it as its code (`\\x1b`), whatever its output is (a terminal, a pipe,
a file), so the person sees what was written and no terminal acts on it. Only eukhe's own
styling (its colors, its status line) is ever sent raw. The rule is written here once,
below every face (cli, ui, the owner's log); `--json` and `--events` escape in JSON's
own way (`json_text`)."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""C0 controls but tab and newline, ESC and CR among them; DEL; C1 (U+0080-U+009F: the
8-bit CSI and OSC of some terminals). An escape sequence starts with ESC or a C1, so
with that one character shown, the rest of it is plain text."""


def neutralized(text: str) -> str:
    """`text` with every control character a terminal would act on shown as `\\xNN`:
    the escape Python and C write, so it reads the same for C0, DEL and C1 (caret
    notation has no form for C1). Newline and tab stay (they only move the cursor on)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


_JSON_RAW = re.compile(r"[\x7f-\x9f]")
"""What JSON leaves raw that a terminal may act on: DEL and C1 (C0 it always escapes)."""


def json_text(text: str) -> str:
    """JSON text with DEL and C1 escaped as `\\u00XX` too: still the same JSON, and
    nothing in it a terminal acts on (json.dumps leaves DEL raw, and C1 too with
    ensure_ascii off)."""
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
