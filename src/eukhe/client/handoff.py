"""`eukhe run` handed to the home's warm template (`warm/__main__.py`), which forks it with its
imports done: this process stays, light, as the run's face to whoever started it. It
passes its standard streams, folder, environment and umask; it relays the signals it gets
(Ctrl-C, a kill, a stop and a continue) to the run; it ends with the run's exit status, or
the run's signal. Its own death ends the run at once, as a crash would (`warm._die_with`). The run keeps this
process's resource limits and niceness; a template that cannot give them (its hard limit
is lower, its niceness higher) refuses.

With no template (none warm yet, `EUKHE_WARM=0`, an unsafe socket folder) or one that
refuses, nothing was handed over and the run goes on in this process, as it always could.
Light on purpose: imported before the command line is."""

from __future__ import annotations

import contextlib
import json
import locale
import os
import resource
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

import eukhe
from eukhe.client import protocol
from eukhe.home import home, open_home, private_open
from eukhe.json_types import JsonObject
from eukhe.procfs import running

ANSWER_DEADLINE = 15.0
"""Seconds the template has to take the request and answer with the run's pid; past them
the connection closes, and a run it forked late ends with it. Generous: twenty runs started
together are forked one after another while the first of them start (bench/turns.py), and a
run that gave up on a live template would pay every import itself."""

RELAYED = (
    signal.SIGINT,
    signal.SIGTERM,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
    signal.SIGWINCH,
    signal.SIGCONT,
)


def identity() -> list[object]:
    """What a template must share with its client: the Python and the eukhe it runs, and
    what that Python read as it started (its encodings, its flags, its warnings)."""
    f = sys.flags
    return [
        sys.executable,
        str(Path(eukhe.__file__).parent),
        sys.getfilesystemencoding(),
        locale.getpreferredencoding(False),
        [f.utf8_mode, f.optimize, f.dev_mode, f.ignore_environment, f.isolated],
        sys.warnoptions,
    ]


def stdio() -> JsonObject:
    """This process's standard streams as Python made them, for the run to make the same."""
    out = sys.stdout
    return {
        "encoding": getattr(out, "encoding", None) or "utf-8",
        "errors": getattr(out, "errors", None) or "strict",
        "lines": bool(getattr(out, "line_buffering", False)),
    }


def limits() -> dict[str, list[int]]:
    """This process's resource limits (`ulimit`), soft and hard, by name: the run keeps them."""
    return {
        name: list(resource.getrlimit(getattr(resource, name)))
        for name in sorted(dir(resource))
        if name.startswith("RLIMIT_")
    }


def request(
    argv: Sequence[str], cwd: str, env: dict[str, str], io: JsonObject, umask: int, owner: bool = False
) -> bytes:
    """The request's line: the run to become, and who asks (with what limits and niceness:
    a run under `ulimit` or `nice` stays under them); `owner`: a home's owner instead."""
    req: JsonObject = {
        "argv": list(argv),
        "argv0": sys.argv[0] if sys.argv else "eukhe",
        "cwd": cwd,
        "env": env,
        "stdio": io,
        "umask": umask,
        "limits": limits(),
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
        "identity": identity(),
    }
    if owner:
        req["owner"] = True
    return json.dumps(req).encode() + b"\n"


def _umask() -> int:
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def connect(where: Path) -> socket.socket | None:
    """A connection to the home's template, or None (none listens, or the socket's folder
    is not safe: the run in this process says why)."""
    try:
        protocol.socket_folder(where)
    except (OSError, protocol.UnsafeSocket):
        return None
    return connect_path(protocol.warm_path(where))


def connect_path(path: Path) -> socket.socket | None:
    """A connection to the template listening at `path`, known to be this user's, or None."""
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError:
        return None
    try:
        conn.settimeout(ANSWER_DEADLINE)
        conn.connect(str(path))
        if protocol.peer(conn)[1] != os.getuid():  # not ours: nothing (the environment's keys) is sent
            raise OSError("the template's socket is another user's")
    except OSError:
        conn.close()
        return None
    return conn


OWNER_FORK = "EUKHE_OWNER_FORK"
"""A warm template's socket that forks a home's owner, when set: the owner starts with its
imports done (a test suite starts hundreds of owners, `tests/forks.py`). Unset, or a
template that is not this user's or refuses: the owner is a process of its own, as always."""


