"""The warm template (`warm/__main__.py`) keeps its promise to the runs it forks (issue 41,
item 6): it has imported every module of eukhe's that an `eukhe run` loads, so a forked run
imports nothing of eukhe's again; and it forks with no thread but its own, so no run starts
with a copy of a thread stopped half-way through a lock."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from eukhe.ai.faux import FauxServer, parse

ROOT = Path(__file__).resolve().parents[1]

AFTER_FORK = {
    "eukhe.__main__": "`python -m eukhe` itself: the template calls the entry point, not the module",
    "runpy": "what runs `python -m eukhe`; a forked run is called, not run as a module",
}
"""Modules a run may load that the template does not import, each with why."""

WARM = pytest.mark.xdist_group("warm")  # one worker runs the three, the template imported once


def python(code: str, cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def imported(*args: str, cwd: Path, env: dict[str, str]) -> set[str]:
    """The modules a Python process with these arguments tried to import, by `-X importtime`
    (which shows a module imported by an import statement, found or not)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s+(\S+)$", done.stderr, re.M))


TEMPLATE = """
import sys
import eukhe.warm.__main__ as w
modules = list(sys.modules)
import json, threading, time
said = {"modules": modules, "threads": [t.name for t in threading.enumerate()], "why": w.threads_running()}
threading.Thread(target=time.sleep, args=(5,), name="pool-1", daemon=True).start()
said["with a thread"] = w.threads_running()
print(json.dumps(said))
"""
"""One Python that imports the template as `python -m eukhe.warm` does (about five CPU-seconds):
the modules it holds, its threads, and what it says once a thread runs in it."""


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    home = tmp_path_factory.mktemp("warm") / "home"
    said = python(TEMPLATE, ROOT, {**os.environ, "EUKHE_HOME": str(home), "EUKHE_WARM": "0"})
    return dict(json.loads(said))


@WARM
def test_the_template_imports_every_module_a_run_loads(tmp_path: Path, template: dict[str, Any]) -> None:
    """Of eukhe's own and of its libraries' (a first request's transport, the SDKs' resources,
    the store's SQLite, the printer): what a forked run imports again costs it CPU time."""
    env = {**os.environ, "EUKHE_HOME": str(tmp_path / "home"), "EUKHE_WARM": "0"}
    # sys.modules, not -X importtime: the template imports its libraries with importlib
    imports = set(template["modules"])
    with FauxServer(parse([{"calls": [{"name": "read", "arguments": {"path": "a.txt"}}]}, "done"])) as server:
        (tmp_path / "a.txt").write_text("a\n")
        run = imported(
            "-m", "eukhe", "run", "--model", "vllm/m", "--base-url", server.url, "go", cwd=tmp_path, env=env
        )
    assert "eukhe.run.workflow" in run and "eukhe.tools.read" in run  # the run's own were seen
    assert "httpcore2" in run and "sqlite3" in run  # and its libraries'
    tried = sorted(run - imports - set(AFTER_FORK))
    # of those, the ones that import here (a library's optional parts, another system's, fail)
    check = f"import importlib\nfor m in {tried!r}:\n    try:\n        importlib.import_module(m)\n"
    check += "    except Exception:\n        continue\n    print(m)\n"
    missing = python(check, ROOT, env).split()
    assert missing == [], f"an eukhe run loads modules the warm template never imported: {missing}"


@WARM
def test_the_template_starts_no_thread_before_it_forks(template: dict[str, Any]) -> None:
    assert (template["threads"], template["why"]) == (["MainThread"], None), template


@WARM
def test_a_thread_running_in_the_template_refuses_the_fork(template: dict[str, Any]) -> None:
    assert (
        template["with a thread"] == "threads run in the template (pool-1): a fork would copy them mid-work"
    )
