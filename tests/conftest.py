"""What every test shares: owners that `eukhe` processes of a test start end soon
after their last client (their homes are the tests' temp dirs), not 30 s later."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="session")
def _owners_end_soon() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EUKHE_OWNER_IDLE_MS", "3000")
        yield
