"""Project instructions: `AGENTS.md` (or `CLAUDE.md` where no `AGENTS.md` stands beside
it), the files every peer reads into its system prompt. In this order, each under its
path: the home's; each folder's from the repository root (the nearest folder up that
holds `.git`, a folder or a file) down to the current folder's parent; the current
folder's. They fit `context.instructionsBytes` together, and what was cut is said.

A session reads them once (its system prompt stays byte-identical across its turns,
for the prompt cache); the interactive agent reads them again before each turn and,
when they changed, says so and takes the new text at that turn. Read as skills are:
never waiting on a FIFO, regular files only, UTF-8, each decided on as it is opened
(`ownfiles`): a repository's file only inside the repository (a stranger's `AGENTS.md ->
/proc/self/environ` or `-> ../../.aws/credentials` is refused, with where it leads); the
home's may lead into the user's dotfiles. None is ever read from /proc, /sys, /dev, a
process's folder or a secret place. Each file not loaded is said, with why (`lines`, and
the run's diagnostics)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from eukhe.ownfiles import Bound, home_bound, project_bound
from eukhe.rules import registry
from eukhe.settings.keys import INSTRUCTIONS_BYTES
from eukhe.skills._files import read_text

NAMES = registry.INSTRUCTIONS
"""The instruction files' names, in the order a folder's are looked for (`rules.registry`'s)."""
WITHHELD = "the person chose to start this session without it (a run's model changed it)"
INTRO = "# Instructions\n\nThe user's and the project's instructions, each under its file."


@dataclass(frozen=True)
class Part:
    """One file: its path, its size in bytes, the bytes of it the prompt holds, and why
    it could not be read (empty: it was)."""

    path: Path
    size: int
    shown: int
    problem: str = ""


@dataclass(frozen=True)
class Instructions:
    parts: tuple[Part, ...] = ()
    section: str = ""  # the system prompt's part ("" when no file loaded)

    def lines(self) -> list[str]:
        """What `/context` shows: each file, its size, and what of it the prompt holds."""
        if not self.parts:
            return [f"no instruction files ({' or '.join(NAMES)}) in the home or this project"]
        out = []
        for p in self.parts:
            if p.problem:
                out.append(f"{p.path}: not loaded: {p.problem}")
            elif p.shown < p.size:
                out.append(f"{p.path}: {p.shown} of {p.size} bytes (context.instructionsBytes)")
            else:
                out.append(f"{p.path}: {p.size} bytes")
        return out


def repository_root(cwd: Path) -> Path | None:
    """The nearest folder from `cwd` up that holds `.git` (a folder, or a worktree's file)."""
    for folder in (cwd, *cwd.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return None


def folders(home: Path, cwd: Path) -> list[tuple[Path, Bound]]:
    """The folders whose instruction files a session in `cwd` loads, in their order, each
    with the folder its files must be read within: the home (its links may lead out), then
    the repository's root (or `cwd`, outside one) down to `cwd`, within the repository."""
    repo = repository_root(cwd)
    root = repo or cwd
    rel = cwd.relative_to(root).parts
    chain = [root.joinpath(*rel[:i]) for i in range(len(rel) + 1)]  # the root down to `cwd`
    project = project_bound(root, home, "the repository" if repo is not None else "the project")
    return [(home, home_bound(home)), *((f, project) for f in chain)]


def candidates(home: Path, cwd: Path) -> list[tuple[Path, Bound]]:
    """The instruction files in their order, each folder's `AGENTS.md`, else its `CLAUDE.md`,
    each with the folder it must be read within (`folders`)."""
    out: list[tuple[Path, Bound]] = []
    seen: set[str] = set()
    for folder, bound in folders(home, cwd):
        for name in NAMES:
            path = folder / name
            if os.path.lexists(path):
                real = os.path.realpath(path)  # one file reached twice is read once
                if real not in seen:
                    seen.add(real)
                    out.append((path, bound))
                break
    return out


def file_key(path: Path) -> str:
    """An instruction file as eukhe names it across processes: its folder's real path, and
    its name (the file itself may be a link, and is named as the link)."""
    return os.path.join(os.path.realpath(path.parent), path.name)


def _cut(text: str, limit: int) -> str:
    return text.encode()[: max(limit, 0)].decode(errors="ignore")


def load_instructions(
    home: Path, cwd: Path, budget: int = INSTRUCTIONS_BYTES, withheld: frozenset[str] = frozenset()
) -> Instructions:
    """The instruction files, read now, within `budget` bytes in all (the later files cut
    first), and the system prompt's section that holds them; `withheld`: the files (by
    `file_key`) the person chose to start this session without, never read."""
    parts: list[Part] = []
    blocks: list[str] = []
    left = max(budget, 0)
    for path, bound in candidates(home, cwd):
        if file_key(path) in withheld:
            parts.append(Part(path, 0, 0, WITHHELD))
            continue
        got = read_text(str(path), bound, limit=max(budget, 1))
        if got.text is None:
            parts.append(Part(path, 0, 0, got.detail))
            continue
        size = len(got.text.encode())
        if got.cut:  # larger than it was read: its size as it was opened
            size = got.size
        shown = _cut(got.text, left)
        n = len(shown.encode())
        left -= n
        parts.append(Part(path, size, n))
        if not shown.strip():
            continue
        cut = (
            f"\n\n[… {size - n} more bytes of {path} were cut: context.instructionsBytes]" if n < size else ""
        )
        blocks.append(f"## {path}\n\n{shown.strip()}{cut}")
    section = f"{INTRO}\n\n" + "\n\n".join(blocks) if blocks else ""
    return Instructions(tuple(parts), section)
