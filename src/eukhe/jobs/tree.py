"""A job's processes: every one its command started, whatever it did since.

Two ways to hold them, the first this kernel allows:

- a cgroup of its own (cgroup v2, where this user may make one under its own): the kernel
  puts every process the command starts in it, and none can leave it (moving out needs
  write access to another cgroup's `cgroup.procs`, which a job's process run as the user may
  have: the sandbox's `/sys` is read-only). `cgroup.kill` ends them all at once, forks in
  flight included;
- its keeper as a subreaper (`PR_SET_CHILD_SUBREAPER`): a process that leaves its process
  group or its session, or whose parent dies, is re-parented to the keeper, never to init, so
  the keeper's descendants are the job's processes. Each is signalled; a look again finds what
  forked meanwhile (the rule kills again every TICK_S while any lives).

Either way, each process also carries `EUKHE_JOB=<id>` in its environment, which is how the
owner's next start finds what a job left if its keeper itself was killed without a cgroup.
Never the process group alone: `setsid` leaves it."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
from pathlib import Path

from eukhe.procfs import live, running

__all__ = ["HOLD", "MARK", "Tree", "cgroup_for", "descendants", "marked", "subreaper"]

MARK = "EUKHE_JOB"
"""The environment variable every process of a job carries: its mark (its id and a token: the
same id in another home is another job)."""

HOLD = "EUKHE_JOB_TREE"
"""`subreaper` in a keeper's environment: no cgroup, its subreaper alone holds the tree."""

PR_SET_CHILD_SUBREAPER = 36


def subreaper() -> bool:
    """This process made a subreaper; whether the kernel agreed."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _unified() -> Path | None:
    """Where cgroup v2 is mounted (`/sys/fs/cgroup`, or `/sys/fs/cgroup/unified` beside v1)."""
    try:
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[2] == "cgroup2":
                    return Path(parts[1])
    except OSError:
        return None
    return None


def _own_cgroup() -> str | None:
    try:
        with open("/proc/self/cgroup", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("0::"):
                    return line[3:].strip()
    except OSError:
        return None
    return None


def cgroup_for(mark: str) -> Path | None:
    """A cgroup made for `job` under this process's own, None where this user may not make one
    (or there is no cgroup v2): its keeper then holds its tree as a subreaper."""
    if os.environ.get(HOLD) == "subreaper":  # the other way, asked for (its tests take both)
        return None
    mount, own = _unified(), _own_cgroup()
    if mount is None or own is None:
        return None
    path = mount / own.lstrip("/") / f"eukhe-{mark}"
    try:
        path.mkdir()
        if not (path / "cgroup.procs").exists() or not os.access(path / "cgroup.procs", os.W_OK):
            path.rmdir()
            return None
    except OSError:
        return None
    return path


def descendants(pid: int) -> list[int]:
    """Every live descendant of `pid`."""
    kids: dict[int, list[int]] = {}
    for child, fields in live():
        kids.setdefault(int(fields[1]), []).append(child)
    out: list[int] = []
    todo = list(kids.get(pid, ()))
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, ()))
    return out


def marked(mark: str) -> list[int]:
    """Every live process whose environment carries the job's `mark` (`MARK`)."""
    needle = f"{MARK}={mark}".encode()
    out: list[int] = []
    for pid, _ in live():
        if pid == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        if needle in env.split(b"\0"):
            out.append(pid)
    return out


class Tree:
    """A job's processes (`keeper`: its keeper's pid; None: the keeper is gone)."""

    def __init__(self, mark: str, cgroup: Path | None, keeper: int | None) -> None:
        self.mark, self.cgroup, self.keeper = mark, cgroup, keeper

    def pids(self) -> list[int]:
        """Its live processes: its cgroup's, and its keeper's descendants (the keeper gone:
        what carries its mark), both: a process run as root may move itself out of a cgroup,
        never out of its subreaper's descent."""
        got: set[int] = set()
        if self.cgroup is not None:
            try:
                text = (self.cgroup / "cgroup.procs").read_text()
            except OSError:
                text = ""
            # a zombie stays in cgroup.procs until reaped: it has ended all the same
            got.update(p for p in (int(w) for w in text.split() if w.isdigit()) if running(p))
        got.update(descendants(self.keeper) if self.keeper is not None else marked(self.mark))
        return sorted(got)

    def alive(self) -> bool:
        return bool(self.pids())

    def signal(self, sig: signal.Signals) -> None:
        """`sig` to every process of the tree: SIGKILL to a cgroup by `cgroup.kill` (forks in
        flight too), else to each process found."""
        if sig is signal.SIGKILL and self.cgroup is not None:
            with contextlib.suppress(OSError):
                (self.cgroup / "cgroup.kill").write_text("1")
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)

    def remove(self) -> None:
        """Its cgroup removed once empty (a cgroup with a process in it stays)."""
        if self.cgroup is not None:
            with contextlib.suppress(OSError):
                self.cgroup.rmdir()
