"""Where ripgrep runs: inside bubblewrap, seeing only what the confine rule let the search reach.

ripgrep opens paths by name, so a link flipped while it walks would lead it anywhere eukhe can
read. In its sandbox, that is nowhere much: the new root is an empty tmpfs holding

- the search's root, bound read-only from the descriptor that was opened and decided on
  (`--ro-bind-fd`: a link flipped at the root's name since leads nowhere), at its real path,
  with every place beneath it that the boundary denies a search (eukhe's home, the user's
  secret places, `/proc`, `/sys`, `/dev`, the system's secrets) covered by an empty tmpfs or
  an empty file;
- the ignore files of the folders above the root, each bound from the descriptor read (as the
  Python engine reads them), and an empty `.git` folder where one of those folders holds one:
  what ripgrep reads above the root, and nothing else there;
- what ripgrep needs to run: `/usr`, the `/lib*` and `/bin` links or folders, the dynamic
  linker's cache, and the ripgrep binary itself when it lives elsewhere. Never the user's home,
  eukhe's home, `/tmp`, `/run`, `/proc` or `/dev`.

Every namespace is its own (`--unshare-all`: no network, no other process), no capability is
kept, no environment is passed, the descriptors are closed once bound, and the sandbox dies
with eukhe (`--die-with-parent`). Paths ripgrep prints are the root's real paths, as eukhe's.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from eukhe.rules.confine import KERNEL_PLACES, SECRET_PLACES, SYSTEM_SECRETS, Act, under
from eukhe.tools.reach import Check
from eukhe.tools.search.walk import IGNORE_FILES

__all__ = ["FLAGS", "RUNTIME", "Box", "beneath", "bwrap", "setup_failed"]

FLAGS = ("--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv")
"""Every search sandbox's: no namespace shared, no capability kept, no environment, gone with eukhe."""

RUNTIME = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc/ld.so.cache")
"""What ripgrep needs to run, bound read-only (a link as the link it is)."""

FAILED = b"bwrap:"
"""How bubblewrap starts what it says when it cannot make the sandbox (ripgrep never ran)."""


def bwrap() -> str | None:
    """The bubblewrap on PATH, or None."""
    return shutil.which("bwrap")


def setup_failed(returncode: int | None, stderr: bytes) -> bool:
    """Whether bubblewrap itself failed (no namespaces here, ...), before ripgrep ran."""
    return returncode == 1 and stderr.lstrip().startswith(FAILED)


def beneath(root: str, check: Check, home: Path, user: Path) -> tuple[str, ...]:
    """The places strictly beneath the real path `root` that the boundary `check` denies a search
    of, among those no tool reaches by their kind (the kernel's, the system's secrets, the user's
    secret places in `user`, eukhe's `home`): each as its real path, where it exists. The walk
    skips them and the sandbox covers them; each file a search meets is still asked about."""
    candidates = [*KERNEL_PLACES, *SYSTEM_SECRETS, str(home), *(os.path.join(user, s) for s in SECRET_PLACES)]
    out: list[str] = []
    for c in candidates:
        if not under(c, root) and not under(os.path.realpath(c), root):
            continue
        real = os.path.realpath(c)
        if real == root or not under(real, root) or not os.path.lexists(real) or real in out:
            continue
        if check(Act.SEARCH, real) is not None:
            out.append(real)
    return tuple(out)


def _runtime(rg: str) -> tuple[list[tuple[str, list[str]]], str]:
    """The mounts ripgrep needs, and the path it runs as."""
    mounts: list[tuple[str, list[str]]] = []
    for p in RUNTIME:
        if os.path.islink(p):
            mounts.append((p, ["--symlink", os.readlink(p), p]))
        elif os.path.exists(p):
            mounts.append((p, ["--ro-bind", p, p]))
    real = os.path.realpath(rg)
    if not any(under(real, p) for p, _ in mounts if not os.path.islink(p)):
        mounts.append((real, ["--ro-bind", real, real]))  # ripgrep installed elsewhere: the binary alone
    return mounts, real


@dataclass
class Box:
    """The argv that runs ripgrep in its sandbox (ripgrep's own arguments appended), and the
    descriptors bubblewrap binds from, which the caller passes to it and then closes."""

    argv: list[str]
    fds: list[int] = field(default_factory=list)

    def close(self) -> None:
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds.clear()


def _depth(p: str) -> int:
    return 0 if p == "/" else p.rstrip("/").count("/")


def _above(root: str, covered: Iterable[str]) -> tuple[list[tuple[str, list[str]]], list[int]]:
    """The ignore files of the folders above `root` (links followed, regular files only, as the
    Python engine reads them), each bound from its descriptor, and an empty `.git` where a folder
    holds one; none for a folder the runtime's mounts show already."""
    mounts: list[tuple[str, list[str]]] = []
    fds: list[int] = []
    shown = [c for c in covered if not os.path.islink(c)]
    for folder in Path(root).parents:
        f = str(folder)
        if any(under(f, c) for c in shown):
            continue
        for name in IGNORE_FILES:
            path = os.path.join(f, name)
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                regular = stat.S_ISREG(os.fstat(fd).st_mode)
            except OSError:
                regular = False
            if not regular:
                os.close(fd)
                continue
            fds.append(fd)
            mounts.append((path, ["--ro-bind-fd", str(fd), path]))
        if os.path.lexists(os.path.join(f, ".git")):
            mounts.append((os.path.join(f, ".git"), ["--dir", os.path.join(f, ".git")]))
    return mounts, fds


def box(bwrap: str, rg: str, root_fd: int, root: str, hidden: tuple[str, ...]) -> Box:
    """The sandbox of a search of the folder open as `root_fd` (its real path `root`), with the
    places `hidden` beneath it covered (`beneath`)."""
    runtime, real_rg = _runtime(rg)
    above, fds = _above(root, [p for p, _ in runtime])
    dup = os.dup(root_fd)  # bubblewrap closes what it binds from; the caller keeps its own
    fds.append(dup)
    shown = [m for m in runtime if not under(m[0], root)]  # beneath the root: the root shows it
    mounts = [*shown, (root, ["--ro-bind-fd", str(dup), root]), *above]
    for h in hidden:
        try:
            folder = stat.S_ISDIR(os.lstat(h).st_mode)
        except OSError:
            continue
        mounts.append((h, ["--tmpfs", h] if folder else ["--ro-bind-data", _empty(fds), h]))
    # a mount covers what an earlier one showed: the shallower first (the root before what it covers)
    mounts.sort(key=lambda m: _depth(m[0]))
    argv = [bwrap, *FLAGS]
    for _, args in mounts:
        argv += args
    return Box([*argv, "--chdir", "/", "--", real_rg], fds)


def _empty(fds: list[int]) -> str:
    """A descriptor that reads as an empty file (a pipe's read end, its write end closed)."""
    r, w = os.pipe()
    os.close(w)
    fds.append(r)
    return str(r)