class ForkedOwner:
    """A home's owner a template forked: its pid, and its exit status once the template
    says it (`poll`, as `subprocess.Popen.poll`)."""

    def __init__(self, conn: socket.socket, pid: int, buf: bytearray) -> None:
        self.conn, self.pid, self.buf = conn, pid, buf
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is not None:
            return self.returncode
        ready, _, _ = select.select([self.conn], [], [], 0)
        if not ready and b"\n" not in self.buf:
            return None
        got = read_line(self.conn, self.buf, time.monotonic() + ANSWER_DEADLINE)
        if got is not None and "status" in got:
            self.returncode = int(got["status"])
        elif got is None:  # the template went first: the owner, its orphan, may still run
            try:
                os.kill(self.pid, 0)
                return None
            except ProcessLookupError:
                self.returncode = 1
        if self.returncode is not None:
            self.conn.close()
        return self.returncode


def fork_owner(home_dir: Path, log: int) -> ForkedOwner | None:
    """The home's owner forked by the template `EUKHE_OWNER_FORK` names, its output into
    `log`; None when no template is named, none is this user's there, or it refuses."""
    path = os.environ.get(OWNER_FORK)
    if not path:
        return None
    conn = connect_path(Path(path))
    if conn is None:
        return None
    where = str(home_dir.absolute())
    env = {**os.environ, "EUKHE_HOME": where}  # as the client meant it
    devnull = os.open(os.devnull, os.O_RDONLY)
    buf = bytearray()
    try:
        socket.send_fds(
            conn, [request(["owner"], where, env, stdio(), _umask(), owner=True)], [devnull, log, log]
        )
        got = read_line(conn, buf, time.monotonic() + ANSWER_DEADLINE)
    except OSError:
        got = None
    finally:
        os.close(devnull)
    if got is None or "pid" not in got:  # refused (another Python, sources changed): a process of its own
        conn.close()
        return None
    return ForkedOwner(conn, int(got["pid"]), buf)


