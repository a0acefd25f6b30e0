"""`eukhe run`'s status line on a terminal: the interactive agent's (`ui.view.View.status`: what
the run waits for now, and the exit), on stderr, drawn over itself twice a second while the
run works. It steps aside for everything else: it is erased before any line or text is
written, and not drawn while streamed text has left a line unfinished. Into a pipe there is
none (`Printer` makes one only when stderr is a terminal).
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable
from typing import TextIO

from eukhe.display.view import View
from eukhe.events import Event
from eukhe.ids import is_root
from eukhe.terminal import neutralized

TICK = 0.5
"""Seconds between two drawings: its clocks count seconds."""


class StatusLine:
    def __init__(self, err: TextIO, lock: threading.Lock, mid: Callable[[], bool]) -> None:
        self._err = err
        self._lock = lock  # the printer's: a drawing never splits one of its writes
        self._mid = mid  # whether streamed text left a line unfinished
        self._view = View()
        self._shown = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def event(self, e: Event) -> None:
        """One event of the run (under the printer's lock)."""
        # the run's first event, whichever it is (its settle wait comes before its "run")
        if e.run is not None and is_root(e.run) and self._view.run is None and e.type != "outcome":
            self._view.started(e.run, None)
            self._start()
        self._view.add(e)
        self._view.take()  # its scrollback lines are the printer's to write
        if e.type == "outcome":
            self._view.ended()
            self._stop.set()

    def erase(self) -> None:
        """Off the screen, before anything else is written (under the printer's lock)."""
        if self._shown:
            self._err.write("\r\x1b[2K")
            self._err.flush()
            self._shown = False

    def draw(self) -> None:
        """Drawn over itself, unless streamed text left its line unfinished (under the lock)."""
        if self._mid() or self._view.run is None or self._stop.is_set():
            return
        width = max(shutil.get_terminal_size((80, 24)).columns - 1, 20)
        text = self._view.status()
        line = text if len(text) <= width else text[: width - 1] + "…"
        self._err.write("\r\x1b[2K\x1b[2m" + neutralized(line) + "\x1b[0m")
        self._err.flush()
        self._shown = True

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2 * TICK)

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._ticks, name="eukhe-status", daemon=True)
            self._thread.start()

    def _ticks(self) -> None:
        while not self._stop.wait(TICK):  # ends with the run's outcome, or the printer's close
            with self._lock:
                self.draw()
