"""Where an eukhe home is: `$EUKHE_HOME`, else `~/.eukhe`; and keeping it private.

The home holds every conversation and tool output, so it is the user's alone:
folders 0700, files 0600. Nothing here touches the process's umask: files the
tools make in the project keep the user's own modes. A file eukhe makes in the
home is born 0600 (`private_file`, `private_open`, `private_write`); one a library
makes (SQLite, logging, prompt_toolkit) is made 0600 before the library opens it.
A home left looser (by an older eukhe, or by hand) is tightened when it is opened
(`open_home`), with a notice.

A module of its own, standard library only, so that the interactive agent finds its
history before it imports anything else, and any layer may use it."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from eukhe.errors import Code, EukheError
from eukhe.fdwrite import write_all
from eukhe.humanize import counted

DIR_MODE = 0o700
FILE_MODE = 0o600
OTHERS = 0o077
"""The group and other bits: none of them is set on anything in a home."""


class HomeError(EukheError, RuntimeError):
    """The home, or a file in it, cannot be made private: names it, why, and the fix."""

    code = Code.HOME


def home(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env.get("EUKHE_HOME") or Path.home() / ".eukhe")


def _tighter(mode: int) -> int:
    """A mode with the group and other bits taken away (the owner's are kept)."""
    return stat.S_IMODE(mode) & ~OTHERS


def private_dir(path: Path) -> Path:
    """`path` as a folder only its owner may enter: made 0700 (its missing parents
    too), or, when it is there, its group and other bits taken away."""
    _make(path)
    try:
        st = os.stat(path)
        if not stat.S_ISDIR(st.st_mode):
            raise HomeError(f"{path} is not a folder; fix: move it away, eukhe makes the folder")
        if st.st_mode & OTHERS:
            os.chmod(path, _tighter(st.st_mode))
    except OSError as e:
        raise HomeError(_cannot(path, e)) from e
    return path


def _make(path: Path) -> None:
    """The folder and its missing parents, each born 0700 (a parent already there is
    left as it is: it is not eukhe's)."""
    try:
        os.mkdir(path, DIR_MODE)
    except FileExistsError:
        pass
    except FileNotFoundError:
        _make(path.parent)
        _make(path)
    except OSError as e:
        raise HomeError(
            f"cannot make the folder {path}: {e.strerror or e}; fix: check its parent folder"
        ) from e


def private_open(path: Path, flags: int) -> int:
    """`os.open(path, flags | O_CREAT)` of a file only its owner may read: born 0600,
    or, when it is there, its group and other bits taken away. The caller closes it."""
    try:
        fd = os.open(path, flags | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    except OSError as e:
        raise HomeError(f"cannot open {path}: {e.strerror or e}; fix: check its folder and its mode") from e
    try:
        mode = os.fstat(fd).st_mode
        if mode & OTHERS:
            os.fchmod(fd, _tighter(mode))
    except OSError as e:
        os.close(fd)
        raise HomeError(_cannot(path, e)) from e
    return fd


def private_file(path: Path) -> Path:
    """`path` as a file only its owner may read, made empty when missing (its folder
    must be there): call it before a library that opens the file itself."""
    os.close(private_open(path, os.O_RDONLY))
    return path


def private_write(path: Path, data: str | bytes) -> None:
    """Replace `path` with `data` at once (a temporary file beside it, renamed over
    it), readable by its owner only."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = private_open(tmp, os.O_WRONLY | os.O_TRUNC)
        try:
            write_all(fd, raw)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise HomeError(f"cannot write {path}: {e.strerror or e}; fix: check its folder and its mode") from e


def _cannot(path: Path, e: OSError) -> str:
    return (
        f"cannot make {path} private to you: {e.strerror or e}; "
        f"fix: `chmod go-rwx {path}`, or move it away if it is not yours"
    )


# ---------------------------------------------------------------- opening a home


@dataclass
class Tightened:
    """What opening a home changed: its own mode before (None: it was private), the
    folders and files in it made private, and what could not be (path: why)."""

    home: Path
    was: int | None = None
    folders: int = 0
    files: int = 0
    failed: list[tuple[Path, str]] = field(default_factory=list)

    def notice(self) -> str | None:
        """One line for stderr, or None when nothing changed or failed."""
        inside = " and ".join(
            f"{counted(n, what)} {mode:04o}"
            for n, what, mode in ((self.files, "file", FILE_MODE), (self.folders, "folder", DIR_MODE))
            if n
        )
        line = None
        if self.was is not None:
            line = f"eukhe: the home {self.home} was open to other users ({self.was:04o}); made it 0700"
            line += f" (and {inside})" if inside else ""
        elif inside:
            line = f"eukhe: in the home {self.home}, what other users could read was made private: {inside}"
        if self.failed:
            path, why = self.failed[0]
            more = f" and {len(self.failed) - 1} more" if len(self.failed) > 1 else ""
            cannot = f"eukhe: cannot make {path}{more} in the home private: {why}; `eukhe doctor` lists them"
            line = cannot if line is None else f"{line}; {cannot.removeprefix('eukhe: ')}"
        return line


def open_home(path: Path | None = None) -> Path:
    """The home, private (`made_private`); what was tightened said in one line on stderr."""
    path, line = made_private(path)
    if line is not None:
        print(line, file=sys.stderr, flush=True)
    return path


def made_private(path: Path | None = None) -> tuple[Path, str | None]:
    """The home, private: made 0700 when missing; when it is there, it must be this
    user's, and whatever in it other users could read is made private (folders 0700,
    files 0600), and the one line that says so (None: nothing was changed). A home of
    another user is refused: it could read and change everything eukhe keeps."""
    path = home() if path is None else path
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return private_dir(path), None
    except OSError as e:
        raise HomeError(
            f"cannot open the home {path}: {e.strerror or e}; fix: set EUKHE_HOME to a folder of yours"
        ) from e
    if not stat.S_ISDIR(st.st_mode):
        raise HomeError(f"the home {path} is not a folder; fix: move it away, or set EUKHE_HOME to another")
    if st.st_uid != os.geteuid():
        raise HomeError(
            f"the home {path} belongs to uid {st.st_uid}, not to you (uid {os.geteuid()}): its owner could "
            f"read and change every conversation kept there; fix: set EUKHE_HOME to a folder of your own"
        )
    done = Tightened(path)
    if st.st_mode & OTHERS:
        try:
            os.chmod(path, _tighter(st.st_mode))
            done.was = stat.S_IMODE(st.st_mode)
        except OSError as e:
            done.failed.append((path, e.strerror or str(e)))
    tighten(path, done)
    return path, done.notice()


OPAQUE = frozenset({"checkpoints"})
"""The home's folders that are tightened but not walked: eukhe writes what is in them private
itself (the shadow repositories' many objects, `run.checkpoint`), and a walk of them at every
command's start would grow with every checkpoint."""


def tighten(folder: Path, done: Tightened | None = None, top: bool = True) -> Tightened:
    """Take the group and other bits from everything under `folder` (symlinks are
    not followed: what they point at is not the home's; an `OPAQUE` folder at the top is
    tightened, not entered); what was changed."""
    done = Tightened(folder) if done is None else done
    try:
        entries = list(os.scandir(folder))
    except OSError as e:
        done.failed.append((folder, e.strerror or str(e)))
        return done
    for entry in entries:
        try:
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                continue
            if st.st_mode & OTHERS:
                os.chmod(entry.path, _tighter(st.st_mode), follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    done.folders += 1
                else:
                    done.files += 1
        except FileNotFoundError:
            continue  # removed meanwhile (a temporary file, a socket of an owner that ended)
        except OSError as e:
            done.failed.append((Path(entry.path), e.strerror or str(e)))
            continue
        if stat.S_ISDIR(st.st_mode) and not (top and entry.name in OPAQUE):
            tighten(Path(entry.path), done, top=False)
    return done


def exposed(path: Path) -> list[str]:
    """What in the home other users can still read or change, one line each with why
    and the fix (for `eukhe doctor`): anything with group or other bits, or owned by
    another user."""
    me = os.geteuid()
    found: list[str] = []

    def look(p: Path, st: os.stat_result) -> None:
        if st.st_uid != me:
            found.append(
                f"{p} belongs to uid {st.st_uid}, not to you (uid {me}): that user can change it; "
                f"fix: move it away (`sudo chown {me} {p}` if it is yours)"
            )
        elif st.st_mode & OTHERS:
            found.append(
                f"{p} is open to other users ({stat.S_IMODE(st.st_mode):04o}) and eukhe could not "
                f"change that; fix: `chmod go-rwx {p}`"
            )

    try:
        look(path, os.stat(path))
    except FileNotFoundError:
        return []
    except OSError as e:
        return [f"{path} cannot be read: {e.strerror or e}; fix: set EUKHE_HOME to a folder of yours"]
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            p = Path(root) / name
            try:
                st = os.lstat(p)
            except OSError:
                continue
            if not stat.S_ISLNK(st.st_mode):
                look(p, st)
    return found
