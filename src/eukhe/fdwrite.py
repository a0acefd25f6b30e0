"""A whole buffer written to a file descriptor: `os.write` may write less than it is given (a
signal, a pipe or a disk near full), so every writer of whole files (the home's, the settings',
a tool's, a rewind's, the transcript's) goes on until all is written. Standard library only, at
the bottom of the house."""

from __future__ import annotations

import os


def write_all(fd: int, data: bytes) -> None:
    """Every byte of `data` to `fd`, in as many writes as it takes; an OSError as os.write raises it."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
