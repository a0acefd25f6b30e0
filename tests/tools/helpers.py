"""Shared helpers for the tool tests."""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from eukhe.tools import Context, Limits, Result


def ctx(cwd: Path, **limits: Any) -> Context:
    return Context(cwd, limits=Limits(**{"kill_grace": 0.5, "drain_grace": 0.3, **limits}))


def run(coro: Coroutine[Any, Any, Result]) -> Result:
    return asyncio.run(coro)


def matches(pattern: str, r: Result, *, error: bool) -> None:
    """`r` is (or is not) an error and its whole content matches `pattern`."""
    assert r.is_error is error, r
    assert re.fullmatch(pattern, r.content, re.DOTALL), r.content


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie waiting for its reaper counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def gone_soon(pid: int, within: float = 2.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return False


async def pid_in(path: Path, within: float = 5.0) -> int:
    """The pid a command writes to `path`, once it has."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        text = path.read_text() if path.exists() else ""
        if text.endswith("\n"):
            return int(text)
        await asyncio.sleep(0.01)
    raise AssertionError(f"no pid in {path}")
