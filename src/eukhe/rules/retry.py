"""How long a transient failure waits before its retry (H4.5, H4.4): exponential
from `retry.baseDelayMs`, capped by `retry.provider.maxRetryDelayMs`, and never
shorter than the wait the server asked for. Pure: the runtime passes the numbers."""

from __future__ import annotations


def retry_wait_ms(base_ms: int, max_ms: int, used: int, server_ms: int | None) -> int:
    """The wait before retry number `used` (from 1). Malformed numbers are read as
    their nearest sensible value (negative as 0, a retry number below 1 as 1)."""
    base, cap, n = max(base_ms, 0), max(max_ms, 0), max(used, 1)
    own = min(base << min(n - 1, 62), cap)
    return max(own, server_ms) if server_ms is not None and server_ms > 0 else own
