"""The warm template: a process of the home that has imported the command line, its store
half, the run's machinery and the providers' SDKs once, and forks an `eukhe run` for each
client that hands its run over (`client/handoff.py`). A process's imports are most of a short
run's cost (about 1.2 of a 0-round run's 1.7 s); a forked one skips them.

    python -P -m eukhe.warm SOCKET

The owner starts it beside itself (`EUKHE_WARM=0` in its environment: none), in the home's
folder with `-P`, so no project's folder is ever on its path.

A request on SOCKET is one JSON line (`handoff.request`) with three file descriptors, the
client's stdin, stdout and stderr. The child becomes `eukhe ARGV` as the client would have:
its folder, its environment, its umask, its streams' encodings and buffering. The answer
is {"pid"}, then {"status"} (as `subprocess` gives it, -N for a signal) once the child has
ended; or {"refused": why} when the request is not for this template (another Python,
another eukhe, or eukhe's sources changed since it started: it then ends, and the client
runs in its own process). The child dies with its client: the connection's end is its
kill (a `kill -9` of `eukhe run` is a crash, as without the template).

A request with {"owner": true} forks a home's owner instead (`python -m eukhe.owner`, for
`EUKHE_OWNER_FORK`, `client.handoff.fork_owner`): in a session of its own, its output in the
owner's log, and it does not die with the connection (its client ends long before it).

The template listens only to its own user (SO_PEERCRED). It ends with the owner: at the
owner's death (PR_SET_PDEATHSIG) or a SIGTERM it stops listening, and ends once its last
child has."""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib
import json
import os
import resource
import selectors
import signal
import socket
import sys
import tempfile
import threading
import traceback
from pathlib import Path
from typing import NoReturn

import eukhe
import eukhe.ai.anthropic
import eukhe.ai.openai_chat
import eukhe.ai.openai_responses
import eukhe.ai.tls
import eukhe.cli.entry
import eukhe.cli.main
import eukhe.cli.stored
import eukhe.owner.__main__
import eukhe.run.workflow
import eukhe.tools.web.convert
from eukhe.cli.main import command as cli_command
from eukhe.client import protocol
from eukhe.client.handoff import identity, limits
from eukhe.json_types import JsonObject
from eukhe.owner.log import logged

LIBRARIES = (
    "anyio._backends._asyncio",  # the SDKs' transport (httpx2, httpcore2, anyio, h11): at a first request
    "anyio.streams.stapled",
    "anyio.streams.tls",
    "h11",
    "httpcore2",
    "truststore",
    "openai.resources.chat.chat",  # the SDKs' resources, made at their first use
    "openai.resources.chat.completions.completions",
    "openai.resources.responses",
    "openai.lib.streaming.chat",
    "anthropic.resources.messages",
    "sqlite3",  # the home's store: DBOS's SQLite database and SQLAlchemy's dialect for it
    "sqlalchemy.dialects.sqlite",
    "dbos._sys_db_sqlite",
    "psycopg",  # or on PostgreSQL (durable.databaseUrl)
    "sqlalchemy.dialects.postgresql.psycopg",
    "dbos._sys_db_postgres",
    "rich.console",  # the printer of `eukhe run`
    "rich.text",
    "rich._emoji_codes",
    "typer._adapters",  # the command line's parameters, made at the first command
    "typer._click.decorators",
    "encodings.ascii",
    "encodings.idna",  # a host name in a URL
)
"""What a run loads from its libraries after it starts (a first request, a first store, its
printer), imported here too: about 0.2 CPU-seconds a run. A name a library's next version
moves is skipped: the run then imports it itself, as before."""


def _warm_libraries() -> None:
    for name in LIBRARIES:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


_warm_libraries()
# built here once, for every forked run: the model clients' CA bundle (ai.tls, 30 ms of CPU
# a run) and the command line's click command (typer's build, 10 ms)
eukhe.ai.tls.verified()
cli_command()

PR_SET_PDEATHSIG = 1
REQUEST_DEADLINE = 2.0
"""Seconds a connection has to send its request whole (one at a time is read)."""
FIELDS = frozenset({"argv", "argv0", "cwd", "env", "stdio", "umask", "limits", "nice", "identity"})
"""What a request holds (`handoff.request`)."""


