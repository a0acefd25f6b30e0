"""`glob`: the files a gitignore-style pattern picks under a folder, newest first."""

from __future__ import annotations

import asyncio
from typing import ClassVar

from eukhe.json_types import JsonObject
from eukhe.tools.base import Context, Result
from eukhe.tools.search import engines
from eukhe.tools.search.engines import Root
from eukhe.tools.search.shown import Bounded, close, ended, opened, pick_and_search, shown

__all__ = ["GLOB", "Glob"]

SHOWN = 500
"""Paths shown at most: the newest."""


class Glob:
    name = "glob"
    description = (
        "Find files by a gitignore-style pattern (`*.py` at any depth, `src/**/*.ts`, `/setup.py` at "
        "the top only), relative to `path` (default: the working directory). Returns paths, newest "
        "first. Skips hidden files and files .gitignore ignores."
    )
    schema: ClassVar[JsonObject] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "The pattern, as in .gitignore."},
            "path": {"type": "string", "description": "The folder to search (default: '.')."},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }
    replay_safe = True

    def __init__(self, engine: str = "auto") -> None:
        self.engine = engine  # "auto": ripgrep when installed, else Python's; or "rg", or "python"

    async def run(self, args: JsonObject, ctx: Context) -> Result:
        pattern: str = args["pattern"]
        if not pattern.strip() or pattern.startswith("!"):
            return Result(f"the pattern {pattern!r} picks nothing: give one such as '*.py' or 'src/**'", True)
        path = args.get("path") or "."
        start, err = await asyncio.to_thread(opened, path, ctx.cwd, ctx.boundary(), False)
        if start is None:
            return Result(err, True)
        try:
            return await self._search(ctx, start, pattern, path)
        finally:
            close(start)

    async def _search(self, ctx: Context, start: Root, pattern: str, path: str) -> Result:
        lim = ctx.limits
        pick, how = pick_and_search(ctx, self.engine, start, ctx.boundary(), pattern)
        found = await engines.files(pick, lim.search_max_files, how, ctx.cancel)
        # newest first; the walk's order among files of one time
        newest = sorted(found.files, key=lambda p: found.mtimes.get(p, 0.0), reverse=True)
        out = Bounded(lim.read_max_output)
        for p in newest[:SHOWN]:
            if not out.add(shown(start.named(p), ctx.cwd)):
                break
        notes = ended(found, "glob", lim.search_timeout)
        if found.walked.capped or found.more:
            notes.append(
                f"[only the first {lim.search_max_files:,} files were looked at: give a deeper path]"
            )
        if len(out.lines) < len(newest):
            notes.append(
                f"[the newest {len(out.lines):,} of {len(newest):,} files are shown: narrow the pattern]"
            )
        if not newest and not notes:
            return Result(f"no file under '{path}' matches {pattern!r}")
        return Result("\n".join([*out.lines, *notes]))


GLOB = Glob()
