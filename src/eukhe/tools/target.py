"""Where `write` and `edit` may write: a regular file, or a path with nothing there yet, once every
symlink is resolved; and none of eukhe's own files (`protected`). It is checked with lstat before
anything is opened: opening a FIFO blocks until a peer opens its other end, and the atomic write's
rename would replace a FIFO, a device node or a socket with a regular file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from eukhe.filekind import kind
from eukhe.home import home
from eukhe.tools.protected import protected

__all__ = ["refusal"]


def refusal(shown: str, path: Path, cwd: Path, does: str) -> str | None:
    """Why the tool may not write `path` (`shown`: as the model named it; `does`: what the tool does,
    e.g. "write writes"), or None. A path that cannot be looked at is left to the write or read itself,
    whose error says why."""
    named = Path(os.path.abspath(path))
    real = Path(os.path.realpath(named))
    lead = f"'{shown}' is" if real == named else f"'{shown}' leads to '{real}', which is"
    why = protected(named, cwd, home())  # the home in effect now, not when eukhe started
    if why is not None:
        return f"{lead} {why}"
    try:
        mode = os.lstat(real).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    return f"{lead} {kind(mode)}; {does} regular files only"
