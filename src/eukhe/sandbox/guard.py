"""What no command in the sandbox may make: a protected name anywhere in the workspace (what
eukhe or git loads as code or configuration, `rules.registry`: a `.git`, `.eukhe`, `.mcp.json`,
`.claude`, `.husky`, however a folding filesystem spells it), the folders a run's settings and git
name for it to load (`watched`), and the user's secret places where the workspace holds them
(`masked`: never shown, not even read-only); and the run's `Guard`, which sees to it.

Bubblewrap makes read-only only what exists: a bind over a name that does not exist yet makes its
mount point through the project's own bind, on the host (an empty `.mcp.json` left in the user's
project). So the sandbox holds these names in two halves:

- before a sandboxed process starts (a bash command, the Python kernel), a walk of the workspace's
  folders finds every protected name that exists, at any depth, and where a `.git` file's
  `gitdir:` leads: the sandbox binds each read-only, unless `sandbox.writable` names it;
- once the command and every process of its pid namespace have ended (after each Python cell too,
  and when the kernel stops: a kernel's thread can write later), a walk finds the protected names
  made since and removes them: they are the sandbox's own, made just now. The call's result says
  what was removed, why, and how a person allows it.

A walk stays cheap on a big tree: it remembers each folder's (st_ino, st_ctime_ns) and listing, and
lists again only a folder whose ctime moved (a new, renamed or removed entry moves its folder's
ctime, which userspace cannot set back, unlike mtime). A folder changed in the last `SETTLE_NS` is
listed again next time as well: a change within the same clock tick as the listing leaves ctime as
it was. A walk never follows a link, never descends into a protected name or a folder the sandbox
hides, and stops once it has listed `MAX_LISTED` folders or after `WALK_DEADLINE` seconds, saying
so; the folders it listed are remembered, so the next walk goes further.

What the sandbox made: a protected name the last walk did not see in a folder it listed (or in a
folder made since), or one it saw there, now another inode (for a link: another target). A name in
a folder the last walk never reached (it was cut) is taken as it is. A protected folder that only
moved (a folder above it renamed: the same inode) is not new. While no sandboxed process has run
since the last walk, whatever appears is a person's, taken as it is.

Removal never leaves the workspace: the folder holding the name is opened from the workspace's
root one component at a time, following no link, and the name is removed through that descriptor
only while it is still the inode the walk saw.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass

from eukhe.rules import registry

__all__ = ["MAX_LISTED", "PROTECTED", "WALK_DEADLINE", "Check", "Guard", "protected"]

PROTECTED = tuple(registry.NAMES)
"""Names (`rules.registry.NAMES`, folded) no command in the sandbox makes or changes, at any depth
of the workspace: what runs later outside the sandbox (git's config and hooks, Claude Code's
hooks), or configures eukhe (its settings, its MCP servers, its agents and skills)."""


def protected(name: str) -> bool:
    """Whether an entry's name is a protected one, as a folding filesystem compares names."""
    return registry.guard_of(name) is not None


WALK_DEADLINE = 3.0
"""Seconds one walk of the workspace may take."""
MAX_LISTED = 100_000
"""Folders one walk lists, at most (a remembered folder whose ctime did not move is not listed)."""
LOCK_WAIT = WALK_DEADLINE + 2.0
"""Seconds a walk waits for another one to end."""
SETTLE_NS = 2_000_000_000
"""A folder whose ctime is this recent is listed again by the next walk."""
GITDIR_BYTES = 4096
"""Bytes of a `.git` file read for its `gitdir:` line."""
RULE = (
    "no command in the sandbox may make or change a .git (git runs its config and hooks outside the "
    "sandbox), .eukhe (eukhe's settings), .mcp.json (the MCP servers eukhe starts), .claude (the hooks "
    "and agents eukhe runs), git's hooks folder or a folder the settings name in the workspace, nor "
    "one of your secret places (~/.ssh, ~/.aws, ...)"
)
ALLOW = (
    "a person may allow it: by letting the command run outside the sandbox when asked (bash's "
    "outside_sandbox), or by adding its path to sandbox.writable in their own settings"
)
"""Why a protected name made in the sandbox is removed (`RULE`), and how a person allows it (`ALLOW`)."""

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_KINDS = {"folder": "a folder", "file": "a file", "link": "a link", "other": "a special file"}


