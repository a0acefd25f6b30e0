"""How long a transient failure waits before its retry (H4.5, H4.4): exponential
from `retry.baseDelayMs`, capped by `retry.provider.maxRetryDelayMs`, and never
shorter than the wait the server asked for. Pure: the runtime passes the numbers.

A model request whose server asks for a longer wait than the cap is not retried
at all (`model_retry`): the run fails at once with the reason, rather than sleep
for what looks like a hang. A deferred job's failed poll keeps H4.4's rule
(`retry_wait_ms`): it waits the server's wait, whatever the cap.

A connection a loopback address refused (nothing listens on this machine at the URL) gets
`LOCAL_REFUSAL_RETRIES` short retry: a local server may be starting, but the whole backoff
would only make a wrong `--base-url` slow. A remote address keeps every retry.
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
    local: bool = False  # a loopback address refused the connection: its own, shorter rule


LOCAL_REFUSAL_RETRIES = 1
"""Retries of a connection a loopback address refused."""
LOCAL_REFUSAL_WAIT_MS = 1000
"""The wait before it: long enough for a server that is starting, short for one that is not there."""


def model_retry(
    base_ms: int, max_ms: int, used: int, server_ms: int | None, local_refusal: bool = False
) -> Retry:
    """The retry of a failed model request: refused when the server's wait is over
    the cap, else after `retry_wait_ms` (which is then never over the cap). A connection
    a loopback address refused: `LOCAL_REFUSAL_RETRIES` retry after at most
    `LOCAL_REFUSAL_WAIT_MS`, then refused."""
    cap = max(max_ms, 0)
    if local_refusal:
        if max(used, 1) > LOCAL_REFUSAL_RETRIES:
            return Retry(0, True, 0, cap, local=True)
        return Retry(min(LOCAL_REFUSAL_WAIT_MS, cap), False, 0, cap, local=True)
    asked = server_ms if server_ms is not None and server_ms > 0 else 0
    if asked > cap:
        return Retry(0, True, asked, cap)
    return Retry(retry_wait_ms(base_ms, max_ms, used, server_ms), False, asked, cap)
