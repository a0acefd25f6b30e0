"""How a eukhe process ends once its work is done: its output flushed, then at once.

The interpreter's own ending joins every thread left (DBOS's, a store client's) and
tears down every module (about 0.3 s after DBOS, SQLAlchemy and the SDKs are
imported), and does nothing a command still needs: each command has closed its
files and recorded what it did by then, and a run left in flight is the owner's or
`eukhe resume`'s, as after a kill. The runtime (`runtime.py`) and the command's
entry (`cli/entry.py`) leave through here; nothing else in the command line ends
the process."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import NoReturn


def leave(code: int) -> NoReturn:
    """End the process now with `code`, its standard output and error flushed (a
    reader that went away loses what was left, as it would anyway)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe, a closed stream
            stream.flush()
    os._exit(code)


def exit_code(code: object) -> int:
    """The code `SystemExit(code)` ends a process with: None is 0, a number itself, and
    anything else is printed to standard error and is 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1
