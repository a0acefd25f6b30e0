"""Bubblewrap around `bash` and the Python kernel: the run's `Sandbox`, the argv that runs a command
inside it (`argv`), and whether bubblewrap can run here at all (`why_not`).

A confined command sees, mount after mount (a later mount covers what an earlier one showed):

1. the whole filesystem read-only (`--ro-bind / /`), a fresh `/dev`, and a `/proc` of its own pid
   namespace (eukhe's own environment in /proc/<pid>/environ is out of sight);
2. an empty tmpfs over what holds sockets or secrets: `/run` (and so `/var/run`), the eukhe home
   (settings, trust records, the store, the owner's socket), the user's home folder, and eukhe's
   folders in the system temp dir (the owner's fallback socket). `--unshare-net` hides no unix
   socket reached by path: PostgreSQL's in /var/run/postgresql takes trust auth on many machines,
   and its `COPY ... TO PROGRAM` would run a command outside;
3. a `/tmp` of the session's own (one host folder a session, so "write /tmp/x, then run it" works
   across calls, and nothing in the host's /tmp is seen);
4. read-write: the project (workspace-write) and `sandbox.writable`, parents before children; in
   read-only mode the project read-only, and nothing writable but the /tmp; read-only, the folders
   shown (`shown`: a subagent's parent checkout, when its project is a worktree of its own). A
   hidden folder inside one of them is hidden again, and one of them that such a folder holds (a
   worktree in the home, under a checkout that holds the home) shown again over it;
5. read-only again inside the project: every protected name at any depth (`rules.registry`: a `.git`,
   whose hooks and config run unconfined at the user's next git command; `.eukhe/` and `.mcp.json`,
   what eukhe and its MCP servers run; `.claude/`, whose hooks and agents eukhe runs; git's hooks
   folder and the folders the settings name: `watched`), unless `sandbox.writable` names them: what
   exists, as the run's `Guard` found it just before (`eukhe.sandbox.guard`: what the command makes
   of them is removed once it ended, since a bind over a name that does not exist would make it on
   the host);
6. eukhe's own binds: read-write (the kernel's IPC folder; a subagent's worktree's parts of the
   repository's `.git`), files read-only again inside them (`sealed`), and read-only (the kernel's
   Python, when a hidden folder holds it);
7. last, hidden again wherever a bind shows them (the project is the user's home, or holds it, or
   `sandbox.writable` names a folder above one): the user's secret places and the system's
   (`rules.confine.SECRET_PLACES`, `SYSTEM_SECRETS`: `masked`), an empty tmpfs over a folder and
   an empty file over a file, so nothing in them is read, and nothing written there reaches the
   host; one made where none was is removed once the command ended, as a protected name is.

Always `--cap-drop ALL` (run as root, bubblewrap keeps its capabilities, and `mount -o
remount,bind,rw /` would undo every read-only bind), `--unshare-pid`, `--die-with-parent` (nothing
outlives eukhe) and `--new-session` (no TIOCSTI into a terminal); `--unshare-net` unless
`sandbox.network`. The environment is the one given to bubblewrap (the tools' own, secrets out).

When the pid namespace's first process ends, the kernel kills every other: a command's background
processes end with it. Bubblewrap itself exits as soon as the command does, a moment before that:
`--info-fd` names the namespace's first process, whose end `eukhe.sandbox.ending` waits for.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import os
import shlex
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from eukhe import waits
from eukhe.errors import Code, EukheError
from eukhe.rules import registry
from eukhe.rules.wait import End
from eukhe.sandbox.guard import LOCK_WAIT, Check, Guard
from eukhe.settings.keys import SANDBOX_MODES

__all__ = [
    "FULL_ACCESS",
    "INSTALL",
    "READ_ONLY",
    "WORKSPACE_WRITE",
    "Sandbox",
    "SandboxError",
    "argv",
    "why_not",
]

READ_ONLY, WORKSPACE_WRITE, FULL_ACCESS = SANDBOX_MODES
INSTALL = "apt-get install bubblewrap"
"""How bubblewrap is installed (Debian, Ubuntu)."""
PROBE_TIMEOUT = 5.0
"""Seconds `why_not`'s trial sandbox may take."""
HIDDEN = ("/run", "/var/run")
"""Hidden in every sandbox: the system's sockets (PostgreSQL's, D-Bus's, the container runtime's)."""
FLAGS = ("--cap-drop", "ALL", "--unshare-pid", "--die-with-parent", "--new-session")
"""Every sandbox's."""


