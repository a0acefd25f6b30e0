"""Unreadable files and folders, as root too.

`deny(path)` makes a file or folder unreadable: by `chmod 000` when the tests run
as an ordinary user; as root, whom modes do not stop, by failing `os.open` and
`os.scandir` on that path with the error the kernel would give (EACCES,
"Permission denied"). Either way the loader meets a real `PermissionError`.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


@pytest.fixture
def deny(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Path], None]]:
    denied: set[str] = set()
    chmodded: list[tuple[Path, int]] = []
    if ROOT:
        real_open, real_scandir = os.open, os.scandir

        def refuse(path: Any) -> None:
            p = os.path.realpath(os.fsdecode(path)) if not isinstance(path, int) else ""
            if p in denied:
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fsdecode(path))

        def fake_open(path: Any, flags: int, mode: int = 0o777, *a: Any, **kw: Any) -> int:
            refuse(path)
            return real_open(path, flags, mode, *a, **kw)

        def fake_scandir(path: Any = ".") -> Any:
            refuse(path)
            return real_scandir(path)

        monkeypatch.setattr(os, "open", fake_open)
        monkeypatch.setattr(os, "scandir", fake_scandir)

    def deny_one(path: Path) -> None:
        if ROOT:
            denied.add(os.path.realpath(path))
        else:
            chmodded.append((path, path.stat().st_mode))
            path.chmod(0)

    yield deny_one
    for path, mode in reversed(chmodded):
        path.chmod(mode)
