"""A deferred answer's job (H4.4), as the run loop and the Responses adapter share it:
apart from the adapter, so that the loop needs no model SDK to know what a job is."""

from __future__ import annotations

from dataclasses import dataclass

from eukhe.ai.reply import Failure

WINDOWS = {"15m": 15 * 60.0, "1h": 60 * 60.0, "24h": 24 * 60 * 60.0}
"""The requested windows of a deferred answer (H4.4), in seconds."""

DEFAULT_WINDOW = WINDOWS["24h"]


@dataclass(frozen=True)
class Job:
    """A background response still running. Times are the provider's epoch seconds;
    `expires_at` is the provider's own expiry of the job, if it gives one."""

    id: str
    status: str
    created_at: float | None = None
    expires_at: float | None = None


@dataclass(frozen=True)
class PollFailed:
    """A poll that failed (HTTP error, dropped connection): the job may still run."""

    failure: Failure


def deadline(job: Job, window: str | None, now: float) -> float:
    """Until when a deferred answer may be polled (H4.4): the provider's job expiry,
    else the requested window ("15m", "1h", "24h"; anything else is ignored) from
    `now`, else `now` plus 24 hours. Compute it once, when the job starts."""
    if job.expires_at is not None:
        return job.expires_at
    if window is not None and window.strip().lower() in WINDOWS:
        return now + WINDOWS[window.strip().lower()]
    return now + DEFAULT_WINDOW
