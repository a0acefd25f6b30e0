"""`@path` in a prompt: the file attached after the prompt, numbered and cut as `read` shows it,
so the model has it without a call. A mention that names no file (an address, a decorator, a
handle) is left as it is; one that names a file that cannot be attached (binary, too large, a
folder) is attached as why not, so the model and the person both see it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from eukhe.tools.base import Limits
from eukhe.tools.files import resolve
from eukhe.tools.read import read_whole

__all__ = ["MAX_MENTIONS", "Attached", "attach", "mentioned"]

MENTION = re.compile(r"(?<![\w@/])@([^\s@]+)")
"""`@` at a word's start, then a path: no space (a word before the `@` makes it an address)."""

MAX_MENTIONS = 10
"""Files one prompt attaches at most; the rest are said, not attached."""

TRAILING = ".,;:!?)]}'\""
"""What ends a sentence after a path, taken off when the path with it names no file."""


@dataclass(frozen=True)
class Attached:
    """The prompt with its files after it, and one line a file for the person."""

    prompt: str
    said: tuple[str, ...] = ()


def mentioned(prompt: str, cwd: Path) -> list[str]:
    """The paths the prompt's `@` mentions name that exist, in order, each once."""
    out: list[str] = []
    for m in MENTION.finditer(prompt):
        raw = m.group(1)
        for shown in (raw, raw.rstrip(TRAILING)):
            if shown and resolve(shown, cwd).exists():
                if shown not in out:
                    out.append(shown)
                break
    return out


def attach(prompt: str, cwd: Path, limits: Limits | None = None, typed: str | None = None) -> Attached:
    """The prompt with each mentioned file after it, in a `<file path=...>` block. `typed`: what
    the person typed, when a template or skill expanded it: only its mentions attach (a
    stranger's template must not send `@~/.ssh/id_rsa` to the model)."""
    names = mentioned(prompt, cwd)
    if typed is not None:
        own = mentioned(typed, cwd)
        names = [n for n in names if n in own]
    if not names:
        return Attached(prompt)
    lim = limits or Limits()
    blocks, said = [], []
    for shown in names[:MAX_MENTIONS]:
        got = read_whole(shown, cwd, lim)
        if got.is_error:
            blocks.append(f'<file path="{shown}" attached="no">{got.content}</file>')
            said.append(f"@{shown} not attached: {got.content}")
        else:
            blocks.append(f'<file path="{shown}">\n{got.content}\n</file>')
            said.append(f"@{shown} attached ({len(got.content):,} characters)")
    if len(names) > MAX_MENTIONS:
        rest = ", ".join(names[MAX_MENTIONS:])
        said.append(f"only {MAX_MENTIONS} files are attached to one prompt; not attached: {rest}")
    return Attached(prompt + "\n\n" + "\n\n".join(blocks), tuple(said))
