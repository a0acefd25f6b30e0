"""The modes of everything in a folder, as tests compare them."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def modes(folder: Path) -> dict[str, str]:
    """Every entry under `folder` (and `folder` itself, as "."): its mode as 0oNNN, symlinks not followed."""
    out = {".": oct(stat.S_IMODE(os.stat(folder).st_mode))}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            p = Path(root) / name
            out[str(p.relative_to(folder))] = oct(stat.S_IMODE(os.lstat(p).st_mode))
    return out


def open_to_others(folder: Path) -> dict[str, str]:
    """What in `folder` has a group or other bit."""
    return {name: mode for name, mode in modes(folder).items() if int(mode, 8) & 0o077}


def loose(folder: Path) -> dict[str, str]:
    """What in `folder` is not exactly private: folders not 0700, files (and sockets) not 0600;
    a checkpoint's git object may be 0400 (git makes its objects read-only: private still)."""
    found = {}
    for name, mode in modes(folder).items():
        p = folder / name
        want = {0o700} if p.is_dir() and not p.is_symlink() else {0o600}
        if name.startswith("checkpoints/") and "/objects/" in name and p.is_file():
            want = {0o400}
        if int(mode, 8) not in want:
            found[name] = mode
    return found
