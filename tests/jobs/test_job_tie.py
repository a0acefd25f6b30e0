"""The tie of `rules.job` to the runtime: swap the rule's constant or function and the keeper
(forked from this process, so it runs the swapped rule) and the holder do what the swapped
one says, so when a kill comes, what a look shows and when a job ends are the rule's to
decide, never a copy of it in `jobs.keeper` or `jobs.holder`."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from eukhe.jobs import keeper, record
from eukhe.jobs.holder import Jobs, Scope
from eukhe.jobs.record import jobs_root, read_state
from eukhe.jobs.tree import marked
from eukhe.rules import job as rule

STUBBORN = "trap '' TERM; echo up; while :; do sleep 0.1; done"


def forked_keeper(tmp_path: Path, job: str, command: str) -> tuple[int, int]:
    """A keeper of `job` forked from this process (the rule as this test left it): its pid and
    the write end of its holder's pipe."""
    folder = jobs_root(tmp_path) / job
    folder.mkdir(parents=True)
    me = record.identity(os.getpid())
    assert me is not None
    mark = f"{job}.{os.getpid()}.{time.monotonic_ns()}"
    record.write_meta(folder, record.Meta(job, command, str(tmp_path), "s", "s/1", time.time(),
                                          time.monotonic(), rule.LIFETIME_S, me, mark))  # fmt: skip
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the keeper: its holder's pipe on stdin, its own session
        try:
            os.setsid()
            os.dup2(r, 0)
            os.environ["EUKHE_JOB"] = mark  # its processes carry the mark, as a holder gives it
            os._exit(keeper.main([str(folder), str(tmp_path), "--", "bash", "-c", command]))
        finally:
            os._exit(70)
    os.close(r)
    return pid, w


def mark_of(tmp_path: Path, job: str) -> str:
    meta = record.read_meta(jobs_root(tmp_path) / job)
    assert meta is not None
    return meta.mark


def wait_ended(tmp_path: Path, job: str, seconds: float) -> rule.Job:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        state = read_state(jobs_root(tmp_path) / job)
        if state is not None and rule.ended(state.job):
            return state.job
        time.sleep(0.02)
    raise AssertionError(f"{job} did not end within {seconds} s")


def test_the_kill_comes_when_the_rules_grace_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rule, "GRACE_S", 0.2)
    pid, holder = forked_keeper(tmp_path, "job-1", STUBBORN)
    time.sleep(0.4)
    began = time.monotonic()
    os.write(holder, b"end KILLED\n")
    job = wait_ended(tmp_path, "job-1", 1.5)  # the default grace (2 s) would not be over
    assert time.monotonic() - began < 1.5
    assert job.why is rule.Why.KILLED and not marked(mark_of(tmp_path, "job-1"))
    os.close(holder)
    os.waitpid(pid, 0)


def test_a_rule_that_never_kills_leaves_the_job_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def never(job: rule.Job, now: float, alive: bool) -> rule.Step:
        return job, None

    monkeypatch.setattr(rule, "on_tick", never)
    pid, holder = forked_keeper(tmp_path, "job-1", STUBBORN)
    time.sleep(0.4)
    os.write(holder, b"end KILLED\n")
    time.sleep(rule.GRACE_S + 1.0)
    state = read_state(jobs_root(tmp_path) / "job-1")
    try:  # the runtime sent the rule's SIGTERM, which the job ignores, and nothing of its own
        assert state is not None and state.job.phase is rule.Phase.ENDING
        assert marked(mark_of(tmp_path, "job-1"))
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        for p in marked(mark_of(tmp_path, "job-1")):
            os.kill(p, 9)
        os.close(holder)


def test_a_look_shows_what_the_rules_view_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def first_bytes(out: rule.Output, show: int = rule.SHOW_BYTES) -> tuple[rule.View, rule.Output]:
        return rule.View(out.kept[:3], 7, "[the swapped rule's note]"), rule.Output(
            out.kept, out.start, out.total
        )

    monkeypatch.setattr(rule, "output_view", first_bytes)

    async def go() -> str:
        scope = Scope(Jobs(jobs_root(tmp_path)), "s", "s", "s/1")
        jid = await scope.start(
            ["bash", "-c", "echo abcdef"], "echo abcdef", tmp_path, dict(os.environ), None
        )
        wait_ended(tmp_path, jid, 5)
        return await scope.output(jid, None)

    said = asyncio.run(go())
    assert said.startswith("abc\n[the swapped rule's note]\n[job job-1: ended")


def test_a_job_recorded_ended_has_every_byte_read_before_on_disk(tmp_path: Path) -> None:
    """The keeper writes what it holds before it records the end: a look that sees the end sees
    the job's last lines (a flush held back by FLUSH_S left them for later, and a look between
    the two read "(no new output)" of a job that had printed)."""
    folder = jobs_root(tmp_path) / "job-1"
    folder.mkdir(parents=True)
    k = keeper.Keeper(folder, f"job-1.{os.getpid()}.{time.monotonic_ns()}", rule.LIFETIME_S, None)
    k.out = rule.appended(k.out, b"first\n")
    k.dirty = True
    k.flush(time.monotonic())
    k.out = rule.appended(k.out, b"last\n")  # read within FLUSH_S of the flush: held back
    k.dirty = True
    k.flush(time.monotonic())
    assert record.read_output(folder).kept == b"first\n"  # the throttle this guards against
    k.apply(rule.on_exit(k.job, 0, time.monotonic(), False))
    state = read_state(folder)
    assert state is not None and rule.ended(state.job)
    assert record.read_output(folder).kept == b"first\nlast\n"


def test_a_command_that_prints_and_exits_at_once_is_seen_ended_with_its_output(tmp_path: Path) -> None:
    """Looked at as soon as its end is recorded, every time: what it printed is there."""
    for n in range(5):
        job = f"job-{n}"
        pid, holder = forked_keeper(tmp_path, job, f"echo line-{n}")
        wait_ended(tmp_path, job, 10)
        assert record.read_output(jobs_root(tmp_path) / job).kept == f"line-{n}\n".encode(), n
        os.close(holder)
        os.waitpid(pid, 0)
