"""File helpers the file tools share: where a path points, how a failure reads, and
whether bytes are text (`tools.reach` opens and writes them)."""

from __future__ import annotations

import codecs
import errno
from pathlib import Path

SNIFF = 8192
"""Bytes from a file's start that decide whether it is text."""


def resolve(path: str, cwd: Path) -> Path:
    """`path` as the tools use it: `~` expanded, relative to `cwd`."""
    p = Path(path).expanduser()
    return p if p.is_absolute() else cwd / p


def why(e: OSError) -> str:
    """The reason an OS call failed, in words."""
    if isinstance(e, PermissionError):
        return "permission denied"
    if e.errno == errno.ENOTDIR:
        return "a part of the path is not a directory"
    if e.errno == errno.ENOENT:
        return "no such file or directory"
    return e.strerror or type(e).__name__


def amount(n: int) -> str:
    """A cap in bytes, in words: whole megabytes as "10 MB", else the bytes."""
    mb = 1024 * 1024
    return f"{n // mb} MB" if n % mb == 0 else f"{n:,} bytes"


def is_binary(sample: bytes) -> bool:
    """Whether a file's first bytes say it is not UTF-8 text: a NUL byte, or bytes that do not decode."""
    if b"\0" in sample:
        return True
    try:
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=False)
    except UnicodeDecodeError:
        return True
    return False


def binary_message(shown: str, size: int, what: str) -> str:
    """Why a tool refuses a binary file; `what` is what the tool does, e.g. "read reads"."""
    return f"'{shown}' is a binary file ({size:,} bytes); {what} text files"
