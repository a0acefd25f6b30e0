"""`bash`: one command in its own process group, its output bounded, every wait with an exit.

The command runs as `bash -c` in a new session (so its group is every process it starts, unless
one starts its own session), with stdout and stderr merged into one pipe this module reads as it
comes, keeping a head and a tail of it. It ends one of four ways:

- it exits: the output is drained until the pipe closes, at most `drain_grace` seconds; processes
  it left in the background still holding the pipe after that are killed;
- its timeout passes: the group gets SIGTERM, then SIGKILL `kill_grace` seconds later at most;
- `ctx.cancel` is set (abort): the group gets SIGKILL at once and the result says "aborted";
- the task is cancelled: the group gets SIGKILL at once and the cancellation propagates.

When the run's sandbox applies (`Context.sandbox`), the shell runs inside bubblewrap, whose group
is the one killed: its pid namespace ends with it, and so does every process the command started.
In workspace-write, the protected names (`.git`, `.eukhe`, `.mcp.json`) that exist at any depth are
read-only, and once the namespace has ended (waited for: bubblewrap exits a moment before it), what
the command made of them is removed, the result saying so (`eukhe.sandbox.guard`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import Awaitable
from enum import Enum
from typing import ClassVar

from eukhe import waits
from eukhe.json_types import JsonObject
from eukhe.rules.wait import End
from eukhe.sandbox import ending
from eukhe.sandbox.bwrap import Sandbox
from eukhe.tools.base import Context, Result
from eukhe.tools.files import why

__all__ = ["BASH", "Bash", "Output"]

CHUNK = 1 << 16
THIS = "this command"
EARLIER = "an earlier command or Python cell in the sandbox"


class Output:
    """A stream's first `head` bytes and last `tail` bytes, and how many bytes it had in all."""

    def __init__(self, head: int, tail: int) -> None:
        self.head_cap = head
        self.tail_cap = tail
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            over = len(self.tail) - self.tail_cap
            if over > 0:
                del self.tail[:over]

    @property
    def cut(self) -> int:
        return self.total - len(self.head) - len(self.tail)

    def text(self) -> str:
        if not self.cut:
            return bytes(self.head + self.tail).decode("utf-8", errors="replace")
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        sep = "" if head.endswith("\n") else "\n"
        return f"{head}{sep}[... {self.cut} bytes cut ...]\n{tail}"


class _End(Enum):
    DONE = "done"
    CANCEL = "cancel"
    TIMEOUT = "timeout"


async def _race(aw: Awaitable[object], cancel: asyncio.Event, timeout: float | None) -> _End:
    """`waits.race` of `aw` for at most `timeout` seconds, until `cancel` is set."""
    clock = waits.LoopClock()
    deadline = None if timeout is None else clock.now() + timeout
    raced = await waits.race(aw, deadline, cancel, clock, grace=0.0)
    return _ENDS[raced.end]


_ENDS = {End.EVENT: _End.DONE, End.CANCEL: _End.CANCEL, End.DEADLINE: _End.TIMEOUT}


