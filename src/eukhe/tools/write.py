"""`write`: a whole file's content, written atomically."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import ClassVar

from eukhe.json_types import JsonObject
from eukhe.tools.base import Context, Result
from eukhe.tools.files import resolve, why
from eukhe.tools.reach import Check, Refused, slot

__all__ = ["WRITE", "Write", "count_lines"]


def count_lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def _write(shown: str, content: str, cwd: Path, check: Check) -> Result:
    path = resolve(shown, cwd)
    data = content.encode("utf-8", errors="replace")
    try:
        with slot(path, check, shown, make=True) as there:
            odd = there.oddity(shown, path, "write writes")
            if odd is not None:
                return Result(odd, True)
            existed = there.replace(data)
    except Refused as e:
        return Result(f"not written: {e}", True)
    except (FileExistsError, NotADirectoryError):
        return Result(f"'{shown}' cannot be written: a part of its directory path is a file", True)
    except OSError as e:
        return Result(f"'{shown}' cannot be written: {why(e)}", True)
    verb = "overwrote" if existed else "created"
    lines = _plural(count_lines(content), "line")
    return Result(f"{verb} '{shown}': {_plural(len(data), 'byte')}, {lines}")


class Write:
    name = "write"
    description = (
        "Write a file whole: creates it (and its parent directories) or replaces all its content. "
        "The write is atomic and keeps an existing file's permissions. To change part of a file, "
        "use edit. Paths are relative to the working directory."
    )
    schema: ClassVar[JsonObject] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The file to write."},
            "content": {"type": "string", "description": "The file's whole new content."},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    }
    replay_safe = False

    async def run(self, args: JsonObject, ctx: Context) -> Result:
        return await asyncio.to_thread(_write, args["path"], args["content"], ctx.cwd, ctx.boundary())


WRITE = Write()
