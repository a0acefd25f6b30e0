"""Background jobs in a real headless `eukhe run` against the faux model, in the sandbox: a
job the model starts is read with `job_output` while the model works in other rounds, then
stopped with `job_kill`; one left running ends with the session; one running when the run's
--timeout passes ends with it. After each, none of its processes is left."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

from eukhe.ai.faux import FauxServer, parse
from eukhe.jobs import listing
from eukhe.jobs.record import jobs_root, read_meta
from eukhe.jobs.tree import marked
from eukhe.rules import job as rule
from tests.proc import eukhe, messages, start, until

TICKS = "for i in $(seq 1 100000); do echo tick $i; sleep 0.1; done"


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"calls": [{"name": name, "arguments": arguments}]}


def run(tmp_path: Path, script: list[dict[str, Any]], *extra: str) -> tuple[Any, list[dict[str, Any]]]:
    home = tmp_path / "home"
    with FauxServer(parse(script)) as server:
        args = ["run", "--model", "vllm/m", "--base-url", server.url, "--json", *extra, "start the server"]
        done = eukhe(*args, cwd=tmp_path, home=home)
    assert done.stdout, done.stderr
    return done, messages(json.loads(done.stdout.splitlines()[-1])["session_id"], tmp_path, home)


def mark_of(tmp_path: Path, job: str = "job-1") -> str:
    meta = read_meta(jobs_root(tmp_path / "home") / job)
    assert meta is not None
    return meta.mark


def results(msgs: list[dict[str, Any]]) -> list[str]:
    return [str(m.get("content")) for m in msgs if m.get("role") == "tool"]


def test_a_dev_server_is_read_while_the_model_works_then_killed(tmp_path: Path) -> None:
    script = [
        {"results": 0, **call("bash", command=TICKS, run_in_background=True)},
        {"results": 1, **call("bash", command="sleep 0.6; echo other work")},
        {"results": 2, **call("job_output", job_id="job-1")},
        {"results": 3, **call("job_output", job_id="job-1", filter="tick 1$")},
        {"results": 4, **call("job_kill", job_id="job-1")},
        {"results": 5, "text": "stopped it"},
    ]
    done, msgs = run(tmp_path, script)
    assert done.returncode == 0, done.stderr
    started, other, look, filtered, killed = results(msgs)
    assert started.startswith("started background job job-1")
    assert "other work" in other
    assert "tick 1\n" in look and "[job job-1: running]" in look
    assert "tick 2" not in filtered
    assert killed.startswith("[job job-1: ended: job_kill")
    assert not marked(mark_of(tmp_path))
    [job] = listing(tmp_path / "home")
    assert job.state.startswith("ended: job_kill") and job.command == TICKS
    listed = eukhe("jobs", "--json", cwd=tmp_path, home=tmp_path / "home")
    [shown] = json.loads(listed.stdout)["jobs"]
    assert shown["id"] == "job-1" and shown["ended"] and shown["command"] == TICKS
    refused = eukhe("jobs", "--kill", "job-1", cwd=tmp_path, home=tmp_path / "home")
    assert refused.returncode == 1 and "job-1 is not running" in refused.stderr


def test_a_job_left_running_ends_with_its_session(tmp_path: Path) -> None:
    script = [
        {"results": 0, **call("bash", command=TICKS, run_in_background=True)},
        {"results": 1, "text": "it runs"},
    ]
    done, _ = run(tmp_path, script)
    assert done.returncode == 0, done.stderr
    assert not marked(mark_of(tmp_path))
    [job] = listing(tmp_path / "home")
    assert job.state.startswith("ended: its session ended"), job.state


def test_a_job_running_when_the_timeout_passes_ends_with_the_run(tmp_path: Path) -> None:
    script = [
        {"results": 0, **call("bash", command=f"trap '' TERM; {TICKS}", run_in_background=True)},
        {"results": 1, "text": "never", "stallAfter": 0},
    ]
    began = time.monotonic()
    done, _ = run(tmp_path, script, "--timeout", "3s")
    assert done.returncode != 0
    assert time.monotonic() - began < 30
    assert not marked(mark_of(tmp_path))
    [job] = listing(tmp_path / "home")
    assert job.state.startswith("ended: its session's --timeout passed"), job.state


def test_a_subagents_jobs_end_when_it_reports(tmp_path: Path) -> None:
    """The child starts a job and answers; its jobs end with its report (said as its run's),
    not with the session's end."""
    script = [
        {"when": "serve in the child", "results": 0, **call("bash", command=TICKS, run_in_background=True)},
        {"when": "serve in the child", "results": 1, "text": "served"},
        {"when": "[child-exited", "results": 0, "text": "the child served"},
        {"when": "start the server", "results": 0, **call("spawn", task="serve in the child")},
        {"when": "start the server", "results": 1, "text": "spawned"},
    ]
    with FauxServer(parse(script)) as server:
        args = ["run", "--model", "vllm/m", "--base-url", server.url, "--events", "start the server"]
        done = eukhe(*args, cwd=tmp_path, home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert not marked(mark_of(tmp_path))
    events = [json.loads(line) for line in done.stdout.splitlines()]
    [ended] = [e for e in events if e["type"] == "notice" and "background job job-1" in e["text"]]
    assert ".c" in ended["run"] and "ended: its session ended" in ended["text"], ended


STUBBORN = (
    "trap '' TERM; (trap '' TERM; setsid bash -c 'trap \"\" TERM; while :; do sleep 1; done' &); "
    "(trap '' TERM; sleep 1000 &); while :; do sleep 1; done"
)


def test_eight_jobs_end_when_the_run_and_the_owner_are_killed(tmp_path: Path) -> None:
    """Eight jobs whose children ignore SIGTERM (one left its session); `eukhe run` and the
    home's owner killed with SIGKILL: within the rule's bound none of their processes is left."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash"]}}))
    calls = [{"name": "bash", "arguments": {"command": STUBBORN, "run_in_background": True}, "id": f"b{n}"}
             for n in range(8)]  # fmt: skip
    script = [
        {"when": "start them", "results": 0, "calls": calls},
        {"when": "start them", "results": 8, "text": "never", "stallAfter": 0},
    ]
    with FauxServer(parse(script)) as server:
        p = start("run", "--model", "vllm/m", "--base-url", server.url, "start them", cwd=tmp_path, home=home)
        try:
            until("eight jobs", lambda: sum(1 for r in server.seen if r.method == "POST") >= 2)
            marks = [mark_of(tmp_path, f"job-{n}") for n in range(1, 9)]
            until("their processes", lambda: all(len(marked(m)) >= 4 for m in marks))
            owner = json.loads((home / "owner.json").read_text())["pid"]
            os.kill(owner, signal.SIGKILL)
            p.send_signal(signal.SIGKILL)
            p.wait(30)
            began = time.monotonic()
            until("every job's process gone", lambda: not any(marked(m) for m in marks), 10)
            assert time.monotonic() - began < rule.END_BOUND_S + 2
        finally:
            p.kill()
