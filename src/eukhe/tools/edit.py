"""`edit`: one exact, unique replacement in a text file, written atomically."""

from __future__ import annotations

import asyncio
import os
import re
import stat
from pathlib import Path
from typing import ClassVar

from eukhe.filekind import kind
from eukhe.humanize import counted
from eukhe.json_types import JsonObject
from eukhe.tools.base import Context, Limits, Result
from eukhe.tools.files import SNIFF, amount, binary_message, is_binary, resolve, why
from eukhe.tools.reach import Check, Refused, Slot, slot
from eukhe.tools.read import missing_message
from eukhe.tools.write import count_lines

__all__ = ["EDIT", "Edit"]

EXCERPT = 2_000
"""Characters of the file an error shows at most."""


def _find_all(text: str, sub: str) -> list[int]:
    """Every index where `sub` starts in `text`, overlapping ones included."""
    found = []
    i = text.find(sub)
    while i >= 0:
        found.append(i)
        i = text.find(sub, i + 1)
    return found


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _span(first: int, text: str) -> str:
    """'line 3' or 'lines 3-5': the lines `text` covers when it starts on line `first`."""
    last = first + text.count("\n") - text.endswith("\n")
    return f"line {first}" if last <= first else f"lines {first}-{last}"


def _numbered(text: str, start: int, end: int) -> str:
    """The whole lines of `text` that hold text[start:end], numbered like `read` shows them."""
    lo = text.rfind("\n", 0, start) + 1
    hi = text.find("\n", end)
    chunk = text[lo : hi if hi >= 0 else len(text)]
    if len(chunk) > EXCERPT:
        chunk = chunk[:EXCERPT] + " [… cut]"
    first = _line_of(text, lo)
    lines = chunk.split("\n")
    width = len(str(first + len(lines) - 1))
    return "\n".join(f"{first + k:>{width}}\t{line.removesuffix(chr(13))}" for k, line in enumerate(lines))


def _not_found(shown: str, text: str, old: str) -> Result:
    chars = [re.escape(c) for c in old if not c.isspace()]
    if chars:
        matches = list(re.finditer(r"\s*".join(chars), text))
        if matches:
            m = matches[0]
            where = f"the text at {_span(_line_of(text, m.start()), m.group())}"
            if len(matches) > 1:
                where = (
                    f"{len(matches)} places in it, the first at {_span(_line_of(text, m.start()), m.group())}"
                )
            return Result(
                f"old_text was not found in '{shown}', but it differs only in whitespace from {where} "
                "(indentation, spaces or line breaks differ); copy the text exactly:\n"
                + _numbered(text, m.start(), m.end()),
                True,
            )
    hint = ""
    first = next((ln.strip() for ln in old.splitlines() if ln.strip()), "")
    if first:
        i = text.find(first)
        if i >= 0:
            hint = f"; its first line appears at line {_line_of(text, i)}, but the lines after it differ"
    return Result(
        f"old_text was not found in '{shown}'{hint}; read the file and copy the text to replace exactly",
        True,
    )


def _edit(shown: str, old: str, new: str, cwd: Path, lim: Limits, check: Check) -> Result:
    if not old:
        return Result(
            "old_text is empty; give the exact text to replace (to write a whole file, use write)", True
        )
    if old == new:
        return Result("old_text and new_text are the same; the edit would change nothing", True)
    path = resolve(shown, cwd)
    try:
        there = slot(path, check, shown)
    except Refused as e:
        return Result(f"not edited: {e}", True)
    except FileNotFoundError:
        return Result(missing_message(shown, path) + " (to create a file, use write)", True)
    except OSError as e:
        return Result(f"'{shown}' cannot be read: {why(e)}", True)
    with there:
        odd = there.oddity(shown, path, "edit edits")
        if odd is not None:
            return Result(odd, True)
        got = _held(shown, there, lim)
        if isinstance(got, Result):
            return got
        return _replaced(shown, got, old, new, there)


