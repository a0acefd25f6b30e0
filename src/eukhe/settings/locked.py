"""The home's small records that a person's answers change (`approvals.json`, `trust.json`),
changed by any number of eukhe processes at once.

A change is a read-modify-write under the file's lock: `flock` on a lock file beside it
(`.NAME.lock`, never removed), waited for until a deadline, so two terminals answering at
once both count and none waits for ever. The new text is written atomically and durably
(a temporary file, fsynced, renamed over the file, the folder fsynced): a reader without
the lock sees the old file or the new one, and a crash leaves one of them, never half.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from eukhe.fdwrite import write_all
from eukhe.home import HomeError, private_dir, private_open

LOCK_WAIT = 5.0
"""Seconds a change waits for another process's lock (held for a read and a write: a
few milliseconds) before it gives up, writing nothing, and says so."""

POLL = 0.01
"""Seconds between two tries of a lock another process holds (`flock` itself has no deadline)."""


T = TypeVar("T")


def by_project(
    path: Path, what: str, fix: str, row: Callable[[object], T], error: type[Exception]
) -> dict[str, list[T]]:
    """A record file's rows by project, each read by `row` ({} when there is no file). A file
    that cannot be read, or is not what eukhe writes, is `error`, naming `what` it is and the
    `fix`."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as e:
        why = getattr(e, "strerror", None) or e
        raise error(f"{what} {path}: cannot read it: {why}") from e
    try:
        projects = json.loads(text)["projects"]
        return {str(folder): [row(r) for r in rows] for folder, rows in projects.items()}
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise error(f"{what} {path}: not what eukhe writes ({type(e).__name__}: {e}); {fix}") from e


def lock_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.lock")


@contextlib.contextmanager
def locked(
    path: Path,
    wait: float = LOCK_WAIT,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[None]:
    """Hold `path`'s lock, exclusively, for the block (its folder made if missing). Raises
    HomeError naming the lock file when it cannot be made, or is not free within `wait`
    seconds (the block then never runs). The lock is the kernel's: a process that dies
    holding it frees it."""
    lock = lock_path(path)
    private_dir(path.parent)
    fd = private_open(lock, os.O_RDWR)
    try:
        deadline = clock() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if clock() >= deadline:
                    raise HomeError(
                        f"cannot change {path}: another eukhe process has held its lock {lock} for "
                        f"more than {wait:g} s; nothing was written; fix: try again, or end the "
                        f"process that holds it (`fuser {lock}` names it)"
                    ) from None
                sleep(POLL)
            except OSError as e:
                raise HomeError(f"cannot change {path}: cannot lock {lock}: {e.strerror or e}") from e
        yield
    finally:
        os.close(fd)  # frees the lock


def write(path: Path, text: str) -> None:
    """Replace `path` with `text` atomically and durably, readable by its owner only. Raises
    HomeError naming the file and why; the file is then as it was."""
    raw = text.encode("utf-8")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # one writer at a time: the lock's holder
    try:
        fd = private_open(tmp, os.O_WRONLY | os.O_TRUNC)
        try:
            write_all(fd, raw)
            os.fsync(fd)  # the text on disk before the rename makes it the file
        finally:
            os.close(fd)
        os.replace(tmp, path)
        folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(folder)  # and the rename
        finally:
            os.close(folder)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise HomeError(f"cannot write {path}: {e.strerror or e}; fix: check its folder and its mode") from e
