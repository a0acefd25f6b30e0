"""What a cell sees: `bash(cmd)`, `jobs`, and a stdout and stderr that never hold much.

The host executes this file inside the kernel as the kernel starts (`install`). It imports nothing of
eukhe, so it works in whatever Python runs the kernel.

- `bash(cmd)` starts `bash -c cmd` in the background and returns a handle at once: stdout and stderr
  merged into one pipe that a thread reads into a bounded buffer (a head and a rolling tail), so a
  command that prints 200 MB costs the kernel a megabyte. The command is in its own process group
  inside the kernel's session: `h.kill()` and an interrupt of a cell stay apart (SIGINT to the
  kernel's group does not reach a build started by an earlier cell), and closing the kernel kills
  every group of the session.
- Each handle writes its output byte count to `$EUKHE_KERNEL_DIR/bash-<n>.bytes` (atomically, at
  most every `WRITE_EVERY` seconds and at its end), so the host reads a job's progress without
  asking the kernel, which may be busy.
- If the host dies without closing the kernel, a thread notices (its parent changes) and kills every
  `bash()` command and the kernel.
- Every wait is clamped to the tool's blocking budget (`$EUKHE_BUDGET_MS`): in a cell, a wait ends
  before the cell's budget runs out, so the cell returns its answer instead of turning into a job; a
  cell past its budget (a job already) may wait one budget more per call.
- ipykernel buffers a cell's prints until its IO thread sends them, every 0.2 s: a loop printing
  fast would pile hundreds of megabytes into one message. `bound_streams` makes stdout and stderr
  flush every `STREAM_CHUNK` characters, which waits for the IO thread, and makes the IO thread wait
  for the host rather than drop what its queue cannot hold, so a writer slows down to what the host
  reads.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

__all__ = ["BashHandle", "Jobs", "bash", "bound_streams", "install", "jobs"]

HEAD = 512 * 1024
"""Bytes of a command's output kept from its start."""
TAIL = 512 * 1024
"""Bytes of a command's output kept from its end."""
STREAM_CHUNK = 64 * 1024
"""Characters of stdout or stderr the kernel holds before it sends them."""
WRITE_EVERY = 0.2
"""Seconds between two rewrites of a handle's byte-count file."""
KILL_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL in `BashHandle.kill`."""
DRAIN = 1.0
"""Seconds a wait gives the pipe to close once the command has exited."""
ORPHAN_EVERY = 1.0
"""Seconds between two looks at whether the host still runs."""

BUDGET = max(int(os.environ.get("EUKHE_BUDGET_MS") or 30_000), 1) / 1000
"""The tool's blocking budget, in seconds."""
DIR = os.environ.get("EUKHE_KERNEL_DIR") or None
"""Where the byte-count files go (None: nowhere)."""

_cell_started = [time.monotonic()]
_host_gone = threading.Event()
"""Set when the host died: no byte count is written any more, its folder going."""


def _clamp(timeout: float | None) -> float:
    """`timeout` (None: as long as may be) cut to what is left of the cell's budget."""
    margin = min(0.5, 0.05 * BUDGET)
    left = BUDGET - (time.monotonic() - _cell_started[0]) - margin
    limit = left if left > 0 else BUDGET
    return limit if timeout is None else max(0.0, min(float(timeout), limit))


class _Buffer:
    """The first `head` and the last `tail` bytes of a stream, and its length."""

    def __init__(self, head: int, tail: int) -> None:
        self.head_cap, self.tail_cap = head, tail
        self.head, self.tail = bytearray(), bytearray()
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

    def text(self) -> str:
        cut = self.total - len(self.head) - len(self.tail)
        head = self.head.decode("utf-8", "replace")
        tail = self.tail.decode("utf-8", "replace")
        if not cut:
            return head + tail
        sep = "" if head.endswith("\n") else "\n"
        return f"{head}{sep}[... {cut} bytes cut ...]\n{tail}"


def _publish(path: str | None, n: int) -> None:
    """Write `n` to `path` so that a reader sees the old count or the new one, never half."""
    if path is None or _host_gone.is_set():
        return
    tmp = f"{path}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # the host's alone, as its folder
        with os.fdopen(fd, "w") as f:
            f.write(str(n))
        os.replace(tmp, path)
    except OSError:  # the directory went (the kernel is closing): the count no longer matters
        pass


