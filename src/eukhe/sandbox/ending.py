"""The end of a sandbox's processes, which bubblewrap's own exit does not mark.

With `--unshare-pid`, bubblewrap exits as soon as the command does; the namespace's first process
dies a moment later (bubblewrap's `--die-with-parent`), and with it, killed by the kernel, every
process the command left in the background. Until then they still write: a look for what the
command made, taken in that moment, would miss what they make next.

`--info-fd` has bubblewrap write the first process's pid (as the host sees it) and its pid
namespace's inode (`Inner`). The kernel makes that process a zombie only once every other process
of its namespace is gone, so "gone, a zombie, or another namespace's" is the namespace's end
(`gone`, `ended`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from dataclasses import dataclass

from eukhe import waits
from eukhe.rules.wait import End

__all__ = ["END_GRACE", "Inner", "ended", "ended_now", "gone", "inner", "read_info"]

END_GRACE = 2.0
"""Seconds a namespace may take to end after its command did, before its first process is killed."""
KILL_WAIT = 1.0
"""Seconds it may take to end once killed."""
POLL = 0.01
"""Seconds between two looks."""
INFO_BYTES = 1 << 16
"""Bytes of bubblewrap's --info-fd read at most."""


@dataclass(frozen=True)
class Inner:
    """A sandbox's first process: its host pid and its pid namespace's inode."""

    pid: int
    namespace: int


def read_info(fd: int) -> Inner | None:
    """The first process bubblewrap wrote to `fd` (the read end of its --info-fd, once bubblewrap
    has exited: all it wrote is there, and the end); None when it wrote none (it failed before)."""
    data = b""
    os.set_blocking(fd, False)
    with contextlib.suppress(OSError):  # EAGAIN: bubblewrap had not closed it (it has, once it exited)
        while len(data) < INFO_BYTES:
            chunk = os.read(fd, INFO_BYTES)
            if not chunk:
                break
            data += chunk
    try:
        info = json.loads(data)
        return Inner(int(info["child-pid"]), int(info["pid-namespace"]))
    except (ValueError, KeyError, TypeError):
        return None


def inner(pid: int) -> Inner | None:
    """The first process `pid` of a sandbox, as `read_info` gives it (a kernel's, found as
    bubblewrap's child); None when it is gone already."""
    try:
        return Inner(pid, os.stat(f"/proc/{pid}/ns/pid").st_ino)
    except OSError:
        return None


def gone(who: Inner) -> bool:
    """Whether the sandbox's namespace has ended: its first process is gone, a zombie, or the pid is
    another namespace's now."""
    try:
        if os.stat(f"/proc/{who.pid}/ns/pid").st_ino != who.namespace:
            return True
        with open(f"/proc/{who.pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[-1].split()[:1]
    except OSError:
        return True
    return state in ([b"Z"], [b"X"])


def _kill(who: Inner) -> None:
    if not gone(who):
        with contextlib.suppress(OSError):
            os.kill(who.pid, signal.SIGKILL)  # from the host, the one signal a namespace's init takes


async def _until_gone(who: Inner) -> None:
    while not gone(who):
        await asyncio.sleep(POLL)


async def ended(who: Inner, grace: float = END_GRACE) -> bool:
    """Wait for the namespace of `who` to end: `grace` seconds, then its first process is killed and
    `KILL_WAIT` more; whether it ended."""
    clock = waits.LoopClock()
    raced = await waits.race(_until_gone(who), clock.now() + grace, None, clock, grace=0.0)
    if raced.end is End.EVENT:
        return True
    _kill(who)
    raced = await waits.race(_until_gone(who), clock.now() + KILL_WAIT, None, clock, grace=0.0)
    return raced.end is End.EVENT


def ended_now(who: Inner, grace: float = END_GRACE) -> bool:
    """`ended`, blocking (for a path that cannot wait on the event loop: a cancelled call)."""
    stop = time.monotonic() + grace
    while not gone(who) and time.monotonic() < stop:
        time.sleep(POLL)
    if gone(who):
        return True
    _kill(who)
    stop = time.monotonic() + KILL_WAIT
    while not gone(who) and time.monotonic() < stop:
        time.sleep(POLL)
    return gone(who)