class SandboxError(EukheError, RuntimeError):
    """A command that must run in the sandbox cannot: the message says why and what to do."""

    code = Code.TOOL


@dataclass(frozen=True)
class Sandbox:
    """Where a run's `bash` commands and Python kernel run: `mode` (`sandbox.mode`), the `project`,
    the session's `/tmp` folder on the host (`tmp`), `writable` paths (`sandbox.writable`, absolute),
    `network` (`sandbox.network`), the folders to hide (`hidden`; `/run` always), the system temp dir
    whose `eukhe-*` folders are hidden as each command starts (`temp`), eukhe's own read-write
    `binds` and read-only `readable` paths, and why bubblewrap cannot run here (`unavailable`, None
    when it can).

    `confined` is the permission rule's hook: False runs a call outside the sandbox (a person
    granted it), whatever the mode; danger-full-access runs every call outside.

    `watched`: the folders the run's settings and git name for it to load (read-only as the
    protected names are); `masked`: the secret places to hide wherever a bind shows them.

    `shown`: folders shown read-only as the project is shown, before eukhe's own binds (a
    subagent's parent checkout, whose `.git` parts its commits write are among `binds`);
    `sealed`: files read-only again inside `binds` (where such a worktree's own folder in the
    repository says where its repository is and what configuration it reads).

    `guard`, the run's watch over the protected names (`eukhe.sandbox.guard`), made with it and
    shared by every copy `outside`, `binding` and `reading` make."""

    mode: str
    project: Path
    tmp: Path
    writable: tuple[Path, ...] = ()
    network: bool = False
    hidden: tuple[Path, ...] = ()
    temp: Path | None = None
    binds: tuple[Path, ...] = ()
    readable: tuple[Path, ...] = ()
    unavailable: str | None = None
    confined: bool = True
    watched: tuple[Path, ...] = ()
    masked: tuple[Path, ...] = ()
    shown: tuple[Path, ...] = ()
    sealed: tuple[Path, ...] = ()
    guard: Guard = field(default_factory=Guard, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.mode not in SANDBOX_MODES:
            modes = ", ".join(SANDBOX_MODES)
            raise ValueError(f"sandbox mode {self.mode!r} is not a mode: the modes are {modes}")

    @property
    def applies(self) -> bool:
        """Whether a command runs inside bubblewrap (or is refused when it cannot run here)."""
        return self.confined and self.mode != FULL_ACCESS

    def refusal(self) -> str | None:
        """Why a command cannot run (it must run in the sandbox, which cannot run here); None: it can."""
        if not self.applies or self.unavailable is None:
            return None
        return (
            f"not run: sandbox.mode is {self.mode!r}, so commands run only inside the sandbox, and the "
            f"sandbox cannot run here: {self.unavailable}. Install bubblewrap ({INSTALL}), or set "
            '"sandbox": {"mode": "danger-full-access"} in your own settings to run commands unconfined'
        )

    def notice(self) -> str | None:
        """The run's one line when bubblewrap cannot run here and the mode needs it; None otherwise."""
        if self.mode == FULL_ACCESS or self.unavailable is None:
            return None
        return (
            f"the sandbox cannot run here: {self.unavailable}; bash commands and Python cells are "
            f"refused while sandbox.mode is {self.mode!r} (install bubblewrap: {INSTALL})"
        )

    def wrap(
        self, command: Sequence[str], cwd: Path, *, protected: Iterable[str] = (), info_fd: int | None = None
    ) -> list[str]:
        """The argv that runs `command` in `cwd` as this sandbox says: inside bubblewrap, or as it is
        when the sandbox does not apply. `protected` and `info_fd` as `argv` takes them. Raises
        SandboxError when it must run inside and cannot."""
        if not self.applies:
            return list(command)
        why = self.refusal()
        if why is not None:
            raise SandboxError(why)
        return argv(self, command, cwd, protected=protected, info_fd=info_fd)

    @property
    def guarded(self) -> bool:
        """Whether what its commands make is watched: they run inside bubblewrap, the project
        writable (`opening`, `checking`, `closing`)."""
        return self.applies and self.mode == WORKSPACE_WRITE and self.unavailable is None

    @property
    def vouching(self) -> bool:
        """Whether this is a call a person let run outside a watched sandbox: what it makes stays
        (`vouched`)."""
        return not self.confined and self.mode == WORKSPACE_WRITE

    async def opening(self) -> Check:
        """Before a sandboxed process starts: the protected paths that exist (for `wrap`), and what
        the sandbox made since the last look, removed. The window it opens is open as soon as this
        is called, even if the look is cancelled: `closing` (or `closed`) must follow."""
        remove = self.guard.enter()
        return await self._look(remove=remove)

    def in_home(self, user_home: Path) -> str | None:
        """The one line a run started in the user's home folder (or a folder above it) says;
        None elsewhere."""
        project, home = _real(self.project), _real(user_home)
        if not _under(home, project):
            return None
        where = "your home folder" if project == home else f"{project}, which holds your home folder"
        return (
            f"eukhe runs in {where}: all of it is the workspace, but your secret places (~/.ssh, ~/.aws, "
            "...) and eukhe's home stay hidden from every tool, bash and the kernel; start eukhe in a "
            "project's folder to work on that project"
        )

    async def checking(self) -> Check:
        """While a sandboxed process may run (a kernel between cells), or before a call a person let
        run outside it: what the sandbox made since the last look, removed."""
        return await self._look(remove=self.guard.watching)

    async def closing(self, ended: bool) -> Check:
        """Once a sandboxed process ended (`ended`: every process of its pid namespace is known
        gone): what it made, removed."""
        self.guard.leave()
        return await self._look(remove=True, ended=ended)

    def closed(self, ended: bool) -> Check:
        """`closing`, blocking (for a path that cannot wait on the event loop: a cancelled call)."""
        self.guard.leave()
        return self._look_at(remove=True, ended=ended)

    async def vouched(self) -> Check:
        """After a call a person let run outside the sandbox: what it made, taken as theirs."""
        return await self._look(remove=False)

    def _look_at(self, remove: bool, ended: bool) -> Check:
        """The guard's look over this sandbox's workspace, blocking: besides the protected names,
        the folders watched, and the secret places inside the workspace (masked: never bound)."""
        root, lifted, skip = self._scope()
        masked = [p for p in map(_real, self.masked) if _strictly_under(p, root)]
        watched = [_real(p) for p in self.watched]
        return self.guard.look(root, lifted, skip, remove=remove, ended=ended, watched=watched, masked=masked)

    def _scope(self) -> tuple[str, list[str], list[str]]:
        """The guard's workspace, the paths `sandbox.writable` lifts, and the folders it skips
        (what the sandbox hides inside the project, its /tmp, eukhe's own binds)."""
        root = _real(self.project)
        skip = [_real(p) for p in (*self.hidden, self.tmp, *self.binds)]
        return root, [_real(p) for p in self.writable], [p for p in skip if _strictly_under(p, root)]

    async def _look(self, remove: bool, ended: bool = True) -> Check:
        # a walk blocks (it stats every folder): off the loop, bounded by its own deadline and the
        # wait for another walk; past both, said as a cut look
        bound = self.guard.deadline + LOCK_WAIT + 1.0
        clock = waits.LoopClock()
        raced = await waits.race(
            asyncio.to_thread(functools.partial(self._look_at, remove, ended)),
            clock.now() + bound,
            None,
            clock,
            grace=0.0,
        )
        if raced.end is End.EVENT and raced.error is None:
            return raced.result()
        why = f"it did not end within {bound:g} s" if raced.error is None else f"it failed: {raced.error}"
        return Check(cut=why)

    def outside(self) -> Sandbox:
        """This sandbox for a call a person let run outside it."""
        return dataclasses.replace(self, confined=False)

    def binding(self, *paths: Path) -> Sandbox:
        """This sandbox with `paths` read-write (eukhe's own folders, such as the kernel's IPC)."""
        return dataclasses.replace(self, binds=(*self.binds, *paths))

    def showing(self, *paths: Path) -> Sandbox:
        """This sandbox with `paths` shown read-only, under eukhe's own binds (`binding`)."""
        return dataclasses.replace(self, shown=(*self.shown, *paths))

    def sealing(self, *paths: Path) -> Sandbox:
        """This sandbox with `paths` read-only again inside its own binds (`binding`)."""
        return dataclasses.replace(self, sealed=(*self.sealed, *paths))

    def reading(self, *paths: Path) -> Sandbox:
        """This sandbox with `paths` readable even where a hidden folder holds them."""
        return dataclasses.replace(self, readable=(*self.readable, *paths))

    def mount_point(self, path: Path) -> Path | None:
        """The empty folder a bind of `path` leaves in the session's /tmp folder on the host, when
        `path` is in /tmp (bubblewrap makes its mount point there), to remove once done with."""
        real = _real(path)
        if not _strictly_under(real, "/tmp"):
            return None
        return self.tmp / os.path.relpath(real, "/tmp")


def _real(p: Path | str) -> str:
    # mount points are given as real paths: bubblewrap resolves an absolute link against the host's
    # root, not the new one, and fails on it (/var/run -> /run)
    return os.path.realpath(p)


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _strictly_under(path: str, folder: str) -> bool:
    return path != folder and _under(path, folder)


def _folders(paths: Iterable[Path | str]) -> list[str]:
    """The real paths of the folders among `paths` that exist, each once, in order."""
    out: list[str] = []
    for p in paths:
        r = _real(p)
        if r not in out and os.path.isdir(r):
            out.append(r)
    return out


def _outermost(paths: list[str]) -> list[str]:
    return [p for p in paths if not any(_strictly_under(p, q) for q in paths)]


def _temp_folders(temp: Path | None) -> list[str]:
    """eukhe's folders in the system temp dir now (the owner's fallback socket, other kernels')."""
    if temp is None:
        return []
    try:
        names = os.listdir(temp)
    except OSError:
        return []
    return [os.path.join(temp, n) for n in sorted(names) if n.startswith("eukhe-")]


def _protected_here(folder: Path) -> list[str]:
    """The protected names (`rules.registry`) among `folder`'s entries, as they are spelled there."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return [n for n in names if registry.guard_of(n) is not None]


def _masks(box: Sandbox, own: list[str]) -> list[tuple[str, list[str]]]:
    """The secret places that exist, each with how it is hidden: an empty tmpfs over a folder, the
    empty /dev/null over a file. All of them, whether a bind shows one or a hidden folder holds it
    (a mount over what no bind shows only makes its mount point in that hidden tmpfs): what the
    sandbox shows is then never the question. But for the host's /tmp, which the session's own
    covers: there only those a bind of the project's (`own`) shows."""
    out: list[tuple[str, list[str]]] = []
    for p in dict.fromkeys(_real(m) for m in box.masked):
        if not os.path.lexists(p) or (_under(p, "/tmp") and not any(_under(p, o) for o in own)):
            continue
        out.append((p, ["--tmpfs"] if os.path.isdir(p) else ["--ro-bind", os.devnull]))
    return out


def argv(
    box: Sandbox,
    command: Sequence[str],
    cwd: Path,
    *,
    protected: Iterable[str] = (),
    info_fd: int | None = None,
) -> list[str]:
    """The bubblewrap argv that runs `command` in `cwd` inside `box` (the module's docstring says
    what it sees). `protected`: the real paths of the protected names that exist at any depth (the
    guard's `Check.protected`), bound read-only with those at the project's root; `info_fd`: where
    bubblewrap writes its namespaces' first process (`eukhe.sandbox.ending`). Reads the filesystem
    (which folders exist, their real paths), changes nothing."""
    hidden = _folders([*HIDDEN, *box.hidden, *_temp_folders(box.temp)])
    out = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for h in _outermost([h for h in hidden if not _under(h, "/tmp")]):  # the private /tmp hides the rest
        out += ["--tmpfs", h]
    out += ["--bind", str(box.tmp), "/tmp"]  # the private /tmp covers the host's, and what it holds

    project = _real(box.project)
    if box.mode == READ_ONLY:
        own = [(project, "--ro-bind")]
    else:
        own = [(project, "--bind"), *((_real(p), "--bind-try") for p in box.writable)]
    own += [(p, "--ro-bind") for p in _folders(box.shown) if p != project]
    own.sort(key=lambda pair: pair[0].count("/"))  # parents first: a child's mount stays on top
    for path, how in own:
        out += [how, path, path]
    again = [h for h in hidden if any(_strictly_under(h, path) for path, _ in own)]
    for h in _outermost(again):
        out += ["--tmpfs", h]
    for path, how in own:  # one a hidden folder holds, shown again over it
        if any(_strictly_under(path, h) for h in again):
            out += [how, path, path]

    if box.mode != READ_ONLY:
        writable = {_real(p) for p in box.writable}
        held = set(protected)
        for name in _protected_here(box.project):  # at the root even without a walk's list
            held.add(_real(box.project / name))
        held.update(_real(p) for p in box.watched if os.path.lexists(p))
        for p in sorted(held - writable):
            # never a bind that shows what is hidden: a link's target only inside the project
            if _strictly_under(p, project) and not any(_under(p, h) for h in again):
                out += ["--ro-bind-try", p, p]

    for b in box.binds:
        out += ["--bind", _real(b), _real(b)]
    for f in box.sealed:  # a file that exists only: a bind over a missing one would make it
        if os.path.lexists(f):
            out += ["--ro-bind", _real(f), _real(f)]
    for r in _folders(box.readable):
        mine = any(_under(r, path) for path, _ in own) and not any(_under(r, h) for h in again)
        if not mine and any(_under(r, h) for h in [*hidden, "/tmp"]):  # else in sight already
            out += ["--ro-bind-try", r, r]

    for mask, mount in _masks(box, [path for path, _ in own]):
        out += [*mount, mask]

    out += ["--chdir", str(cwd), *FLAGS]
    if not box.network:
        out.append("--unshare-net")
    if info_fd is not None:
        out += ["--info-fd", str(info_fd)]
    return [*out, "--", *command]


def why_not(timeout: float = PROBE_TIMEOUT) -> str | None:
    """Why bubblewrap cannot run a sandbox here (not installed, or no namespaces allowed: a container
    without user namespaces), None when it can: one trial sandbox running `true`, at most `timeout`
    seconds. Blocking: call it off the event loop. How to install it (`INSTALL`) is the caller's to
    add."""
    path = shutil.which("bwrap")
    if path is None:
        return "bubblewrap is not installed (no bwrap on PATH)"
    trial = [path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", *FLAGS]
    trial += ["--unshare-net", "--", "true"]
    try:
        done = subprocess.run(trial, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"bubblewrap did not run `true` within {timeout:g} s (tried: {shlex.join(trial)})"
    except OSError as e:
        return f"bubblewrap ({path}) could not be started: {e.strerror or e}"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip()[-500:] or f"exit code {done.returncode}"
        return f"bubblewrap cannot make its namespaces here: {said} (tried: {shlex.join(trial)})"
    return None
