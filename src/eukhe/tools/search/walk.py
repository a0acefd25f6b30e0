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

The walk holds descriptors, never names: each folder is opened by its parent's descriptor
without following a link (`O_NOFOLLOW`), so a folder swapped for a link while the walk runs
leads nowhere, and the files it yields are opened the same way (`open_file`). An ignore file
is read when it is a regular file, or a link to one beneath the root (ripgrep, which sees only
the root, reads those alone). Unreadable folders and ignore files are skipped, never raised.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

__all__ = ["IGNORE_FILES", "Ignores", "Walked", "open_file", "walk", "walk_fds"]

IGNORE_FILES = (".rgignore", ".ignore", ".gitignore")
"""The ignore files a folder may hold, in the order their kind decides."""

MAX_IGNORE_FILE = 1 << 20
"""Bytes of one ignore file read at most (a hostile repository's huge file is cut, not a stall)."""

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_NOCTTY | os.O_CLOEXEC


def open_file(name: str, dfd: int) -> int | None:
    """The regular file `name` in the folder `dfd`, open for reading, or None: never through a
    link, never waiting on a FIFO, never a device's open."""
    try:
        fd = os.open(name, FILE_FLAGS, dir_fd=dfd)
    except OSError:
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _read_spec(fd: int) -> pathspec.GitIgnoreSpec | None:
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO would wait, a device never end
            return None
        data = os.read(fd, MAX_IGNORE_FILE)
    except OSError:
        return None
    lines = data.decode("utf-8", errors="replace").splitlines()
    try:
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
    except (ValueError, TypeError):  # a line pathspec cannot read: the file is taken as empty
        return None
    return spec if spec.patterns else None


def _spec(path: Path) -> pathspec.GitIgnoreSpec | None:
    """The ignore file at `path` (above a search's root, or in a folder `ls` lists)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return _read_spec(fd)
    finally:
        os.close(fd)


def _spec_in(name: str, dfd: int, link: bool, root: str) -> pathspec.GitIgnoreSpec | None:
    """The ignore file `name` in the folder `dfd` of a walk under `root`: a regular file, or a
    link that leads to one beneath the root."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC | (0 if link else os.O_NOFOLLOW)
    try:
        fd = os.open(name, flags, dir_fd=dfd)
    except OSError:
        return None
    try:
        if link:
            real = os.readlink(f"/proc/self/fd/{fd}")
            if not (real == root or real.startswith(root.rstrip("/") + "/")):
                return None
        return _read_spec(fd)
    except OSError:
        return None
    finally:
        os.close(fd)


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

    @staticmethod
    def listed(folder: Path, dfd: int, entries: list[os.DirEntry[str]], root: str) -> Level:
        """The level of a folder the walk holds open (`dfd`), from its listing: no name is
        tried that the listing lacks."""
        names = {e.name: e for e in entries if e.name.startswith(".")}
        specs: list[pathspec.GitIgnoreSpec | None] = []
        for name in IGNORE_FILES:
            e = names.get(name)
            link = False
            if e is not None:
                with contextlib.suppress(OSError):
                    link = e.is_symlink()
            specs.append(_spec_in(name, dfd, link, root) if e is not None else None)
        return Level(folder, ".git" in names, tuple(specs))

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
        return self.add(Level.of(folder))

    def add(self, lv: Level) -> Ignores:
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


def _listed(dfd: int) -> list[os.DirEntry[str]]:
    with os.scandir(dfd) as it:  # scandir takes a copy of the descriptor
        return sorted(it, key=lambda e: os.fsencode(e.name))


@dataclass
class _Folder:
    fd: int
    path: Path
    ignores: Ignores
    entries: Iterator[os.DirEntry[str]]


def walk_fds(
    dfd: int,
    root: Path,
    walked: Walked,
    max_files: int,
    stop: Callable[[], bool] = lambda: False,
    keep: Callable[[Path], bool] = lambda p: True,
) -> Iterator[tuple[int, str, Path]]:
    """The files under the folder open as `dfd` (its real path `root`) that a search sees, in
    walk order, at most `max_files` of them (`walked.capped` says the rest was not walked): each
    as its folder's descriptor, its name there and its path, the descriptor open until the next
    file is asked for. `stop` ends the walk early (`walked.stopped`); `keep` is false for a path
    that may not be read (a deny rule, a place no tool reaches): it and what is under it are left
    out. `dfd` stays the caller's to close."""
    # an explicit stack of folders, not recursion: a hostile tree may nest deeper than Python's stack
    try:
        inside = os.readlink(f"/proc/self/fd/{dfd}")  # where a link to an ignore file may lead
    except OSError:
        inside = str(root)
    stack: list[_Folder] = []
    try:
        top = _open(os.dup(dfd), root, Ignores.above(root), walked, inside)
        if top is None:
            return
        stack.append(top)
        while stack:
            if stop():
                walked.stopped = True
                return
            here = stack[-1]
            e = next(here.entries, None)
            if e is None:
                os.close(stack.pop().fd)
                continue
            if e.name.startswith("."):
                continue
            p = here.path / e.name
            try:
                if e.is_symlink():  # not followed, not listed: ripgrep's default
                    continue
                is_dir = e.is_dir(follow_symlinks=False)
                is_file = not is_dir and e.is_file(follow_symlinks=False)
            except OSError:
                continue
            if here.ignores.ignored(p, is_dir) or not keep(p):
                continue
            if is_dir:
                try:
                    fd = os.open(e.name, DIR_FLAGS, dir_fd=here.fd)  # a link put there since: ELOOP
                except OSError:
                    walked.unreadable.append(str(p))
                    continue
                inner = _open(fd, p, here.ignores, walked, inside)
                if inner is not None:
                    stack.append(inner)
            elif is_file:
                if walked.files >= max_files:
                    walked.capped = True
                    return
                walked.files += 1
                yield here.fd, e.name, p
    finally:
        for f in stack:
            os.close(f.fd)


def _open(fd: int, path: Path, above: Ignores, walked: Walked, root: str) -> _Folder | None:
    """The folder open as `fd` (taken: closed here when it cannot be listed), listed."""
    try:
        entries = _listed(fd)
    except OSError:
        os.close(fd)
        walked.unreadable.append(str(path))
        return None
    return _Folder(fd, path, above.add(Level.listed(path, fd, entries, root)), iter(entries))


def walk(
    root: Path,
    walked: Walked,
    max_files: int,
    stop: Callable[[], bool] = lambda: False,
    keep: Callable[[Path], bool] = lambda p: True,
) -> Iterator[Path]:
    """The paths of the files under the folder `root` that a search sees (`walk_fds`), `root`
    opened as it is named."""
    try:
        dfd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        walked.unreadable.append(str(root))
        return
    try:
        for _, _, p in walk_fds(dfd, root, walked, max_files, stop, keep):
            yield p
    finally:
        os.close(dfd)
