"""`eukhe` with its output on a real pseudo-terminal: what reaches the terminal is read
from the pty's master side, byte for byte, as a terminal would receive it."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import threading
import tty
from dataclasses import dataclass
from pathlib import Path

from tests import forks

DEADLINE = 120.0  # seconds one command may take
HANDED = Path(__file__).parents[1] / "handed.py"


@dataclass(frozen=True)
class Shown:
    terminal: str  # what reached the pty (stderr, and stdout when it is on the pty too)
    piped: str | None  # stdout, when it went to a pipe instead
    code: int


def on_pty(
    *args: str, cwd: Path, stdout_piped: bool = False, extra: dict[str, str] | None = None, own: bool = False
) -> Shown:
    """Run `eukhe ARGS` with stderr (and stdout, unless `stdout_piped`) on a pty, forked by the
    worker's template (`tests/handed.py`); `own`: as `python -m eukhe`, a process of its own
    (as the home's own hand-off needs); `extra`: more of its environment."""
    master, slave = pty.openpty()
    tty.setraw(slave)  # no newline translation: the bytes written are the bytes read
    got: list[bytes] = []

    def read() -> None:
        while True:
            try:
                piece = os.read(master, 4096)
            except OSError:  # EIO: every writer of the slave side has closed it
                return
            if not piece:
                return
            got.append(piece)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    env = {**os.environ, "EUKHE_HOME": str(cwd / "home"), "TERM": "xterm-256color", **(extra or {})}
    try:
        p = subprocess.Popen(
            [sys.executable, "-m", "eukhe", *args]
            if own
            else [sys.executable, str(HANDED), forks.template().path, *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if stdout_piped else slave,
            stderr=slave,
        )
    finally:
        os.close(slave)  # the child holds its own copy; EOF comes when it (and its heirs) close theirs
    piped, _ = p.communicate(timeout=DEADLINE)
    reader.join(timeout=DEADLINE)
    os.close(master)
    return Shown(b"".join(got).decode("utf-8"), piped.decode("utf-8") if stdout_piped else None, p.returncode)


STATUS = re.compile(r"\r\x1b\[2K(?:\x1b\[2m[^\x1b\r\n]*\x1b\[0m)?")
"""`eukhe run`'s own status line (`cli.status_line`): erased and drawn over itself. Its text
is neutralized as every other's, so it holds no control of its own (none can hide in it)."""


def controls(text: str) -> list[str]:
    """The characters of `text` a terminal would act on: C0 controls but newline and tab,
    DEL and C1 (ESC, BEL and the 8-bit CSI and OSC among them: every escape sequence
    starts with one, and BEL ends an OSC)."""
    return [c for c in text if (c < " " and c not in "\n\t") or "\x7f" <= c <= "\x9f"]


def acting(text: str) -> list[str]:
    """`controls` of what reached a terminal, eukhe's own status line aside."""
    return controls(STATUS.sub("", text))
