"""A person's stop of a background job from any process (`eukhe jobs --kill`): its keeper,
checked to be that job's keeper still (its pid and start time), gets SIGUSR1, which it reads as
`job_kill` (`jobs.keeper`)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from eukhe.jobs.record import JobError, alive, jobs_root, read_state

__all__ = ["stop"]


def stop(home: Path, job_id: str) -> str:
    """Its keeper told to end it; what was done. JobError: no such job, or not running."""
    if not job_id or "/" in job_id or job_id.startswith("."):
        raise JobError(f"{job_id!r} is not a background job's id (job-...)")
    state = read_state(jobs_root(home) / job_id)
    if state is None:
        raise JobError(f"no background job {job_id!r} in {home}")
    if state.keeper is None or not alive(state.keeper):
        raise JobError(f"{job_id} is not running (its keeper is gone): nothing to stop")
    try:
        os.kill(state.keeper.pid, signal.SIGUSR1)
    except OSError as e:
        raise JobError(f"cannot signal {job_id}'s keeper (pid {state.keeper.pid}): {e.strerror or e}") from e
    return f"{job_id}: stop sent; it ends within 3 s (SIGTERM to every process it started, then SIGKILL)"