def spawn_owner(home: Path) -> subprocess.Popen[bytes] | ForkedOwner:
    """Start the home's owner, detached (its own session, its output in its log): forked by
    the template `EUKHE_OWNER_FORK` names, if one will (`handoff.fork_owner`), else a process."""
    open_home(home)  # made private, or tightened with a notice here, where a person sees it
    log = private_open(protocol.log_path(home), os.O_WRONLY | os.O_APPEND)  # the child keeps it
    try:
        forked = fork_owner(home, log)
        if forked is not None:
            return forked
        return subprocess.Popen(
            # -P, and the home as its folder: `-m` would put the folder it starts in (the
            # client's project, a stranger's clone maybe) first on its path, and an `eukhe/`
            # package there would run as the owner
            [sys.executable, "-P", "-m", "eukhe.owner"],
            cwd=home.absolute(),
            env={**os.environ, "EUKHE_HOME": str(home.absolute())},  # as the client meant it
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        os.close(log)


def read_line(conn: socket.socket, buf: bytearray, deadline: float | None) -> JsonObject | None:
    """The next JSON line, or None when the connection ended (or the deadline passed)."""
    while b"\n" not in buf:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            return None
        ready, _, _ = select.select([conn], [], [], left)
        if not ready:
            continue
        try:
            chunk = conn.recv(4096)
        except OSError:
            return None
        if not chunk:
            return None
        buf += chunk
    line, _, rest = bytes(buf).partition(b"\n")
    buf[:] = rest
    try:
        got = json.loads(line)
    except ValueError:
        return None
    return got if isinstance(got, dict) else None


def hand_off(argv: Sequence[str]) -> None:
    """Run `eukhe ARGV` in a child of the home's warm template and end with it; returns only
    when nothing was handed over. A home whose template is not listening yet is waited for
    (`warmed`): its first runs are forked warm too, not run cold beside it."""
    if os.environ.get("EUKHE_WARM") == "0":
        return
    where = home()
    conn = connect(where) or warmed(where)
    if conn is not None:
        handed(argv, conn)


WARM_WAIT = 30.0
"""Seconds a run waits at most for its home's template while it warms (its imports take a
few seconds, more on a loaded machine); past them it runs in its own process."""
OWNER_WAIT = 5.0
"""Seconds an owner that has said nothing of its template yet (it is starting) is waited for."""
WARM_POLL = 0.02
"""Seconds between two looks at a warming template's socket."""


def warmed(where: Path) -> socket.socket | None:
    """A connection to the home's template once it listens: the home's owner started when
    none listens (its template starts beside it), then the template waited for while it
    warms, WARM_WAIT at most. None when none will listen: the owner started with
    `EUKHE_WARM=0`, its template died, an owner that does not start (the run in this process
    then says why), or the bound passed."""
    try:
        protocol.socket_folder(where)
    except (OSError, protocol.UnsafeSocket):
        return None
    owner = None
    began = time.monotonic()
    if not _listens(protocol.socket_path(where)):
        try:
            owner = spawn_owner(where)
        except Exception:  # the home or its log: the run in this process meets it and says why
            return None
    while time.monotonic() < began + WARM_WAIT:
        conn = connect(where)
        if conn is not None:
            return conn
        if owner is not None and owner.poll() not in (None, 0):  # it failed: the run says why
            return None
        warming = _warming(where)
        if warming is False or (warming is None and time.monotonic() > began + OWNER_WAIT):
            return None
        time.sleep(WARM_POLL)
    return None


def _listens(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        try:
            s.connect(str(path))
        except OSError:
            return False
    return True


def _warming(where: Path) -> bool | None:
    """Whether the home's owner has a template that is warming (True), none that will listen
    (False), or has not said yet (None: no owner of the home has written its record)."""
    try:
        about = json.loads(protocol.warm_info_path(where).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(about, dict) or not _pid_runs(about.get("owner")):
        return None  # an earlier owner's record: this one has not written its own yet
    return _pid_runs(about.get("pid"))


def _pid_runs(pid: object) -> bool:
    return isinstance(pid, int) and pid > 0 and running(pid)


def handed(argv: Sequence[str], conn: socket.socket) -> None:
    """`eukhe ARGV` run by the template at the other end of `conn`, this process its face
    (signals relayed, its exit status ours); returns only when nothing was handed over."""
    pid: list[int] = []
    pending: list[int] = []

    def relay(sig: int, _: FrameType | None) -> None:
        if not pid:
            pending.append(sig)
            return
        with contextlib.suppress(ProcessLookupError):
            if sig == signal.SIGTSTP:  # the run stops with this process, and goes on with it
                os.kill(pid[0], signal.SIGSTOP)
                os.kill(os.getpid(), signal.SIGSTOP)
            else:
                os.kill(pid[0], sig)

    before = {s: signal.getsignal(s) for s in (*RELAYED, signal.SIGTSTP)}
    for s, was in before.items():
        if was != signal.SIG_IGN:  # a signal this process was started deaf to stays so
            signal.signal(s, relay)
    buf = bytearray()
    try:
        line = request(argv, os.getcwd(), dict(os.environ), stdio(), _umask())
        socket.send_fds(conn, [line], [0, 1, 2])
        got = read_line(conn, buf, time.monotonic() + ANSWER_DEADLINE)
    except OSError:  # a folder gone, a stream closed, a template gone: run here
        got = None
    if got is None or "pid" not in got:
        conn.close()  # a run the template forks late ends with this connection
        for s, was in before.items():
            signal.signal(s, was)
        for sig in pending:  # a Ctrl-C meanwhile is the run's here
            os.kill(os.getpid(), sig)
        return
    pid.append(int(got["pid"]))
    for sig in pending:
        relay(sig, None)
    while True:
        got = read_line(conn, buf, None)
        if got is None:
            print(
                "eukhe: the run's process ended, and its exit status was lost: its warm template ended first",
                file=sys.stderr,
            )
            os._exit(1)
        if "status" in got:
            _end(int(got["status"]))


def _end(status: int) -> None:
    """End as the run ended: its exit code, or its signal."""
    if status < 0:
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
        time.sleep(1)  # a signal this process cannot take (SIGSTOP): ended below
    os._exit(status if status >= 0 else 128 - status)
