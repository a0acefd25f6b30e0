"""H5.4 under crashes: the process that runs a parent and its three children is killed
(SIGKILL) ten times at random moments and taken up again each time; every child's
report is in the parent's transcript exactly once."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from eukhe.ai.faux import FauxServer, parse
from eukhe.client.client import alive, read_info
from tests.children.test_spawn import bash, home_with, reports_in, spawn
from tests.proc import eukhe, owner_log, sessions, start, until

CHILDREN = ("alpha", "beta", "gamma")
STEPS = 4


def script() -> list[dict[str, Any]]:
    work = [
        {"when": f"task {c}", "results": i, **bash(f"sleep 0.4; echo {c}{i} >> {c}.log")}
        for c in CHILDREN
        for i in range(STEPS)
    ]
    done = [{"when": f"task {c}", "results": STEPS, "text": f"{c} is done"} for c in CHILDREN]
    return [
        *work,
        *done,
        {"when": "[child-", "results": 0, "text": "noted"},
        {"when": "collect", "results": 0, "text": "collected"},
        {"when": "go", "results": 0, **spawn(*(f"task {c}" for c in CHILDREN))},
        {"when": "go", "results": len(CHILDREN), "text": "spawned three"},
    ]


def kill_all(p: subprocess.Popen[str], home: Path) -> None:
    """SIGKILL the client and the home's owner: whichever runs the workflows dies."""
    info = read_info(home)
    for pid in [p.pid, *([int(info["pid"])] if info else [])]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    p.wait(timeout=30)
    for stream in (p.stdout, p.stderr):
        if stream:
            stream.close()
    if info:
        until("the owner's end", lambda: not alive(int(info["pid"])))


@pytest.mark.timeout(600)
def test_a_parent_killed_ten_times_while_three_children_run_gets_each_report_once(tmp_path: Path) -> None:
    rng = random.Random(int(os.environ.get("EUKHE_CRASH_SEED", "5")))
    home = home_with(tmp_path)
    with FauxServer(parse(script())) as server:
        p = start("run", "--model", "vllm/m", "--base-url", server.url, "go", cwd=tmp_path, home=home)
        for _ in range(10):
            until("the process to start", lambda: read_info(home) is not None, about=lambda: owner_log(home))
            time.sleep(rng.uniform(0.2, 2.5))
            kill_all(p, home)
            p = start("resume", cwd=tmp_path, home=home)
        p.wait(timeout=120)
        [row] = sessions(tmp_path, home)
        done = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "--session", row["id"], "collect",
            cwd=tmp_path, home=home,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr + owner_log(home)
    got = reports_in(row["id"], tmp_path, home)
    names = sorted(r.split("]")[0] for r in got)
    assert len(got) == len(CHILDREN), got
    assert len(set(names)) == len(CHILDREN), got  # each child once
    for r in got:
        assert r.startswith(("[child-exited: no-reply child:", "[child-failed child:")), r