def _killpg(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _seconds(t: float) -> str:
    return f"{t:g}"


def _env(ctx: Context) -> dict[str, str]:
    """The run's environment for tools (its secrets already out), pagers off."""
    return {**ctx.env, "PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}


class Bash:
    name = "bash"
    description = (
        "Run a bash command in the working directory and return its output (stdout and stderr "
        "merged) and exit code. stdin is empty, so interactive commands fail rather than wait. Long "
        "output keeps its start and end with the middle cut. `timeout` is in seconds (default 120, "
        "at most 600); a command that outlives it is killed with every process it started. Each call "
        "is a fresh shell: cd and variables do not carry over. Commands run in a sandbox: the "
        "project is writable, the rest read-only, no network."
    )
    schema: ClassVar[JsonObject] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command, run with bash -c."},
            "timeout": {
                "type": "number",
                "minimum": 1,
                "maximum": 600,
                "description": "Seconds before the command is killed (default 120).",
            },
            "outside_sandbox": {
                "type": "boolean",
                "description": "Run it outside the sandbox (network, files outside the project). The user "
                "is asked every time; leave it out unless the command cannot work inside.",
            },
            "justification": {
                "type": "string",
                "description": "Why it must run outside the sandbox, in one sentence the user reads.",
            },
            "run_in_background": {
                "type": "boolean",
                "description": "Start it as a background job and answer at once with its id (a dev "
                "server, a watcher, a long test run); read its output with job_output, stop it with "
                "job_kill. It ends when the session does, or after its lifetime bound.",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    }
    replay_safe = False

    async def run(self, args: JsonObject, ctx: Context) -> Result:
        lim = ctx.limits
        command: str = args["command"]
        timeout = min(float(args.get("timeout", lim.bash_timeout)), lim.bash_timeout_max)
        if not ctx.cwd.is_dir():
            return Result(f"the working directory '{ctx.cwd}' does not exist or is not a directory", True)
        argv = ["bash", "-c", command]
        box: Sandbox | None = ctx.sandbox  # the run's: inside it, or refused
        if args.get("run_in_background"):
            return await _background(argv, command, ctx, box)
        if box is None:
            return await self._run(argv, ctx, timeout)
        refused = box.refusal()
        if refused is not None:
            return Result(refused, True)
        if box.guarded:
            return await self._guarded(box, argv, ctx, timeout)
        if box.vouching:  # a person let it out: what the sandbox made goes first, what it makes stays
            before = await box.checking()
            result = await self._run(box.wrap(argv, ctx.cwd), ctx, timeout)
            after = await box.vouched()
            return _noted(result, [*before.notes(EARLIER), *after.notes(EARLIER)], False)
        return await self._run(box.wrap(argv, ctx.cwd), ctx, timeout)

    async def _guarded(self, box: Sandbox, argv: list[str], ctx: Context, timeout: float) -> Result:
        """The command in a watched sandbox: the protected names that exist read-only, and what it
        made of them removed once every process of its namespace has ended."""
        info, info_w = os.pipe()
        try:
            try:
                opened = await box.opening()
                wrapped = box.wrap(argv, ctx.cwd, protected=opened.protected, info_fd=info_w)
                result = await self._run(wrapped, ctx, timeout, (info_w,))
            except BaseException:  # cancelled (or failed): its window closes all the same, blocking
                os.close(info_w)
                info_w = -1
                inner = ending.read_info(info)
                box.closed(inner is not None and ending.ended_now(inner))
                raise
            os.close(info_w)
            info_w = -1
            inner = ending.read_info(info)  # None: bubblewrap made no namespace, nothing ran
            closed = await box.closing(inner is None or await ending.ended(inner))
        finally:
            os.close(info)
            if info_w >= 0:
                os.close(info_w)
        return _noted(result, [*opened.notes(EARLIER), *closed.notes(THIS)], closed.harmful)

    async def _run(
        self, argv: list[str], ctx: Context, timeout: float, pass_fds: tuple[int, ...] = ()
    ) -> Result:
        lim = ctx.limits
        loop = asyncio.get_running_loop()
        out = Output(lim.bash_head, lim.bash_tail)
        eof = asyncio.Event()
        rfd, wfd = os.pipe()
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=subprocess.DEVNULL,
                stdout=wfd,
                stderr=wfd,
                cwd=ctx.cwd,
                env=_env(ctx),
                start_new_session=True,
                pass_fds=pass_fds,
            )
        except BaseException as e:
            os.close(rfd)
            if isinstance(e, OSError):
                return Result(f"could not start bash: {why(e)}", True)
            raise
        finally:
            os.close(wfd)
        pgid = proc.pid

        def readable() -> None:
            try:
                data = os.read(rfd, CHUNK)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if data:
                out.add(data)
            else:
                loop.remove_reader(rfd)
                eof.set()

        os.set_blocking(rfd, False)
        loop.add_reader(rfd, readable)
        notes: list[str] = []
        try:
            status = await self._supervise(proc, pgid, eof, ctx, timeout, notes)
        except BaseException:  # cancelled: kill the group, reap the shell briefly, propagate
            _killpg(pgid, signal.SIGKILL)
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(proc.wait(), lim.kill_grace)
            raise
        finally:
            loop.remove_reader(rfd)
            os.close(rfd)

        text = out.text() or "(no output)"
        if not text.endswith("\n"):
            text += "\n"
        lines = [*notes, status[0]]
        return Result(text + "\n".join(lines), status[1])

    async def _supervise(
        self,
        proc: asyncio.subprocess.Process,
        pgid: int,
        eof: asyncio.Event,
        ctx: Context,
        timeout: float,
        notes: list[str],
    ) -> tuple[str, bool]:
        """Wait for the command to end (or kill it) and its output to close; the last line and whether
        the result is an error."""
        lim = ctx.limits
        ended = await _race(proc.wait(), ctx.cancel, timeout)
        if ended is _End.TIMEOUT:
            _killpg(pgid, signal.SIGTERM)
            # the group has gone once the shell is reaped and the pipe is closed, unless a member
            # keeps neither; SIGKILL after the grace (or at once on abort) makes sure
            gone = await _race(_both(proc.wait(), eof.wait()), ctx.cancel, lim.kill_grace)
            _killpg(pgid, signal.SIGKILL)
            if gone is _End.CANCEL:
                ended = _End.CANCEL
        elif ended is _End.CANCEL:
            _killpg(pgid, signal.SIGKILL)
        else:
            drained = await _race(eof.wait(), ctx.cancel, lim.drain_grace)
            if drained is _End.CANCEL:
                _killpg(pgid, signal.SIGKILL)
                ended = _End.CANCEL
            elif drained is _End.TIMEOUT:
                _killpg(pgid, signal.SIGKILL)
                grace = _seconds(lim.drain_grace)
                notes.append(
                    f"[processes the command left running still held its output {grace} s after it "
                    "exited; they were killed]"
                )
        # everything is killed or ended by now: these waits are short, but still bounded
        await _race(eof.wait(), asyncio.Event(), lim.kill_grace)
        if proc.returncode is None:
            await _race(proc.wait(), asyncio.Event(), lim.kill_grace)

        if ended is _End.CANCEL:
            return "aborted (the command and its process group were killed)", True
        if ended is _End.TIMEOUT:
            return (
                f"timed out after {_seconds(timeout)} s (the command and its process group were killed)",
                True,
            )
        rc = proc.returncode
        if rc is None:
            return "exit status unknown (the shell did not end)", True
        if rc < 0:
            try:
                name = signal.Signals(-rc).name
            except ValueError:
                name = f"signal {-rc}"
            return f"killed by {name}", True
        return f"exit code {rc}", rc != 0


async def _background(argv: list[str], command: str, ctx: Context, box: Sandbox | None) -> Result:
    """The command started as a background job, in the sandbox as any call; its id said. In a
    watched sandbox, the job holds a window of its guard open until it ends (as the kernel does):
    what it made of the protected names is removed then, and its last look says so."""
    if ctx.jobs is None:
        return Result("this run offers no background jobs: run the command without run_in_background", True)
    notes: list[str] = []
    held: Sandbox | None = None
    if box is not None:
        refused = box.refusal()
        if refused is not None:
            return Result(refused, True)
        if box.guarded:
            opened = await box.opening()
            notes = opened.notes(EARLIER)
            argv, held = box.wrap(argv, ctx.cwd, protected=opened.protected), box
        elif box.vouching:
            notes = (await box.checking()).notes(EARLIER)
        else:
            argv = box.wrap(argv, ctx.cwd)
    try:
        job = await ctx.jobs.start(argv, command, ctx.cwd, _env(ctx), held)
    except Exception as e:
        if held is not None:
            held.closed(True)  # nothing of it runs: its window closes now
        return Result(f"could not start the background job: {e}", True)
    lines = [
        f"started background job {job}",
        f'read what it prints with job_output (job_id "{job}"); stop it with job_kill. It ends by itself, '
        "by job_kill, when this session ends, or after its lifetime bound.",
        *notes,
    ]
    return Result("\n".join(lines))


def _noted(result: Result, notes: list[str], error: bool) -> Result:
    """`result` with the sandbox's `notes` after it; an error too when `error`."""
    if not notes:
        return result
    text = result.content if result.content.endswith("\n") else result.content + "\n"
    return Result(text + "\n".join(notes), result.is_error or error)


async def _both(a: Awaitable[object], b: Awaitable[object]) -> None:
    await asyncio.gather(a, b)


BASH = Bash()
