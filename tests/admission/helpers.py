"""Running admission tests: every test's loop has a deadline."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

TEST_DEADLINE = 20.0


def run(coro: Coroutine[Any, Any, T], deadline: float = TEST_DEADLINE) -> T:
    async def bounded() -> T:
        async with asyncio.timeout(deadline):
            return await coro

    return asyncio.run(bounded())


async def settle(rounds: int = 5) -> None:
    """Let every ready task run (a few loop iterations; no clock)."""
    for _ in range(rounds):
        await asyncio.sleep(0)
