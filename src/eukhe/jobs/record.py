"""A background job's files in the home (`<home>/jobs/<id>/`), each private to the user:

- `job.json`: what it is, written once by its holder before its keeper starts: its command,
  project, session and run, when it started, its lifetime bound, and its holder (pid and
  start time: a pid alone may be another process's later);
- `state.json`: the rule's record of it (`rules.job.Job`), its keeper and its cgroup,
  rewritten whole by its keeper at each change;
- `output`: the latest part of what it printed (`rules.job.Output`: at most HOLD_BYTES),
  after one line with how many bytes fell off before it, rewritten whole by its keeper.

Every file is replaced at once (written beside it, renamed over it), so a reader sees the
old or the new, never half. What a reader cannot parse it takes as absent, and says so."""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from eukhe.errors import Code, EukheError
from eukhe.home import private_dir, private_write
from eukhe.procfs import ENDED, stat
from eukhe.rules import job as rule

__all__ = [
    "Identity",
    "JobError",
    "Listed",
    "Meta",
    "State",
    "alive",
    "identity",
    "jobs_root",
    "listing",
    "prune",
    "read_meta",
    "read_output",
    "read_state",
    "write_meta",
    "write_output",
    "write_state",
]


class JobError(EukheError):
    """A job that cannot be started, found or stopped: the message says which and why."""

    code = Code.TOOL


KEEP_ENDED_S = 7 * 86400.0
"""An ended job's files are kept this long (its listing, its last output), then removed."""


def jobs_root(home: Path) -> Path:
    return home / "jobs"


@dataclass(frozen=True)
class Identity:
    """A process as the host knows it: its pid and its start time (clock ticks since boot, from
    /proc/<pid>/stat), which a later process of the same pid does not share."""

    pid: int
    start: int


def identity(pid: int) -> Identity | None:
    fields = stat(pid)
    if fields is None or len(fields) < 20:
        return None
    return Identity(pid, int(fields[19]))


def alive(who: Identity | None) -> bool:
    """Whether that very process still runs (a zombie has ended)."""
    if who is None:
        return False
    fields = stat(who.pid)
    return (
        fields is not None and len(fields) >= 20 and fields[0] not in ENDED and int(fields[19]) == who.start
    )


def _who(value: object) -> Identity | None:
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return Identity(value[0], value[1])
    return None


@dataclass(frozen=True)
class Meta:
    """`job.json`: `started_at` on the wall clock (for a listing's age), `started` on the host's
    monotonic clock (the rule's)."""

    id: str
    command: str
    cwd: str
    session: str
    run: str
    started_at: float
    started: float
    lifetime: float
    holder: Identity
    mark: str  # what its processes carry in their environment (`tree.MARK`): unique on the host


def write_meta(folder: Path, meta: Meta) -> None:
    private_dir(folder)
    data = {
        "id": meta.id,
        "command": meta.command,
        "cwd": meta.cwd,
        "session": meta.session,
        "run": meta.run,
        "started_at": meta.started_at,
        "started": meta.started,
        "lifetime": meta.lifetime,
        "holder": [meta.holder.pid, meta.holder.start],
        "mark": meta.mark,
    }
    private_write(folder / "job.json", json.dumps(data))


def _read_json(path: Path) -> dict[str, object] | None:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def read_meta(folder: Path) -> Meta | None:
    """Its `job.json`; None when missing or not one (a listing says so)."""
    d = _read_json(folder / "job.json")
    if d is None:
        return None
    holder = _who(d.get("holder"))
    if holder is None:
        return None
    try:
        return Meta(
            str(d["id"]),
            str(d["command"]),
            str(d["cwd"]),
            str(d["session"]),
            str(d["run"]),
            float(d["started_at"]),  # type: ignore[arg-type]
            float(d["started"]),  # type: ignore[arg-type]
            float(d["lifetime"]),  # type: ignore[arg-type]
            holder,
            str(d["mark"]),
        )
    except (KeyError, TypeError, ValueError):
        return None


