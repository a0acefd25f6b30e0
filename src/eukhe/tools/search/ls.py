"""`ls`: a folder's entries, the way the search tools see them (hidden and ignored ones left out)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from eukhe.json_types import JsonObject
from eukhe.rules.confine import Act
from eukhe.tools.base import Context, Result
from eukhe.tools.files import resolve, why
from eukhe.tools.reach import Check, Refused, open_dir
from eukhe.tools.search.shown import Bounded
from eukhe.tools.search.walk import Ignores

__all__ = ["LS", "Ls"]

SHOWN = 1000
"""Entries shown at most."""


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    size = float(n)
    for unit in ("KB", "MB", "GB"):
        size /= 1024
        if size < 1024 or unit == "GB":
            break
    return f"{size:.1f} {unit}"


def _list(shown: str, cwd: Path, keep: Callable[[Path], bool], limit: int, check: Check) -> Result:
    try:
        with open_dir(resolve(shown, cwd), Act.LIST, check, shown) as got:
            folder = Path(got.real)
            with os.scandir(got.fd) as it:  # the folder decided on, whatever its name leads to now
                entries = sorted(it, key=lambda entry: os.fsencode(entry.name))
            return _shown(folder, got.fd, entries, shown, keep, limit)
    except Refused as e:
        return Result(f"not listed: {e}", True)
    except NotADirectoryError:
        return Result(f"'{shown}' is not a folder; ls lists folders (read reads a file)", True)
    except OSError as err:
        return Result(f"'{shown}' cannot be listed: {why(err)}", True)


def _shown(
    folder: Path,
    dfd: int,
    entries: list[os.DirEntry[str]],
    path: str,
    keep: Callable[[Path], bool],
    limit: int,
) -> Result:
    ig = Ignores.above(folder).enter(folder)
    out = Bounded(limit)
    left = shown = 0
    for e in entries:
        p = folder / e.name
        try:
            link = e.is_symlink()
            is_dir = e.is_dir(follow_symlinks=False)
            size = 0 if is_dir or link else e.stat(follow_symlinks=False).st_size
            target = os.readlink(e.name, dir_fd=dfd) if link else ""
        except OSError:
            continue
        if e.name.startswith(".") or ig.ignored(p, is_dir) or not keep(p):
            left += 1
            continue
        if shown >= SHOWN:
            out.full = True
            continue
        line = f"{e.name}/" if is_dir else f"{e.name} -> {target}" if link else f"{e.name}  {_size(size)}"
        if out.add(line):
            shown += 1
    notes = []
    if out.full:
        notes.append(f"[{shown:,} entries are shown; the folder has more: use glob or grep to find one]")
    if left:
        notes.append(f"[{left:,} hidden or ignored entries are not shown]")
    if not out.lines:
        return Result("\n".join([f"'{path}' is empty", *notes]))
    return Result("\n".join([*out.lines, *notes]))


class Ls:
    name = "ls"
    description = (
        "List a folder's entries (default: the working directory): folders end in `/`, files show "
        "their size. Hidden entries and what .gitignore ignores are left out, and counted."
    )
    schema: ClassVar[JsonObject] = {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "The folder to list (default: '.')."}},
        "additionalProperties": False,
    }
    replay_safe = True

    async def run(self, args: JsonObject, ctx: Context) -> Result:
        path = args.get("path") or "."
        return await asyncio.to_thread(
            _list, path, ctx.cwd, ctx.readable, ctx.limits.read_max_output, ctx.boundary()
        )


LS = Ls()