@dataclass(frozen=True)
class _Mark:
    """A protected entry as a walk saw it: its kind and inode; for a link, its own ctime and the
    inode it leads to (0: nothing), since the link stays while what it leads to changes."""

    kind: str
    ino: int
    link: tuple[int, int] | None = None


@dataclass(frozen=True)
class _Folder:
    """A folder as a walk listed it: its inode and ctime, whether that ctime was old enough to trust
    (`settled`), its subfolders (name: inode) and its protected entries."""

    ino: int
    ctime: int
    settled: bool
    subdirs: dict[str, int]
    marks: dict[str, _Mark]


@dataclass(frozen=True)
class Marks:
    """The paths a walk holds besides the protected names (`paths`: the watched and the masked),
    and those of them never bound (`masked`)."""

    paths: frozenset[str] = frozenset()
    masked: frozenset[str] = frozenset()


class _State:
    KNOWN = 0  # listed by the last walk, the same inode
    FRESH = 1  # made (or moved in) since the last walk
    UNKNOWN = 2  # there at the last walk, which never reached it


@dataclass(frozen=True)
class Check:
    """What one walk found: the protected paths that exist (real paths, for read-only binds), what
    it removed (paths relative to the workspace, with their kinds) and could not remove (with why),
    why it was cut (None: it saw every folder), and what it cost."""

    protected: tuple[str, ...] = ()
    removed: tuple[tuple[str, str], ...] = ()
    failed: tuple[tuple[str, str], ...] = ()
    cut: str | None = None
    folders: int = 0
    listed: int = 0
    seconds: float = 0.0

    def notes(self, who: str) -> list[str]:
        """The lines a call's result gets: what `who` made that was removed (or could not be), and
        when the walk was cut."""
        out = []
        if self.removed:
            items = ", ".join(f"{p} ({_KINDS.get(k, k)})" for p, k in self.removed)
            out.append(f"[removed what {who} made: {items}. {RULE[0].upper()}{RULE[1:]}; {ALLOW}]")
        if self.failed:
            items = "; ".join(f"{p}: {why}" for p, why in self.failed)
            out.append(
                f"[{who} made what could not be removed: {items}. {RULE[0].upper()}{RULE[1:]}: remove it "
                "yourself before git or eukhe runs there]"
            )
        if self.cut is not None:
            out.append(
                "[the look for what eukhe and git load (.git, .eukhe, .mcp.json, .claude, ...) in the "
                f"workspace was cut: {self.cut}; what exists "
                "in the folders it did not reach is not read-only in the sandbox, and what was made there "
                "is not removed]"
            )
        return out

    @property
    def harmful(self) -> bool:
        """Whether the sandbox made something it may not (removed or not)."""
        return bool(self.removed or self.failed)


