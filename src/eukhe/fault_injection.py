"""Crash windows a test can open: points between a store's commit and the step that
records it, where a process killed at random almost never dies (the window is a few
milliseconds), but where exactly-once delivery (H5.4) must still hold.

A test sets `EUKHE_CRASH_AT=<point>:<marker file>`; the first process of the home to
reach that point creates the marker and kills itself with SIGKILL, as a power cut
would. Any process that comes later (the restart, the owner that takes the runs up)
finds the marker and goes on. Unset, each point costs one environment read.

The points:
- `submitted`: a child's report is in the parent's inbox, and its task's step is not
  recorded;
- `taken`: a run's take placed messages in the store, and its step is not recorded;
- `placed`: the take's step is recorded, and the messages it placed are not yet in the
  run's transcript (the round's message steps);
- `checkpointed`: a run's checkpoint of its files is in the shadow repository, and the intent
  step it was taken in is not recorded (not one of H5.4's windows: `POINTS` lists those).
"""

from __future__ import annotations

import os
import signal

VARIABLE = "EUKHE_CRASH_AT"
POINTS = ("submitted", "taken", "placed")
"""H5.4's windows, where a report must still be delivered once."""


def reached(point: str) -> None:
    """The process reached `point`: it dies here if a test asked for it (once a home)."""
    spec = os.environ.get(VARIABLE)
    if not spec:
        return
    want, _, marker = spec.partition(":")
    if want != point or not marker:
        return
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except OSError:  # another process died here already (or the marker cannot be made): go on
        return
    os.close(fd)
    os.kill(os.getpid(), signal.SIGKILL)
