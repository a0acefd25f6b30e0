"""This process's background jobs (`Jobs`), and a run's view of them (`Scope`).

A job is started by a `bash` call with `run_in_background` (`tools.bash`): its command,
already wrapped in the run's sandbox, is handed to a keeper process (`jobs.keeper`) that this
process holds through a pipe, so the keeper learns of this process's death however it dies.
The job belongs to a scope: its session's root runs share one (a dev server started in one
prompt is read in the next), a subagent's run has its own (its jobs end when it reports).

Every wait here is bounded (a job's end by END_BOUND_S and the keeper's drain) and ends on its
cancel; nothing waits on one event loop's task, since a session's runs may each run on a loop of
their own: a keeper is a `Popen`, asked with `poll`."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from eukhe import waits
from eukhe.home import HomeError, home, private_dir
from eukhe.humanize import clipped
from eukhe.jobs import record, tree
from eukhe.jobs.keeper import DRAIN_S
from eukhe.jobs.record import JobError
from eukhe.rules import job as rule
from eukhe.sandbox.bwrap import Sandbox

__all__ = ["Held", "JobError", "Jobs", "Scope", "ended_wait"]

POLL_S = 0.05
"""Seconds between two looks at a keeper whose end is awaited."""


def ended_wait() -> float:
    """Seconds a job's end may take once asked, at most: the rule's bound, the keeper's drain of
    its output, and one look more."""
    return rule.END_BOUND_S + DRAIN_S + 1.0


@dataclass
class Held:
    """A job this process holds: its files, its keeper, how far the model has read its output
    (`seen`), its scope, and the sandbox whose guard window it holds open (None: none)."""

    meta: record.Meta
    folder: Path
    keeper: subprocess.Popen[bytes]
    scope: str
    box: Sandbox | None = None
    seen: int = 0
    notes: tuple[str, ...] = ()
    closed: bool = False

    def state(self) -> record.State | None:
        return record.read_state(self.folder)

    def ended(self) -> bool:
        return self.keeper.poll() is not None

    def tell(self, why: rule.Why) -> None:
        """Its keeper told to end it (a keeper already gone: nothing to tell)."""
        if self.keeper.stdin is None or self.ended():
            return
        with contextlib.suppress(OSError, ValueError):
            self.keeper.stdin.write(f"end {why.name}\n".encode())
            self.keeper.stdin.flush()

    async def close_window(self) -> None:
        """Once it ended: its sandbox's guard window closed, what the guard removed kept to say."""
        if self.closed or not self.ended():
            return
        self.closed = True
        with contextlib.suppress(OSError, ValueError):
            if self.keeper.stdin is not None:
                self.keeper.stdin.close()
        if self.box is not None and self.box.guarded:
            check = await self.box.closing(True)
            self.notes = tuple(check.notes("this background job"))


