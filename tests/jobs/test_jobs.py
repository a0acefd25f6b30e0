"""Background jobs as their holder runs them (`jobs.holder`), with real processes: a kill
takes the whole tree (children that ignore SIGTERM and those that left the job's session
included), held by a cgroup and by the keeper's subreaper alone; the holder's death ends
them (its keeper sees the pipe close), and so does the owner's next start when the keeper
died too (`jobs.sweep`); a job's lifetime bound ends it; its output stays within its bound
however much it prints."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from eukhe.jobs import listing, record, stop, sweep
from eukhe.jobs.holder import Jobs, Scope
from eukhe.jobs.record import jobs_root, read_meta, read_output, read_state
from eukhe.jobs.tree import HOLD, cgroup_for, marked
from eukhe.rules import job as rule

# a job whose shell and three children ignore SIGTERM; one child leaves its session (setsid)
STUBBORN = (
    "trap '' TERM; "
    "(trap '' TERM; setsid bash -c 'trap \"\" TERM; while :; do sleep 1; done' &); "
    "(trap '' TERM; sleep 1000 &); "
    "echo started; while :; do sleep 1; done"
)


def _scope(home: Path, session: str = "s") -> Scope:
    return Scope(Jobs(jobs_root(home)), session, session, f"{session}/1")


def _until(ok: object, seconds: float, what: str) -> None:
    end = time.monotonic() + seconds
    while not ok():  # type: ignore[operator]
        if time.monotonic() > end:
            raise AssertionError(f"waited {seconds} s for {what}")
        time.sleep(0.05)


@pytest.mark.parametrize("hold", ["cgroup", "subreaper"])
def test_job_kill_takes_the_whole_tree(tmp_path: Path, hold: str) -> None:
    env = {**os.environ, **({HOLD: "subreaper"} if hold == "subreaper" else {})}

    async def go() -> tuple[str, str, int]:
        jobs = _scope(tmp_path)
        jid = await jobs.start(["bash", "-c", STUBBORN], STUBBORN, tmp_path, env, None)
        await asyncio.sleep(0.5)
        _until(lambda: len(_marked(tmp_path, jid)) >= 4, 10, "the job's processes")
        first = await jobs.output(jid, None)
        began = time.monotonic()
        said = await jobs.kill(jid, asyncio.Event())
        assert time.monotonic() - began < rule.END_BOUND_S + 2
        return first, said, len(_marked(tmp_path, jid))

    first, said, left = asyncio.run(go())
    assert "started" in first and "[job job-1: running]" in first
    assert said.startswith("[job job-1: ended: job_kill")
    assert left == 0
    state = read_state(jobs_root(tmp_path) / "job-1")
    assert state is not None and state.job.why is rule.Why.KILLED
    if hold == "subreaper":  # asked for: its keeper's descent alone held the tree
        assert state.cgroup is None


HOLDER = """
import asyncio, os, sys
from pathlib import Path
from eukhe.jobs.holder import Jobs, Scope
async def main():
    scope = Scope(Jobs(Path(sys.argv[1])), "s", "s", "s/1")
    cmd = sys.argv[3]
    for _ in range(int(sys.argv[2])):
        await scope.start(["bash", "-c", cmd], cmd, Path.cwd(), dict(os.environ), None)
    print("started", flush=True)
    await asyncio.sleep(3600)