class Guard:
    """A run's watch over the protected names of its workspace (`root`): the last walk's memory and
    the windows open now (sandboxed processes that may be writing). Made with the run's `Sandbox`
    and passed down with it; every method blocks (a walk: call it off the event loop), takes
    `deadline` seconds at most and waits `LOCK_WAIT` at most for another walk.

    `begin` before a sandboxed process starts (the protected paths to bind read-only), `check`
    while one may run (a kernel between cells), `end` once it ended (`ended`: every process of its
    pid namespace is known gone), `vouch` after a command a person let run outside the sandbox
    (what it made stays). `lifted`: the real paths `sandbox.writable` names (a protected name
    among them is not held); `skip`: the real paths of folders the sandbox hides (not walked)."""

    def __init__(
        self, deadline: float = WALK_DEADLINE, max_listed: int = MAX_LISTED, settle_ns: int = SETTLE_NS
    ) -> None:
        self.deadline = deadline
        self.max_listed = max_listed
        self.settle_ns = settle_ns
        self._lock = threading.Lock()  # one walk at a time
        self._count = threading.Lock()  # the windows' count, never held during a walk
        self._root: str | None = None
        self._memo: dict[str, _Folder] = {}
        self._open = 0
        self._stale = False  # a sandboxed process may have written since the last complete walk
        self._doomed: set[str] = set()  # made in the sandbox, not yet removed
        self._marks = Marks()  # what the last walk held besides the protected names

    def enter(self) -> bool:
        """A sandboxed process is about to start (a window opens): whether the look before it
        removes what appeared (another window is open, or one was since the last complete look)."""
        with self._count:
            remove = self._open > 0 or self._stale
            self._open += 1
        return remove

    def leave(self) -> None:
        """A sandboxed process ended (its window closes): the next look removes what appeared."""
        with self._count:
            self._open = max(0, self._open - 1)
            self._stale = True

    @property
    def watching(self) -> bool:
        """Whether a sandboxed process may have written since the last complete look."""
        with self._count:
            return self._open > 0 or self._stale

    def look(
        self,
        root: str,
        lifted: Iterable[str] = (),
        skip: Iterable[str] = (),
        *,
        remove: bool,
        ended: bool = True,
        watched: Iterable[str] = (),
        masked: Iterable[str] = (),
    ) -> Check:
        """One walk of `root`: what exists, and (`remove`) what the sandbox made since the last
        walk, removed. `ended`: no process of a window that closed may still write. `watched`:
        paths (absolute, real) held as a protected name is; `masked`: paths held so too, but
        never bound (the sandbox hides them: a secret place)."""
        marks = Marks(frozenset(watched) | frozenset(masked), frozenset(masked))
        return self._pass(root, frozenset(lifted), frozenset(skip), remove, ended, marks)

    def begin(self, root: str, lifted: Iterable[str] = (), skip: Iterable[str] = ()) -> Check:
        """`enter`, then its `look`."""
        return self.look(root, lifted, skip, remove=self.enter())

    def check(self, root: str, lifted: Iterable[str] = (), skip: Iterable[str] = ()) -> Check:
        """A `look` while a window may be open."""
        return self.look(root, lifted, skip, remove=self.watching)

    def end(
        self, root: str, lifted: Iterable[str] = (), skip: Iterable[str] = (), ended: bool = True
    ) -> Check:
        """`leave`, then its `look`."""
        self.leave()
        return self.look(root, lifted, skip, remove=True, ended=ended)

    def vouch(self, root: str, lifted: Iterable[str] = (), skip: Iterable[str] = ()) -> Check:
        """A `look` that takes what appeared as a person's (after a call they let run outside)."""
        return self.look(root, lifted, skip, remove=False)

    # --- the walk -------------------------------------------------------------------------------------

    def _pass(
        self, root: str, lifted: frozenset[str], skip: frozenset[str], remove: bool, ended: bool, marks: Marks
    ) -> Check:
        if not self._lock.acquire(timeout=LOCK_WAIT):
            with self._count:
                self._stale = self._stale or remove
            cut = f"another look still ran after {LOCK_WAIT:g} s"
            return Check(protected=self._binds(self._memo, root, lifted, skip, marks), cut=cut)
        try:
            return self._walked(root, lifted, skip, remove, ended, marks)
        finally:
            self._lock.release()

    def _walked(
        self, root: str, lifted: frozenset[str], skip: frozenset[str], remove: bool, ended: bool, marks: Marks
    ) -> Check:
        began = time.monotonic()
        if root != self._root or marks != self._marks:  # a new workspace: nothing known yet
            self._root, self._memo, self._doomed, self._marks = root, {}, set(), marks
        old = self._memo
        first = not old
        new, states, cut, folders, listed = self._walk(root, old, skip, began + self.deadline, marks)
        removed: list[tuple[str, str]] = []
        failed: list[tuple[str, str]] = []
        made = [] if first else self._made(old, new, states)
        doomed = [
            (folder, name, mark)
            for folder, f in new.items()
            for name, mark in f.marks.items()
            if _join(folder, name) in self._doomed
        ]
        wanted = {
            _join(folder, name): (folder, name, mark)
            for folder, name, mark in [*(made if remove else []), *doomed]
        }
        for path, (folder, name, mark) in sorted(wanted.items()):
            if path in lifted:
                continue
            why = _remove(root, folder, name, mark)
            rel = os.path.relpath(path, root)
            if why is None:
                removed.append((rel, mark.kind))
                self._doomed.discard(path)
                f = new[folder]
                left = {n: m for n, m in f.marks.items() if n != name}
                new[folder] = _Folder(f.ino, f.ctime, False, f.subdirs, left)
            else:
                failed.append((rel, why))
                self._doomed.add(path)
        self._memo = new
        with self._count:
            if (cut is not None and remove) or not ended:
                self._stale = True
            elif cut is None:
                self._stale = False
        return Check(
            protected=self._binds(new, root, lifted, skip, marks),
            removed=tuple(removed),
            failed=tuple(failed),
            cut=cut,
            folders=folders,
            listed=listed,
            seconds=time.monotonic() - began,
        )

    def _walk(
        self, root: str, old: dict[str, _Folder], skip: frozenset[str], deadline: float, marks: Marks
    ) -> tuple[dict[str, _Folder], dict[str, int], str | None, int, int]:
        """Every folder under `root` (none that is or lies in `skip`), listed again where its ctime
        moved; the state of each against `old`; why it was cut; folders seen and listed."""
        now = time.time_ns()
        new: dict[str, _Folder] = {}
        states: dict[str, int] = {}
        stack: list[tuple[str, int]] = [(root, _State.KNOWN)]
        folders = listed = 0
        cut = None
        while stack:
            if folders % 64 == 0 and time.monotonic() > deadline:
                cut = f"it stopped after {self.deadline:g} s, {folders} folders in"
                break
            path, above = stack.pop()
            folders += 1
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if not stat.S_ISDIR(st.st_mode):
                continue
            before = old.get(path)
            if before is not None and before.ino == st.st_ino:
                state = _State.KNOWN
            elif before is not None or path == root:
                state = _State.FRESH if before is not None else _State.KNOWN
            else:
                state = above
            if (
                before is not None
                and before.settled
                and before.ino == st.st_ino
                and before.ctime == st.st_ctime_ns
            ):
                f = _relinked(path, before)
            else:
                if listed >= self.max_listed:
                    cut = f"it stopped after listing {listed} folders (at most {self.max_listed} a look)"
                    break
                listed += 1
                got = _list(path, st, now - self.settle_ns, marks.paths)
                if got is None:
                    continue
                f = got
            new[path] = f
            states[path] = state
            for name, ino in f.subdirs.items():
                child = _join(path, name)
                if child in skip:
                    continue
                if state == _State.KNOWN and before is not None:
                    # a subfolder's state, from what this folder held at the last walk
                    was = before.subdirs.get(name)
                    below = _State.UNKNOWN if was == ino else _State.FRESH
                else:
                    below = state
                stack.append((child, below))
        if cut is not None:  # what it did not reach is as the last walk saw it
            for path, f in old.items():
                new.setdefault(path, f)
        return new, states, cut, folders, listed

    @staticmethod
    def _made(
        old: dict[str, _Folder], new: dict[str, _Folder], states: dict[str, int]
    ) -> list[tuple[str, str, _Mark]]:
        """The protected entries made (or replaced) since the last walk."""
        seen = {m for f in old.values() for m in f.marks.values() if m.kind in ("folder", "file")}
        out = []
        for folder, f in new.items():
            state = states.get(folder, _State.UNKNOWN)
            if state == _State.UNKNOWN:
                continue
            before = old.get(folder) if state == _State.KNOWN else None
            for name, mark in f.marks.items():
                if before is not None and before.marks.get(name) == mark:
                    continue
                if before is None and state == _State.KNOWN:
                    continue  # the root at the first walk
                if mark in seen:  # a protected folder moved with a folder above it
                    continue
                out.append((folder, name, mark))
        return out

    def _binds(
        self, memo: dict[str, _Folder], root: str, lifted: frozenset[str], skip: frozenset[str], marks: Marks
    ) -> tuple[str, ...]:
        """The real paths to bind read-only: every protected entry that exists, and where a `.git`
        file leads (a link's or a `gitdir:`'s target only when it lies in the workspace and outside
        what the sandbox hides: a bind would show a hidden folder); never a masked one."""
        out: set[str] = set()
        for folder, f in memo.items():
            for name, mark in f.marks.items():
                path = _join(folder, name)
                if path in lifted or path in marks.masked:
                    continue
                if mark.kind == "link":
                    path = os.path.realpath(path)
                    if not os.path.exists(path):
                        continue  # leads nowhere yet: what it comes to lead to is its change
                elif mark.kind == "file" and name == ".git":
                    target = _gitdir(path)
                    if target is not None and _inside(target, root, skip) and target not in lifted:
                        out.add(target)
                if _inside(path, root, skip) and path not in lifted:
                    out.add(path)
        return tuple(sorted(out))