def _killpg(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _seconds(t: float) -> str:
    return f"{t:.1f} s"


class BashHandle:
    """A command `bash()` started: `wait`, `poll`, `tail`, `output`, `kill`, `bytes`."""

    def __init__(self, n: int, cmd: str, cwd: str | None = None) -> None:
        self.n = n
        self.cmd = cmd
        self._buf = _Buffer(HEAD, TAIL)
        self._lock = threading.Lock()
        self._eof = threading.Event()
        self._started = time.monotonic()
        self._ended: float | None = None
        env = dict(os.environ, PAGER="cat", GIT_PAGER="cat", GIT_TERMINAL_PROMPT="0")
        self._proc = subprocess.Popen(
            ["bash", "-c", cmd],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=env,
            process_group=0,
        )
        self.pid = self._proc.pid
        """The shell's pid, which is its process group's id too."""
        self._path = os.path.join(DIR, f"bash-{n}.bytes") if DIR else None
        _publish(self._path, 0)
        self._reader = threading.Thread(target=self._read, name=f"eukhe-bash-{n}", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        dirty, last = False, 0.0
        try:
            while True:
                ready, _, _ = select.select([fd], [], [], WRITE_EVERY)
                if ready:
                    data = os.read(fd, 1 << 16)
                    if not data:
                        break
                    with self._lock:
                        self._buf.add(data)
                    dirty = True
                self.poll()  # notes when it ended
                now = time.monotonic()
                if dirty and now - last >= WRITE_EVERY:
                    _publish(self._path, self.bytes)
                    dirty, last = False, now
        finally:
            self._proc.stdout.close()
            self._eof.set()
            _publish(self._path, self.bytes)

    @property
    def bytes(self) -> int:
        """Bytes of output so far."""
        return self._buf.total

    @property
    def returncode(self) -> int | None:
        """The exit code (negative: the signal that killed it); None while it runs."""
        return self.poll()

    def poll(self) -> int | None:
        """The exit code, or None while the command runs; never waits."""
        rc = self._proc.poll()
        if rc is not None and self._ended is None:
            self._ended = time.monotonic()
        return rc

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait for the command to end, at most `timeout` seconds, clamped to the blocking budget (a
        wait in a cell ends before the cell's budget does); the exit code, or None if it still runs."""
        try:
            self._proc.wait(_clamp(timeout))
        except subprocess.TimeoutExpired:
            return None
        self._eof.wait(DRAIN)  # its last output
        return self.poll()

    def output(self) -> str:
        """The output so far: its first and last `HEAD` and `TAIL` bytes, the middle marked as cut."""
        with self._lock:
            return self._buf.text()

    def tail(self, n_lines: int = 20) -> str:
        """The last `n_lines` lines of output so far."""
        lines = self.output().splitlines()
        return "\n".join(lines[-n_lines:] if n_lines > 0 else [])

    def kill(self) -> int | None:
        """Stop the command and everything it started (its process group): SIGTERM, then SIGKILL
        `KILL_GRACE` seconds later; the exit code."""
        if self.poll() is None or not self._eof.is_set():
            _killpg(self.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(KILL_GRACE)
            if self.poll() is None or not self._eof.wait(0.2):  # it, or what it left, still runs
                _killpg(self.pid, signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._proc.wait(KILL_GRACE)
            self._eof.wait(DRAIN)
        return self.poll()

    def state(self) -> str:
        rc = self.poll()
        if rc is None:
            return f"running for {_seconds(time.monotonic() - self._started)}"
        took = _seconds((self._ended or time.monotonic()) - self._started)
        if rc < 0:
            try:
                name = signal.Signals(-rc).name
            except ValueError:
                name = f"signal {-rc}"
            return f"killed by {name} after {took}"
        return f"exit code {rc} after {took}"

    def __repr__(self) -> str:
        cmd = self.cmd if len(self.cmd) <= 60 else self.cmd[:59] + "…"
        return f"<bash {self.n} {cmd!r}: {self.state()}, {self.bytes} bytes of output>"


class Jobs:
    """Every `bash()` handle of this kernel, by number: `jobs[1]`, `list(jobs)`, `jobs.wait(h)`."""

    def __init__(self) -> None:
        self._handles: list[BashHandle] = []
        self._lock = threading.Lock()

    def _add(self, cmd: str, cwd: str | None) -> BashHandle:
        with self._lock:
            h = BashHandle(len(self._handles) + 1, cmd, cwd)
            self._handles.append(h)
        return h

    def __iter__(self) -> Iterator[BashHandle]:
        return iter(list(self._handles))

    def __len__(self) -> int:
        return len(self._handles)

    def __getitem__(self, n: int) -> BashHandle:
        if not 1 <= n <= len(self._handles):
            raise KeyError(f"there is no bash() job {n}: there are {len(self._handles)}")
        return self._handles[n - 1]

    def running(self) -> list[BashHandle]:
        """The handles whose command still runs."""
        return [h for h in self if h.poll() is None]

    def wait(self, h: BashHandle | int, timeout: float | None = None) -> int | None:
        """`h.wait(timeout)` (`h` a handle or its number), clamped to the blocking budget."""
        return (self[h] if isinstance(h, int) else h).wait(timeout)

    def __repr__(self) -> str:
        if not self._handles:
            return "no bash() jobs yet"
        return "\n".join(repr(h) for h in self)


jobs = Jobs()


def bash(cmd: str, cwd: str | None = None) -> BashHandle:
    """Start `bash -c cmd` in the background (stdout and stderr merged, stdin empty) and return its
    handle at once: `h.wait(timeout)` (clamped to the blocking budget; the exit code, or None if it
    still runs), `h.poll()`, `h.tail(20)`, `h.output()`, `h.kill()`, `h.bytes`. `jobs` lists them."""
    return jobs._add(cmd, cwd)


def _bound(stream: Any) -> None:
    """Make `stream` (an ipykernel OutStream) send what it holds every `STREAM_CHUNK` characters."""
    write, flush = stream.write, stream.flush
    lock = threading.Lock()
    pending = [0]

    def bounded_write(s: str) -> int:
        if not isinstance(s, str):
            return write(s)  # its own error
        for i in range(0, max(len(s), 1), STREAM_CHUNK):
            piece = s[i : i + STREAM_CHUNK]
            write(piece)
            with lock:
                pending[0] += len(piece)
                full = pending[0] >= STREAM_CHUNK
                if full:
                    pending[0] = 0
            if full:
                flush()
        return len(s)

    stream.write = bounded_write


def _on_cell(*_: object) -> None:
    _cell_started[0] = time.monotonic()


def _session_groups() -> set[int]:
    """The process groups of the kernel's session, from /proc."""
    sid, groups = os.getsid(0), set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().decode("ascii", "replace").rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if len(fields) > 3 and int(fields[3]) == sid:
            groups.add(int(fields[2]))
    return groups


def _orphan_watch(parent: int) -> None:
    """If the host dies without closing the kernel (it was killed), kill every process group of the
    kernel's session, its own last, and remove the kernel's directory, so nothing outlives the host
    by more than `ORPHAN_EVERY`. It
    does the work of ipykernel's parent poller (turned off at the launch), which would end the
    kernel alone and leave the `bash()` commands running."""
    while os.getppid() == parent:
        time.sleep(ORPHAN_EVERY)
    own = os.getpgid(0)
    _host_gone.set()
    for h in jobs:
        _killpg(h.pid, signal.SIGKILL)
    for pgid in _session_groups() - {own}:
        _killpg(pgid, signal.SIGKILL)
    if DIR is not None:  # the connection file and the byte counts: no one will read them
        _remove(DIR)
    _killpg(own, signal.SIGKILL)
    os._exit(1)


def _remove(folder: str) -> None:
    """Remove `folder`, again while a count a killed job's reader wrote as it ended (it
    looked at `_host_gone` before it was set) keeps it from going; a few tries at most."""
    for _ in range(20):
        shutil.rmtree(folder, ignore_errors=True)
        if not os.path.exists(folder):
            return
        time.sleep(0.05)


def _no_tee(channel: str) -> contextlib.nullcontext[None]:
    return contextlib.nullcontext()


def install() -> None:
    """Set the kernel up: the cell clock of the budget, `bash` and `jobs` in the user's namespace,
    and no copy of each cell's prints in the kernel's history (IPython 9 keeps every byte a cell
    printed, for `%notebook`: a flood would stay in the kernel's memory for good)."""
    from IPython import get_ipython

    ip = get_ipython()
    ip.events.register("pre_run_cell", _on_cell)
    if hasattr(ip, "_tee"):
        ip._tee = _no_tee
    ip.user_ns["bash"] = bash
    ip.user_ns["jobs"] = jobs
    parent = int(os.environ.get("EUKHE_HOST_PID") or 0)
    if parent > 1 and os.getppid() == parent:
        threading.Thread(target=_orphan_watch, args=(parent,), name="eukhe-orphan-watch", daemon=True).start()


def bound_streams() -> None:
    """Make stdout and stderr send what they hold every `STREAM_CHUNK` characters, and make iopub
    wait for the host instead of dropping messages when the host's queue is full (`XPUB_NODROP`):
    a flood then slows to what the host reads, and nothing is lost. Called from a cell after the one
    that ran `install`: that cell's copying of prints put the streams' own `write` back as it ended."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "pub_thread"):  # ipykernel's OutStream, which holds prints
            _bound(stream)
    pub = getattr(sys.stdout, "pub_thread", None)
    sock = getattr(pub, "socket", None)
    if pub is not None and sock is not None:
        import zmq

        if hasattr(zmq, "XPUB_NODROP") and sock.getsockopt(zmq.TYPE) == zmq.XPUB:
            # the socket is the IO thread's: set there, as zmq sockets are not shared between threads
            pub.schedule(lambda: sock.setsockopt(zmq.XPUB_NODROP, 1))
