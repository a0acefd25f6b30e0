"""The template the tests' `eukhe` processes are forked from (`tests/forks.py`): a process that
has imported the command line, its store half, the run's machinery and the OpenAI SDK once,
and forks a child for each request. The child is a whole process of its own, as `python -m
eukhe ARGS` would be (its pid, its cwd, its environment, its standard streams, its exit
status, killable at any moment): it only skips the imports, most of the CPU an `eukhe`
process of these tests spends.

    python -m tests.forkserver SOCKET

A request on SOCKET is one JSON line, {"argv", "cwd", "env"}, with three file descriptors
(the child's stdin, stdout and stderr); the answer is {"pid"}, then {"status"} (as
`subprocess` gives it: -N for a signal) once the child has ended, and the connection closes.
The template ends with the worker that started it (PR_SET_PDEATHSIG)."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import selectors
import signal
import socket
import sys
import tempfile
import traceback

import eukhe.ai.openai_chat
import eukhe.cli.entry
import eukhe.cli.main
import eukhe.cli.stored
import eukhe.run.workflow

PR_SET_PDEATHSIG = 1
REQUEST_DEADLINE = 10.0  # seconds a connection has to send its request whole


def _child(req: dict[str, object], fds: list[int]) -> None:
    """Become `eukhe ARGV` in the request's folder and environment; never returns."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for n, fd in enumerate(fds):
            os.dup2(fd, n)
        os.closerange(3, 1 << 16)  # the template's socket, its connections, its wakeup pipe
        os.chdir(str(req["cwd"]))
        env = req["env"]
        assert isinstance(env, dict)
        os.environ.clear()
        os.environ.update(env)
        tempfile.tempdir = None  # read again from TMPDIR, as a new process would
        argv = req["argv"]
        assert isinstance(argv, list)
        sys.argv = ["eukhe", *map(str, argv)]
        eukhe.cli.entry.main()  # a command ends the process itself (eukhe.leaving)
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


def _request(conn: socket.socket) -> tuple[dict[str, object], list[int]]:
    """One request, its JSON line read whole (a stream may split it), and its descriptors."""
    conn.settimeout(REQUEST_DEADLINE)
    msg, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
    while not msg.endswith(b"\n"):
        more = conn.recv(1 << 20)
        if not more:
            raise ValueError("the request ended before its line did")
        msg += more
    if len(fds) != 3:
        raise ValueError(f"{len(fds)} file descriptors, not 3")
    conn.settimeout(None)
    return dict(json.loads(msg)), fds


def main() -> None:
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # ends with the worker
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sys.argv[1])
    listener.listen(64)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, "accept")
    sel.register(wake_r, selectors.EVENT_READ, "reap")
    children: dict[int, socket.socket] = {}
    print("ready", flush=True)
    while True:
        for key, _ in sel.select():
            if key.data == "accept":
                conn, _ = listener.accept()
                try:
                    req, fds = _request(conn)
                except (OSError, ValueError) as e:  # a request cut short or malformed: refused, not fatal
                    print(f"forkserver: a request refused: {e}", file=sys.stderr, flush=True)
                    conn.close()
                    continue
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    _child(req, fds)
                for fd in fds:
                    os.close(fd)
                conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
                children[pid] = conn
            else:
                with contextlib.suppress(BlockingIOError):
                    os.read(wake_r, 4096)
                while children:
                    pid, status = os.waitpid(-1, os.WNOHANG)
                    if pid == 0:
                        break
                    ended = children.pop(pid, None)
                    if ended is not None:
                        with contextlib.suppress(OSError):
                            ended.sendall(
                                json.dumps({"status": os.waitstatus_to_exitcode(status)}).encode() + b"\n"
                            )
                        ended.close()


if __name__ == "__main__":
    main()
