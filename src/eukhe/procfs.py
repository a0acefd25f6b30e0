"""The host's processes as /proc shows them: each one's stat fields, read the one way every
part of eukhe reads them (the kernel's session, a background job's tree, a warm template).

A process's name is cut off first (it may hold spaces and parentheses), so field [0] is its
state, [1] its parent, [2] its process group, [3] its session, [19] its start time in clock
ticks since boot. A zombie (state Z or X) has ended."""

from __future__ import annotations

import os
from collections.abc import Iterator

__all__ = ["ENDED", "live", "running", "stat"]

ENDED = ("Z", "X")
"""The states of a process that has ended and waits to be reaped."""


def stat(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after its name; None: no such process (or unreadable)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode("ascii", "replace")
    except OSError:
        return None
    return raw.rsplit(")", 1)[-1].split()


def running(pid: int) -> bool:
    """Whether process `pid` runs (a zombie has ended)."""
    fields = stat(pid)
    return bool(fields) and fields[0] not in ENDED  # type: ignore[index]


def live() -> Iterator[tuple[int, list[str]]]:
    """(pid, its stat fields) of every live process."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return
    for name in names:
        if not name.isdigit():
            continue
        fields = stat(int(name))
        if fields is not None and len(fields) >= 4 and fields[0] not in ENDED:
            yield int(name), fields
