"""Which process a record names, and whether it still runs: a pid, with its start
time so that a later process given the same pid is not taken for it."""

from __future__ import annotations

import os


def alive(pid: int) -> bool:
    """Whether a process `pid` exists (another user's process counts; so does a zombie:
    `started` tells those apart)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def started(pid: int) -> float | None:
    """When process `pid` started (clock ticks since boot, from /proc), or None when
    it is gone: a zombie (dead, not yet reaped by its parent) runs nothing."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()
    if not fields or fields[0] in ("Z", "X"):
        return None
    try:
        return float(fields[19])
    except (IndexError, ValueError):
        return None


def same(pid: int, start: float | None) -> bool:
    """Whether the process `pid` that started at `start` still runs (a start time of
    None trusts the pid alone)."""
    if not alive(pid):
        return False
    now = started(pid)
    if now is None:  # a zombie, or /proc cannot tell: by the pid alone
        return start is None and alive(pid)
    return start is None or now == start
