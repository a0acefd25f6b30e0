"""Counts in words, as every line eukhe prints them: `1 line`, `2 lines`, `no retry`.
One helper, so that no line says `1 rounds`. And a line cut to the columns it must fit."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`n` and the noun, plural unless `n` is 1 (`plural`: for a noun that does not take
    an s, such as retry -> retries)."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"


def clipped(text: str, columns: int) -> str:
    """`text` in at most `columns` characters, cut with an ellipsis."""
    return text if len(text) <= columns else text[: max(columns - 1, 0)] + "…"
