"""`read`: a text file's lines, numbered, a range of them or all up to a cap."""

from __future__ import annotations

import asyncio
import difflib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, ClassVar

from eukhe.json_types import JsonObject
from eukhe.rules.confine import Act
from eukhe.tools.base import Context, Limits, Result
from eukhe.tools.files import SNIFF, amount, binary_message, is_binary, resolve, why
from eukhe.tools.reach import Check, Refused, open_object

__all__ = ["READ", "Read", "missing_message", "read_whole"]


def missing_message(shown: str, path: Path) -> str:
    """Why `path` does not exist, with near names in its directory if there are any."""
    parent = path.parent
    if not parent.is_dir():
        return f"'{shown}' does not exist (there is no directory '{os.path.dirname(shown) or parent}')"
    try:
        names = os.listdir(parent)
    except OSError:
        names = []
    near = difflib.get_close_matches(path.name, names, n=3, cutoff=0.6)
    if not near:
        return f"'{shown}' does not exist"
    head = os.path.dirname(shown)
    options = " or ".join(f"'{os.path.join(head, n)}'" for n in near)
    return f"'{shown}' does not exist; did you mean {options}?"


def _lines(f: IO[bytes], cap: int) -> Iterator[tuple[bytes, int, bool]]:
    """Each line of `f` without its line break, at most `cap` bytes of it, its length in bytes, and
    whether it was cut."""
    while True:
        line = f.readline(cap)
        if not line:
            return
        size = len(line)
        cut = False
        if not line.endswith(b"\n") and size == cap:  # a long line: skip the rest of it
            while True:
                more = f.readline(1 << 16)
                size += len(more)
                if not more or more.endswith(b"\n"):
                    break
            cut = size > cap and more != b"\n"
        yield line.removesuffix(b"\n").removesuffix(b"\r"), size, cut


def _read(shown: str, offset: int | None, limit: int | None, cwd: Path, lim: Limits, check: Check) -> Result:
    path = resolve(shown, cwd)
    try:
        got = open_object(path, Act.READ, check, shown)
    except FileNotFoundError:
        return Result(missing_message(shown, path), True)
    except Refused as e:
        return Result(f"not read: {e}", True)
    except OSError as e:
        return Result(f"'{shown}' cannot be read: {why(e)}", True)
    with got:
        if stat.S_ISDIR(got.st.st_mode):
            return Result(f"'{shown}' is a directory; read reads files (list a folder with ls)", True)
        if not stat.S_ISREG(got.st.st_mode):
            return Result(
                f"'{shown}' is not a regular file (a device, pipe or socket); read reads files", True
            )
        size = got.st.st_size
        with open(os.dup(got.fd), "rb") as f:
            if is_binary(f.read(SNIFF)):
                return Result(binary_message(shown, size, "read reads"), True)
            if size > lim.read_max_file and offset is None and limit is None:
                return Result(
                    f"'{shown}' is {size:,} bytes, over the {amount(lim.read_max_file)} cap for reading a "
                    "whole file; read a range of it with offset and limit",
                    True,
                )
            f.seek(0)
            return _numbered(shown, f, size, offset or 1, limit, lim)


def read_whole(shown: str, cwd: Path, lim: Limits, check: Check) -> Result:
    """The file as `read` with no range shows it: numbered, within its bounds, or why not;
    opened as `read` opens it, through the boundary `check`."""
    return _read(shown, None, None, cwd, lim, check)


def _numbered(shown: str, f: IO[bytes], size: int, start: int, limit: int | None, lim: Limits) -> Result:
    shown_lines: list[tuple[int, str]] = []
    used = 0
    capped = False
    more = False
    lossy = False
    n = 0
    for n, (raw, nbytes, cut) in enumerate(_lines(f, lim.read_max_line * 4), 1):
        if n < start:
            continue
        if limit is not None and n >= start + limit:
            more = True
            break
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("utf-8", errors="ignore" if cut else "replace")
            lossy = lossy or not cut
        if len(text) > lim.read_max_line or cut:
            text = text[: lim.read_max_line] + f" [… line cut: {nbytes:,} bytes in all]"
        cost = len(text) + len(str(n)) + 2
        if used + cost > lim.read_max_output and shown_lines:
            capped = more = True
            break
        shown_lines.append((n, text))
        used += cost
    else:
        n += 1  # past the end: n - 1 lines in all
    total: int | None = n - 1
    if more:
        # the loop stopped at line n, unshown: count the rest if the file is small enough to scan
        if size <= lim.read_max_file:
            rest = f.read()
            total = n + rest.count(b"\n") + (1 if rest and not rest.endswith(b"\n") else 0)
        else:
            total = None
    if total == 0:
        return Result(f"'{shown}' is empty (0 bytes)")
    if not shown_lines:
        return Result(f"'{shown}' has {total:,} lines; offset {start} is past the end", True)
    first, last = shown_lines[0][0], shown_lines[-1][0]
    width = len(str(last))
    out = [f"{i:>{width}}\t{t}" for i, t in shown_lines]
    of = f" of {total:,}" if total is not None else ""
    if capped:
        out.append(
            f"[output capped at {lim.read_max_output:,} characters: showed lines {first}-{last}{of}; "
            f"read more with offset={last + 1}]"
        )
    elif more:
        out.append(f"[showed lines {first}-{last}{of}; read more with offset={last + 1}]")
    if lossy:
        out.append("[some bytes are not valid UTF-8 and are shown as �]")
    return Result("\n".join(out))


class Read:
    name = "read"
    description = (
        "Read a text file. Returns its lines numbered from 1 (number, tab, line). Give `offset` (the "
        "first line, from 1) and `limit` (how many lines) to read part of a long file; output is capped "
        "and says where to continue. Binary files are refused. Paths are relative to the working directory."
    )
    schema: ClassVar[JsonObject] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The file to read."},
            "offset": {"type": "integer", "minimum": 1, "description": "The first line to read, from 1."},
            "limit": {"type": "integer", "minimum": 1, "description": "How many lines to read at most."},
        },
        "required": ["path"],
        "additionalProperties": False,
    }
    replay_safe = True

    async def run(self, args: JsonObject, ctx: Context) -> Result:
        return await asyncio.to_thread(
            _read, args["path"], args.get("offset"), args.get("limit"), ctx.cwd, ctx.limits, ctx.boundary()
        )


READ = Read()
