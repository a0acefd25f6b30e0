"""docs/architecture.md stays true: every path it names exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_path_the_architecture_page_names_exists() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text()
    paths = set(re.findall(r"`((?:src|docs|tests)/[^`\s]+)`", text))
    assert len(paths) > 30
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert missing == [], missing
