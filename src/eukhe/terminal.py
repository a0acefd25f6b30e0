"""Text bound for a terminal: a model's, a tool's or an imported session's text may hold
escape sequences (a window title, the clipboard through OSC 52, a cleared screen), and a
terminal acts on them. Every face that prints such text shows each control character as
its code instead (`\\x1b`), so the person sees what was written and the terminal does
nothing. The rule is written here once, below every face (cli and ui both use it)."""

from __future__ import annotations

import re
from typing import TextIO

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""C0 controls but tab and newline, ESC among them; DEL; C1 (U+0080-U+009F, CSI and OSC
of their own in some terminals)."""


def neutralized(text: str) -> str:
    """`text` with every control character a terminal would act on shown as `\\xNN`;
    newline and tab stay (they only move the cursor on)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def is_terminal(stream: TextIO) -> bool:
    """Whether `stream` is a terminal (a closed or detached stream is not)."""
    try:
        return stream.isatty()
    except (ValueError, OSError):
        return False


def for_stream(text: str, stream: TextIO) -> str:
    """`text` as `stream` should get it: neutralized on a terminal; into a file or a pipe
    as it is (an answer piped into a file keeps the bytes the model gave)."""
    return neutralized(text) if is_terminal(stream) else text


_JSON_RAW = re.compile(r"[\x7f-\x9f]")
"""What JSON leaves raw that a terminal may act on: DEL and C1 (C0 it always escapes)."""


def json_text(text: str) -> str:
    """JSON text with DEL and C1 escaped as `\\u00XX` too: still the same JSON, and
    nothing in it a terminal acts on (json.dumps leaves them raw with ensure_ascii off)."""
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
