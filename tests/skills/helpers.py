"""Writing skill and template trees for the tests."""

from __future__ import annotations

from pathlib import Path


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def skill(folder: Path, front: str, body: str = "Do the thing.\n") -> Path:
    return write(folder / "SKILL.md", f"---\n{front}---\n{body}")
