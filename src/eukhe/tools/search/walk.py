"""Which files a search sees: ripgrep's rules, read in Python, so that `grep` and `glob` give the
same answer with ripgrep or without it.

The rules are ripgrep's defaults with `--no-require-git` (ignore files count outside a git
repository too), as its `ignore` crate applies them:
- a name that starts with `.` is hidden, file or folder, and skipped (the root itself is not:
  a path the model names is searched);
- `.rgignore`, `.ignore` and `.gitignore` files, in the folders walked and in every folder above
  the root, hold gitignore patterns relative to their own folder. Their kind ranks first: a
  match in any `.rgignore` decides before any `.ignore`, which decides before any `.gitignore`.
  Within a kind the deepest folder's match decides. `.gitignore` files above the folder that
  holds `.git` are not read;
- a folder that is ignored is not entered, so nothing under it comes back (as in git);
- git's `.git/info/exclude` and global excludes are not read (ripgrep is run without them).

Entries are walked depth first, each folder's entries sorted by name as bytes, as
`rg --sort path` walks. Symlinks are neither followed nor listed, as ripgrep walks by default.

Unreadable folders and ignore files are skipped, never raised.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

__all__ = ["IGNORE_FILES", "Ignores", "Walked", "walk"]

IGNORE_FILES = (".rgignore", ".ignore", ".gitignore")
"""The ignore files a folder may hold, in the order their kind decides."""

MAX_IGNORE_FILE = 1 << 20
"""Bytes of one ignore file read at most (a hostile repository's huge file is cut, not a stall)."""


def _spec(path: Path) -> pathspec.GitIgnoreSpec | None:
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_IGNORE_FILE)
    except OSError:
        return None
    lines = data.decode("utf-8", errors="replace").splitlines()
    try:
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
    except (ValueError, TypeError):  # a line pathspec cannot read: the file is taken as empty
        return None
    return spec if spec.patterns else None


def _decide(spec: pathspec.GitIgnoreSpec, rel: str) -> bool | None:
    """The last pattern that matches the path itself: True ignores it, False keeps it, None: none
    does. As ripgrep reads a pattern, it matches the whole path (a folder's with its `/`), never
    through a folder above (gitignore's reading has `!keep` match keep/x too; the walk never
    enters an ignored folder, so the two differ only where a pattern matched a folder above)."""
    for pattern in reversed(spec.patterns):
        regex = getattr(pattern, "regex", None)
        if pattern.include is not None and regex is not None and regex.fullmatch(rel):
            return bool(pattern.include)
    return None


@dataclass(frozen=True)
class Level:
    """One folder's ignore files: its path, whether it holds `.git`, and a spec per kind."""

    folder: Path
    git: bool
    specs: tuple[pathspec.GitIgnoreSpec | None, ...]

    @staticmethod
    def of(folder: Path) -> Level:
        return Level(
            folder,
            os.path.lexists(folder / ".git"),
            tuple(_spec(folder / name) for name in IGNORE_FILES),
        )

    @property
    def empty(self) -> bool:
        return not any(self.specs)


@dataclass(frozen=True)
class Ignores:
    """The ignore files that bear on a folder: its own and every folder's above it, deepest first."""

    levels: tuple[Level, ...]

    @staticmethod
    def above(root: Path) -> Ignores:
        """The levels of `root`'s parents, from the nearest to `/` (the root's own comes with `enter`)."""
        levels = [Level.of(p) for p in root.parents]
        return Ignores(tuple(lv for lv in levels if not lv.empty or lv.git))

    def enter(self, folder: Path) -> Ignores:
        lv = Level.of(folder)
        return Ignores((lv, *self.levels)) if not lv.empty or lv.git else self

    def ignored(self, path: Path, is_dir: bool) -> bool:
        """Whether the ignore files say `path` (inside every level's folder) is ignored."""
        for kind in range(len(IGNORE_FILES)):
            gitignore = IGNORE_FILES[kind] == ".gitignore"
            for lv in self.levels:
                spec = lv.specs[kind]
                if spec is not None:
                    rel = path.relative_to(lv.folder).as_posix() + ("/" if is_dir else "")
                    decided = _decide(spec, rel)
                    if decided is not None:
                        return decided
                if gitignore and lv.git:  # no .gitignore above the repository's root
                    break
        return False


@dataclass
class Walked:
    """What a walk skipped, for the tool's note."""

    files: int = 0
    capped: bool = False
    stopped: bool = False
    unreadable: list[str] = field(default_factory=list)


def _sorted(folder: Path) -> list[os.DirEntry[str]]:
    with os.scandir(folder) as it:
        return sorted(it, key=lambda e: os.fsencode(e.name))


def walk(
    root: Path,
    walked: Walked,
    max_files: int,
    stop: Callable[[], bool] = lambda: False,
    keep: Callable[[Path], bool] = lambda p: True,
) -> Iterator[Path]:
    """The files under the folder `root` that a search sees, in walk order, at most `max_files`
    of them (`walked.capped` says the rest was not walked). `stop` ends the walk early
    (`walked.stopped`); `keep` is false for a path that may not be read (a deny rule): it and
    what is under it are left out."""
    # an explicit stack of folder listings, not recursion: a hostile tree may nest deeper than
    # Python's stack
    top = Ignores.above(root).enter(root)
    listings: list[tuple[Iterator[os.DirEntry[str]], Path, Ignores]] = []
    if not _push(listings, root, top, walked):
        return
    while listings:
        if stop():
            walked.stopped = True
            return
        entries, d, ig = listings[-1]
        e = next(entries, None)
        if e is None:
            listings.pop()
            continue
        if e.name.startswith("."):
            continue
        p = d / e.name
        try:
            if e.is_symlink():  # not followed, not listed: ripgrep's default
                continue
            is_dir = e.is_dir(follow_symlinks=False)
            is_file = not is_dir and e.is_file(follow_symlinks=False)
        except OSError:
            continue
        if ig.ignored(p, is_dir) or not keep(p):
            continue
        if is_dir:
            _push(listings, p, ig.enter(p), walked)
        elif is_file:
            if walked.files >= max_files:
                walked.capped = True
                return
            walked.files += 1
            yield p


def _push(
    listings: list[tuple[Iterator[os.DirEntry[str]], Path, Ignores]], d: Path, ig: Ignores, walked: Walked
) -> bool:
    try:
        entries = _sorted(d)
    except OSError:
        walked.unreadable.append(str(d))
        return False
    listings.append((iter(entries), d, ig))
    return True