def _held(shown: str, there: Slot, lim: Limits) -> bytes | Result:
    """The file's bytes, up to the cap, or why it cannot be edited."""
    if there.st is None:
        return Result(missing_message(shown, Path(there.real)) + " (to create a file, use write)", True)
    try:
        fd = there.open_read()  # O_NOFOLLOW: a link put there since the decision is an error
    except OSError as e:
        return Result(f"'{shown}' cannot be read: {why(e)}", True)
    with open(fd, "rb") as f:
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return Result(f"'{shown}' is {kind(st.st_mode)}; edit edits regular files only", True)
            cap = lim.read_max_file  # edit holds the file whole, several times over
            instead = "change a file this big with bash (e.g. sed)"
            if st.st_size > cap:
                return Result(
                    f"'{shown}' is {st.st_size:,} bytes, over the {amount(cap)} cap for editing a file "
                    f"(edit reads it whole); {instead}",
                    True,
                )
            data = f.read(cap + 1)  # a file that grows, or a /proc file that says 0 bytes, stops here
            if len(data) > cap:
                return Result(
                    f"'{shown}' holds more than the {amount(cap)} cap for editing a file (its size said "
                    f"{st.st_size:,} bytes: it grows, or is made as it is read); {instead}",
                    True,
                )
        except OSError as e:
            return Result(f"'{shown}' cannot be read: {why(e)}", True)
    return data


def _replaced(shown: str, data: bytes, old: str, new: str, there: Slot) -> Result:
    try:
        if is_binary(data[:SNIFF]):
            raise UnicodeDecodeError("utf-8", data[:1], 0, 1, "NUL byte")
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return Result(binary_message(shown, len(data), "edit edits"), True)

    found = _find_all(text, old)
    note = ""
    if not found and "\r\n" in text and "\n" in old and "\r" not in old:
        crlf = _find_all(text, old.replace("\n", "\r\n"))
        if crlf:
            found, old, new = crlf, old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
            note = " (the file has CRLF line endings; they were kept)"
    if not found:
        return _not_found(shown, text, old)
    if len(found) > 1:
        at = ", ".join(str(_line_of(text, i)) for i in found[:10]) + (", …" if len(found) > 10 else "")
        return Result(
            f"old_text matches {len(found)} times in '{shown}' (at lines {at}); it must match exactly "
            "once: add surrounding lines to old_text to make it unique",
            True,
        )
    i = found[0]
    updated = text[:i] + new + text[i + len(old) :]
    try:
        there.replace(updated.encode("utf-8", errors="replace"))
    except OSError as e:
        return Result(f"'{shown}' cannot be written: {why(e)}", True)
    span = _span(_line_of(text, i), old)
    n = count_lines(new)
    did = f"deleted {span}" if not new else f"replaced {span} with {counted(n, 'line')}"
    return Result(f"edited '{shown}': {did}{note}")


class Edit:
    name = "edit"
    description = (
        "Replace one piece of text in a file: `old_text` must match the file exactly (whitespace and "
        "indentation included) and exactly once; include enough surrounding lines to make it unique. "
        "`new_text` replaces it (empty deletes it). The write is atomic and keeps the file's permissions. "
        "Paths are relative to the working directory."
    )
    schema: ClassVar[JsonObject] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The file to edit."},
            "old_text": {"type": "string", "description": "The exact text to replace; it must occur once."},
            "new_text": {"type": "string", "description": "The text to put in its place."},
        },
        "required": ["path", "old_text", "new_text"],
        "additionalProperties": False,
    }
    replay_safe = False

    async def run(self, args: JsonObject, ctx: Context) -> Result:
        return await asyncio.to_thread(
            _edit, args["path"], args["old_text"], args["new_text"], ctx.cwd, ctx.limits, ctx.boundary()
        )


EDIT = Edit()
