"""H5.4 in the windows a random kill almost never hits: the process is killed (SIGKILL,
by the crash point a test opens, `eukhe.fault_injection`) between a store's commit and the
step that records it, and the report still reaches its parent exactly once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from eukhe.ai.faux import FauxServer, parse
from eukhe.fault_injection import POINTS, VARIABLE
from tests.children.test_spawn import bash, home_with, reports_in, spawn
from tests.proc import eukhe, owner_log, sessions, start


def script() -> list[dict[str, Any]]:
    """The parent spawns a child that answers at once, and works until the child's
    report can have been submitted: a round end places it (or, failing that, its next
    run's start)."""
    wait = "while [ ! -f child.done ]; do sleep 0.1; done; sleep 5"
    return [
        {"when": "quick task", "results": 0, **bash("touch child.done")},
        {"when": "quick task", "results": 1, "text": "quick done"},
        {"when": "[child-", "results": 2, "text": "noted"},
        {"when": "[child-", "results": 0, "text": "noted"},
        {"when": "collect", "results": 0, "text": "collected"},
        {"when": "go", "results": 0, **spawn("quick task")},
        {"when": "go", "results": 1, **bash(wait)},
        {"when": "go", "results": 2, "text": "no report yet"},
    ]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("point", POINTS)
def test_a_kill_between_a_commit_and_its_step_still_delivers_the_report_once(
    tmp_path: Path, point: str
) -> None:
    home = home_with(tmp_path)
    marker = tmp_path / f"crashed-at-{point}"
    crash = {VARIABLE: f"{point}:{marker}"}
    with FauxServer(parse(script())) as server:
        p = start(
            "run", "--model", "vllm/m", "--base-url", server.url, "go", cwd=tmp_path, home=home, extra=crash
        )
        p.wait(timeout=120)
        for stream in (p.stdout, p.stderr):
            if stream:
                stream.close()
        assert marker.exists(), f"the process never reached the crash point {point}\n{owner_log(home)}"
        resumed = eukhe("resume", cwd=tmp_path, home=home)
        assert resumed.returncode == 0, resumed.stderr + owner_log(home)
        [row] = sessions(tmp_path, home)
        done = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "--session", row["id"], "collect",
            cwd=tmp_path, home=home,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr + owner_log(home)
    got = reports_in(row["id"], tmp_path, home)
    assert got == ["[child-exited: no-reply child:c1.1] Last assistant text: quick done"], got