@dataclass(frozen=True)
class State:
    """`state.json`: the rule's record, its keeper, its cgroup (None: a subreaper holds its
    tree), and what the sandbox's guard removed once it ended (`notes`)."""

    job: rule.Job
    keeper: Identity | None = None
    cgroup: str | None = None
    notes: tuple[str, ...] = ()


def write_state(folder: Path, state: State) -> None:
    j = state.job
    data = {
        "started": j.started,
        "lifetime": j.lifetime,
        "phase": j.phase.value,
        "why": j.why.name if j.why is not None else None,
        "since": j.since,
        "kill_at": j.kill_at,
        "status": j.status,
        "keeper": [state.keeper.pid, state.keeper.start] if state.keeper is not None else None,
        "cgroup": state.cgroup,
        "notes": list(state.notes),
    }
    private_write(folder / "state.json", json.dumps(data))


def read_state(folder: Path) -> State | None:
    d = _read_json(folder / "state.json")
    if d is None:
        return None
    try:
        why = d.get("why")
        job = rule.Job(
            started=float(d["started"]),  # type: ignore[arg-type]
            lifetime=float(d["lifetime"]),  # type: ignore[arg-type]
            phase=rule.Phase(d["phase"]),
            why=rule.Why[why] if isinstance(why, str) else None,
            since=float(d["since"]) if d.get("since") is not None else None,  # type: ignore[arg-type]
            kill_at=float(d["kill_at"]) if d.get("kill_at") is not None else None,  # type: ignore[arg-type]
            status=int(d["status"]) if d.get("status") is not None else None,  # type: ignore[call-overload]
        )
    except (KeyError, TypeError, ValueError):
        return None
    cgroup = d.get("cgroup")
    notes = d.get("notes")
    return State(
        job,
        _who(d.get("keeper")),
        cgroup if isinstance(cgroup, str) else None,
        tuple(str(n) for n in notes) if isinstance(notes, list) else (),
    )


def write_output(folder: Path, out: rule.Output) -> None:
    private_write(folder / "output", b"%d\n" % out.start + out.kept)


def read_output(folder: Path) -> rule.Output:
    """What its keeper last wrote (nothing yet: empty)."""
    try:
        raw = (folder / "output").read_bytes()
    except OSError:
        return rule.Output()
    head, _, kept = raw.partition(b"\n")
    try:
        start = int(head)
    except ValueError:
        return rule.Output()
    return rule.Output(kept[-rule.HOLD_BYTES :], start + max(len(kept) - rule.HOLD_BYTES, 0))


@dataclass(frozen=True)
class Listed:
    """A job as a listing shows it: its state's words (`rules.job.state`), or why it cannot
    be read; `orphaned`: not ended while its holder is gone (the owner's next start ends it)."""

    id: str
    command: str
    session: str
    started_at: float
    state: str
    ended: bool
    orphaned: bool = False


def listing(home: Path) -> list[Listed]:
    """Every job whose files are in the home, oldest first."""
    root = jobs_root(home)
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    out: list[Listed] = []
    for name in names:
        folder = root / name
        meta = read_meta(folder)
        if meta is None:
            continue
        state = read_state(folder)
        if state is None:
            said, ended = "starting", False
        else:
            said, ended = rule.state(state.job), rule.ended(state.job)
        orphaned = not ended and not alive(meta.holder)
        out.append(Listed(meta.id, meta.command, meta.session, meta.started_at, said, ended, orphaned))
    out.sort(key=lambda j: j.started_at)
    return out


def prune(home: Path, now: float | None = None) -> int:
    """Remove the files of jobs ended more than KEEP_ENDED_S ago; how many."""
    now = time.time() if now is None else now
    gone = 0
    for j in listing(home):
        if j.ended and now - j.started_at > KEEP_ENDED_S:
            shutil.rmtree(jobs_root(home) / j.id, ignore_errors=True)
            gone += 1
    return gone
