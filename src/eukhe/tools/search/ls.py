"""`ls`: a folder's entries, the way the search tools see them (hidden and ignored ones left out)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from eukhe.tools.base import Context, Result
from eukhe.tools.files import why
from eukhe.tools.search.shown import Bounded, root
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


def _list(folder: Path, path: str, keep: Callable[[Path], bool], limit: int) -> Result:
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda entry: os.fsencode(entry.name))
    except OSError as err:
        return Result(f"'{path}' cannot be listed: {why(err)}", True)
    ig = Ignores.above(folder).enter(folder)
    out = Bounded(limit)
    left = shown = 0
    for e in entries:
        p = folder / e.name
        try:
            link = e.is_symlink()
            is_dir = e.is_dir(follow_symlinks=False)
            size = 0 if is_dir or link else e.stat(follow_symlinks=False).st_size
            target = os.readlink(p) if link else ""
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
    schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "The folder to list (default: '.')."}},
        "additionalProperties": False,
    }
    replay_safe = True

    async def run(self, args: dict[str, Any], ctx: Context) -> Result:
        path = args.get("path") or "."
        start, err = root(path, ctx.cwd)
        if err:
            return Result(err, True)
        if not start.is_dir():
            return Result(f"'{path}' is not a folder; ls lists folders (read reads a file)", True)
        return await asyncio.to_thread(_list, start, path, ctx.readable, ctx.limits.read_max_output)


LS = Ls()
