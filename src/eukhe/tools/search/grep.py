"""`grep`: the lines that match a regular expression, under a folder, as `path:line: text`."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import ClassVar

from eukhe.json_types import JsonObject
from eukhe.tools.base import Context, Result
from eukhe.tools.search import engines
from eukhe.tools.search.engines import Found, Root
from eukhe.tools.search.shown import Bounded, close, cut, ended, opened, pick_and_search, shown, withheld
from eukhe.tools.search.subset import refusal

__all__ = ["GREP", "Grep"]

LIMIT = 100
"""Matching lines shown when the call gives no `limit`."""

MAX_LIMIT = 1000
MAX_CONTEXT = 10


def _grouped(found: Found, root: Root, context: int, cwd: Path, out: Bounded) -> None:
    """The hits as `path:line: text`, each with `context` lines around it as `path-line- text`
    (the lines read through descriptors with them), runs of lines that do not touch parted by
    `--`."""
    hits = found.hits
    last: tuple[Path, int] | None = None
    i = 0
    while i < len(hits):
        p = hits[i].path  # the hits of one file come together, in walk order
        j = i
        while j < len(hits) and hits[j].path == p:
            j += 1
        mine = hits[i:j]
        i = j
        name = shown(root.named(p), cwd)
        wanted = found.lines.get(p, {}) if context else {}
        matched = {h.line: h.text for h in mine}
        numbers = sorted({*wanted, *matched})
        for n in numbers:
            apart = last is not None and (last[0] != p or n > last[1] + 1)
            if apart and context and not out.add("--"):
                return
            sep = ":" if n in matched else "-"
            if not out.add(f"{name}{sep}{n}{sep} {cut(matched.get(n, wanted.get(n, '')))}"):
                return
            last = (p, n)


def _compiles(pattern: str) -> str | None:
    """Why Python cannot compile the pattern (in the subset, ripgrep cannot either), or None."""
    try:
        re.compile(pattern)
    except re.error as e:
        return f"it does not compile: {e}"
    return None


class Grep:
    name = "grep"
    description = (
        "Search file contents with a regular expression: matching lines as `path:line: text`. "
        "Skips hidden, .gitignore'd and binary files. `glob` picks files (`*.py`, `src/**/*.ts`); "
        "`context` adds lines around each match. No look-around or back-references; (?i) ignores case."
    )
    schema: ClassVar[JsonObject] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "The regular expression."},
            "path": {"type": "string", "description": "A folder or file (default: '.')."},
            "glob": {"type": "string", "description": "Only the files this pattern picks."},
            "context": {
                "type": "integer",
                "minimum": 0,
                "maximum": MAX_CONTEXT,
                "description": "Lines around each match (default 0).",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_LIMIT,
                "description": f"Lines shown at most (default {LIMIT}).",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }
    replay_safe = True

    def __init__(self, engine: str = "auto") -> None:
        self.engine = engine  # "auto": ripgrep when installed, else Python's; or "rg", or "python"

    async def run(self, args: JsonObject, ctx: Context) -> Result:
        pattern: str = args["pattern"]
        bad = refusal(pattern) or _compiles(pattern)
        if bad:
            return Result(f"the pattern {pattern!r} cannot be used: {bad}", True)
        path = args.get("path") or "."
        start, err = await asyncio.to_thread(opened, path, ctx.cwd, ctx.boundary(), True)
        if start is None:
            return Result(err, True)
        try:
            return await self._search(args, ctx, start, pattern, path)
        finally:
            close(start)

    async def _search(self, args: JsonObject, ctx: Context, start: Root, pattern: str, path: str) -> Result:
        lim = ctx.limits
        want = int(args.get("limit", LIMIT))
        context = int(args.get("context", 0))
        pick, how = pick_and_search(ctx, self.engine, start, ctx.boundary(), args.get("glob") or None)
        found = await engines.hits(pick, pattern, want, how, ctx.cancel, context)
        if found.error:
            return Result(f"the pattern {pattern!r} cannot be used: {found.error}", True)
        out = Bounded(lim.read_max_output)
        _grouped(found, start, context, ctx.cwd, out)
        notes = ended(found, "grep", lim.search_timeout) + withheld(found, start, ctx.cwd)
        if not found.hits and not notes:
            where = f" in files matching {pick.glob!r}" if pick.glob else ""
            return Result(f"no line matches {pattern!r} under '{path}'{where}")
        n = len(found.hits)
        if found.more:
            notes.append(
                f"[the first {n:,} matching lines are shown; more match: narrow the pattern, path or glob]"
            )
        if out.full:
            notes.append(
                f"[output capped at {lim.read_max_output:,} characters: narrow the pattern, path or glob, "
                "or lower context]"
            )
        return Result("\n".join([*out.lines, *notes]))


GREP = Grep()
