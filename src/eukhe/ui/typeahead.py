"""What a person types while the interactive agent starts, kept until its prompt reads it.

From `eukhe`'s first step on, the terminal holds the keys as they are typed, Enter as
Enter (its own raw bytes, as the prompt reads them, not the line the terminal would
cook), shown in the prompt once it is drawn, which then acts on them in order. Before
that, only the terminal's own echo shows what was typed before eukhe could take hold.

A question asked at the start (the folder's trust, an instruction file a run changed)
takes only what is typed after it is shown: what was typed before is kept for the prompt,
never an answer to a question it was not typed for.

Light on purpose: the command's first step takes hold with it, before the agent's imports."""

from __future__ import annotations

import contextlib
import os
import select
import sys
import termios
from typing import Any

PASTE_ON, PASTE_OFF = "\x1b[?2004h", "\x1b[?2004l"
"""Bracketed paste: a paste while it starts stays one paste (its newlines send nothing)."""

_IFLAG, _LFLAG, _CC = 0, 3, 6  # termios attribute list's slots


class TypeAhead:
    """The terminal on `fd` held: its keys kept as typed, not echoed, until the agent's
    prompt reads them (`take`); a question in between reads a line of its own (`ask`)."""

    def __init__(self, fd: int, found: list[Any]) -> None:
        self.fd = fd
        self.found = found  # the terminal as eukhe found it (termios' attributes): given back by `restore`
        self.kept = bytearray()
        self.held = False
        self._hold()

    @classmethod
    def open(cls) -> TypeAhead | None:
        """Hold the standard input's terminal, when standard input and output are one's."""
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            return None
        fd = sys.stdin.fileno()
        try:
            found = termios.tcgetattr(fd)
        except termios.error:
            return None
        return cls(fd, found)

    def take(self) -> bytes:
        """All typed so far, in order (what the terminal still holds too), taken."""
        self._drain(cooked=not self.held)
        out = bytes(self.kept)
        self.kept.clear()
        return out

    def ask(self, question: str) -> str:
        """A line answering `question` (as `input`): only what is typed once it is
        shown; what was typed before stays kept for the prompt."""
        self._drain(cooked=False)
        self._set(self.found)
        self.held = False
        _write(PASTE_OFF)
        try:
            return input(question)
        finally:
            self._hold()

    def restore(self) -> None:
        """The terminal as eukhe found it (echo, lines): at the agent's end, or a start
        that failed. What it held and no prompt read is dropped."""
        if self.held:
            self._set(self.found)
            self.held = False
            _write(PASTE_OFF)

    def _hold(self) -> None:
        """The keys kept as typed from now on; what the terminal cooked before is kept
        as it was typed (its lines' Enter as Enter)."""
        held = [*self.found[:_CC], list(self.found[_CC]), *self.found[_CC + 1 :]]  # its control chars copied
        # as the prompt reads them: no echo, no lines, CR not made NL, no flow control;
        # Ctrl-C and Ctrl-Z still stop a start
        held[_IFLAG] = self.found[_IFLAG] & ~(
            termios.ICRNL | termios.INLCR | termios.IGNCR | termios.IXON | termios.IXOFF
        )
        held[_LFLAG] = self.found[_LFLAG] & ~(termios.ECHO | termios.ICANON | termios.IEXTEN)
        held[_CC][termios.VMIN], held[_CC][termios.VTIME] = 1, 0
        self._set(held)
        self.held = True
        _write(PASTE_ON)
        self._drain(cooked=True)

    def _drain(self, cooked: bool) -> None:
        """What the terminal holds now, into `kept`; `cooked`: typed while it made lines,
        whose Enter it turned into a newline (ICRNL), which is Enter again here."""
        got = bytearray()
        with contextlib.suppress(OSError, ValueError):
            while select.select([self.fd], [], [], 0)[0]:
                chunk = os.read(self.fd, 4096)
                if not chunk:
                    break
                got += chunk
        if cooked and self.found[_IFLAG] & termios.ICRNL:
            got = bytearray(got.replace(b"\n", b"\r"))
        self.kept += got

    def _set(self, attrs: list[Any]) -> None:
        with contextlib.suppress(termios.error):  # a terminal gone: nothing to hold
            termios.tcsetattr(self.fd, termios.TCSANOW, attrs)


def _write(code: str) -> None:
    with contextlib.suppress(OSError, ValueError):  # a terminal gone
        sys.stdout.write(code)
        sys.stdout.flush()
