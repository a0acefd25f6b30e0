"""What a face shows of a session's events, with no terminal: how each event reads as a line
(`lines`) and the agent's view of a session as state (`view`), the scrollback's lines, the
streamed text, the status line. `eukhe run`'s printer and the interactive agent both draw
from here, so neither face imports the other."""

from eukhe.display.lines import MARKS, marked, printable, provider_line
from eukhe.display.view import PARTIAL, Line, Queued, View

__all__ = [
    "MARKS",
    "PARTIAL",
    "Line",
    "Queued",
    "View",
    "marked",
    "printable",
    "provider_line",
]