def sources() -> int:
    """The newest modification time of eukhe's own sources: a change (an upgrade, an edit
    of a checkout) makes this template stale."""
    root = Path(eukhe.__file__).parent
    return max((p.stat().st_mtime_ns for p in root.rglob("*.py")), default=0)


def threads_running() -> str | None:
    """Why forking now is unsafe, or None: a thread besides this one (an import's, a library's
    pool) would be copied into the run half-way through whatever it held, a lock among it."""
    others = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
    return (
        f"threads run in the template ({', '.join(others)}): a fork would copy them mid-work"
        if others
        else None
    )


def _child(req: JsonObject, fds: list[int], conn: socket.socket) -> NoReturn:
    """Become `eukhe ARGV` in the client's folder and environment; never returns."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for n, fd in enumerate(fds):
            os.dup2(fd, n)
        keep = conn.fileno()  # the template's socket, its other connections, its wakeup pipe go
        os.closerange(3, keep)
        os.closerange(keep + 1, 1 << 16)
        os.umask(int(req["umask"]))
        for name, (soft, hard) in dict(req["limits"]).items():  # `why_not` saw each can be set
            resource.setrlimit(getattr(resource, name), (int(soft), int(hard)))
        os.setpriority(os.PRIO_PROCESS, 0, int(req["nice"]))
        os.chdir(str(req["cwd"]))
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in dict(req["env"]).items()})
        tempfile.tempdir = None  # read again from TMPDIR, as a new process would
        _streams(dict(req["stdio"]))
        sys.argv = [str(req["argv0"]), *map(str, req["argv"])]
        if req.get("owner") is True:  # a home's owner: a daemon in a session of its own, which
            os.setsid()  # outlives the client that started it (the template says when it ends)
            conn.close()
            code = eukhe.owner.__main__.main()  # or it ends the process itself
        else:
            threading.Thread(target=_die_with, args=(conn,), daemon=True).start()
            eukhe.cli.entry.main(hand=False)  # a command ends the process itself (eukhe.process_exit)
            code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:
        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _streams(io: JsonObject) -> None:
    """The standard streams as the client's Python made them (encoding, errors, buffering)."""
    enc, errors = str(io["encoding"]), str(io["errors"])
    sys.stdin = open(0, encoding=enc, errors=errors, closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", buffering=1 if io["lines"] else -1, encoding=enc, errors=errors, closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", buffering=1, encoding=enc, errors="backslashreplace", closefd=False)  # noqa: SIM115


def _die_with(conn: socket.socket) -> None:
    """The client's end of the connection closes only when it ends: so does this process,
    as it would have, killed (nothing else ever comes on it)."""
    with contextlib.suppress(OSError):
        while conn.recv(64):
            pass
    os.kill(os.getpid(), signal.SIGKILL)


def _request(conn: socket.socket) -> tuple[JsonObject, list[int]]:
    """One request, its JSON line read whole (a stream may split it), and its descriptors,
    from a process of this user's only."""
    _, uid = protocol.peer(conn)
    if uid != os.getuid():
        raise ValueError(f"a process of uid {uid}, not {os.getuid()}")
    conn.settimeout(REQUEST_DEADLINE)
    msg, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
    if not msg and not fds:
        raise EOFError  # a look whether it listens: nothing to refuse
    try:
        while not msg.endswith(b"\n"):
            more = conn.recv(1 << 20)
            if not more:
                raise ValueError("the request ended before its line did")
            msg += more
        if len(fds) != 3:
            raise ValueError(f"{len(fds)} file descriptors, not 3")
        req = json.loads(msg)
        if not isinstance(req, dict):
            raise ValueError("the request is not a JSON object")
    except (OSError, ValueError):
        for fd in fds:
            os.close(fd)
        raise
    conn.settimeout(None)
    return req, fds


def _size(limit: int) -> float:
    """A limit as a number to compare (unlimited is past every other)."""
    return float("inf") if limit == resource.RLIM_INFINITY else float(limit)