def _join(folder: str, name: str) -> str:
    return folder + name if folder.endswith("/") else f"{folder}/{name}"


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _inside(path: str, root: str, skip: frozenset[str]) -> bool:
    return path != root and _under(path, root) and not any(_under(path, s) for s in skip)


def _mark(path: str, entry: os.DirEntry[str]) -> _Mark:
    if entry.is_symlink():
        return _link(path, entry.inode())
    if entry.is_dir(follow_symlinks=False):
        return _Mark("folder", entry.inode())
    if entry.is_file(follow_symlinks=False):
        return _Mark("file", entry.inode())
    return _Mark("other", entry.inode())


def _link(path: str, ino: int) -> _Mark:
    try:
        own = os.lstat(path).st_ctime_ns
    except OSError:
        own = 0
    try:
        target = os.stat(path).st_ino
    except OSError:
        target = 0
    return _Mark("link", ino, (own, target))


def _relinked(path: str, f: _Folder) -> _Folder:
    """A remembered listing, its links looked at again: what a link leads to changes without its
    folder's ctime moving."""
    if not any(m.kind == "link" for m in f.marks.values()):
        return f
    marks = {n: _link(_join(path, n), m.ino) if m.kind == "link" else m for n, m in f.marks.items()}
    return _Folder(f.ino, f.ctime, f.settled, f.subdirs, marks)


