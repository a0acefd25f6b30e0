"""`Kernel`: the conversation's ipykernel, started on first use, one cell at a time, each cell
blocking its call at most the budget and then going on as a detached job.

Why it is built so:

- The kernel leads a session of its own (`start_new_session`): every process it starts is a member,
  a `bash()` command in a process group of its own included, so `close` kills them all (SIGTERM to
  each group, SIGKILL after a grace) and nothing outlives the conversation.
- A reader task per kernel drains iopub as it comes, whatever the tool is doing, into each cell's
  bounded `Output` (a head and a rolling tail): a job flooding stdout costs the host HEAD + TAIL
  bytes. The kernel sends at most `inkernel.STREAM_CHUNK` characters a message and the host's
  queue holds at most `IOPUB_HWM` messages, so what waits in between is bounded too.
- The kernel runs one cell at a time: a cell sent while a job runs is refused at once, naming the
  job, never queued behind it.
- Every wait (the start, a cell, an interrupt, the end of the processes) goes through `waits.race`
  with a deadline and a cancel.
- Given a sandbox that applies, the kernel runs inside bubblewrap (`eukhe.sandbox.bwrap`), its IPC
  folder bound in, and so does every `bash()` command it starts. Bubblewrap's own process is the
  launched one; inside, its first process (pid 1 of the sandbox) leads a session of its own
  (`--new-session`) with the kernel in its group, found once the kernel answers: interrupts go to
  that group (a pid 1 ignores them), `close` kills that session and bubblewrap.
- In workspace-write, the kernel's sandbox is a window of the run's guard (`eukhe.sandbox.guard`)
  from its start to its end: the protected names (`.git`, `.eukhe`, `.mcp.json`) that exist as it
  starts are read-only, and what its cells, jobs and threads make of them is removed after each
  cell and job call, and once its processes have ended, each result saying so (what `close`
  removed, it returns).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zmq
import zmq.asyncio
from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
from jupyter_client.manager import AsyncKernelManager

from eukhe import waits
from eukhe.home import tighten
from eukhe.json_types import JsonObject
from eukhe.kernel import _procs
from eukhe.rules.wait import End
from eukhe.sandbox import ending
from eukhe.sandbox.bwrap import Sandbox
from eukhe.sandbox.guard import Check
from eukhe.settings.keys import TOOL_BLOCKING_BUDGET_MS
from eukhe.tools.base import Result
from eukhe.tools.bash import Output

__all__ = ["DEFAULT_BUDGET_MS", "HEAD", "TAIL", "Kernel"]

DEFAULT_BUDGET_MS = TOOL_BLOCKING_BUDGET_MS
"""Milliseconds a cell (or a `wait` on a job) blocks its tool call when the run sets no
`toolBlockingBudgetMs` (the setting's default): past it the call answers and the cell goes on
as a job."""
HEAD = 512 * 1024
"""Bytes of a cell's output kept from its start."""
TAIL = 512 * 1024
"""Bytes of a cell's output kept from its end."""
START_TIMEOUT = 60.0
"""Seconds the kernel may take to start and answer."""
KILL_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL when the kernel's processes are killed."""
INTERRUPT_GRACE = 3.0
"""Seconds a job may take to stop on an interrupt before `kill` restarts the kernel."""
CELL_STOP_GRACE = 0.5
"""Seconds an aborted call gives its cell to stop on an interrupt before leaving it as a job."""
IOPUB_HWM = 256
"""Messages the host's zmq queue holds for the reader (each at most one stream chunk)."""
REPLY_GRACE = 2.0
"""Seconds of quiet on iopub after a cell's reply after which it is taken as ended, idle status or not."""
WATCH_EVERY = 0.2
"""Seconds between two looks at whether the kernel process still runs."""
SHOW_TAIL = 8 * 1024
"""Bytes of output `tail` shows at most."""
SHOW_LINES = 40
"""Lines of output `tail` shows at most."""
KEEP_JOBS = 16
"""Ended jobs whose output is kept; older ones are forgotten."""
STDERR_KEEP = 8 * 1024
"""Bytes of the kernel process's own stderr kept (head and tail each), for when it fails."""
KERNEL = "the Python kernel (a cell, a job, a thread or a command it started)"
"""Who made what the sandbox removed after a cell."""
EARLIER = "an earlier command or Python cell in the sandbox"

_INKERNEL = Path(__file__).with_name("inkernel.py")
_SETUP = """\
import importlib.util as _eukhe_u, sys as _eukhe_s, os as _eukhe_o
_eukhe_o.environ.pop("PYTHONSAFEPATH", None)
_eukhe_s.path.insert(0, "")
_eukhe_spec = _eukhe_u.spec_from_file_location("eukhe_inkernel", {path!r})
_eukhe_m = _eukhe_u.module_from_spec(_eukhe_spec)
_eukhe_s.modules["eukhe_inkernel"] = _eukhe_m
_eukhe_spec.loader.exec_module(_eukhe_m)
_eukhe_m.install()
del _eukhe_u, _eukhe_s, _eukhe_o, _eukhe_spec, _eukhe_m
"""
_SETUP_STREAMS = """\
import sys as _eukhe_s
_eukhe_s.modules["eukhe_inkernel"].bound_streams()
del _eukhe_s
"""
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")


def strip_ansi(text: str) -> str:
    """`text` without terminal colour and cursor codes."""
    return _ANSI.sub("", text)


class _StartError(Exception):
    """The kernel did not start; the message says why, with its command and stderr."""


class _Specs(KernelSpecManager):
    """The one kernel spec eukhe starts: ipykernel in the given Python, whatever kernels the user has
    installed."""

    argv: list[str] = []  # noqa: RUF012  # set per instance before use

    def get_kernel_spec(self, kernel_name: str, *args: Any, **kwargs: Any) -> KernelSpec:
        return KernelSpec(
            argv=list(self.argv),
            name=kernel_name,
            display_name="eukhe Python",
            language="python",
            interrupt_mode="signal",
        )


@dataclass(eq=False)
class _Cell:
    """One execute request and what came of it."""

    code: str
    started: float
    done: asyncio.Event = field(default_factory=asyncio.Event)
    replied: asyncio.Event = field(default_factory=asyncio.Event)
    out: Output = field(default_factory=lambda: Output(HEAD, TAIL))
    msg_id: str = ""
    job: int | None = None
    state: str = "running"
    """running, ok, error, interrupted or ended (the kernel went: `why` says how)."""
    ename: str = ""
    evalue: str = ""
    status: str = ""
    """The execute_reply's status, once it came."""
    interrupted: bool = False
    ended: float | None = None
    why: str = ""
    shown: int = 0
    """Output bytes the model has been shown."""
    heard: float = 0.0
    """When its last iopub message came."""


@dataclass(eq=False)
class _Live:
    """One kernel process and what talks to it."""

    dir: Path
    argv: list[str]
    km: AsyncKernelManager
    stderr: Output = field(default_factory=lambda: Output(STDERR_KEEP, STDERR_KEEP))
    rfd: int = -1
    """The read end of the kernel process's stderr."""
    pid: int = 0
    proc: Any = None
    kc: AsyncKernelClient | None = None
    tasks: list[asyncio.Task[Any]] = field(default_factory=list)
    cells: dict[str, _Cell] = field(default_factory=dict)
    gone: bool = False
    sandboxed: bool = False
    """Whether it runs inside bubblewrap (`proc` is bubblewrap's; `pid`, once known, the kernel's)."""
    window: bool = False
    """Whether it holds a window of the sandbox's guard open (closed by `_teardown`)."""
    inner: ending.Inner | None = None
    """Its sandbox's first process, once known."""


def _seconds(t: float) -> str:
    return f"{t:.1f} s"


def _budget(ms: int) -> str:
    return f"{ms / 1000:g} s"


def _exit(rc: int | None) -> str:
    if rc is None:
        return "still running"
    if rc < 0:
        try:
            return f"killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    return f"exit code {rc}"


def _since(out: Output, offset: int) -> str:
    """Output bytes [offset, total) as text, the part no longer kept marked as cut."""
    h, t = len(out.head), len(out.tail)
    tail_from = out.total - t
    parts = []
    if offset < h:
        parts.append(bytes(out.head[offset:]).decode("utf-8", "replace"))
    lost = tail_from - max(offset, h)
    if lost > 0:
        sep = "" if not parts or parts[-1].endswith("\n") else "\n"
        parts.append(f"{sep}[... {lost} bytes cut ...]\n")
    start = max(offset, tail_from)
    if start < out.total:
        parts.append(bytes(out.tail[start - tail_from :]).decode("utf-8", "replace"))
    return "".join(parts)


def _last(out: Output, limit: int, lines: int) -> str:
    """The last `lines` lines (at most `limit` bytes) of the output, and how much came before."""
    kept = bytes(out.tail) if out.cut else bytes(out.head) + bytes(out.tail)
    piece = kept[-limit:]
    rows = piece.split(b"\n")
    ends = piece.endswith(b"\n")
    if ends:
        rows = rows[:-1]
    if len(piece) < len(kept) and len(rows) > 1:
        rows = rows[1:]  # a cut line is not shown
    rows = rows[-lines:]
    text = b"\n".join(rows) + (b"\n" if ends else b"")
    before = out.total - len(text)
    shown = text.decode("utf-8", "replace")
    return f"[... {before} earlier bytes not shown ...]\n{shown}" if before > 0 else shown


def _with_line(text: str, line: str) -> str:
    if text and not text.endswith("\n"):
        text += "\n"
    return f"{text}{line}"


class Kernel:
    """The conversation's Python kernel; cheap to make, the process starts on the first `execute`.

    `budget_ms` is `toolBlockingBudgetMs` (`DEFAULT_BUDGET_MS` when the run sets none): a cell, and
    a `wait` on a job, blocks at most that long. `env` is the kernel's environment (None: the
    host's). `sandbox`, the run's: the kernel runs inside it when it applies, and a cell is refused
    when it must and cannot (None: unconfined). All methods run on the caller's event loop."""

    def __init__(
        self,
        cwd: Path | str,
        budget_ms: int = DEFAULT_BUDGET_MS,
        env: dict[str, str] | None = None,
        *,
        python: str | None = None,
        start_timeout: float = START_TIMEOUT,
        kill_grace: float = KILL_GRACE,
        interrupt_grace: float = INTERRUPT_GRACE,
        runtime_dir: Path | str | None = None,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.cwd = Path(cwd)
        self.budget_ms = max(int(budget_ms), 1)
        self.env = env
        self.python = python or sys.executable
        self.start_timeout = start_timeout
        self.kill_grace = kill_grace
        self.interrupt_grace = interrupt_grace
        self.runtime_dir = None if runtime_dir is None else str(runtime_dir)
        self.sandbox = sandbox
        self._live: _Live | None = None
        self._starting: asyncio.Task[_Live] | None = None
        self._closing = asyncio.Event()
        self._closed = False
        self._current: _Cell | None = None
        self._jobs: dict[int, _Cell] = {}
        self._next_job = 1
        self._cell_bytes = 0
        self._bash_seen: dict[tuple[str, str], int] = {}
        self._last_bytes = 0
        self._sids: list[int] = []
        self._zmq: zmq.asyncio.Context | None = None
        self._told: list[tuple[Check, str]] = []  # the guard's looks not yet said in a result

    # --- the public face ---------------------------------------------------------------------------------

    async def execute(self, code: str, cancel: asyncio.Event) -> Result:
        """Run one cell: its output and value, or its traceback as an error; past the budget, what it
        printed so far and the job number it goes on as. Refused at once while another cell runs.
        In a watched sandbox, what the kernel made of the protected names is removed after it, and
        said (an error then)."""
        return await self._watched(await self._execute(code, cancel))

    async def _execute(self, code: str, cancel: asyncio.Event) -> Result:
        if self._closed:
            return Result("the Python kernel was closed: this conversation has no kernel any more", True)
        busy = self._busy()
        if busy is not None:
            return busy
        clock = waits.LoopClock()
        cell = _Cell(code, clock.now())
        self._current = cell  # from here on another call is refused, even while the kernel starts
        sent = answered = False
        try:
            live = await self._ensure(cancel)
            if isinstance(live, Result):
                return live
            self._send(live, cell)
            sent = True
            deadline = clock.now() + self.budget_ms / 1000
            raced = await waits.race(cell.done.wait(), deadline, cancel, clock, grace=0.0)
            answered = True
            if raced.end is End.EVENT:
                return self._answer(cell)
            if raced.end is End.DEADLINE:
                n = self._make_job(cell)
                b = _budget(self.budget_ms)
                return Result(
                    _with_line(
                        _since(cell.out, 0),
                        f"[cell still running after {b}: it goes on as job {n}. See its latest output "
                        f'with {{"job": {n}, "action": "tail"}}, wait for it with {{"job": {n}, "action": '
                        f'"wait"}} (at most {b} a call) or stop it with {{"job": {n}, "action": "kill"}}; '
                        "until it ends the kernel runs no other cell.]",
                    ),
                    False,
                )
            return await self._abort(live, cell)
        except BaseException:
            if sent and not cell.done.is_set() and cell.job is None:
                self._make_job(cell)  # the call went, the cell goes on: as a job, it can be seen and killed
            raise
        finally:
            if not sent and self._current is cell:
                self._current = None
            if answered:
                cell.shown = cell.out.total

    async def job(self, n: int, action: str, cancel: asyncio.Event) -> Result:
        """`status`, `tail`, `wait` (at most the budget) or `kill` job `n`; works while the kernel is
        busy, since it asks the host's copy of the job, never the kernel. Watched as `execute`."""
        return await self._watched(await self._job(n, action, cancel))

    async def _watched(self, r: Result) -> Result:
        """`r` with what the sandbox's guard removed since the last result (a look now, while the
        kernel runs)."""
        live = self._live
        if live is not None and live.window and self.sandbox is not None:
            self._told.append((await self.sandbox.checking(), KERNEL))
        told, self._told = self._told, []
        notes = [line for check, who in told for line in check.notes(who)]
        if not notes:
            return r
        harmful = any(check.harmful and who == KERNEL for check, who in told)
        return Result(_with_line(r.content, "\n".join(notes)), r.is_error or harmful)

    async def _job(self, n: int, action: str, cancel: asyncio.Event) -> Result:
        cell = self._jobs.get(n)
        if cell is None:
            known = ", ".join(str(k) for k in self._jobs)
            return Result(
                f"there is no job {n}: " + (f"the jobs are {known}" if known else "no cell has become a job"),
                True,
            )
        if action == "status":
            return Result(self._status(cell), False)
        if action == "tail":
            return Result(
                _with_line(_last(cell.out, SHOW_TAIL, SHOW_LINES), f"[{self._status(cell)}]"), False
            )
        if action == "wait":
            return await self._wait(cell, cancel)
        if action == "kill":
            return await self._kill(cell, cancel)
        return Result(
            f"unknown action '{action}' for job {n}: the actions are status, tail, wait and kill", True
        )

    def output_bytes(self) -> int:
        """Bytes of output so far, never less than the last answer: every cell's output and every
        `bash()` handle's (read from the files the kernel writes, so a busy kernel is never asked). A
        long build that prints moves it; a silent job does not."""
        live = self._live
        if live is not None and not live.gone:
            self._read_bash_counts(live)
        total = self._cell_bytes + sum(self._bash_seen.values())
        self._last_bytes = max(self._last_bytes, total)
        return self._last_bytes

    def live_jobs(self) -> list[tuple[int, str, int]]:
        """(number, state, output bytes) of every job the kernel still knows, oldest first; state is
        running, ok, error, interrupted or ended."""
        return [(n, c.state, c.out.total) for n, c in self._jobs.items()]

    def pids(self) -> list[int]:
        """The live processes of the kernel's session (the kernel, what it started, the `bash()`
        commands), of every kernel this object started."""
        return [pid for sid in self._sids for pid, _ in _procs.members(sid)]

    @property
    def started(self) -> bool:
        """Whether a kernel process runs now."""
        return self._live is not None and not self._live.gone

    async def close(self) -> str | None:
        """End the kernel for good: every process of its session is killed (SIGTERM, SIGKILL after
        `kill_grace`), its connection file and directory removed. Idempotent. What the sandbox's
        guard removed since the last result, said (None: nothing)."""
        if self._closed:
            return None
        self._closed = True
        self._closing.set()
        starting = self._starting
        if starting is not None and not starting.done():
            # the start sees `_closing` and tears down what it made; give it the time that takes
            await waits.race(
                asyncio.shield(starting), waits.LoopClock().now() + self.kill_grace + 3.0, None, grace=0.0
            )
        if self._live is not None:
            await self._teardown(self._live, "the kernel was closed")
        for sid in self._sids:  # a start cut short may have left its process
            if _procs.members(sid):
                await _procs.kill_session(sid, self.kill_grace)
        if self._zmq is not None:
            self._zmq.destroy(linger=0)
            self._zmq = None
        told, self._told = self._told, []
        notes = [line for check, who in told for line in check.notes(who)]
        return "\n".join(notes) or None

    # --- answers ---------------------------------------------------------------------------------------

    def _busy(self) -> Result | None:
        cur = self._current
        if cur is None or cur.done.is_set():
            return None
        took = _seconds(waits.LoopClock().now() - cur.started)
        if cur.job is not None:
            n = cur.job
            return Result(
                f"the kernel is busy with job {n} (running for {took}): it runs one cell at a time, so "
                f'this cell was not run. Wait for job {n} with {{"job": {n}, "action": "wait"}} or stop it '
                f'with {{"job": {n}, "action": "kill"}}, then send the cell again.',
                True,
            )
        return Result(
            f"the kernel is busy with a cell another call sent {took} ago: it runs one cell at a time, so "
            "this cell was not run; send it again once that call has answered.",
            True,
        )

    def _answer(self, cell: _Cell) -> Result:
        """A cell that ended while its call waited."""
        text = _since(cell.out, cell.shown)
        if cell.state == "ok":
            return Result(text or "(no output)", False)
        if cell.state == "error":
            return Result(text or f"{cell.ename}: {cell.evalue}", True)
        if cell.state == "interrupted":
            return Result(_with_line(text, "[the cell was interrupted]"), True)
        return Result(_with_line(text, f"[{cell.why}]"), True)

    def _status(self, cell: _Cell) -> str:
        n = cell.job
        now = waits.LoopClock().now()
        took = _seconds((cell.ended or now) - cell.started)
        size = f"{cell.out.total} bytes of output"
        if cell.state == "running":
            return f"job {n} is running: {took} so far, {size}"
        if cell.state == "ok":
            return f"job {n} finished after {took}, {size}"
        if cell.state == "error":
            return f"job {n} failed after {took} with {cell.ename}, {size}"
        if cell.state == "interrupted":
            return f"job {n} was interrupted after {took}, {size}"
        return f"job {n} ended after {took}: {cell.why}, {size}"

    async def _wait(self, cell: _Cell, cancel: asyncio.Event) -> Result:
        if not cell.done.is_set():
            clock = waits.LoopClock()
            deadline = clock.now() + self.budget_ms / 1000
            raced = await waits.race(cell.done.wait(), deadline, cancel, clock, grace=0.0)
            if raced.end is End.CANCEL:
                text = self._shown(cell)
                return Result(
                    _with_line(text, f"aborted: stopped waiting for job {cell.job}; it still runs"), True
                )
        text = self._shown(cell)
        if cell.state == "running":
            line = f"[{self._status(cell)}; waited {_budget(self.budget_ms)}: wait again, or kill it]"
            return Result(_with_line(text, line), False)
        return Result(_with_line(text, f"[{self._status(cell)}]"), cell.state != "ok")

    async def _kill(self, cell: _Cell, cancel: asyncio.Event) -> Result:
        n = cell.job
        if cell.done.is_set():
            return Result(
                _with_line(self._shown(cell), f"[job {n} had already ended: {self._status(cell)}]"), False
            )
        live = self._live
        if live is None or live.gone:  # a job outlives its kernel only as ended; kept for safety
            return Result(f"job {n} has no kernel to stop", True)
        cell.interrupted = True
        self._interrupt(live)
        clock = waits.LoopClock()
        g = self.interrupt_grace
        raced = await waits.race(cell.done.wait(), clock.now() + g, cancel, clock, grace=0.0)
        if raced.end is End.CANCEL:
            return Result(f"aborted: job {n} was sent an interrupt and may still run", True)
        if raced.end is End.EVENT:
            if cell.state == "ended":
                return Result(_with_line(self._shown(cell), f"[job {n} ended: {cell.why}]"), False)
            took = _seconds((cell.ended or clock.now()) - cell.started)
            line = (
                f"[job {n} was interrupted after {took}; the kernel is kept, with its variables and "
                "bash() jobs]"
            )
            return Result(_with_line(self._shown(cell), line), False)
        await self._teardown(
            live, f"job {n} did not stop within {g:g} s of an interrupt, so the kernel was restarted"
        )
        return Result(
            _with_line(
                self._shown(cell),
                f"[job {n} did not stop within {g:g} s of an interrupt, so the kernel was killed and "
                "restarts on the next cell: its variables and bash() jobs are gone]",
            ),
            False,
        )

    async def _abort(self, live: _Live, cell: _Cell) -> Result:
        """The call's cancel came while its cell ran: interrupt the cell, wait briefly for it."""
        cell.interrupted = True
        self._interrupt(live)
        clock = waits.LoopClock()
        raced = await waits.race(cell.done.wait(), clock.now() + CELL_STOP_GRACE, None, clock, grace=0.0)
        text = _since(cell.out, cell.shown)
        if raced.end is End.EVENT:
            return Result(
                _with_line(text, "aborted: the cell was interrupted (the kernel keeps its variables)"), True
            )
        n = self._make_job(cell)
        return Result(
            _with_line(
                text,
                f"aborted: the cell did not stop within {CELL_STOP_GRACE:g} s of an interrupt; it goes on as "
                f'job {n}: stop it with {{"job": {n}, "action": "kill"}}',
            ),
            True,
        )

    def _shown(self, cell: _Cell) -> str:
        """The output the model has not been shown yet, marked as shown."""
        text = _since(cell.out, cell.shown)
        cell.shown = cell.out.total
        return text

    def _make_job(self, cell: _Cell) -> int:
        n = self._next_job
        self._next_job += 1
        cell.job = n
        self._jobs[n] = cell
        ended = [k for k, c in self._jobs.items() if c.done.is_set()]
        for k in ended[: max(0, len(ended) - KEEP_JOBS)]:
            old = self._jobs.pop(k)
            live = self._live
            if live is not None:
                live.cells.pop(old.msg_id, None)
        return n

    # --- the kernel process -------------------------------------------------------------------------------

    async def _ensure(self, cancel: asyncio.Event) -> _Live | Result:
        """The live kernel, started if there is none; an error or aborted `Result` if it did not start."""
        if self._live is not None and not self._live.gone:
            return self._live
        refused = None if self.sandbox is None else self.sandbox.refusal()
        if refused is not None:
            return Result(refused, True)
        if self._starting is None or (self._starting.done() and self._live is None):
            self._starting = asyncio.ensure_future(self._start())
            self._starting.add_done_callback(lambda t: t.cancelled() or t.exception())
        task = self._starting
        raced = await waits.race(asyncio.shield(task), None, cancel, grace=0.0)
        if raced.end is End.CANCEL:
            return Result("aborted: the kernel was still starting; the cell was not run", True)
        if self._starting is task:
            self._starting = None
        if raced.error is not None:
            if isinstance(raced.error, _StartError):
                return Result(str(raced.error), True)
            raise raced.error
        live = raced.result()
        if live.gone:
            return Result(
                "the Python kernel ended just after it started; send the cell again to start a new one", True
            )
        return live

    def _environ(self, d: Path) -> dict[str, str]:
        env = dict(os.environ if self.env is None else self.env)
        env.update(
            EUKHE_BUDGET_MS=str(self.budget_ms),
            EUKHE_KERNEL_DIR=str(d),
            EUKHE_HOST_PID=str(os.getpid()),
            IPYTHONDIR=str(d / "ipython"),
            PAGER="cat",
            GIT_PAGER="cat",
            GIT_TERMINAL_PROMPT="0",
            PYDEVD_DISABLE_FILE_VALIDATION="1",
            # the project's folder is not on the kernel's path as it starts (a stranger's
            # ipykernel_launcher.py there would run in place of the kernel); `_SETUP` puts it
            # back for the cells, and takes this away from the commands they start
            PYTHONSAFEPATH="1",
        )
        return env

    def _prepare(self, protected: tuple[str, ...]) -> _Live:
        if self._zmq is None:
            self._zmq = zmq.asyncio.Context()
            self._zmq.setsockopt(zmq.RCVHWM, IOPUB_HWM)
        d = Path(tempfile.mkdtemp(prefix="eukhe-kernel-", dir=self.runtime_dir))
        argv = [
            self.python,
            "-m",
            "ipykernel_launcher",
            "-f",
            "{connection_file}",
            "--HistoryManager.enabled=False",
            "--IPKernelApp.parent_handle=0",  # inkernel's orphan watch ends the kernel if the host dies
        ]
        specs = _Specs()
        specs.argv = argv
        km = AsyncKernelManager(
            kernel_spec_manager=specs,
            kernel_name="eukhe-python",
            kernel_id=d.name.removeprefix("eukhe-kernel-"),
            transport="ipc",
            ip=str(d / "ipc"),
            connection_file=str(d / "connection.json"),
            context=self._zmq,
        )
        sandboxed = self.sandbox is not None and self.sandbox.applies
        if self.sandbox is not None and sandboxed:
            box = self.sandbox.binding(d).reading(*_python_folders(self.python))
            specs.argv = argv = box.wrap(argv, self.cwd, protected=protected)
        shown = [a.replace("{connection_file}", km.connection_file) for a in argv]
        return _Live(d, shown, km, sandboxed=sandboxed)

    async def _start(self) -> _Live:
        box = self.sandbox
        protected: tuple[str, ...] = ()
        if box is not None and box.guarded:  # a window of the run's guard, until `_teardown`
            try:
                opened = await box.opening()
                self._told.append((opened, EARLIER))
                protected = opened.protected
                live = self._prepare(protected)
            except BaseException:
                box.closed(ended=True)  # nothing was started
                raise
            live.window = True
        else:
            live = self._prepare(protected)
        clock = waits.LoopClock()
        deadline = clock.now() + self.start_timeout
        raced = await waits.race(self._boot(live), deadline, self._closing, clock, grace=1.0)
        if raced.end is End.EVENT and raced.error is None and not live.gone:
            self._live = live
            return live
        if raced.end is End.DEADLINE:
            why = f"it did not answer within {self.start_timeout:g} s"
        elif raced.end is End.CANCEL or self._closed:
            why = "the kernel was closed while it started"
        elif isinstance(raced.error, _StartError):
            why = str(raced.error)
        elif raced.error is not None:
            why = f"{type(raced.error).__name__}: {raced.error}"
        else:
            why = "it ended as it started"
        self._drain_stderr(live)
        await self._teardown(live, "the kernel did not start")
        err = live.stderr.text().strip() or "(empty)"
        raise _StartError(
            f"the Python kernel did not start: {why}.\n"
            f"Its command: {shlex.join(live.argv)}\nIts stderr:\n{err}"
        )

    async def _boot(self, live: _Live) -> None:
        """Launch the kernel process, wait until it answers, set it up."""
        loop = asyncio.get_running_loop()
        rfd, wfd = os.pipe()
        live.rfd = rfd
        os.set_blocking(rfd, False)  # never a read that waits, however the start ends
        try:
            await live.km.start_kernel(
                cwd=str(self.cwd),
                env=self._environ(live.dir),
                stdout=subprocess.DEVNULL,
                stderr=wfd,
                start_new_session=True,
            )
        except OSError as e:
            raise _StartError(f"it could not be launched: {e.strerror or e}") from e
        finally:
            os.close(wfd)
        live.proc = getattr(live.km.provisioner, "process", None)
        if live.proc is None:
            raise _StartError("it was not launched (the kernel manager made no process)")
        live.pid = live.proc.pid
        self._sids.append(live.pid)
        loop.add_reader(rfd, self._on_stderr, live)
        kc = live.km.client(context=self._zmq)
        live.kc = kc
        kc.start_channels(shell=True, iopub=True, stdin=False, hb=False, control=False)
        ready = asyncio.ensure_future(kc.wait_for_ready(timeout=None))
        exited = asyncio.ensure_future(self._exited(live))
        try:
            await asyncio.wait({ready, exited}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in (ready, exited):
                t.cancel()
            await asyncio.wait({ready, exited}, timeout=1.0)
        if exited.done() and not exited.cancelled():
            raise _StartError(f"it ended ({_exit(live.proc.poll())}) before it answered")
        ready.result()
        if live.sandboxed:  # bubblewrap's first process inside leads the session the kernel is in
            inner = _procs.children(live.pid)
            if not inner:
                raise _StartError("its sandbox's first process could not be found under bubblewrap")
            live.pid = inner[0]
            live.inner = ending.inner(live.pid)
            self._sids.append(live.pid)
        tighten(live.dir)  # its sockets, made with the kernel's umask: the host's alone, as their folder
        live.tasks = [
            asyncio.ensure_future(self._read_iopub(live)),
            asyncio.ensure_future(self._read_shell(live)),
            asyncio.ensure_future(self._watch(live)),
        ]
        for code in (_SETUP.format(path=str(_INKERNEL)), _SETUP_STREAMS):
            setup = _Cell("(setup)", loop.time())
            self._send(live, setup, code, silent=True)
            await setup.done.wait()
            if setup.state == "ended":
                raise _StartError(setup.why)
            await setup.replied.wait()
            if setup.state != "ok" or setup.status != "ok":
                raise _StartError(f"its setup failed:\n{setup.out.text().strip() or setup.ename}")

    async def _exited(self, live: _Live) -> int:
        while True:
            rc = live.proc.poll()
            if rc is not None:
                return int(rc)
            await asyncio.sleep(WATCH_EVERY)

    async def _watch(self, live: _Live) -> None:
        rc = await self._exited(live)
        if live.gone:
            return
        self._drain_stderr(live)
        err = live.stderr.text().strip()
        why = (
            f"the kernel died ({_exit(rc)}); its variables and bash() jobs are gone and the next cell "
            "starts a fresh kernel"
        )
        if err:
            why += f"; its last stderr: {err[-2000:]}"
        await self._teardown(live, why)

    def _on_stderr(self, live: _Live) -> None:
        try:
            data = os.read(live.rfd, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            live.stderr.add(data)
        else:
            asyncio.get_running_loop().remove_reader(live.rfd)

    def _drain_stderr(self, live: _Live) -> None:
        if live.rfd < 0:
            return
        for _ in range(64):
            try:
                data = os.read(live.rfd, 1 << 16)
            except OSError:
                return
            if not data:
                return
            live.stderr.add(data)

    def _interrupt(self, live: _Live) -> None:
        """SIGINT to the kernel's own process group: the running cell and what it runs in the
        foreground; `bash()` commands, in groups of their own, go on."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(live.pid, signal.SIGINT)

    async def _teardown(self, live: _Live, why: str) -> None:
        """Kill the kernel's whole session and free what talked to it; its unfinished cells end with
        `why`. The next cell starts a fresh kernel."""
        if live.gone:
            return
        live.gone = True
        if self._live is live:
            self._live = None
        for cell in list(live.cells.values()):
            if not cell.done.is_set():
                cell.state = "ended"
                cell.why = why
                self._finish(live, cell)
        if (
            self._current is not None
            and not self._current.done.is_set()
            and self._current.msg_id in live.cells
        ):
            self._current = None
        process = getattr(live.km.provisioner, "process", None)
        if not live.pid and process is not None:  # the start was cut short just after the launch
            live.proc, live.pid = process, process.pid
            self._sids.append(live.pid)
        me = asyncio.current_task()
        tasks = [t for t in live.tasks if t is not me]
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=1.0)
        if live.pid:
            await _procs.kill_session(live.pid, self.kill_grace, live.proc)
            with contextlib.suppress(Exception):
                live.proc.poll()
        if live.window and self.sandbox is not None:  # once its namespace has ended: what it made
            live.window = False
            box = self.sandbox
            try:
                done = live.inner is not None and await ending.ended(live.inner, self.kill_grace)
                self._told.append((await box.closing(done), KERNEL))
            except BaseException:
                box.closed(ended=False)
                raise
        if live.kc is not None:
            with contextlib.suppress(Exception):
                live.kc.stop_channels()
        with contextlib.suppress(Exception):
            await waits.race(live.km.cleanup_resources(), waits.LoopClock().now() + 2.0, None, grace=0.0)
        if live.rfd >= 0:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(live.rfd)
            with contextlib.suppress(OSError):
                os.close(live.rfd)
            live.rfd = -1
        self._read_bash_counts(live)
        shutil.rmtree(live.dir, ignore_errors=True)
        spot = self.sandbox.mount_point(live.dir) if live.sandboxed and self.sandbox is not None else None
        if spot is not None:
            with contextlib.suppress(OSError):
                os.rmdir(spot)

    # --- messages --------------------------------------------------------------------------------------

    def _send(self, live: _Live, cell: _Cell, code: str | None = None, silent: bool = False) -> None:
        assert live.kc is not None
        cell.msg_id = live.kc.execute(
            cell.code if code is None else code,
            silent=silent,
            store_history=not silent,
            allow_stdin=False,
            stop_on_error=False,
        )
        cell.started = asyncio.get_running_loop().time()
        live.cells[cell.msg_id] = cell

    def _finish(self, live: _Live, cell: _Cell) -> None:
        if cell.done.is_set():
            return
        if cell.state == "running":
            if cell.ename:
                interrupted = cell.interrupted and cell.ename == "KeyboardInterrupt"
                cell.state = "interrupted" if interrupted else "error"
            elif cell.status == "aborted":
                cell.state, cell.ename = "error", "aborted"
            else:
                cell.state = "ok"
        cell.ended = asyncio.get_running_loop().time()
        cell.done.set()
        if self._current is cell:
            self._current = None
        if cell.job is None and cell.replied.is_set():
            live.cells.pop(cell.msg_id, None)  # its call renders it; later output is counted, not kept

    def _overdue(self, live: _Live, cell: _Cell) -> None:
        """A cell replied to but not yet idle: ended, once its output has been quiet `REPLY_GRACE`
        seconds (its idle status went missing; a kernel that drops iopub messages may lose it)."""
        if cell.done.is_set() or live.gone:
            return
        loop = asyncio.get_running_loop()
        quiet = loop.time() - cell.heard
        if quiet < REPLY_GRACE:
            loop.call_later(REPLY_GRACE - quiet, self._overdue, live, cell)
        else:
            self._finish(live, cell)

    def _add(self, cell: _Cell | None, text: str) -> None:
        data = text.encode("utf-8", "replace")
        self._cell_bytes += len(data)
        if cell is not None:
            cell.out.add(data)

    async def _read_iopub(self, live: _Live) -> None:
        assert live.kc is not None
        channel = live.kc.iopub_channel
        while True:
            try:
                msg = await channel.get_msg()
            except zmq.ZMQError:
                return
            except Exception:  # a message that does not parse is dropped, not the reader
                continue
            self._on_iopub(live, msg)

    def _on_iopub(self, live: _Live, msg: JsonObject) -> None:
        kind = msg.get("msg_type")
        content = msg.get("content") or {}
        cell = live.cells.get((msg.get("parent_header") or {}).get("msg_id", ""))
        if cell is not None:
            cell.heard = asyncio.get_running_loop().time()
        if kind == "stream":
            self._add(cell, content.get("text", ""))
        elif kind in ("execute_result", "display_data", "update_display_data"):
            text = (content.get("data") or {}).get("text/plain")
            if text:
                self._add(cell, text if text.endswith("\n") else text + "\n")
        elif kind == "error":
            if cell is not None:
                cell.ename, cell.evalue = content.get("ename", ""), content.get("evalue", "")
            self._add(cell, _traceback(content))
        elif kind == "status" and content.get("execution_state") == "idle" and cell is not None:
            self._finish(live, cell)

    async def _read_shell(self, live: _Live) -> None:
        assert live.kc is not None
        channel = live.kc.shell_channel
        loop = asyncio.get_running_loop()
        while True:
            try:
                msg = await channel.get_msg()
            except zmq.ZMQError:
                return
            except Exception:
                continue
            if msg.get("msg_type") != "execute_reply":
                continue
            cell = live.cells.get((msg.get("parent_header") or {}).get("msg_id", ""))
            if cell is None:
                continue
            content = msg.get("content") or {}
            cell.status = content.get("status", "")
            if cell.status == "error" and not cell.ename:  # a silent cell's error comes only here
                cell.ename, cell.evalue = content.get("ename", ""), content.get("evalue", "")
                self._add(cell, _traceback(content))
            cell.replied.set()
            if not cell.done.is_set():
                loop.call_later(REPLY_GRACE, self._overdue, live, cell)
            elif cell.job is None:
                live.cells.pop(cell.msg_id, None)

    def _read_bash_counts(self, live: _Live) -> None:
        try:
            names = [n for n in os.listdir(live.dir) if n.startswith("bash-") and n.endswith(".bytes")]
        except OSError:
            return
        for name in names:
            try:
                n = int((live.dir / name).read_text() or 0)
            except (OSError, ValueError):
                continue
            key = (str(live.dir), name)
            self._bash_seen[key] = max(self._bash_seen.get(key, 0), n)


def _python_folders(python: str) -> list[Path]:
    """What the kernel's Python reads: shown read-only in the sandbox even inside a hidden folder
    (a virtualenv in the user's home)."""
    exe = Path(python)
    return [
        Path(sys.prefix),
        Path(sys.base_prefix),
        exe.parent,
        Path(os.path.realpath(exe)).parent.parent,
        _INKERNEL.parent,
    ]


def _traceback(content: JsonObject) -> str:
    lines = content.get("traceback") or []
    text = (
        strip_ansi("\n".join(lines)) if lines else f"{content.get('ename', '')}: {content.get('evalue', '')}"
    )
    return text if text.endswith("\n") else text + "\n"
