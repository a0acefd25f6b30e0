"""How long a transient failure waits before its retry (H4.5, H4.4): exponential
from `retry.baseDelayMs`, capped by `retry.provider.maxRetryDelayMs`, and never
shorter than the wait the server asked for. Pure: the runtime passes the numbers.

A model request whose server asks for a longer wait than the cap is not retried
at all (`model_retry`): the run fails at once with the reason, rather than sleep
for what looks like a hang. A deferred job's failed poll keeps H4.4's rule
(`retry_wait_ms`): it waits the server's wait, whatever the cap.
"""

from __future__ import annotations

from dataclasses import dataclass


def retry_wait_ms(base_ms: int, max_ms: int, used: int, server_ms: int | None) -> int:
    """The wait before retry number `used` (from 1). Malformed numbers are read as
    their nearest sensible value (negative as 0, a retry number below 1 as 1)."""
    base, cap, n = max(base_ms, 0), max(max_ms, 0), max(used, 1)
    own = min(base << min(n - 1, 62), cap)
    return max(own, server_ms) if server_ms is not None and server_ms > 0 else own


@dataclass(frozen=True)
class Retry:
    """A model request's retry: after `wait_ms`, or none (`refused`) because the
    server asked for `server_ms`, more than the cap `max_ms` allows."""

    wait_ms: int
    refused: bool
    server_ms: int
    max_ms: int


def model_retry(base_ms: int, max_ms: int, used: int, server_ms: int | None) -> Retry:
    """The retry of a failed model request: refused when the server's wait is over
    the cap, else after `retry_wait_ms` (which is then never over the cap)."""
    cap = max(max_ms, 0)
    asked = server_ms if server_ms is not None and server_ms > 0 else 0
    if asked > cap:
        return Retry(0, True, asked, cap)
    return Retry(retry_wait_ms(base_ms, max_ms, used, server_ms), False, asked, cap)
