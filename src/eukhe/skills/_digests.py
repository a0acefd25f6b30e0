"""The digests of the instruction files a session would load (`rules.instructed`), taken
at a run's start and end and at a session's start: every `AGENTS.md` and `CLAUDE.md` of
the folders a session in `cwd` loads from (`_instructions.folders`), whether there or not,
so a file that appears (a `CLAUDE.md` beside none, an `AGENTS.md` that then loads instead
of the `CLAUDE.md` beside it) counts as much as one that changes.

Each is read as the loader reads it (`ownfiles.open_file`): never following a link out of
its folder, never waiting on a FIFO, regular files only; at most `DIGEST_BYTES` of it (a
longer file's size is in its digest too). A file that is there and is not read so has the
digest `UNREAD`: it does not load either."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from eukhe.ownfiles import Bound, Refused, open_file, read_at_most
from eukhe.rules.instructed import UNREAD
from eukhe.skills._files import read_text
from eukhe.skills._instructions import NAMES, file_key, folders, repository_root

DIGEST_BYTES = 1 << 20
"""Bytes of a file its digest reads: 32 times what a system prompt holds of all of them by
default (`context.instructionsBytes`)."""


def project(cwd: Path) -> Path:
    """The project whose files a session in `cwd` loads: the repository's root, else `cwd`."""
    return repository_root(cwd) or cwd


def watched(home: Path, cwd: Path) -> list[tuple[Path, Bound]]:
    """Every instruction file a session in `cwd` would load, were it there, with the folder
    it is read within."""
    return [(folder / name, bound) for folder, bound in folders(home, cwd) for name in NAMES]


def digest(path: Path, bound: Bound) -> str | None:
    """The file's digest (`sha256:HEX`), `UNREAD` when it is there but is not read, None
    when there is none."""
    if not os.path.lexists(path):
        return None
    try:
        fd = open_file(path, bound)
    except FileNotFoundError:
        return None
    except (Refused, OSError):
        return UNREAD
    try:
        data = read_at_most(fd, DIGEST_BYTES + 1)
        size = os.fstat(fd).st_size
    except OSError:
        return UNREAD
    finally:
        os.close(fd)
    h = hashlib.sha256(data[:DIGEST_BYTES])
    if len(data) > DIGEST_BYTES:  # longer than read: its size stands for the rest
        h.update(f"\0{size}".encode())
    return f"sha256:{h.hexdigest()}"


def digests(home: Path, cwd: Path) -> dict[str, str | None]:
    """Each watched file's digest, by `file_key`."""
    return {file_key(path): digest(path, bound) for path, bound in watched(home, cwd)}


def text(home: Path, cwd: Path, key: str, limit: int) -> tuple[str | None, bool, str]:
    """The first `limit` bytes of the watched file `key` names, read as the loader reads
    it: (its text, whether it holds more, why it could not be read)."""
    for path, bound in watched(home, cwd):
        if file_key(path) == key:
            got = read_text(str(path), bound, limit)
            return got.text, got.cut, got.detail
    return None, False, "not an instruction file of this folder"
