"""Reading a JSONL file line by line, never more than MAX_LINE_BYTES of a line
held at once. Every line that is not a JSON object gets a diagnostic naming its
number and the fault; the lines after it are read as usual."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO

from eukhe.json_types import JsonObject, JsonValue
from eukhe.memory.imports._common import Diagnostics

MAX_LINE_BYTES = 1 << 20
"""A line longer than this (1 MiB, its newline not counted) is skipped with a diagnostic."""

_CHUNK = 1 << 16
_BOM = b"\xef\xbb\xbf"


def records(
    f: IO[bytes], diags: Diagnostics | None, max_line: int = MAX_LINE_BYTES
) -> Iterator[tuple[int, JsonObject]]:
    """Each line of `f` that holds a JSON object, with its number (from 1). Blank
    lines are passed over; any other line that is not a JSON object is reported to
    `diags` (None: passed over silently, as detection reads)."""
    number = 0
    while True:
        try:
            raw = f.readline(max_line + 1)
        except OSError as e:
            why = e.strerror or e
            _report(diags, number + 1, f"could not be read ({why}); the rest of the file is not read")
            return
        if not raw:
            return
        number += 1
        ended = raw.endswith(b"\n")
        if not ended and len(raw) > max_line:
            size = len(raw) + _skip_rest(f)
            _report(diags, number, f"longer than {_size(max_line)} ({size} bytes); skipped")
            continue
        if number == 1 and raw.startswith(_BOM):
            raw = raw[len(_BOM) :]
        raw = raw.rstrip(b"\r\n")
        if not raw.strip():
            continue
        fault, value = parse(raw)
        if fault is not None:
            if not ended:
                fault = "cut short (the last line, with no newline at its end): " + fault
            _report(diags, number, fault + "; skipped")
            continue
        assert isinstance(value, dict)
        yield number, value


def parse(raw: bytes) -> tuple[str | None, JsonValue]:
    """(None, the object) for a line holding a JSON object, else (what is wrong, None)."""
    nul = raw.find(b"\x00")
    if nul >= 0:
        return f"binary data (a NUL byte at byte {nul + 1}), not JSON", None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return f"bytes that are not UTF-8 (0x{raw[e.start]:02x} at byte {e.start + 1})", None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        return f"not JSON ({where(e, f'column {e.colno}')})", None
    except RecursionError:
        return "JSON nested too deeply to read", None
    except ValueError as e:  # e.g. an integer of more digits than Python converts
        return f"not JSON that can be read ({e})", None
    if not isinstance(value, dict):
        return f"{_kind(value)}, not a JSON object", None
    return None, value


def where(e: json.JSONDecodeError, at: str) -> str:
    """A JSON error's message and where it is: "Expecting value at column 3"."""
    return f"{e.msg} {at}" if e.msg.endswith(" at") else f"{e.msg} at {at}"


def _skip_rest(f: IO[bytes]) -> int:
    """Read to the end of the current line (or file) without keeping it; the bytes read."""
    n = 0
    while True:
        chunk = f.readline(_CHUNK)
        n += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            return n


def _report(diags: Diagnostics | None, number: int, message: str) -> None:
    if diags is not None:
        diags.add(message, number)


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 and n % (1 << 20) == 0 else f"{n} bytes"


def _kind(value: JsonValue) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"