asyncio.run(main())
"""


def _holder(tmp_path: Path, n: int, env: dict[str, str]) -> subprocess.Popen[str]:
    p = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(jobs_root(tmp_path)), str(n), STUBBORN],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert p.stdout is not None and p.stdout.readline().strip() == "started"
    return p


def _marked(home: Path, job: str) -> list[int]:
    """The live processes that carry the job's mark (its keeper's included)."""
    meta = read_meta(jobs_root(home) / job)
    assert meta is not None
    return marked(meta.mark)


def _all_marked(home: Path) -> list[int]:
    return [pid for j in listing(home) for pid in _marked(home, j.id)]


def test_eight_jobs_end_within_their_bound_when_their_holder_is_killed(tmp_path: Path) -> None:
    p = _holder(tmp_path, 8, {**os.environ, HOLD: "subreaper"})
    _until(lambda: len(_all_marked(tmp_path)) >= 32, 20, "eight jobs' processes")
    p.kill()
    p.wait()
    began = time.monotonic()
    _until(lambda: not _all_marked(tmp_path), rule.END_BOUND_S + 5, "every process of the jobs to end")
    assert time.monotonic() - began < rule.END_BOUND_S + 2
    _until(lambda: all(j.ended for j in listing(tmp_path)), 5, "their records to say they ended")
    assert {j.state for j in listing(tmp_path)} == {
        "ended: the process that held it died, killed by signal 9"
    }


def test_what_a_dead_holder_and_its_dead_keepers_left_ends_at_the_owners_next_start(tmp_path: Path) -> None:
    p = _holder(tmp_path, 3, dict(os.environ))
    _until(lambda: len(_all_marked(tmp_path)) >= 12, 20, "three jobs' processes")
    keepers = [read_state(jobs_root(tmp_path) / j.id) for j in listing(tmp_path)]
    for k in keepers:  # killed with everything else, before its holder
        assert k is not None and k.keeper is not None
        os.kill(k.keeper.pid, signal.SIGKILL)
    p.kill()
    p.wait()
    time.sleep(0.3)
    assert _all_marked(tmp_path), "a keeper killed first leaves its job's processes"
    said = sweep(tmp_path)
    assert not _all_marked(tmp_path)
    assert len([s for s in said if "its holder died; ended" in s]) == 3
    assert all(j.ended and "the process that held it died" in j.state for j in listing(tmp_path))


def test_a_job_ends_by_its_lifetime_bound(tmp_path: Path) -> None:
    async def go() -> str:
        scope = Scope(Jobs(jobs_root(tmp_path)), "s", "s", "s/1", lifetime=0.5)
        jid = await scope.start(["bash", "-c", "sleep 1000"], "sleep 1000", tmp_path, dict(os.environ), None)
        _until(
            lambda: (
                bool(read_state(jobs_root(tmp_path) / jid))
                and rule.ended(read_state(jobs_root(tmp_path) / jid).job)
            ),
            6,
            "its lifetime's end",
        )  # type: ignore[union-attr]
        return await scope.output(jid, None)

    assert "ended: its lifetime bound passed" in asyncio.run(go())


def test_a_flooding_jobs_output_stays_within_its_bound_and_a_look_says_the_cut(tmp_path: Path) -> None:
    async def go() -> tuple[str, str]:
        scope = _scope(tmp_path)
        cmd = "head -c 20000000 /dev/zero | tr '\\0' x; echo; echo the-end"
        jid = await scope.start(["bash", "-c", cmd], cmd, tmp_path, dict(os.environ), None)
        folder = jobs_root(tmp_path) / jid
        _until(lambda: (s := read_state(folder)) is not None and rule.ended(s.job), 20, "the flood's end")
        assert (folder / "output").stat().st_size <= rule.HOLD_BYTES + 20
        first = await scope.output(jid, None)
        again = await scope.output(jid, "nothing matches this")
        return first, again

    first, again = asyncio.run(go())
    out = read_output(jobs_root(tmp_path) / "job-1")
    assert out.total == 20_000_000 + len("\nthe-end\n") and len(out.kept) == rule.HOLD_BYTES
    assert len(first.encode()) < rule.SHOW_BYTES + 400
    assert "the-end" in first and "bytes of output since the last look not shown" in first
    assert first.rstrip().endswith("[job job-1: ended: its command exited, exit status 0]")
    assert again.startswith("(no new output)")


def test_a_person_stops_a_job_from_another_process(tmp_path: Path) -> None:
    p = _holder(tmp_path, 1, dict(os.environ))
    try:
        _until(lambda: len(_all_marked(tmp_path)) >= 4, 20, "the job's processes")
        assert "stop sent" in stop(tmp_path, "job-1")
        _until(lambda: not _all_marked(tmp_path), rule.END_BOUND_S + 3, "the stopped job's end")
        _until(lambda: listing(tmp_path)[0].ended, 5, "its record")
        assert listing(tmp_path)[0].state.startswith("ended: job_kill")
    finally:
        p.kill()
        p.wait()


def test_the_owners_next_start_ends_what_dead_holders_and_keepers_left(tmp_path: Path) -> None:
    from eukhe.ai.faux import FauxServer, parse
    from tests.proc import eukhe, owner_log

    home = tmp_path / "home"
    home.mkdir()
    p = _holder(home, 2, dict(os.environ))
    _until(lambda: len(_all_marked(home)) >= 8, 20, "two jobs' processes")
    for j in listing(home):
        state = read_state(jobs_root(home) / j.id)
        assert state is not None and state.keeper is not None
        os.kill(state.keeper.pid, signal.SIGKILL)
    p.kill()
    p.wait()
    with FauxServer(parse([{"text": "hi"}])) as server:
        done = eukhe("run", "--model", "vllm/m", "--base-url", server.url, "hello", cwd=tmp_path, home=home)
    assert done.returncode == 0, done.stderr
    _until(lambda: not _all_marked(home), rule.END_BOUND_S + 10, "the owner's sweep")
    _until(lambda: "its holder died; ended" in owner_log(home), 5, "the owner to say so")


def test_a_filter_that_backtracks_without_end_never_holds_the_look(tmp_path: Path) -> None:
    """A hostile model's filter, `(a+)+$` over a line of 40 a's and a b, would hold Python's
    `re` for ages, and the run's loop with it: the look answers within its bound, says why,
    and reads nothing; a pattern that does not compile is said the same way."""

    async def go() -> tuple[str, str, str]:
        scope = _scope(tmp_path)
        cmd = "printf 'a%.0s' $(seq 40); echo b; echo tick 1; echo tick 12"
        jid = await scope.start(["bash", "-c", cmd], cmd, tmp_path, dict(os.environ), None)
        _until(
            lambda: (s := read_state(jobs_root(tmp_path) / jid)) is not None and rule.ended(s.job),
            10,
            "its end",
        )
        said: list[str] = []
        for pattern in ("(a+)+$", "("):
            try:
                await scope.output(jid, pattern)
            except Exception as e:
                said.append(str(e))
        return said[0], said[1], await scope.output(jid, "tick 1$")

    done: list[tuple[str, str, str]] = []
    t = threading.Thread(target=lambda: done.append(asyncio.run(go())), daemon=True)
    t.start()
    t.join(30)
    assert done, "the look did not answer within 30 s"
    slow, wrong, kept = done[0]
    assert slow.startswith("the filter '(a+)+$' cannot be used") or "did not end within" in slow, slow
    assert wrong.startswith("the filter '(' cannot be used: missing closing parenthesis"), wrong
    assert kept.startswith("tick 1\n[job job-1: ended")  # the failed filters read nothing


def test_a_record_naming_another_cgroup_never_has_it_killed(tmp_path: Path) -> None:
    """A job's files, rewritten (its processes outside the sandbox can write them) to name
    another cgroup: the owner's sweep ends the job's own processes, never that cgroup's."""
    victim_group = cgroup_for(f"victim-{os.getpid()}")
    if victim_group is None:
        pytest.skip("this user may make no cgroup here (cgroup v2): the sweep then names none")
    victim = subprocess.Popen(
        ["sleep", "60"], preexec_fn=lambda: (victim_group / "cgroup.procs").write_text("0")
    )
    try:
        folder = jobs_root(tmp_path) / "job-1"
        folder.mkdir(parents=True)
        gone = record.Identity(2**22 + 1, 1)  # a holder that is not alive
        record.write_meta(folder, record.Meta("job-1", "x", str(tmp_path), "s", "s/1", time.time(),
                                              time.monotonic(), 60.0, gone, "job-1.hostile"))  # fmt: skip
        record.write_state(
            folder, record.State(rule.started(time.monotonic(), 60.0), None, str(victim_group))
        )
        said = sweep(tmp_path)
        assert victim.poll() is None, said
    finally:
        victim.kill()
        victim.wait()
        victim_group.rmdir()
