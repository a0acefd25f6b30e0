"""Opening a path for a tool so that the object decided on is the object touched.

A name checked and then opened can be two objects: a link flipped between the check and
the open (a cell of the kernel can flip one in a loop) turns a write inside the project
into one outside it. So no tool decides on a name. Each opens first, without side
effects, and asks the boundary (`rules.confine`, through a `Check`) on the real path of
the descriptor it holds, read back from the kernel (`/proc/self/fd`); then it reads,
lists or writes through that descriptor only:

- a file or folder to read is opened with `O_PATH` (following links; opening a device
  this way runs none of its driver's open), decided on, and only then opened for reading
  through its descriptor: the same inode, or an error;
- a file to write is a `Slot`: its folder opened and decided on, its name in it; the
  new content goes to a temporary file in that folder, renamed over the name by the
  folder's descriptor (`renameat`), which replaces a link planted there rather than
  following it. Folders a write must make are made one at a time, each under the folder
  descriptor decided on before it, and opened with `O_NOFOLLOW`.

A link inside the workspace that leads inside stays usable; one that leads out is
decided as outside, on the object it reached.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from eukhe.fdwrite import write_all
from eukhe.filekind import kind
from eukhe.ownfiles import Refused, real_of
from eukhe.rules.access import Cfg, Mode, Policy, Verdict
from eukhe.rules.confine import Act, Where, opened, reach

__all__ = [
    "Check",
    "Opened",
    "Refused",
    "Slot",
    "beneath",
    "open_dir",
    "open_object",
    "real_of",
    "slot",
    "standalone",
    "where_of",
]

Check = Callable[[Act, str], str | None]
"""The boundary's answer on an object a tool holds open, by its act and real path: None
when the tool may go on, else why it may not (`run.permit.Gate.opened`)."""


def _lead(shown: str, path: Path, real: str) -> str:
    return f"'{shown}'" if os.path.abspath(path) == real else f"'{shown}' (it leads to '{real}')"


def _decide(check: Check, act: Act, shown: str, path: Path, real: str) -> None:
    why = check(act, real)
    if why is not None:
        raise Refused(f"{_lead(shown, path, real)} may not be touched: {why}")


@dataclass
class Opened:
    """An object a tool may read: its descriptor, its real path, its stat."""

    fd: int
    real: str
    st: os.stat_result

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)

    def __enter__(self) -> Opened:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def open_object(path: Path, act: Act, check: Check, shown: str) -> Opened:
    """The object at `path` (links followed), decided on for `act`, open for reading when
    it is a regular file (`O_RDONLY`), else held by its `O_PATH` descriptor (a folder, a
    device: the caller says why it will not read it). Raises Refused, or OSError for what
    the path does not hold (FileNotFoundError, ...)."""
    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        real = real_of(fd)
        _decide(check, act, shown, path, real)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return Opened(fd, real, st)
        rd = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    got = os.fstat(rd)
    if (got.st_dev, got.st_ino) != (st.st_dev, st.st_ino):  # /proc/self/fd reopens the inode held
        os.close(rd)
        raise Refused(f"'{shown}' changed while it was opened")
    return Opened(rd, real, got)


def open_dir(path: Path, act: Act, check: Check, shown: str) -> Opened:
    """The folder at `path` (links followed), decided on for `act`, open for listing
    (`os.scandir(fd)`, `openat`). Raises Refused, NotADirectoryError, or OSError."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        real = real_of(fd)
        _decide(check, act, shown, path, real)
        return Opened(fd, real, os.fstat(fd))
    except BaseException:
        os.close(fd)
        raise


@dataclass
class Slot:
    """A decided place for a file: its folder's descriptor (`dfd`), its name there, the
    real path it makes (`real`), and what is there now (`st`: None, nothing)."""

    dfd: int
    name: str
    real: str
    st: os.stat_result | None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.dfd)

    def __enter__(self) -> Slot:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def oddity(self, shown: str, path: Path, does: str) -> str | None:
        """Why a tool that `does` ("write writes") refuses what is there: it is there and is
        not a regular file (a FIFO, a device, a socket, a folder, a link loop); None: it may."""
        if self.st is None or stat.S_ISREG(self.st.st_mode):
            return None
        real = self.real
        lead = f"'{shown}' is" if os.path.abspath(path) == real else f"'{shown}' leads to '{real}', which is"
        return f"{lead} {kind(self.st.st_mode)}; {does} regular files only"

    def open_read(self) -> int:
        """The file there, open for reading; never through a link (one put there since the
        decision fails with ELOOP), never waiting on a FIFO."""
        flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_NOCTTY | os.O_CLOEXEC
        return os.open(self.name, flags, dir_fd=self.dfd)

    def replace(self, data: bytes) -> bool:
        """Write `data` there all at once: a temporary file in the folder, fsynced, renamed over
        the name by the folder's descriptor. An existing file's mode is kept. True if a file
        was there. Only a regular file is replaced (a FIFO, a device or a folder is OSError
        EINVAL); a link put there since the decision is replaced, never followed."""
        try:
            st: os.stat_result | None = os.stat(self.name, dir_fd=self.dfd, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, f"it is {kind(st.st_mode)}, not a regular file", self.real)
        tmp = f".{self.name}.{secrets.token_hex(4)}.tmp"
        fd = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=self.dfd
        )
        try:
            try:
                write_all(fd, data)
                if st is not None:
                    os.fchmod(fd, st.st_mode & 0o7777)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, self.name, src_dir_fd=self.dfd, dst_dir_fd=self.dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=self.dfd)
            raise
        with contextlib.suppress(OSError):
            os.fsync(self.dfd)
        return st is not None


