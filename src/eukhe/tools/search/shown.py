"""How the search tools show what they found: paths as the model named them, lines cut, output
bounded, and every cut and stop said."""

from __future__ import annotations

import os
from pathlib import Path

from eukhe.rules.wait import End
from eukhe.tools.files import resolve, why
from eukhe.tools.search.engines import Found

__all__ = ["LINE_CUT", "Bounded", "cut", "ended", "root", "shown"]

LINE_CUT = 500
"""Characters of one line shown before it is cut."""


def shown(p: Path, cwd: Path) -> str:
    """`p` relative to the working directory when it is under it, else absolute."""
    try:
        return p.relative_to(cwd).as_posix()
    except ValueError:
        return str(p)


def cut(text: str) -> str:
    text = text.removesuffix("\r")
    return text if len(text) <= LINE_CUT else text[:LINE_CUT] + f" [… {len(text):,} characters]"


def root(path: str, cwd: Path) -> tuple[Path, str]:
    """The folder or file a search starts at, absolute, or why it cannot ('' when it can)."""
    p = resolve(path, cwd)
    try:
        os.stat(p)
    except OSError as e:
        return p, f"'{path}' cannot be searched: {why(e)}"
    return Path(os.path.abspath(p)), ""


class Bounded:
    """Lines of output up to `limit` characters; `full` once a line did not fit."""

    def __init__(self, limit: int) -> None:
        self.lines: list[str] = []
        self.limit = limit
        self.used = 0
        self.full = False

    def add(self, line: str) -> bool:
        if self.used + len(line) + 1 > self.limit and self.lines:
            self.full = True
            return False
        self.lines.append(line)
        self.used += len(line) + 1
        return True


def ended(found: Found, what: str, timeout: float) -> list[str]:
    """The notes on how a search ended short: its deadline, the run's abort, unreadable folders."""
    notes: list[str] = []
    end = found.ended.end if found.ended is not None else None
    if end is End.DEADLINE:
        notes.append(f"[{what} stopped after {timeout:g} s: what it found by then is shown]")
    if end is End.CANCEL:
        notes.append(f"[{what} was aborted: what it found by then is shown]")
    if found.ended is not None and found.ended.error is not None:
        notes.append(f"[{what} failed: {type(found.ended.error).__name__}: {found.ended.error}]")
    if found.walked.unreadable:
        first = found.walked.unreadable[0]
        more = len(found.walked.unreadable) - 1
        notes.append(f"[{first} could not be read{f', nor {more} more folders' if more else ''}]")
    return notes
