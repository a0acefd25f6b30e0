"""Opening a file eukhe reads for itself, not for a tool: instruction files (`AGENTS.md`,
`CLAUDE.md`), skills, prompt templates and their ignore files, and what a person's `@path`
or pasted image path attaches. What is read here goes into a prompt with no tool call, so
the object decided on must be the object read, and a stranger's repository must not be
able to lead it anywhere by a link.

Each file is opened first, without side effects (`O_PATH`: following links, running no
device driver's open, never waiting on a FIFO), its real path read back from the kernel
(`/proc/self/fd`), and decided on (`refusal`); only then is it opened for reading through
that descriptor: the same inode, or an error. It is refused unless it is a regular file
(`filekind.kind` names what it is otherwise) and its real path lies within its `Bound`:

- a project's file (a skill or template in `.eukhe/`, a mention written inside the
  project; for instruction files, the repository from its root down): inside that
  folder. A link out of it is refused, with where it leads;
- a file of eukhe's home (`<home>/AGENTS.md`, `<home>/skills`, `<home>/prompts`): the
  user's own, so a link may lead out of the home (into their dotfiles);
- a path the person or their settings name outside the project (`@/etc/hosts`, an
  explicit skill folder): wherever it is.

Whatever the bound, nothing is read in `/proc`, `/sys` or `/dev`, in a process's own
folder, in one of the user's secret places (`rules.confine.SECRET_PLACES`), or in eukhe's
home unless the file belongs to the home: the places are named by `rules.confine.place`,
the one naming of them.

Standard library and the rules only, at the ground: the skills (below the tools) and the
run both open through it.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from eukhe.errors import Code, EukheError
from eukhe.filekind import kind
from eukhe.rules.confine import Place, Where, place, under

__all__ = [
    "NOWHERE",
    "Bound",
    "Refused",
    "decide",
    "home_bound",
    "named_bound",
    "open_file",
    "open_folder",
    "project_bound",
    "read_at_most",
    "real_of",
    "refusal",
]

NEVER = "which eukhe never reads for a prompt"
DELETED = " (deleted)"


class Refused(EukheError):
    """eukhe will not read what it opened: `why` says what it is, without the path where it
    leads (a model may see it), `to` says where a link led ("" when no link did); the
    message says both."""

    code = Code.PERMISSION

    def __init__(self, why: str, to: str = "") -> None:
        super().__init__(f"{why} (to {to})" if to else why)
        self.why = why
        self.to = to


@dataclass(frozen=True)
class Bound:
    """The folder a file eukhe reads belongs to (`root`, resolved), named in a refusal as
    `name`; whether a link may lead out of it (`leave`); and the homes the places are named
    against: eukhe's `home` and the `user`'s (both resolved)."""

    root: str
    name: str
    leave: bool
    home: str
    user: str

    def where(self) -> Where:
        return Where(workspace=self.root, home=self.home, user=self.user)


def _real(path: str | Path) -> str:
    return os.path.realpath(os.path.abspath(path))


def project_bound(root: str | Path, home: str | Path, name: str = "the project") -> Bound:
    """A project's files: inside `root` (the project's folder, or the repository's), never
    following a link out of it."""
    return Bound(_real(root), name, False, _real(home), _real(Path.home()))


def home_bound(home: str | Path) -> Bound:
    """eukhe's home's files: the user's own, whose links may lead out of the home (into
    their dotfiles), never into a place no prompt reads."""
    return Bound(_real(home), "eukhe's home", True, _real(home), _real(Path.home()))


def named_bound(project: str | Path, home: str | Path) -> Bound:
    """A path the person or their settings name outside the project: wherever it leads, but
    never into a place no prompt reads (eukhe's home among them)."""
    return Bound(_real(project), "the project", True, _real(home), _real(Path.home()))


NOWHERE = Bound("", "no folder", False, "", "")
"""The bound of a file no loader placed: every file is outside it."""


def refusal(real: str, bound: Bound) -> str | None:
    """Why eukhe does not read, for itself, the object whose real path is `real` (absolute,
    resolved), or None when it may. Pure: the place comes from `rules.confine.place`.

    In order: a kernel pseudo-file or a process's folder, never; eukhe's home and the
    user's secret places, only when the bound's own folder lies within that very place (a
    home's file in the home); outside the bound's folder, only when its links may leave."""
    p, at = place(real, bound.where())
    if p in (Place.KERNEL, Place.PROCESS):
        return f"{p.value}, {NEVER}"
    if p in (Place.HOME, Place.SECRET) and not (bound.root and under(bound.root, at)):
        return f"{p.value}, {NEVER}"
    if bound.leave or (bound.root and under(real, bound.root)):
        return None
    return f"outside {bound.name} ({bound.root})" if bound.root else "in no folder eukhe reads from"


def real_of(fd: int) -> str:
    """The real path of the object `fd` holds, as the kernel says it now. Refused when it
    has none (a pipe, a socket, a deleted file): nothing to decide on."""
    try:
        real = os.readlink(f"/proc/self/fd/{fd}")
    except OSError as e:
        raise Refused(f"where it is cannot be read back from /proc/self/fd ({e.strerror or e})") from e
    if not real.startswith("/") or real.endswith(DELETED):
        raise Refused(f"it is {real!r}, not a file anyone decided on")
    return real


def decide(path: str | Path, real: str, bound: Bound) -> None:
    """Raise Refused when the object named `path`, whose real path (read back from its
    descriptor) is `real`, may not be read within `bound` (`refusal`); the refusal says
    where a link led when `path` itself is not `real`."""
    why = refusal(real, bound)
    if why is None:
        return
    if _real_name(path) == real:
        raise Refused(f"it is {why}")
    if why.startswith("outside "):
        raise Refused(f"it is a link that leads {why.partition(' (')[0]}", real)
    raise Refused(f"it is a link to {why}", real)


def _real_name(path: str | Path) -> str:
    """`path` absolute and normalized, its links not followed: what a person named."""
    return os.path.normpath(os.path.abspath(path))


def open_file(path: str | Path, bound: Bound) -> int:
    """The regular file at `path` (links followed), decided on within `bound`, open for
    reading (`O_RDONLY`, close-on-exec). Never waits on a FIFO or a device, never runs a
    device driver's open. Raises Refused (what it is, and where a link led), or OSError for
    what the path does not hold (FileNotFoundError, PermissionError, ...)."""
    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        real = real_of(fd)
        decide(path, real, bound)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            to = real if _real_name(path) != real else ""
            raise Refused(f"it is {kind(st.st_mode)}, not a regular file", to)
        rd = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    finally:
        os.close(fd)
    got = os.fstat(rd)
    if (got.st_dev, got.st_ino) != (st.st_dev, st.st_ino):  # /proc/self/fd reopens the inode held
        os.close(rd)
        raise Refused("it changed while it was opened")
    return rd


def open_folder(path: str | Path, bound: Bound) -> tuple[int, str]:
    """The folder at `path` (links followed), decided on within `bound`, open for listing
    (`os.scandir(fd)`), and its real path. Raises Refused, or OSError (NotADirectoryError,
    ...); never waits on a FIFO."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        real = real_of(fd)
        decide(path, real, bound)
    except BaseException:
        os.close(fd)
        raise
    return fd, real


def read_at_most(fd: int, limit: int) -> bytes:
    """Up to `limit` bytes from `fd`, from where it stands: fewer only at the file's end."""
    chunks: list[bytes] = []
    left = max(limit, 0)
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
