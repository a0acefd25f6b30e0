"""A fetched body's content codings undone, within a bound.

The fetch asks for `Accept-Encoding: identity`, but a server may send gzip or deflate
anyway. The fetch reads the bytes as they come (`webFetch.maxBytes` bounds those, not what
they decode to: a stream of empty deflate blocks decodes to nothing and would never reach a
bound on decoded bytes), and they are decoded here, off the event loop, to `cap` bytes at
most: a small body that would expand without end (a decompression bomb) is cut there, and
the cut is said. A coding eukhe does not decode (br, zstd, compress) is said, and the body
is not shown.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from eukhe.rules import page

__all__ = ["CODINGS", "Decoded", "codings", "decoded"]

CODINGS = frozenset({"gzip", "x-gzip", "deflate"})
"""The content codings undone (the standard library's zlib reads them)."""

MAX_CODINGS = 3
"""Codings undone one after another at most: more is no page's, and each one costs `cap`."""


@dataclass(frozen=True)
class Decoded:
    """The body decoded (as read, when `problem` says why it could not be), whether it was
    cut at the cap, why it could not be decoded ("" when it was, or needed nothing), and
    whether that is because it is broken (not a coding eukhe does not decode)."""

    body: bytes
    cut: bool = False
    problem: str = ""
    broken: bool = False


def codings(header: str) -> list[str]:
    """A `Content-Encoding` value's codings, in the order they were applied, lower case,
    `identity` left out."""
    return [c for c in (v.strip().lower() for v in header.split(",")) if c and c != "identity"]


def decoded(body: bytes, applied: list[str], cap: int) -> Decoded:
    """`body` with the codings `applied` undone, last applied first, each to `cap` bytes at
    most (the rest is not decoded: `cut`). Never raises for a body a server sends."""
    if not applied:
        return Decoded(body)
    unknown = [c for c in applied if c not in CODINGS]
    if unknown:
        named = ", ".join(page.server_name(c) for c in unknown)  # the server's words: no sentence
        return Decoded(body, problem=f"encoded as {named}, which web_fetch does not decode")
    if len(applied) > MAX_CODINGS:
        return Decoded(body, problem=f"encoded {len(applied)} times ({', '.join(applied)}); web_fetch "
                                     f"undoes {MAX_CODINGS} at most")  # fmt: skip
    data, cut = body, False
    for coding in reversed(applied):
        try:
            data, more = _inflated(data, coding, cap)
        except zlib.error as e:
            return Decoded(body, problem=f"its {coding} encoding could not be decoded: {e}", broken=True)
        cut = cut or more
    return Decoded(data, cut)


def _inflated(data: bytes, coding: str, cap: int) -> tuple[bytes, bool]:
    """`data` inflated to `cap` bytes at most, and whether there was more. A deflate body
    is zlib-wrapped as the standard says, or raw as some servers send it. A body cut short
    (the fetch stopped at maxBytes) gives what it holds."""
    if coding == "deflate":
        try:
            return _inflate(data, zlib.MAX_WBITS, cap)
        except zlib.error:
            return _inflate(data, -zlib.MAX_WBITS, cap)
    return _inflate(data, zlib.MAX_WBITS | 16, cap)


def _inflate(data: bytes, wbits: int, cap: int) -> tuple[bytes, bool]:
    d = zlib.decompressobj(wbits)
    out = d.decompress(data, cap + 1)  # one byte past the cap tells that there was more
    return out[:cap], len(out) > cap
