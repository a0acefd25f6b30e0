"""`eukhe` processes forked from a template that has imported eukhe once (eukhe's own warm
template, `eukhe/warm/__main__.py`), behind the part of `subprocess.Popen` the tests use. Each
is a process of its own, as `python -m eukhe` makes it: only the imports (0.5 to 0.9
CPU-seconds a process, some 300 processes a suite) are skipped. One template a pytest
worker, started at its first use."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

from eukhe.client import handoff
from tests.user_secrets import MARK, SECRETS

ROOT = Path(__file__).resolve().parents[1]
START_DEADLINE = 60.0  # seconds the template may take to import and listen
FACES_TOO = (
    # the imports with the cyclic collector held off (a third of the template's start): the
    # template turns it on once it has frozen what they made, before it forks (warm.main)
    "import gc; gc.disable(); import runpy, eukhe.ui.app, eukhe.acp.serve;"
    " runpy.run_module('eukhe.warm', run_name='__main__', alter_sys=True)"
)
STREAMS = {"encoding": "utf-8", "errors": "strict", "lines": False}  # as a child's into pipes


def socket_path() -> str:
    """The worker's template's socket, the same for every template it starts (a fresh one
    takes the old one's place): the tests' owners are forked there too (`EUKHE_OWNER_FORK`)."""
    return os.path.join(tempfile.gettempdir(), f"eukhe-forks-{os.getpid()}", "fork.sock")


class Template:
    """The worker's template process and its socket."""

    def __init__(self) -> None:
        self.path = socket_path()
        self.dir = os.path.dirname(self.path)
        os.makedirs(self.dir, mode=0o700, exist_ok=True)
        self.proc = subprocess.Popen(
            # eukhe's warm template, with the interactive agent's and the editor face's imports
            # done too (the tmux tests' terminals run the agent handed over, tests/ui/handed.py;
            # the editor's tests some twenty `eukhe acp`, each importing its face's 0.6
            # CPU-seconds again)
            [sys.executable, "-P", "-c", FACES_TOO, self.path],
            cwd=ROOT,
            # a user's secrets in its environment, as a user's owner has them from their shell:
            # in every forked process's own /proc/self/environ, never in its os.environ (the
            # request's, tests/user_secrets.py)
            env={**os.environ, **SECRETS, **MARK},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=open(os.path.join(self.dir, "forkserver.log"), "wb"),  # noqa: SIM115
            start_new_session=True,  # a test's signal to a group never reaches it
        )
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], START_DEADLINE)
        line = self.proc.stdout.readline() if ready else b""
        if b" ready on " not in line:
            log = Path(self.dir, "forkserver.log").read_text(errors="replace")[-3000:]
            raise RuntimeError(f"the fork template did not start: {line!r}\n{log}")


_template: list[Template] = []
_lock = threading.Lock()


def template(fresh: bool = False) -> Template:
    """The worker's template; `fresh`: a new one, the old one stopped (its sources changed)."""
    with _lock:
        if fresh and _template and _template[0].proc.poll() is None:
            _template[0].proc.kill()
            _template[0].proc.wait()
        if fresh or not _template or _template[0].proc.poll() is not None:
            _template[:] = [Template()]
        return _template[0]


class Forked:
    """A forked `eukhe` process, as `subprocess.Popen(..., stdout=PIPE, stderr=PIPE, text=True)`."""

    def __init__(
        self, argv: list[str], cwd: Path, env: dict[str, str], fresh: bool = False, stdin: bool = False
    ) -> None:
        self.args = ["eukhe", *argv]
        self.returncode: int | None = None
        t = template(fresh)
        self.stdin: IO[str] | None = None
        if stdin:  # a pipe the test writes (`self.stdin`), as Popen's stdin=PIPE
            in_r, in_w = os.pipe()
            self.stdin = open(in_w, "w")  # noqa: SIM115
            ends = [in_r]
        else:
            ends = [os.open(os.devnull, os.O_RDONLY)]
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        ends += [out_w, err_w]
        self._conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._conn.connect(t.path)
            mask = os.umask(0o022)
            os.umask(mask)
            line = handoff.request(argv, str(cwd), env, STREAMS, mask)
            socket.send_fds(self._conn, [line], ends)
        finally:
            for fd in ends:
                os.close(fd)
        self._buf = b""
        self.stdout: IO[str] = open(out_r)  # noqa: SIM115  (text as Popen's: the locale's, newlines read as \n)
        self.stderr: IO[str] = open(err_r)  # noqa: SIM115
        got = self._message(START_DEADLINE)
        if got is not None and "sources changed" in str(got.get("refused")) and not fresh:
            self._conn.close()  # edited since the template started (a checkout being worked on): a new one
            self.stdout.close()
            self.stderr.close()
            if self.stdin is not None:
                self.stdin.close()
            self.__init__(argv, cwd, env, fresh=True, stdin=stdin)  # type: ignore[misc]
            return
        if got is None or "pid" not in got:
            raise RuntimeError(f"the fork template did not fork `eukhe {' '.join(argv)}`: {got}")
        self.pid = int(got["pid"])

    def _message(self, timeout: float | None) -> dict[str, Any] | None:
        """The next JSON line from the template, None when none came within `timeout`."""
        end = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = None if end is None else max(0.0, end - time.monotonic())
            ready, _, _ = select.select([self._conn], [], [], left)
            if not ready:
                return None
            chunk = self._conn.recv(4096)
            if not chunk:
                raise RuntimeError(f"the fork template went away while `{' '.join(self.args)}` ran")
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return dict(json.loads(line))

    def poll(self) -> int | None:
        if self.returncode is None:
            got = self._message(0)
            if got is not None:
                self.returncode = int(got["status"])
                self._conn.close()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            got = self._message(timeout)
            if got is None:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            self.returncode = int(got["status"])
            self._conn.close()
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:  # not yet reaped: the pid is still this process's
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def communicate(self, input: str | None = None, timeout: float | None = None) -> tuple[str, str]:
        """Both streams to their end and the exit status, as Popen's; `input` written to its
        standard input (started with `stdin`), which is then closed."""
        assert input is None or self.stdin is not None, "input for a process started without stdin"
        got: dict[str, str] = {}

        def read(name: str, stream: IO[str]) -> None:
            got[name] = stream.read()

        def write(stream: IO[str], text: str) -> None:
            try:
                stream.write(text)
            except BrokenPipeError:  # it ended without reading it all, as a real one may
                pass
            finally:
                with contextlib.suppress(BrokenPipeError):
                    stream.close()

        readers = [
            threading.Thread(target=read, args=(n, s), daemon=True)
            for n, s in (("out", self.stdout), ("err", self.stderr))
        ]
        if input is not None and self.stdin is not None:
            readers.append(threading.Thread(target=write, args=(self.stdin, input), daemon=True))
        for r in readers:
            r.start()
        end = None if timeout is None else time.monotonic() + timeout
        for r in readers:
            r.join(None if end is None else max(0.0, end - time.monotonic()))
            if r.is_alive():
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        self.wait(None if end is None else max(0.0, end - time.monotonic()))
        self.stdout.close()
        self.stderr.close()
        return got.get("out", ""), got.get("err", "")


def run(
    argv: list[str], cwd: Path, env: dict[str, str], timeout: float, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`eukhe ARGV` to its end, as `subprocess.run(..., capture_output=True, text=True, timeout=...)`;
    `input` on its standard input (else an empty one)."""
    p = Forked(argv, cwd, env, stdin=input is not None)
    try:
        out, err = p.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        raise
    return subprocess.CompletedProcess(p.args, p.returncode or 0, out, err)
