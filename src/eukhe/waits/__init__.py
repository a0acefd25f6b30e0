"""Every wait has an exit (H6.1): `race(work, deadline, cancel, clock)` is the one way
the runtime waits on something that may never come. It ends exactly once, on the
first of the three, as `rules.wait` steps it, and cleans up the losers; a cancel
of the waiter itself stays a cancel.

Deadlines are absolute times on a `Clock`: `LoopClock` is the event loop's,
`ManualClock` one that tests move by hand, so no test waits a deadline out.
"""

from eukhe.waits._clock import Clock, LoopClock, ManualClock
from eukhe.waits._ctrl_c import on_ctrl_c
from eukhe.waits._race import Raced, race
from eukhe.waits._ran import Ran, ran

__all__ = [
    "Clock",
    "LoopClock",
    "ManualClock",
    "Raced",
    "Ran",
    "on_ctrl_c",
    "race",
    "ran",
]
