"""`eukhe` as a user runs it, in its own process, which a test may kill at any moment."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eukhe.client.handoff import OWNER_FORK
from tests import forks

DEADLINE = 60.0  # seconds any one wait of these tests may take


def env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of `eukhe` in a test: a test that sets what Python reads as it starts
    gets a real owner as well as a real process (the template's would not read it)."""
    real = {} if _forked(extra) else {OWNER_FORK: ""}
    return {**os.environ, "EUKHE_HOME": str(home), **real, **(extra or {})}


def _forked(extra: dict[str, str] | None) -> bool:
    """Whether a process may come from the fork template (`tests/forks.py`): not when the test
    sets what Python reads as it starts (its I/O encoding, its locale, its flags)."""
    return not any(k.startswith(("PYTHON", "LC_")) or k == "LANG" for k in extra or {})


def eukhe(
    *args: str,
    cwd: Path,
    home: Path | None = None,
    extra: dict[str, str] | None = None,
    timeout: float = 120,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """`eukhe ARGS` in `cwd`, its home `home` (default: `cwd/home`), to its end; `input`, if
    given, written to its standard input through a pipe."""
    environ = env(cwd / "home" if home is None else home, extra)
    if _forked(extra):
        return forks.run(list(args), cwd, environ, timeout, input)
    return subprocess.run(
        [sys.executable, "-m", "eukhe", *args],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        timeout=timeout,
        input=input,
    )


def start(
    *args: str, cwd: Path, home: Path, extra: dict[str, str] | None = None, stdin: bool = False
) -> subprocess.Popen[str]:
    """`eukhe ARGS` started, its stdout and stderr pipes; `stdin`: its standard input a pipe
    the test writes (`p.stdin`), else empty."""
    if _forked(extra):
        return forks.Forked(list(args), cwd, env(home, extra), stdin=stdin)  # type: ignore[return-value]
    return subprocess.Popen(
        [sys.executable, "-m", "eukhe", *args],
        cwd=cwd,
        env=env(home, extra),
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def until(
    what: str, ok: Callable[[], bool], deadline: float = DEADLINE, about: Callable[[], str] | None = None
) -> None:
    """Wait for `ok`; past the deadline, fail with `about()` (what the processes said)."""
    end = time.monotonic() + deadline
    while not ok():
        if time.monotonic() > end:
            raise AssertionError(f"waited {deadline:.0f} s for {what}" + (f"\n{about()}" if about else ""))
        time.sleep(0.02)


def owner_log(home: Path) -> str:
    """What the home's owners said (their log), for a failure's message."""
    from eukhe.client.protocol import log_path

    path = log_path(home)
    return "owner.log:\n" + (path.read_text(errors="replace")[-4000:] if path.exists() else "(none)")


def kill(p: subprocess.Popen[str]) -> None:
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=DEADLINE)
    if p.stdout:
        p.stdout.close()
    if p.stderr:
        p.stderr.close()


def sessions(cwd: Path, home: Path) -> list[dict[str, Any]]:
    done = eukhe("sessions", "--json", cwd=cwd, home=home)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout)["sessions"])


def show(session: str, cwd: Path, home: Path) -> dict[str, Any]:
    done = eukhe("session", "show", "--json", session, cwd=cwd, home=home)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def messages(session: str, cwd: Path, home: Path) -> list[dict[str, Any]]:
    return [m for r in show(session, cwd, home)["runs"] for m in r["messages"]]


class Reader:
    """A running process's output lines as they come (a thread per stream). Once the process
    has ended, `to_end` waits for the lines still in its pipes: its end can be seen before them."""

    def __init__(self, p: subprocess.Popen[str]) -> None:
        import threading

        self.out: list[str] = []
        self.err: list[str] = []
        self.threads: list[threading.Thread] = []
        for stream, into in ((p.stdout, self.out), (p.stderr, self.err)):
            lines = lambda s=stream, i=into: i.extend(iter(s.readline, ""))  # noqa: E731
            self.threads.append(threading.Thread(target=lines, daemon=True))
            self.threads[-1].start()

    def to_end(self, deadline: float = DEADLINE) -> Reader:
        end = time.monotonic() + deadline
        for t in self.threads:
            t.join(max(0.0, end - time.monotonic()))
            if t.is_alive():
                raise AssertionError(f"waited {deadline:.0f} s for the end of a process's output")
        return self
