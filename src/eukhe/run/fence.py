"""Fencing (`rules.fleet.may_record`): a process whose lease on the shared store is
lost, or not confirmed for FENCE_S, records no step of a run more. Another host's
owner takes its runs once the lease's time to live has passed, so a step recorded
after the fence could be recorded twice, by two executors.

Each step asks before it begins and before it is recorded (`check`), and a watch asks
between steps (`watch`). It stops as a crash does (fail-stop): its tools' processes killed, a line on its
standard error, an exit with `LOST` without marking any run ended; the taker goes on
from the last step recorded, as after a crash on one machine.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from pathlib import Path
from typing import NoReturn

from eukhe.process_exit import leave
from eukhe.rules.fleet import FENCE_S
from eukhe.run.context import ProcessContext
from eukhe.terminal import neutralized

LOOK_S = 0.25
"""Seconds between two looks of the fence's watch at the lease (`watch`)."""

LOST = 75
"""The exit code of a process that lost its lease (EX_TEMPFAIL: its runs go on elsewhere)."""

_SPARED = (b"eukhe.owner", b"eukhe.warm")
"""Children that are not this process's tools: the home's owner and its warm template,
which a client may have started."""


def check(process: ProcessContext) -> None:
    """Before (and after) each step of a run: stop here unless the lease allows a record."""
    lease = process.executor
    if lease is None or lease.may_record():
        return
    stop(lease.why or f"no beat of it confirmed for {FENCE_S:.0f} s")


def watch(process: ProcessContext) -> threading.Thread | None:
    """The fence kept between steps too (a daemon thread, till the lease closes): a process
    stuck where no step begins (a store's write retried through a partition, a long tool
    call) stops within LOOK_S of its fence, before any other host may take its runs."""
    lease = process.executor
    if lease is None:
        return None

    def keep() -> None:
        while not lease.closed(LOOK_S):
            check(process)

    thread = threading.Thread(target=keep, name="eukhe-fence", daemon=True)
    thread.start()
    return thread


def stop(cause: str) -> NoReturn:
    _kill_tools()
    said = (  # the cause is the store's words: neutralized, as every line eukhe prints
        f"eukhe: this process lost its lease on the shared store ({cause}): it stops, "
        "and another host's owner takes its runs up"
    )
    print(neutralized(said), file=sys.stderr)
    leave(LOST)


def _kill_tools() -> None:
    """SIGKILL every child of this process (a tool's own process group, when it leads
    one), but the home's owner and its template."""
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="ascii", errors="replace")
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()
        if len(fields) < 3 or fields[1] != str(me) or any(s in cmdline for s in _SPARED):
            continue
        pid, group = int(entry.name), int(fields[2])
        with contextlib.suppress(OSError):
            if group == pid:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
