"""The project's files for `@` completion at the prompt: the search tools' walk (hidden and
ignored files left out, as `glob` sees them), bounded, and read again only when it is a few
seconds old, so typing stays quick on a large tree."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from eukhe.tools.search.walk import Walked, walk

__all__ = ["Files"]

MAX_FILES = 20_000
"""Files walked at most: a larger tree completes from its first ones (type a deeper path)."""

FRESH = 5.0
"""Seconds a walk is reused before the tree is walked again."""

SHOWN = 30
"""Completions offered at most."""


class Files:
    def __init__(self, cwd: Path, clock: Callable[[], float] = time.monotonic) -> None:
        self.cwd = cwd
        self.clock = clock
        self._paths: list[str] = []
        self._at: float | None = None

    def paths(self) -> list[str]:
        now = self.clock()
        if self._at is None or now - self._at > FRESH:
            self._paths = [p.relative_to(self.cwd).as_posix() for p in walk(self.cwd, Walked(), MAX_FILES)]
            self._at = now
        return self._paths

    def complete(self, typed: str) -> list[str]:
        """The paths for what follows an `@`: those that start with it first, then those that
        hold it, each list in walk order."""
        paths = self.paths()
        first = [p for p in paths if p.startswith(typed)]
        more = [p for p in paths if typed.lower() in p.lower() and not p.startswith(typed)] if typed else []
        return (first + more)[:SHOWN]
