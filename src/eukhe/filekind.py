"""What a file is, in words, from its mode: the one naming every refusal of an odd file
uses (a settings file, a file a tool would write, a session to import). Standard
library only, at the bottom of the house."""

from __future__ import annotations

import stat


def kind(mode: int) -> str:
    """What a file is, from its `st_mode` (as `os.lstat` or `os.fstat` gives it)."""
    for test, name in (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symlink loop (its links never reach a file)"),  # what realpath leaves of a loop
    ):
        if test(mode):
            return name
    return "not a regular file"