def _list(path: str, st: os.stat_result, settled: int, marked: frozenset[str]) -> _Folder | None:
    """The folder at `path` listed: its subfolders and protected entries (a protected name, or
    one of the `marked` paths); settled when its ctime is before `settled`. None when it cannot be
    listed."""
    subdirs: dict[str, int] = {}
    marks: dict[str, _Mark] = {}
    try:
        with os.scandir(path) as entries:
            for e in entries:
                if protected(e.name) or (marked and _join(path, e.name) in marked):
                    marks[e.name] = _mark(e.path, e)
                elif e.is_dir(follow_symlinks=False):
                    subdirs[e.name] = e.inode()
    except OSError:
        return None
    return _Folder(st.st_ino, st.st_ctime_ns, st.st_ctime_ns < settled, subdirs, marks)


def _gitdir(path: str) -> str | None:
    """The real path a `.git` file's `gitdir:` line names, None when it names none."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        text = os.read(fd, GITDIR_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)
    for line in text.splitlines():
        if line.startswith("gitdir:"):
            where = line.removeprefix("gitdir:").strip()
            if where:
                return os.path.realpath(os.path.join(os.path.dirname(path), where))
    return None


def _remove(root: str, folder: str, name: str, mark: _Mark) -> str | None:
    """Remove `name` in `folder` (under `root`) if it is still `mark`'s inode, reaching it from the
    root without following a link; None when done, else why not."""
    rel = os.path.relpath(folder, root)
    try:
        fd = os.open(root, _DIR)
    except OSError as e:
        return f"the workspace could not be opened ({e.strerror or e})"
    try:
        for part in [] if rel == "." else rel.split("/"):
            try:
                inner = os.open(part, _DIR, dir_fd=fd)
            except OSError as e:
                return f"its folder could not be opened without following a link ({e.strerror or e})"
            os.close(fd)
            fd = inner
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return None  # gone already
        except OSError as e:
            return f"it could not be looked at ({e.strerror or e})"
        if st.st_ino != mark.ino:
            return "it was replaced while it was being removed"
        try:
            if stat.S_ISDIR(st.st_mode):
                shutil.rmtree(name, dir_fd=fd)
            else:
                os.unlink(name, dir_fd=fd)
        except OSError as e:
            return f"removing it failed ({e.strerror or e})"
        return None
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
