"""The tests' forked `eukhe` processes (`tests/forks.py`) are the processes `python -m eukhe`
makes: the same output, exit code, folder and environment, and a kill ends them as it ends a
real one."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from tests import forks
from tests.proc import env


def real(*args: str, cwd: Path, environ: dict[str, str]) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "eukhe", *args]
    return subprocess.run(  # stdin empty as a forked one's (`eukhe run` with no prompt reads it)
        argv, cwd=cwd, env=environ, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120
    )


def test_a_forked_command_says_what_a_real_one_says(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (tmp_path / "project" / ".eukhe").mkdir(parents=True)
    (tmp_path / "project" / ".eukhe" / "settings.json").write_text("{not json")  # an error, with its path
    environ = env(home, {"EUKHE_SOME": "x", "OPENAI_API_KEY": "sk-forked"})
    for args in (["settings", "--json"], ["sessions"], ["run"], ["nonsense"]):
        want = real(*args, cwd=tmp_path / "project", environ=environ)
        got = forks.run(args, tmp_path / "project", environ, 120)
        assert (got.returncode, got.stdout, got.stderr) == (want.returncode, want.stdout, want.stderr), args
    shown = forks.run(["settings", "--json"], tmp_path, environ, 120)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)  # the folder is the request's: no broken project settings here


def test_a_forked_process_killed_ends_as_a_killed_one(tmp_path: Path) -> None:
    argv = ["run", "--model", "vllm/m", "--base-url", "http://127.0.0.1:9/v1", "go"]  # retries for seconds
    p = forks.Forked(argv, tmp_path, env(tmp_path / "home"))
    os.kill(p.pid, signal.SIGKILL)
    assert p.wait(timeout=60) == -signal.SIGKILL
    p.stdout.close()
    p.stderr.close()


def test_a_broken_request_is_refused_and_the_template_goes_on(tmp_path: Path) -> None:
    t = forks.template()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(t.path)
        s.sendall(b"not json\n")  # no descriptors, no JSON
        assert s.recv(100) == b""  # closed
    done = forks.run(["settings", "--json"], tmp_path, env(tmp_path / "home"), 120)
    assert done.returncode == 0, done.stderr
