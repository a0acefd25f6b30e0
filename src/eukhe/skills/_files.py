"""Reading a candidate without ever waiting on it: regular files only, at most a
given number of bytes, as UTF-8 text."""

from __future__ import annotations

import codecs
import os
import stat
from dataclasses import dataclass

from eukhe.rules.skill_load import Read

LIMIT = 1 << 20
"""Bytes of a file read: a skill's frontmatter must end within them; a prompt
template or an ignore file must fit in them."""


@dataclass(frozen=True)
class Text:
    """A file's text (None when it could not be read), how the read went, why not,
    and whether the file holds more than was read."""

    text: str | None
    read: Read
    detail: str = ""
    cut: bool = False


def why(e: OSError) -> str:
    """An OS error as a message shows it: its reason, without the path (the diagnostic has it)."""
    return e.strerror or type(e).__name__


def read_text(path: str, limit: int = LIMIT) -> Text:
    """The first `limit` bytes of the file at `path` as text.

    Never blocks on a FIFO, a device or a socket: the file is opened without
    waiting and read only when it is a regular file. Never raises for a file the
    caller could meet: every failure is a `Read.FILE` with its reason."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        return Text(None, Read.FILE, why(e))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return Text(None, Read.FILE, "not a regular file")
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 16, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as e:
        return Text(None, Read.FILE, why(e))
    finally:
        os.close(fd)
    data = b"".join(chunks)
    cut = len(data) > limit
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        text = decoder.decode(data[:limit], final=not cut)
    except UnicodeDecodeError as e:
        return Text(None, Read.FILE, f"not UTF-8 text (byte {e.start})")
    return Text(text, Read.OK, cut=cut)
