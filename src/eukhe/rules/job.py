"""Issue 54: background jobs, and the rule that every job ends.

A job is a command the model started with `run_in_background`: it runs in the sandbox as any
bash call, its processes in a tree of their own (a cgroup; where there is none, a subreaper
that holds every descendant, with the holder's death signalled to it), its output in a bounded
file in the home. The process that started it and watches it is its holder; its record is
durable state in the home, so a job whose holder died is found when the home's owner next
starts.

A job's life, as the rule sees it:

- started (`started`): RUNNING, its lifetime bound from settings (`LIFETIME_S` by default);
- ended for a reason (`on_end`): `job_kill` (`on_kill`), its session's end, abort or
  `--timeout`, its lifetime bound passing (`on_tick`), its holder's death (`at_owner_start`),
  or its command's own exit with processes left behind (`on_exit`). The first reason is kept;
  the whole tree gets SIGTERM at once and the job is ENDING;
- killed: GRACE_S after that, and every TICK_S after while any of its processes lives, the
  whole tree gets SIGKILL (`on_tick`);
- ENDED once its command exited and no process of its tree lives (`on_exit`, `on_tick`).

A signal always goes to the tree (`To.TREE`): its cgroup's every process (`cgroup.kill`, or
each pid of `cgroup.procs`), or every descendant of its subreaper. Never to its process group
alone: a process that called `setsid` has left it, and is still the job's.

Its output: the latest `HOLD_BYTES` kept (`appended`), the cut counted; a look
(`output_view`) shows what came since the last look, at most `SHOW_BYTES` of it, the latest,
and says how much it did not show.

The runtime looks at its jobs at `due(job)`, and at least every TICK_S (`next_look`), and
calls `on_tick` with whether any process of the job's tree still lives.

Pure: standard library only, frozen data, total functions.
"""

from __future__ import annotations

from dataclasses import dataclass

from eukhe.rules.states import Choice

GRACE_S: float = 2.0
"""Seconds between SIGTERM and SIGKILL: a dev server or a test run may save and close on
SIGTERM; the kernel's processes and a sandbox's namespace get the same (`KILL_GRACE`,
`END_GRACE`)."""

TICK_S: float = 1.0
"""The runtime looks at its jobs at least this often: how late past its grace a job's last
process may be seen alive and killed again (one that forked between a look and a kill)."""

END_BOUND_S: float = GRACE_S + TICK_S
"""Every job's processes are gone this long after the reason it ends came (with its holder
alive; from the owner's next start when its holder died): the grace, then a look."""

LIFETIME_S: float = 4 * 3600.0
"""A job's lifetime when settings give none: a working day's dev server or watcher lives
that long, a forgotten `yes` no longer."""

HOLD_BYTES: int = 1 << 20
"""Bytes of a job's output kept in its file in the home, the latest: a flooding job costs
the home this much, however long it runs."""

SHOW_BYTES: int = 30_000
"""Bytes of output a look shows at most, the latest of what came since the last look: about
what a bash call's result shows."""


class Phase(Choice):
    RUNNING = "running"
    ENDING = "ending"  # SIGTERM sent, SIGKILL due
    ENDED = "ended"  # its command exited and no process of its tree lives


class Why(Choice):
    """Why a job ends."""

    EXITED = "its command exited"
    KILLED = "job_kill"
    SESSION_END = "its session ended"
    ABORT = "its session was aborted"
    TIMEOUT = "its session's --timeout passed"
    LIFETIME = "its lifetime bound passed"
    HOLDER_DIED = "the process that held it died"


class Sig(Choice):
    TERM = "SIGTERM"
    KILL = "SIGKILL"


class To(Choice):
    """Which processes a signal goes to."""

    TREE = "tree"  # every process the job started: its cgroup, or its subreaper's descendants
    GROUP = "group"  # its process group: not those that left it (a break, never the rule's)
    LEADER = "leader"  # its first process alone (a break, never the rule's)


@dataclass(frozen=True)
class Signal:
    sig: Sig
    to: To = To.TREE


@dataclass(frozen=True)
class Job:
    """A job's record.

    started: when it started, on the host's CLOCK_MONOTONIC (one clock for every process of
        the host: the owner's next start reads the record on it too; a reboot leaves no
        process to end); lifetime: its bound, from settings.
    why, since: the first reason it ends, and when it came (None while RUNNING).
    kill_at: when SIGKILL is due (ENDING).
    status: its command's exit status, once its holder saw it exit.
    """

    started: float
    lifetime: float
    phase: Phase = Phase.RUNNING
    why: Why | None = None
    since: float | None = None
    kill_at: float | None = None
    status: int | None = None


Step = tuple[Job, Signal | None]
"""A job's record after an event, and the signal the runtime sends its tree (None: none)."""


def started(now: float, lifetime: float = LIFETIME_S) -> Job:
    """A job just started; a lifetime of 0 or less is the default (a setting left unset)."""
    return Job(started=now, lifetime=lifetime if lifetime > 0 else LIFETIME_S)


def on_end(job: Job, why: Why, now: float) -> Step:
    """A reason to end came: a RUNNING job's tree gets SIGTERM, SIGKILL due GRACE_S later.
    An ENDING or ENDED job keeps its first reason and its kill's time (a second `job_kill`
    never puts its SIGKILL off)."""
    if job.phase is not Phase.RUNNING:
        return job, None
    ending = Job(job.started, job.lifetime, Phase.ENDING, why, now, now + GRACE_S, job.status)
    return ending, Signal(Sig.TERM)


