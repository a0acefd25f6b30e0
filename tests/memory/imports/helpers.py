"""Where the session fixtures are, and small writers of hostile files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SESSIONS = Path(__file__).resolve().parents[2] / "fixtures" / "sessions"


def fixture(name: str) -> Path:
    return SESSIONS / name


def jsonl(path: Path, *records: Any, raw: bytes = b"") -> Path:
    """Write records (dicts as JSON lines; bytes as they are, then a newline), then `raw`."""
    out = b""
    for r in records:
        out += (r if isinstance(r, bytes) else json.dumps(r).encode()) + b"\n"
    path.write_bytes(out + raw)
    return path
