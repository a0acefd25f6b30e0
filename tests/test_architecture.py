"""docs/architecture.md stays true: every path it names exists, and every function its walk
names (`file:Class.function`) is defined in that file."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_path_the_architecture_page_names_exists() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text()
    paths = set(re.findall(r"`((?:src|docs|tests)/[^`\s:]+)(?::[\w.]+)?`", text))
    assert len(paths) > 30
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert missing == [], missing


def defines(source: str, dotted: str) -> bool:
    """Whether `source` defines `dotted`: a function or class, or a method of a class in it."""
    found = True
    for name in dotted.split("."):
        found = (
            found and re.search(rf"^\s*(?:async def|def|class) {re.escape(name)}\b", source, re.M) is not None
        )
    return found


def test_every_function_the_walk_names_is_defined_where_it_says() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text()
    named = set(re.findall(r"`((?:src|tests)/[^`\s:]+\.py):([\w.]+)`", text))
    assert len(named) > 30
    missing = sorted(f"{p}:{f}" for p, f in named if not defines((ROOT / p).read_text(), f))
    assert missing == [], missing


def test_the_walk_check_finds_a_function_that_is_not_there() -> None:
    source = "class Runtime:\n    async def start(self): ...\n\ndef open_runtime(): ...\n"
    assert defines(source, "Runtime.start") and defines(source, "open_runtime")
    assert not defines(source, "Runtime.begin") and not defines(source, "close_runtime")