def on_kill(job: Job, now: float) -> Step:
    """`job_kill`."""
    return on_end(job, Why.KILLED, now)


def on_exit(job: Job, status: int, now: float, alive: bool) -> Step:
    """Its command exited with `status`; `alive`: a process of its tree still lives (one it
    left in the background). With none left it has ended; else they are ended as by a kill."""
    done = Job(job.started, job.lifetime, job.phase, job.why, job.since, job.kill_at, status)
    if not alive:
        why = job.why if job.why is not None else Why.EXITED
        since = job.since if job.since is not None else now
        return Job(job.started, job.lifetime, Phase.ENDED, why, since, None, status), None
    return on_end(done, Why.EXITED, now)


def on_tick(job: Job, now: float, alive: bool) -> Step:
    """A look at `now`; `alive`: a process of its tree still lives. A job whose tree is empty
    has ended; a RUNNING one past its lifetime ends; an ENDING one past its kill's time gets
    SIGKILL, and again every TICK_S while anything of it lives."""
    if job.phase is Phase.ENDED:
        return job, None
    if not alive:
        why = job.why if job.why is not None else Why.EXITED
        since = job.since if job.since is not None else now
        return Job(job.started, job.lifetime, Phase.ENDED, why, since, None, job.status), None
    if job.phase is Phase.RUNNING:
        if now >= job.started + job.lifetime:
            return on_end(job, Why.LIFETIME, now)
        return job, None
    if job.kill_at is not None and now < job.kill_at:
        return job, None
    again = Job(job.started, job.lifetime, Phase.ENDING, job.why, job.since, now + TICK_S, job.status)
    return again, Signal(Sig.KILL)


def at_owner_start(job: Job, holder_alive: bool, now: float) -> Step:
    """The home's owner starts and reads a job's record: one whose holder is dead is ended
    (a RUNNING one gets SIGTERM now; an ENDING one is killed at its next look, its grace
    long past). One whose holder lives is its holder's."""
    if holder_alive:
        return job, None
    return on_end(job, Why.HOLDER_DIED, now)


def due(job: Job) -> float | None:
    """When the job next needs a look: its lifetime's end while RUNNING, its kill's time while
    ENDING; None once ENDED."""
    if job.phase is Phase.RUNNING:
        return job.started + job.lifetime
    if job.phase is Phase.ENDING:
        return job.kill_at if job.kill_at is not None else job.started
    return None


def next_look(jobs: tuple[Job, ...], now: float) -> float:
    """When the runtime next looks at its jobs: the earliest due, and at most TICK_S on (a
    due already past: now)."""
    at = now + TICK_S
    for job in jobs:
        d = due(job)
        if d is not None and d < at:
            at = d
    return max(at, now)


def ended(job: Job) -> bool:
    return job.phase is Phase.ENDED


def state(job: Job) -> str:
    """What `job_output` and a job's listing say of it: running, ending and why, or ended,
    why, and its exit status when its holder saw it."""
    why = job.why.value if job.why is not None else ""
    if job.phase is Phase.RUNNING:
        return "running"
    if job.phase is Phase.ENDING:
        return f"ending: {why}"
    return f"ended: {why}{_status(job.status)}"


def _status(status: int | None) -> str:
    """An exit status as the holder saw it: negative, the signal that killed it."""
    if status is None:
        return ""
    return f", exit status {status}" if status >= 0 else f", killed by signal {-status}"


# ---------------------------------------------------------------- output


@dataclass(frozen=True)
class Output:
    """A job's output as held: `kept`, the latest part of all it printed, starting at byte
    `start` of it; `seen`: how far the last look went (bytes of all it printed)."""

    kept: bytes = b""
    start: int = 0
    seen: int = 0

    @property
    def total(self) -> int:
        """Bytes it printed in all."""
        return self.start + len(self.kept)


@dataclass(frozen=True)
class View:
    """What a look shows: `data`, the latest of what came since the last look; `cut`, the
    bytes of it not shown (dropped from the file, or past the look's bound); `note`, the cut
    said ("" when nothing was cut)."""

    data: bytes
    cut: int
    note: str


def appended(out: Output, data: bytes, hold: int = HOLD_BYTES) -> Output:
    """`data` printed: the latest `hold` bytes kept, what falls off counted in `start`."""
    kept = out.kept + data
    bound = max(hold, 0)
    drop = max(len(kept) - bound, 0)
    return Output(kept[drop:], out.start + drop, out.seen)


def cut_note(cut: int) -> str:
    """The cut, said."""
    if cut <= 0:
        return ""
    return f"[{cut} bytes of output since the last look not shown: only the latest part is kept and shown]"


def output_view(out: Output, show: int = SHOW_BYTES) -> tuple[View, Output]:
    """A look: what came since the last look, at most `show` bytes of it, the latest; the
    rest of it counted and said. The output afterwards: seen up to its end."""
    since = max(out.seen, out.start)
    data = out.kept[since - out.start :]
    bound = max(show, 0)
    if len(data) > bound:
        data = data[len(data) - bound :]
    cut = out.total - out.seen - len(data)
    return View(data, cut, cut_note(cut)), Output(out.kept, out.start, out.total)
