"""Which process a record names, and whether it still runs: a pid, with its start
time so that a later process given the same pid is not taken for it."""

from __future__ import annotations

import os


def alive(pid: int) -> bool:
    """Whether a process `pid` runs (another user's process counts)."""
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
    """When process `pid` started (clock ticks since boot, from /proc), or None."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            stat = f.read()
    except OSError:
        return None
    try:
        return float(stat.rpartition(")")[2].split()[19])
    except (IndexError, ValueError):
        return None


def same(pid: int, start: float | None) -> bool:
    """Whether the process `pid` that started at `start` still runs (a start time of
    None trusts the pid alone)."""
    if not alive(pid):
        return False
    return start is None or started(pid) in (None, start)