@dataclass
class Jobs:
    """This process's jobs by id. Its runs' threads share it: each change under its lock."""

    root: Path | None = None  # <home>/jobs (None: the home's, found at the first start)
    held: dict[str, Held] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def _root(self) -> Path:
        if self.root is None:
            self.root = record.jobs_root(home())
        return self.root

    def start(
        self,
        argv: Sequence[str],
        command: str,
        cwd: Path,
        env: Mapping[str, str],
        *,
        session: str,
        run: str,
        scope: str,
        lifetime: float,
        box: Sandbox | None = None,
    ) -> Held:
        """The job started: its files written, its keeper running. JobError: it could not be."""
        me = record.identity(os.getpid())
        if me is None:
            raise JobError("this process cannot read its own /proc entry, so no keeper could tell its end")
        folder = _new_folder(private_dir(self._root()))
        job_id = folder.name
        mark = f"{job_id}.{secrets.token_hex(8)}"  # another home's job-N is another job
        meta = record.Meta(
            job_id, command, str(cwd), session, run, time.time(), time.monotonic(), lifetime, me, mark
        )
        try:
            record.write_meta(folder, meta)
        except (OSError, HomeError) as e:
            raise JobError(f"cannot write the job's files in {folder}: {e}") from e
        package = str(Path(__file__).resolve().parents[2])  # the folder eukhe is imported from
        keeper = [
            sys.executable,
            "-I",  # no PYTHON* variable and no folder of the project's leads it to other code
            "-c",
            "import sys; sys.path.insert(0, sys.argv[1]); from eukhe.jobs.keeper import main; "
            "sys.exit(main(sys.argv[2:]))",
            package,
            str(folder),
            str(cwd),
            "--",
            *argv,
        ]
        try:
            log = os.open(folder / "keeper.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        except OSError as e:
            raise JobError(f"cannot write the job's files in {folder}: {e}") from e
        try:
            proc = subprocess.Popen(
                keeper,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=log,
                cwd=folder,
                env={**env, tree.MARK: mark},
                start_new_session=True,  # a signal to this process's group never reaches it
            )
        except OSError as e:
            raise JobError(f"could not start the job's keeper: {e}") from e
        finally:
            os.close(log)
        held = Held(meta, folder, proc, scope, box)
        with self.lock:
            self.held[job_id] = held
        return held

    def find(self, job_id: str, scope: str) -> Held:
        with self.lock:
            held = self.held.get(job_id)
        if held is None or held.scope != scope:
            mine = self.ids(scope)
            known = f"this session's jobs: {', '.join(mine)}" if mine else "this session has started none"
            raise JobError(f"no background job {job_id!r} here ({known})")
        return held

    def ids(self, scope: str | None = None) -> list[str]:
        with self.lock:
            return [i for i, h in self.held.items() if scope is None or h.scope == scope]

    def of(self, scope: str | None = None) -> list[Held]:
        with self.lock:
            return [h for h in self.held.values() if scope is None or h.scope == scope]

    async def look(self, job_id: str, scope: str, pattern: str | None = None) -> str:
        """What it printed since the last look (`rules.job.output_view`), only the lines that
        match `pattern` when one is given, and whether it still runs, or why it ended."""
        held = self.find(job_id, scope)
        await held.close_window()
        state = held.state()
        out = record.read_output(held.folder)
        view, after = rule.output_view(rule.Output(out.kept, out.start, held.seen))
        data = await _filtered(view.data, pattern, held.folder) if pattern else view.data
        held.seen = after.seen  # a filter that failed read nothing
        text = data.decode("utf-8", errors="replace")
        lines = [text if text else "(no new output)"]
        if view.note:
            lines.append(view.note)
        lines.append(said(held, state))
        return "\n".join(line.rstrip("\n") for line in lines)

    async def end(self, helds: Sequence[Held], why: rule.Why, cancel: asyncio.Event | None = None) -> None:
        """Each told to end, then waited for (at most `ended_wait`, or until `cancel`): the
        keeper ends its whole tree by the rule and exits."""
        for h in helds:
            h.tell(why)
        until = time.monotonic() + ended_wait()
        while any(not h.ended() for h in helds) and time.monotonic() < until:
            if cancel is not None and cancel.is_set():
                break
            await asyncio.sleep(POLL_S)
        for h in helds:
            await h.close_window()

    async def kill(self, job_id: str, scope: str, cancel: asyncio.Event | None = None) -> str:
        held = self.find(job_id, scope)
        await self.end([held], rule.Why.KILLED, cancel)
        return said(held, held.state())

    async def end_scope(self, scope: str, why: rule.Why, cancel: asyncio.Event | None = None) -> list[str]:
        """Every running job of `scope` ended for `why`; what was said of each that was running."""
        running = [h for h in self.of(scope) if not h.ended()]
        if not running:
            return []
        await self.end(running, why, cancel)
        return [
            f"background job {h.meta.id} ({clipped(h.meta.command, 60)}): {said(h, h.state())}"
            for h in running
        ]


FILTER_S = 5.0
"""Seconds a look's filter may take: the model's pattern is matched by another process, killed
past them (a pattern that backtracks without end never holds the run)."""


async def _filtered(data: bytes, pattern: str, cwd: Path) -> bytes:
    """The lines of `data` that `pattern` (a Perl-style regular expression, as Claude Code's
    filter is) matches, by `grep -P` in a process of its own: its backtracking is bounded by
    PCRE's limit and its time by FILTER_S. JobError: a pattern that does not compile, or that
    could not be matched in time."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8"}
    try:
        got = await waits.ran(["grep", "-P", "-a", "--", pattern], cwd, env, FILTER_S, data)
    except OSError as e:
        raise JobError(f"the filter could not be run (grep -P): {e.strerror or e}") from e
    if got is None:
        raise JobError(f"the filter {pattern!r} did not end within {FILTER_S:g} s: give a simpler one")
    if got.code > 1:  # 1: no line matched
        why = got.err.decode("utf-8", "replace").strip().removeprefix("grep: ") or f"exit code {got.code}"
        raise JobError(f"the filter {pattern!r} cannot be used: {why}")
    return got.out


def _new_folder(root: Path) -> Path:
    """The next job's folder, `job-N`: N one past the highest in the home, made at once (a
    process that made it first has it; the next N is taken then). Short ids the model and a
    person type, unique in the home."""
    taken = [int(n[4:]) for n in os.listdir(root) if n.startswith("job-") and n[4:].isdigit()]
    n = max(taken, default=0) + 1
    while True:
        try:
            os.mkdir(root / f"job-{n}", 0o700)
            return root / f"job-{n}"
        except FileExistsError:
            n += 1
        except OSError as e:
            raise JobError(f"cannot make a job's folder in {root}: {e.strerror or e}") from e


def said(held: Held, state: record.State | None) -> str:
    """Its state in a line: running, ending and why, or ended, why and its exit status."""
    if state is None:
        words = (
            "ended: its keeper failed to start (see keeper.log in its folder)" if held.ended() else "starting"
        )
    else:
        words = rule.state(state.job)
        if not rule.ended(state.job) and held.ended():
            words = "ended: its keeper stopped before it could say so"
    notes = f"\n{chr(10).join(held.notes)}" if held.notes else ""
    return f"[job {held.meta.id}: {words}]{notes}"


@dataclass(frozen=True)
class Scope:
    """A run's view of its process's jobs (`tools.base.BackgroundJobs`): those of its scope
    only; their lifetime bound from its settings."""

    jobs: Jobs
    scope: str
    session: str
    run: str
    lifetime: float = rule.LIFETIME_S

    async def start(
        self, argv: Sequence[str], command: str, cwd: Path, env: Mapping[str, str], box: Sandbox | None
    ) -> str:
        held = self.jobs.start(
            argv, command, cwd, env, session=self.session, run=self.run, scope=self.scope,
            lifetime=self.lifetime, box=box,
        )  # fmt: skip
        return held.meta.id

    async def output(self, job_id: str, pattern: str | None) -> str:
        return await self.jobs.look(job_id, self.scope, pattern)

    async def kill(self, job_id: str, cancel: asyncio.Event) -> str:
        return await self.jobs.kill(job_id, self.scope, cancel)

    def listing(self) -> list[str]:
        now = time.time()
        return [
            f"{h.meta.id}: {clipped(h.meta.command, 80)} ({_age(now - h.meta.started_at)}) "
            f"{said(h, h.state())}"
            for h in self.jobs.of(self.scope)
        ]


def _age(s: float) -> str:
    n = int(max(s, 0))
    return (
        f"{n // 3600}h{n // 60 % 60:02d}m"
        if n >= 3600
        else (f"{n // 60}m{n % 60:02d}s" if n >= 60 else f"{n}s")
    )
