"""rules.retry: the wait before a transient failure's retry."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from eukhe.rules.retry import retry_wait_ms

ints = st.integers(min_value=-(10**6), max_value=10**9)


@given(ints, ints, st.integers(min_value=-5, max_value=200), st.none() | ints)
def test_never_shorter_than_the_server_asks_and_capped_otherwise(
    base: int, cap: int, used: int, server: int | None
) -> None:
    w = retry_wait_ms(base, cap, used, server)
    assert w >= 0
    if server is not None and server > 0:
        assert w >= server
        assert w == max(server, retry_wait_ms(base, cap, used, None))
    else:
        assert w <= max(cap, 0)


def test_doubles_from_the_base_until_the_cap() -> None:
    assert [retry_wait_ms(2000, 60_000, n, None) for n in range(1, 8)] == [
        2000, 4000, 8000, 16000, 32000, 60000, 60000,
    ]  # fmt: skip
    assert retry_wait_ms(2000, 60_000, 1, 90_000) == 90_000
