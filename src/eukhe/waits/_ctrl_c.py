"""Ctrl-C as a cancel: SIGINT calls a callback on the event loop (a run's abort, an
event's hooks' cancel), where the process can take it."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable


def on_ctrl_c(loop: asyncio.AbstractEventLoop, callback: Callable[[], object]) -> bool:
    """Ctrl-C (SIGINT) calls `callback` on `loop`; whether it was set. Not off the main
    thread (no signals come there), nor in a process started deaf to SIGINT: a script's
    background job (`eukhe run ... &`) is, and by POSIX it stays so, as the client of a
    handed run does (`client/handoff.py`); the script's own Ctrl-C then leaves it running."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        return False
    try:
        loop.add_signal_handler(signal.SIGINT, callback)
    except (NotImplementedError, RuntimeError, ValueError):
        return False
    return True
