"""Reading a candidate without ever waiting on it: regular files only, within the folder
it belongs to (`ownfiles`: a project's file never follows a link out of the project, and
nothing is read in /proc, /sys, /dev or a secret place), at most a given number of bytes,
as UTF-8 text."""

from __future__ import annotations

import codecs
import os
from dataclasses import dataclass

from eukhe.ownfiles import Bound, Refused, open_file, read_at_most
from eukhe.rules.skill_load import Read

LIMIT = 1 << 20
"""Bytes of a file read: a skill's frontmatter must end within them; a prompt
template or an ignore file must fit in them."""


@dataclass(frozen=True)
class Text:
    """A file's text (None when it could not be read), how the read went, why not,
    whether the file holds more than was read, and its size in bytes (as it was opened)."""

    text: str | None
    read: Read
    detail: str = ""
    cut: bool = False
    size: int = 0


def why(e: OSError) -> str:
    """An OS error as a message shows it: its reason, without the path (the diagnostic has it)."""
    return e.strerror or type(e).__name__


def read_text(path: str, bound: Bound, limit: int = LIMIT) -> Text:
    """The first `limit` bytes of the file at `path` as text, opened within `bound`
    (`ownfiles.open_file`: decided on the object opened, by its real path).

    Never blocks on a FIFO, a device or a socket. Never raises for a file the caller could
    meet: every failure, and every refusal (a link out of its folder, a pseudo-file, a
    secret place, not a regular file), is a `Read.FILE` with its reason."""
    try:
        fd = open_file(path, bound)
    except Refused as e:
        return Text(None, Read.FILE, str(e))
    except OSError as e:
        return Text(None, Read.FILE, why(e))
    try:
        size = os.fstat(fd).st_size
        data = read_at_most(fd, limit + 1)
    except OSError as e:
        return Text(None, Read.FILE, why(e))
    finally:
        os.close(fd)
    cut = len(data) > limit
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        text = decoder.decode(data[:limit], final=not cut)
    except UnicodeDecodeError as e:
        return Text(None, Read.FILE, f"not UTF-8 text (byte {e.start})")
    return Text(text, Read.OK, cut=cut, size=max(size, len(data)))
