"""Images a person attaches to a prompt: `@shot.png`, a pasted image path, `eukhe run --image`.
Each is read here, once, as a regular file (a FIFO or a device is refused without blocking on
it), checked by its header (`ai.image`), and carried to the run by reference with its bytes
beside it, until `run.runtime.start` keeps them in the store's image table.

A path written inside the project is the project's: opened, then decided on by where it really
is (`ownfiles`), it never follows a link out of the project. One the person writes outside it
(absolute, from `~`, up with `..`) is theirs to attach, but never from /proc, /sys, /dev, a
process's folder, a secret place or eukhe's home.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from eukhe.ai.image import MAX_BYTES, Image, ImageError, image_of, too_big
from eukhe.home import home
from eukhe.ownfiles import Bound, Refused, named_bound, open_file, project_bound, read_at_most
from eukhe.rules.confine import under
from eukhe.tools.files import resolve, why

__all__ = ["SUFFIXES", "bound_for", "is_image_path", "pasted", "read_image", "written_inside"]

SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")
"""The names of the files taken as images (their header decides what they are)."""


def is_image_path(shown: str) -> bool:
    return shown.lower().endswith(SUFFIXES)


def bound_for(shown: str, cwd: Path) -> Bound:
    """The folder a file a person names (`@shown`, a pasted path) is read within: the project
    `cwd`, with no link out of it, when the path is written inside it; else wherever it is,
    but never in a place no prompt reads (`ownfiles.named_bound`)."""
    return project_bound(cwd, home()) if written_inside(shown, cwd) else named_bound(cwd, home())


def written_inside(shown: str, cwd: Path) -> bool:
    """Whether the path `shown` is written inside the project `cwd` (as written: `~` expanded,
    `..` taken, no link followed; where a link leads is `ownfiles`' to decide)."""
    lexical = os.path.normpath(os.path.join(cwd, os.path.expanduser(shown)))
    return under(lexical, os.path.normpath(os.path.abspath(cwd)))


def read_image(shown: str, cwd: Path) -> tuple[Image, bytes]:
    """The image at `shown` (relative to `cwd`, `~` expanded) and its bytes, or an ImageError:
    opened within `bound_for(shown, cwd)`, decided on by where it really is."""
    try:
        fd = open_file(resolve(shown, cwd), bound_for(shown, cwd))
    except Refused as e:
        raise ImageError(f"{shown}: {e}") from None
    except OSError as e:
        raise ImageError(f"{shown}: cannot be read: {why(e)}") from None
    try:
        if (big := too_big(shown, os.fstat(fd).st_size)) is not None:  # not read at all
            raise big
        data = read_at_most(fd, MAX_BYTES + 1)
    except OSError as e:
        raise ImageError(f"{shown}: cannot be read: {why(e)}") from None
    finally:
        os.close(fd)
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
