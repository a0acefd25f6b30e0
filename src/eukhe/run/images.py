"""Images a person attaches to a prompt: `@shot.png`, a pasted image path, `eukhe run --image`.
Each is read here, once, as a regular file (a FIFO or a device is refused without blocking on
it), checked by its header (`ai.image`), and carried to the run by reference with its bytes
beside it, until `run.driver.start` keeps them in the store's image table.
"""

from __future__ import annotations

import os
import shlex
import stat
from pathlib import Path

from eukhe.ai.image import MAX_BYTES, Image, ImageError, image_of, too_big
from eukhe.filekind import kind
from eukhe.tools.files import links_out, resolve, why

__all__ = ["SUFFIXES", "is_image_path", "pasted", "read_image"]

SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")
"""The names of the files taken as images (their header decides what they are)."""


def is_image_path(shown: str) -> bool:
    return shown.lower().endswith(SUFFIXES)


def read_image(shown: str, cwd: Path) -> tuple[Image, bytes]:
    """The image at `shown` (relative to `cwd`, `~` expanded) and its bytes, or an ImageError."""
    if (target := links_out(shown, cwd)) is not None:
        raise ImageError(f"{shown}: it is a link that leads outside the project (to {target})")
    path = resolve(shown, cwd)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise ImageError(f"{shown}: cannot be read: {why(e)}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ImageError(f"{shown}: {kind(st.st_mode)}, not an image file")
        if (big := too_big(shown, st.st_size)) is not None:  # not read at all
            raise big
        chunks, left = [], MAX_BYTES + 1
        while left > 0:
            got = os.read(fd, min(left, 1 << 20))
            if not got:
                break
            chunks.append(got)
            left -= len(got)
    except OSError as e:
        raise ImageError(f"{shown}: cannot be read: {why(e)}") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    return image_of(data, shown), data


def pasted(typed: str, cwd: Path) -> list[str]:
    """The image files a prompt names by a pasted path (a terminal pastes a dropped file as its
    path, quoted or with its spaces escaped): each word that is a path to an existing image
    file, absolute, from `~` or from `./`, in order, each once."""
    try:
        words = shlex.split(typed)
    except ValueError:  # an unmatched quote: plain words
        words = typed.split()
    out: list[str] = []
    for w in words:
        if w.startswith(("/", "~", "./")) and is_image_path(w) and w not in out and resolve(w, cwd).is_file():
            out.append(w)
    return out
