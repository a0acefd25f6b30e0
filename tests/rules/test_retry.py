"""rules.retry: the wait before a transient failure's retry."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from eukhe.rules.retry import Retry, model_retry, retry_wait_ms

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


@given(ints, ints, st.integers(min_value=-5, max_value=200), st.none() | ints)
def test_a_model_retry_is_refused_exactly_when_the_server_asks_past_the_cap(
    base: int, cap: int, used: int, server: int | None
) -> None:
    r = model_retry(base, cap, used, server)
    asked = server is not None and server > max(cap, 0)
    assert r.refused is asked
    if r.refused:
        assert r.server_ms == server and r.max_ms == max(cap, 0) and r.wait_ms == 0
    else:
        assert r.wait_ms == retry_wait_ms(base, cap, used, server) <= max(cap, 0)
        if server is not None and server > 0:
            assert r.wait_ms >= server


def test_an_hour_asked_for_against_the_default_cap_is_refused() -> None:
    assert model_retry(2000, 60_000, 1, 3_600_000) == Retry(0, True, 3_600_000, 60_000)
    assert model_retry(2000, 60_000, 1, 60_000) == Retry(60_000, False, 60_000, 60_000)
