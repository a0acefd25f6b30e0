"""The processes of a kernel's session, read from /proc, and how they are killed together.

The kernel is started as the leader of a new session, so its session id is its pid; every process it
starts is a member (a `bash()` command in a process group of its own included) unless it starts a
session of its own. Linux keeps a session's id from being reused while a member lives, so the id
names the same processes as long as any of them runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from typing import Protocol

from eukhe import waits
from eukhe.procfs import live
from eukhe.rules.wait import End

__all__ = ["Leader", "children", "kill_session", "members"]

POLL = 0.02
"""Seconds between two looks at /proc while waiting for processes to end."""


def members(sid: int) -> list[tuple[int, int]]:
    """(pid, process group) of every live process of session `sid` (a zombie counts as gone)."""
    return [(pid, int(fields[2])) for pid, fields in live() if int(fields[3]) == sid]


def children(pid: int) -> list[int]:
    """The live children of process `pid`, lowest pid first."""
    return sorted(child for child, fields in live() if int(fields[1]) == pid)


class Leader(Protocol):
    """The session's leader as a child of ours (a `subprocess.Popen`)."""

    pid: int

    def poll(self) -> int | None: ...


def _signal(sid: int, sig: signal.Signals, leader: Leader | None) -> None:
    for pgid in {pgid for _, pgid in members(sid)}:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)
    # the leader may not lead its session yet (between fork and setsid): signal it by pid, which is
    # safe as long as it is our child and not reaped
    if leader is not None and leader.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(leader.pid, sig)


def _ended(sid: int, leader: Leader | None) -> bool:
    return (leader is None or leader.poll() is not None) and not members(sid)


async def _gone(sid: int, leader: Leader | None) -> None:
    while not _ended(sid, leader):
        await asyncio.sleep(POLL)


async def kill_session(sid: int, grace: float, leader: Leader | None = None) -> bool:
    """Kill every process of session `sid`: SIGTERM to each of its groups, then SIGKILL to what is
    left `grace` seconds later. `leader`, the session's leader as our child, is reaped, and counts
    as alive until it is. Whether all of them are gone (a last wait of about a second after SIGKILL
    at most)."""
    clock = waits.LoopClock()
    _signal(sid, signal.SIGTERM, leader)
    raced = await waits.race(_gone(sid, leader), clock.now() + grace, None, clock, grace=0.0)
    if raced.end is End.EVENT:
        return True
    for _ in range(3):  # members may have forked between the look and the kill
        _signal(sid, signal.SIGKILL, leader)
        raced = await waits.race(_gone(sid, leader), clock.now() + 0.3, None, clock, grace=0.0)
        if raced.end is End.EVENT:
            return True
    return _ended(sid, leader)