def _target(path: Path) -> tuple[str, str]:
    """The folder and name a write to `path` lands on: links followed to their end, a
    dangling one's target included (the write makes it)."""
    real = os.path.realpath(path)
    head, name = os.path.split(real)
    return head or "/", name


def _made(folder: str, make: bool, check: Check, shown: str, path: Path) -> int:
    """The folder `folder`, open, made with its missing parents when `make`: each
    made under the folder opened and decided on before it, and opened without following a
    link (one planted there since is an error)."""
    missing: list[str] = []
    here = folder
    while True:
        try:
            fd = os.open(here, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            break
        except FileNotFoundError:
            if not make or here == "/":
                raise
            here, name = os.path.split(here)
            missing.append(name)
    try:
        for name in reversed(missing):
            real = os.path.join(real_of(fd), name)
            _decide(check, Act.CREATE, shown, path, real)
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=fd)
            nxt = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = nxt
        return fd
    except BaseException:
        os.close(fd)
        raise


def slot(path: Path, check: Check, shown: str, make: bool = False) -> Slot:
    """Where a write of `path` lands, decided on: its folder open (made, with its missing
    parents, when `make`), the real path of the file decided on (WRITE what is there,
    CREATE what is not). Raises Refused, or OSError (the folder is missing, a part of it is
    a file, ...)."""
    head, name = _target(path)
    dfd = _made(head, make, check, shown, path)
    try:
        real = os.path.join(real_of(dfd), name)
        try:
            st: os.stat_result | None = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        _decide(check, Act.WRITE if st is not None else Act.CREATE, shown, path, real)
        return Slot(dfd, name, real, st)
    except BaseException:
        os.close(dfd)
        raise


def beneath(root: int, rel: str, make: bool = False) -> tuple[int, str]:
    """The folder that holds `rel` (a path relative to the folder `root` is open on), open, and
    the name in it: walked one part at a time without following a link (`O_NOFOLLOW`), so
    whatever links a tree holds or gains meanwhile, what is reached lies under `root`. Folders
    on the way are made when `make`. Raises OSError (ELOOP: a link on the way; ENOTDIR; ...),
    or ValueError for a path that climbs out (`..`, absolute) or names nothing."""
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if not parts or rel.startswith("/") or ".." in parts:
        raise ValueError(f"{rel!r} is not a path inside the folder")
    fd = os.dup(root)
    try:
        for part in parts[:-1]:
            if make:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
            nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = nxt
        return fd, parts[-1]
    except BaseException:
        os.close(fd)
        raise


MAX_OWN = 1000
"""Entries of the home looked at for links, at most (a home holds a few dozen)."""


def _links(paths: list[str]) -> list[str]:
    return [os.path.realpath(p) for p in paths if os.path.islink(p)]


def where_of(
    workspace: Path,
    home: Path,
    user: Path,
    writable: tuple[Path, ...] = (),
    code: tuple[str, ...] = (),
    fenced: tuple[Path, ...] = (),
) -> Where:
    """The roots `rules.confine` places a path against, read now: each resolved, and where
    the links among eukhe's own files lead (the home's entries; `.eukhe`, its settings and
    `.mcp.json` from the workspace up to its repository's root); `code`: what the run loads
    as code beyond the registry's names (`run.code_paths`); `fenced`: a subagent's parent's
    checkout, read-only to it, whose workspace, its worktree, the home lends it."""
    real = os.path.realpath
    try:
        names = sorted(os.listdir(home))[:MAX_OWN]
    except OSError:
        names = []
    own = _links([os.path.join(home, n) for n in names])
    for folder in (Path(os.path.abspath(workspace)), *Path(os.path.abspath(workspace)).parents):
        own += _links(
            [str(folder / ".eukhe"), str(folder / ".eukhe" / "settings.json"), str(folder / ".mcp.json")]
        )
        if os.path.lexists(folder / ".git"):
            break
    kept = tuple(dict.fromkeys(own))
    ws, hm = real(workspace), real(home)
    lent = ws if fenced and ws != hm and ws.startswith(hm.rstrip("/") + "/") else ""
    kept = tuple(k for k in kept if not (lent and (k == lent or k.startswith(lent + "/"))))
    fences = tuple(real(f) for f in fenced)
    return Where(ws, hm, real(user), tuple(real(w) for w in writable), kept, code, fences, lent)


def standalone(cwd: Path, home: Path, user: Path) -> Check:
    """The boundary of a tool run outside any run (no gate, no person): the workspace
    `cwd`, eukhe's `home` and the `user`'s home placed; what would ask is denied."""
    where = where_of(cwd, home, user)
    cfg = Cfg(Mode.WORKSPACE_WRITE, Policy.ON_REQUEST, person=False, sandbox=True)

    def check(act: Act, real: str) -> str | None:
        d = opened(cfg, reach(act, real, where), ())
        return None if d.verdict is Verdict.ALLOW else d.why.value

    return check
