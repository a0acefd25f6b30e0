"""`eukhe run` handed to the home's warm template (`client/handoff.py`, `warm/__main__.py`): the
run is a child of the template, and ends, speaks, stops and dies as the process that
asked for it would have; a template that is not the client's runs nothing."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from eukhe.ai.faux import FauxServer, parse
from eukhe.client import handoff, protocol
from tests import forks
from tests.cli.terminal import Shown, on_pty
from tests.proc import DEADLINE, env, until

# the tests' processes run without it (conftest); the owner waits longer than the tests' 3 s
# for its next client, so a template slow to import on a loaded machine is not ended meanwhile
WARM = {"EUKHE_WARM": "1", "EUKHE_OWNER_IDLE_MS": "60000"}
SCRIPT = [
    {"when": "hold", "text": "never", "stallAfter": 0, "stall": 3600},
    *[{"when": "fail", "error": {"status": 401, "body": {"error": {"message": "bad key"}}}}] * 2,
    {"text": "done"},
]


def run(home: Path, cwd: Path, *args: str, **kw: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "eukhe", "run", *args],
        cwd=cwd,
        env=env(home, WARM),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,  # type: ignore[call-overload]
    )


def template_pid(home: Path) -> int:
    """The home's warm template, once it listens (started by its owner)."""

    def listening() -> bool:
        with socket.socket(socket.AF_UNIX) as s:
            try:
                s.connect(str(protocol.warm_path(home)))
            except OSError:
                return False
        return True

    def said() -> list[str]:  # its line comes after it listens, through the owner's log
        path = protocol.log_path(home)
        return re.findall(r"eukhe warm: pid (\d+) ready", path.read_text()) if path.exists() else []

    until("the warm template", listening)
    until("the warm template's ready line", lambda: bool(said()))
    return int(said()[-1])


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid`."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
    return out


@pytest.fixture(autouse=True)
def _owner_shut(tmp_path: Path) -> Iterator[None]:
    """The test's owner (and its template with it) ended at the test's end."""
    yield
    subprocess.run(
        [sys.executable, "-m", "eukhe", "shutdown"],
        env=env(tmp_path / "home"),
        capture_output=True,
        timeout=DEADLINE,
    )


def warmed(server: FauxServer, tmp_path: Path) -> tuple[Path, int]:
    home = tmp_path / "home"
    first = run(home, tmp_path, "--model", "vllm/m", "--base-url", server.url, "warm up")
    assert first.wait(timeout=DEADLINE) == 0, first.communicate()
    return home, template_pid(home)


def test_a_run_handed_to_the_template_is_its_child_and_ends_as_it_would_have(tmp_path: Path) -> None:
    model = ("--model", "vllm/m")
    with FauxServer(parse(SCRIPT)) as server:
        home, template = warmed(server, tmp_path)
        url = ("--base-url", server.url)
        # the prompt from the client's stdin, the answer on its stdout
        p = run(home, tmp_path, *model, *url, "-", stdin=subprocess.PIPE)
        out, err = p.communicate("say it", timeout=DEADLINE)
        assert p.returncode == 0, err
        assert out == "done\n", (out, err)
        assert "made private" not in err  # the template's socket is the user's alone
        # a failed run's code and cause, as in a process of its own
        failed = run(home, tmp_path, *model, *url, "fail now")
        _f_out, f_err = failed.communicate(timeout=DEADLINE)
        alone = subprocess.run(
            [sys.executable, "-m", "eukhe", "run", *model, *url, "fail now"],
            cwd=tmp_path,
            env=env(home),
            capture_output=True,
            text=True,
            timeout=DEADLINE,
        )
        assert failed.returncode == alone.returncode == 1, (f_err, alone.stderr)
        assert f_err.splitlines()[-1].split(" after ")[0] == alone.stderr.splitlines()[-1].split(" after ")[0]
        # a run at work is the template's child, and Ctrl-C reaches it through its client
        held = run(home, tmp_path, *model, *url, "hold on")
        try:
            until("the held request", lambda: any("hold on" in json.dumps(r.body) for r in server.seen))
            assert len(children(template)) == 1
            held.send_signal(signal.SIGINT)
            assert held.wait(timeout=DEADLINE) == 130, held.communicate()
        finally:
            held.kill()
        until("the run's process gone", lambda: not children(template))


def test_a_killed_client_kills_its_run_as_a_crash_and_the_owner_takes_it_up(tmp_path: Path) -> None:
    script = [
        {"when": "cut", "text": "never whole " * 50, "chunks": 50, "delay": 0.2},
        {"when": "cut", "text": "finished by the owner"},
        {"text": "done"},
    ]
    with FauxServer(parse(script)) as server:
        home, template = warmed(server, tmp_path)
        p = run(home, tmp_path, "--model", "vllm/m", "--base-url", server.url, "--session", "s-cut", "cut")
        try:
            until("the run's request", lambda: len(server.seen) >= 2)
            assert len(children(template)) == 1
        finally:
            p.kill()
        p.wait(timeout=DEADLINE)
        until("the run killed with its client", lambda: not children(template))
        until("the owner's request", lambda: len(server.seen) >= 3)
    assert "a client died with s-cut/" in protocol.log_path(home).read_text()


def limited(home: Path, cwd: Path, nofile: str, *args: str, nice: int = 0) -> subprocess.Popen[str]:
    """`eukhe run ARGS` under `ulimit -n` (soft:hard) and `nice`, as a shell would start it."""
    return subprocess.Popen(
        [
            "nice",
            "-n",
            str(nice),
            "prlimit",
            f"--nofile={nofile}",
            sys.executable,
            "-m",
            "eukhe",
            "run",
            *args,
        ],
        cwd=cwd,
        env=env(home, WARM),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def nofile_and_nice(pid: int) -> tuple[str, int]:
    """A process's open-files limits, as /proc shows them, and its niceness."""
    [row] = [
        r for r in Path(f"/proc/{pid}/limits").read_text().splitlines() if r.startswith("Max open files")
    ]
    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return " ".join(row.split()[3:5]), int(stat[16])


def test_a_handed_run_keeps_its_clients_limits_and_niceness_or_is_refused(tmp_path: Path) -> None:
    """`ulimit` and `nice` before `eukhe run` bind the run as they would in its own process:
    the template's child takes the client's limits and niceness; a client whose hard limit is
    above the template's (which a process cannot raise) is refused, and runs in its own."""
    model = ("--model", "vllm/m")
    with FauxServer(parse(SCRIPT)) as server:
        url = ("--base-url", server.url)
        home = tmp_path / "home"
        first = limited(home, tmp_path, "512:4096", *model, *url, "warm up")
        assert first.wait(timeout=DEADLINE) == 0, first.communicate()
        template = template_pid(home)
        assert nofile_and_nice(template) == ("512 4096", 0)
        held = limited(home, tmp_path, "200:3000", *model, *url, "hold on", nice=5)
        try:
            until("the held request", lambda: any("hold on" in json.dumps(r.body) for r in server.seen))
            [child] = children(template)
            assert nofile_and_nice(child) == ("200 3000", 5)
        finally:
            held.kill()
        until("the run's process gone", lambda: not children(template))
        wider = limited(home, tmp_path, "512:8192", *model, *url, "say it")
        out, err = wider.communicate(timeout=DEADLINE)
        assert (wider.returncode, out) == (0, "done\n"), err
    assert "a run refused: the client's RLIMIT_NOFILE hard limit 8192 is above this template's 4096" in (
        protocol.log_path(home).read_text()
    )


def test_a_template_of_another_python_or_eukhe_runs_nothing(tmp_path: Path) -> None:
    t = forks.template()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(t.path)
        line = json.loads(handoff.request(["--version"], str(tmp_path), {}, forks.STREAMS, 0o022))
        line["identity"][0] = "/usr/bin/another-python"
        ends = [os.open(os.devnull, os.O_RDWR) for _ in range(3)]
        try:
            socket.send_fds(s, [json.dumps(line).encode() + b"\n"], ends)
        finally:
            for fd in ends:
                os.close(fd)
        got = json.loads(s.makefile().readline())
    assert "refused" in got and "another-python" in got["refused"]
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(t.path)
        ends = [os.open(os.devnull, os.O_RDWR) for _ in range(3)]
        try:
            socket.send_fds(s, [b'{"argv": ["--version"]}\n'], ends)
        finally:
            for fd in ends:
                os.close(fd)
        got = json.loads(s.makefile().readline())
    assert got["refused"].startswith("the request lacks argv0, cwd, env"), got
    # garbage limits: refused, with its reason, and the template lives on
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(t.path)
        line = json.loads(handoff.request(["--version"], str(tmp_path), {}, forks.STREAMS, 0o022))
        line["limits"] = {"RLIMIT_NOFILE": "many"}
        ends = [os.open(os.devnull, os.O_RDWR) for _ in range(3)]
        try:
            socket.send_fds(s, [json.dumps(line).encode() + b"\n"], ends)
        finally:
            for fd in ends:
                os.close(fd)
        got = json.loads(s.makefile().readline())
    assert got == {"refused": "the request's resource limits or niceness are malformed"}, got


def test_a_handed_run_on_a_terminal_draws_its_status_line_there(tmp_path: Path) -> None:
    """The template's child gets the client's terminal as its own stderr: `eukhe run` there
    says what it waits for over itself, as a run in its own process does."""
    script = [{"text": "warm"}, {"text": "Hello there.", "chunks": 2, "delay": 1.5}]
    with FauxServer(parse(script)) as server:
        _, template = warmed(server, tmp_path)
        shown: list[Shown] = []
        argv = ("run", "--model", "vllm/m", "--base-url", server.url, "hi")
        t = threading.Thread(target=lambda: shown.append(on_pty(*argv, cwd=tmp_path, extra=WARM, own=True)))
        t.start()
        try:
            until("the handed run", lambda: len(children(template)) == 1 or not t.is_alive())
            handed = len(children(template)) == 1
        finally:
            t.join(DEADLINE)
    assert handed, "the run was not the template's child"
    [s] = shown
    assert s.code == 0, s.terminal
    assert "\r\x1b[2K\x1b[2mworking · run 1 · model streaming: quiet " in s.terminal, s.terminal
    assert "Hello there." in s.terminal


def test_a_fresh_homes_first_run_waits_for_the_template_and_is_forked_warm(tmp_path: Path) -> None:
    """No owner runs: the first run starts it and waits for its template to warm (issue 56),
    so it is the template's child, as every later run is, not a cold process beside it."""
    home = tmp_path / "home"
    with FauxServer(parse(SCRIPT)) as server:
        held = run(home, tmp_path, "--model", "vllm/m", "--base-url", server.url, "hold on")
        try:
            until("the held request", lambda: any("hold on" in json.dumps(r.body) for r in server.seen))
            template = template_pid(home)
            assert children(template) and held.pid not in children(template)
            held.send_signal(signal.SIGINT)
            assert held.wait(timeout=DEADLINE) == 130, held.communicate()
        finally:
            held.kill()
        until("the run's process gone", lambda: not children(template))