def _unreachable(req: JsonObject) -> str | None:
    """Why the child could not take the client's limits and niceness, or None: a process
    may lower its hard limits and raise its niceness, not the other way."""
    mine = limits()
    try:
        theirs = {str(k): (int(soft), int(hard)) for k, (soft, hard) in dict(req["limits"]).items()}
        nice = int(req["nice"])
    except (TypeError, ValueError, KeyError, IndexError):
        return "the request's resource limits or niceness are malformed"
    if set(theirs) != set(mine):
        return "the request's resource limits are not this Python's"
    for name, (soft, hard) in sorted(theirs.items()):
        if _size(soft) > _size(hard):
            return f"the client's {name} soft limit {soft} is above its hard limit {hard}"
        if _size(hard) > _size(mine[name][1]):
            return f"the client's {name} hard limit {hard} is above this template's {mine[name][1]}"
    if nice < os.getpriority(os.PRIO_PROCESS, 0):
        return f"the client's niceness {nice} is below this template's"
    return None


class Template:
    """The listening template, its children and whether it still takes requests."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.me = identity()
        self.built = sources()
        self.children: dict[int, socket.socket] = {}
        with contextlib.suppress(FileNotFoundError):  # a template that ended unclean left it
            os.unlink(path)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(64)
        self.inode = os.stat(path).st_ino
        self.open = True

    def why_not(self, req: JsonObject) -> str | None:
        """Why this template cannot run the request as the client would have, or None."""
        missing = sorted(FIELDS - req.keys())
        if missing:
            return f"the request lacks {', '.join(missing)}"
        if req.get("identity") != self.me:
            return f"this template is {self.me}, the client {req.get('identity')}"
        why = _unreachable(req)
        if why is not None:
            return why
        if sources() != self.built:
            self.close()
            return "eukhe's sources changed since this template started"
        return threads_running()

    def take(self, conn: socket.socket) -> None:
        try:
            req, fds = _request(conn)
        except EOFError:
            conn.close()
            return
        except (OSError, ValueError) as e:  # a request cut short, malformed, or not ours: refused
            logged(f"a request refused: {e}", "warm")
            conn.close()
            return
        why = self.why_not(req)
        if why is not None:  # said in the owner's log: the run goes on in its client's process
            logged(f"a run refused: {why}", "warm")
            for fd in fds:
                os.close(fd)
            with contextlib.suppress(OSError):
                conn.sendall(json.dumps({"refused": why}).encode() + b"\n")
            conn.close()
            return
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(req, fds, conn)
        for fd in fds:
            os.close(fd)
        with contextlib.suppress(OSError):
            conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
        self.children[pid] = conn

    def reap(self) -> None:
        while self.children:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                return
            ended = self.children.pop(pid, None)
            if ended is not None:
                with contextlib.suppress(OSError):
                    ended.sendall(json.dumps({"status": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
                ended.close()

    def close(self) -> None:
        """No more requests: the socket's path goes (unless a newer template's stands there);
        the main loop closes the listener."""
        if not self.open:
            return
        self.open = False
        with contextlib.suppress(OSError):
            if os.stat(self.path).st_ino == self.inode:
                os.unlink(self.path)


def main() -> None:
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)  # ends with the owner that started it
    if os.getppid() == 1:  # the owner died before that was set
        return
    os.umask(0o077)  # its socket is the user's alone (each child takes its client's umask)
    t = Template(sys.argv[1])
    # What the imports made is never collected in a child: its collector's first full pass
    # walked every one of them, dirtying their shared pages (about a third of a forked run's
    # CPU, half a second a test's run and owner). The template makes little after this.
    gc.freeze()
    gc.enable()  # its starter may have held the collector off while it imported (tests/forks.py)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGTERM, lambda *_: t.close())
    sel = selectors.DefaultSelector()
    sel.register(t.listener, selectors.EVENT_READ, "accept")
    sel.register(wake_r, selectors.EVENT_READ, "wake")
    print(f"eukhe warm: pid {os.getpid()} ready on {t.path}", flush=True)
    listening = True
    while t.open or t.children:
        for key, _ in sel.select():
            if key.data == "accept" and t.open:
                conn, _ = t.listener.accept()
                t.take(conn)
            elif key.data == "wake":
                with contextlib.suppress(BlockingIOError):
                    os.read(wake_r, 4096)
                t.reap()
        if listening and not t.open:  # stale, or the owner's end: the last children are waited for
            sel.unregister(t.listener)
            t.listener.close()
            listening = False
    print(f"eukhe warm: pid {os.getpid()} ended", flush=True)


if __name__ == "__main__":
    main()
