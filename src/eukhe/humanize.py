"""Counts in words, as every line eukhe prints them: `1 line`, `2 lines`, `no retry`.
One helper, so that no line says `1 rounds`. Seconds as a person reads them. And a line
cut to the columns it must fit."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`n` and the noun, plural unless `n` is 1 (`plural`: for a noun that does not take
    an s, such as retry -> retries)."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"


def seconds(s: float) -> str:
    """`s` seconds in words: whole from 10 up, else two significant digits (`0.3 s`, not
    `0 s` for a 300 ms deadline)."""
    return f"{s:.0f} s" if s >= 10 else f"{s:.2g} s"


def clipped(text: str, columns: int) -> str:
    """`text` in at most `columns` characters, cut with an ellipsis."""
    return text if len(text) <= columns else text[: max(columns - 1, 0)] + "…"


def tokens(n: int) -> str:
    """A count of tokens, short: 950, 12.3k, 1.20M."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.2f}M"


def dollars(x: float) -> str:
    """A cost: four decimals under a dollar ($0.0123), two from one up ($1.23)."""
    return f"${x:.4f}" if x < 1 else f"${x:.2f}"
