"""The Python kernel and the `ipython` tool, on real kernels: values and tracebacks, cells past the
budget as jobs, one cell at a time, progress from prints and from `bash()`, waits clamped to the
budget, bounded output on a flood, nothing left after `close`, and an abort that interrupts."""

from __future__ import annotations

import asyncio
import itertools
import os
import re
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from eukhe.kernel import HEAD, TAIL, Kernel
from eukhe.tools import Context, Result
from eukhe.tools.base import call
from eukhe.tools.ipython import IPYTHON

T = TypeVar("T")


def never() -> asyncio.Event:
    """A cancel never set (a fresh one each time: an event belongs to the loop that waits on it)."""
    return asyncio.Event()


def with_kernel(tmp_path: Path, go: Callable[[Kernel], Awaitable[T]], **kw: Any) -> T:
    async def main() -> T:
        k = Kernel(tmp_path, **kw)
        try:
            return await go(k)
        finally:
            await k.close()

    return asyncio.run(main())


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def session_of(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[3])
    except (OSError, IndexError, ValueError):
        return None


def in_session(sid: int) -> list[int]:
    """Every live process of session `sid`, read from /proc."""
    return [
        int(p) for p in os.listdir("/proc") if p.isdigit() and session_of(int(p)) == sid and alive(int(p))
    ]


async def until_done(k: Kernel, n: int, tries: int = 40) -> list[Result]:
    """`wait` on job `n` until it has ended; every answer."""
    answers = []
    for _ in range(tries):
        r = await k.job(n, "wait", never())
        answers.append(r)
        if "is running" not in r.content:
            return answers
    raise AssertionError(f"job {n} did not end: {answers[-1]}")


def body(r: Result) -> str:
    """A job answer without its last bracketed status line."""
    return re.sub(r"\n?\[[^\n]*\]$", "", r.content)


# --- cells ---------------------------------------------------------------------------------------------


@pytest.mark.timeout(30)
def test_a_cells_value_and_prints_come_back_and_its_exception_as_an_error(tmp_path: Path) -> None:
    async def go(k: Kernel) -> list[Result]:
        return [
            await k.execute("print('hi'); x = 21\nx * 2", never()),
            await k.execute("import os; os.getcwd()", never()),
            await k.execute("x = 1", never()),
            await k.execute("def f():\n    return 1 / 0\nprint('before'); f()", never()),
        ]

    value, cwd, silent, err = with_kernel(tmp_path, go)
    assert value == Result("hi\n42\n", False)
    assert cwd == Result(f"'{tmp_path}'\n", False)
    assert silent == Result("(no output)", False)
    assert err.is_error
    assert err.content.startswith("before\n")
    assert "Traceback" in err.content and "return 1 / 0" in err.content
    assert err.content.rstrip().endswith("ZeroDivisionError: division by zero")
    assert "\x1b" not in err.content  # no terminal colours


@pytest.mark.timeout(30)
def test_a_cell_past_the_budget_goes_on_as_a_job(tmp_path: Path) -> None:
    # the cell runs for ~3 s: long enough that, even on a loaded machine, the call must have answered
    # while it still ran, which is what the assertions below are about (not how fast the kernel is)
    ticks = 30
    code = f"import time\nfor i in range({ticks}):\n    print('tick', i, flush=True)\n    time.sleep(0.1)"

    async def go(k: Kernel) -> None:
        start = time.monotonic()
        first = await k.execute(code, never())
        assert time.monotonic() - start < ticks * 0.1  # answered before the cell could have ended
        assert not first.is_error
        assert first.content.endswith(
            '[cell still running after 0.3 s: it goes on as job 1. See its latest output with {"job": 1, '
            '"action": "tail"}, wait for it with {"job": 1, "action": "wait"} (at most 0.3 s a call) or stop '
            'it with {"job": 1, "action": "kill"}; until it ends the kernel runs no other cell.]'
        )
        assert k.live_jobs()[0][:2] == (1, "running")
        await asyncio.sleep(0.6)
        tail = await k.job(1, "tail", never())
        answered = max((int(n) for n in re.findall(r"tick (\d+)", first.content)), default=-1)
        later = [int(n) for n in re.findall(r"tick (\d+)", tail.content)]
        assert later and max(later) > answered, tail  # printed after the call answered
        assert re.search(r"\[job 1 is running: \d+\.\d s so far, \d+ bytes of output\]$", tail.content)
        waits = await until_done(k, 1)
        assert re.search(r"\[job 1 finished after \d+\.\d s, \d+ bytes of output\]$", waits[-1].content)
        assert not waits[-1].is_error
        # every line once, in order, across the first answer and the waits
        seen = re.sub(r"\n?\[cell still running.*$", "", first.content) + "".join(body(r) for r in waits)
        assert re.findall(r"tick (\d+)", seen) == [str(i) for i in range(ticks)]
        assert k.live_jobs() == [(1, "ok", sum(len(f"tick {i}\n") for i in range(ticks)))]
        assert (await k.job(1, "status", never())).content.startswith("job 1 finished after")
        assert (await k.job(7, "status", never())) == Result("there is no job 7: the jobs are 1", True)

        # a runaway cell is stopped by `kill`, and the kernel is kept
        await k.execute("y = 'kept'", never())
        assert "job 2" in (await k.execute("while True:\n    pass", never())).content
        killed = await k.job(2, "kill", never())
        assert not killed.is_error
        assert "KeyboardInterrupt" in killed.content
        assert re.search(
            r"\[job 2 was interrupted after \d+\.\d s; the kernel is kept, with its variables and bash\(\) "
            r"jobs\]$",
            killed.content,
        )
        assert await k.execute("y", never()) == Result("'kept'\n", False)
        again = await k.job(2, "kill", never())
        assert re.fullmatch(
            r"\[job 2 had already ended: job 2 was interrupted after \d+\.\d s, \d+ bytes of output\]",
            again.content,
        )

    with_kernel(tmp_path, go, budget_ms=300)


@pytest.mark.timeout(30)
def test_a_job_that_ignores_the_interrupt_is_ended_by_a_restart(tmp_path: Path) -> None:
    async def go(k: Kernel) -> None:
        await k.execute("z = 1", never())
        old = k.pids()
        code = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass"
        assert "job 1" in (await k.execute(code, never())).content
        killed = await k.job(1, "kill", never())
        assert killed == Result(
            "[job 1 did not stop within 0.5 s of an interrupt, so the kernel was killed and restarts on the "
            "next cell: its variables and bash() jobs are gone]",
            False,
        )
        assert not any(alive(p) for p in old)
        assert k.live_jobs()[0][1] == "ended"
        fresh = await k.execute("z", never())
        for _ in range(40):  # the kernel's restart took longer than the 0.3 s budget (a loaded machine)
            if "it goes on as job 2" not in fresh.content and "wait again" not in fresh.content:
                break
            fresh = await k.job(2, "wait", never())
        assert fresh.is_error and "NameError" in fresh.content
        assert set(k.pids()).isdisjoint(old)

    with_kernel(tmp_path, go, budget_ms=300, interrupt_grace=0.5)


@pytest.mark.timeout(30)
def test_a_kernel_that_dies_says_so_and_the_next_cell_starts_a_fresh_one(tmp_path: Path) -> None:
    async def go(k: Kernel) -> None:
        await k.execute("w = 1", never())
        died = await k.execute("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)", never())
        assert died == Result(
            "[the kernel died (killed by SIGKILL); its variables and bash() jobs are gone and the next cell "
            "starts a fresh kernel]",
            True,
        )
        again = await k.execute("w", never())
        assert again.is_error and "NameError" in again.content

    with_kernel(tmp_path, go)


@pytest.mark.timeout(30)
def test_a_cell_sent_while_a_job_runs_is_refused_naming_the_job(tmp_path: Path) -> None:
    async def go(k: Kernel) -> None:
        assert "job 1" in (await k.execute("import time; time.sleep(2)", never())).content
        start = time.monotonic()
        refused = await k.execute("print('never')", never())
        assert time.monotonic() - start < 1.0  # at once, not queued behind the 2 s job
        assert refused.is_error
        assert re.fullmatch(
            r"the kernel is busy with job 1 \(running for 0\.\d s\): it runs one cell at a time, so this "
            r'cell was not run\. Wait for job 1 with \{"job": 1, "action": "wait"\} or stop it with '
            r'\{"job": 1, "action": "kill"\}, then send the cell again\.',
            refused.content,
        ), refused.content
        await until_done(k, 1)
        assert await k.execute("print('now')", never()) == Result("now\n", False)

    with_kernel(tmp_path, go, budget_ms=300)


# --- progress --------------------------------------------------------------------------------------------


@pytest.mark.timeout(30)
def test_background_bash_output_moves_the_job_progress(tmp_path: Path) -> None:
    lines = sum(len(f"line {i}\n") for i in range(1, 31))

    async def go(k: Kernel) -> None:
        started = await k.execute(
            'h = bash("for i in $(seq 1 30); do echo line $i; sleep 0.1; done")', never()
        )
        assert started == Result("(no output)", False)  # the cell returns at once
        seen = [k.output_bytes()]
        for _ in range(5):
            await asyncio.sleep(0.4)
            seen.append(k.output_bytes())  # read by the host alone: the kernel is not asked
        assert all(a < b for a, b in itertools.pairwise(seen)), seen
        assert await k.execute("h.wait(), h.bytes, h.tail(2)", never()) == Result(
            f"(0, {lines}, 'line 29\\nline 30')\n", False
        )
        end = k.output_bytes()
        assert end >= lines
        await asyncio.sleep(0.6)
        assert k.output_bytes() == end  # ended: it moves no more
        assert (await k.execute("h", never())).content.startswith(
            "<bash 1 'for i in $(seq 1 30); do echo line $i; sleep 0.1; done': exit code 0 after 3."
        )

    with_kernel(tmp_path, go, budget_ms=5000)


@pytest.mark.timeout(30)
def test_stream_output_moves_the_job_progress(tmp_path: Path) -> None:
    async def go(k: Kernel) -> None:
        loud = "import time\nfor i in range(40):\n    print('line', i)\n    time.sleep(0.1)"
        assert "job 1" in (await k.execute(loud, never())).content
        seen = [k.output_bytes()]
        for _ in range(4):  # the tool is idle: only the reader moves it, again and again
            until = time.monotonic() + 3  # a busy machine may lag a fixed window, never this
            while k.output_bytes() == seen[-1] and time.monotonic() < until:
                await asyncio.sleep(0.05)
            seen.append(k.output_bytes())
        assert all(a < b for a, b in itertools.pairwise(seen)), seen
        await until_done(k, 1)

        assert "job 2" in (await k.execute("import time; time.sleep(2)", never())).content
        quiet = [k.output_bytes()]
        for _ in range(4):
            await asyncio.sleep(0.3)
            quiet.append(k.output_bytes())
        assert len(set(quiet)) == 1, quiet
        assert ("job 2", "running") == ("job 2", k.live_jobs()[1][1])
        await until_done(k, 2)

    with_kernel(tmp_path, go, budget_ms=300)


@pytest.mark.timeout(30)
def test_waits_in_the_kernel_are_clamped_to_the_budget(tmp_path: Path) -> None:
    async def go(k: Kernel) -> None:
        await k.execute('h = bash("sleep 30")', never())
        for wait in ("h.wait(timeout=999)", "jobs.wait(h, 999)", "h.wait()"):
            start = time.monotonic()
            r = await k.execute(
                f"import time\nt = time.monotonic()\nr = {wait}\nprint(r, time.monotonic() - t)", never()
            )
            took = time.monotonic() - start
            assert not r.is_error and "job" not in r.content, r  # ended within the budget
            value, waited = r.content.split()
            assert value == "None"
            assert 0.8 <= float(waited) < 1.0
            assert took < 3  # the 1 s budget and the kernel's round trip, not the 30 s of `sleep 30`
        assert await k.execute("h.poll(), h.kill(), h.poll()", never()) == Result("(None, -15, -15)\n", False)
        assert (await k.execute("jobs", never())).content.startswith(
            "<bash 1 'sleep 30': killed by SIGTERM after"
        )

    with_kernel(tmp_path, go, budget_ms=1000)


# --- bounds ----------------------------------------------------------------------------------------------


def _status(key: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise LookupError(key)


@pytest.mark.timeout(60)
def test_a_flood_keeps_a_head_and_a_tail_and_little_memory(tmp_path: Path) -> None:
    chunk, n = 65536, 3200  # 200 MiB

    async def go(k: Kernel) -> tuple[Result, int, int, int]:
        await k.execute("1", never())  # the kernel starts outside the measure
        base = _status("VmRSS")
        try:
            Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS
            exact = True
        except OSError:
            exact = False
        peak = [base]

        async def sample() -> None:
            while True:
                peak[0] = max(peak[0], _status("VmRSS"))
                await asyncio.sleep(0.01)

        sampler = asyncio.ensure_future(sample())
        code = f"import sys\nc = 'x' * {chunk - 1} + '\\n'\nfor _ in range({n}):\n    sys.stdout.write(c)"
        r = await k.execute(code, never())
        sampler.cancel()
        top = max(peak[0], _status("VmHWM")) if exact else peak[0]
        return r, base, top, k.output_bytes()

    r, base, top, counted = with_kernel(tmp_path, go, budget_ms=50_000)
    assert not r.is_error
    assert counted >= chunk * n  # nothing lost on the way
    data = r.content.encode()
    assert len(data) <= HEAD + TAIL + 100
    cut = chunk * n - HEAD - TAIL
    assert f"\n[... {cut} bytes cut ...]\n" in r.content
    assert data.startswith(b"x" * 1000) and data.endswith(b"x" * 1000 + b"\n")
    assert top - base < 64 * 2**20, f"the host grew by {(top - base) / 2**20:.1f} MiB"


# --- the end ---------------------------------------------------------------------------------------------


@pytest.mark.timeout(30)
def test_close_kills_every_process_of_the_kernel(tmp_path: Path) -> None:
    async def go() -> None:
        k = Kernel(tmp_path, budget_ms=300)
        try:
            await k.execute('h = bash("sleep 300")\nh2 = bash("sleep 300 & sleep 300 & wait")', never())
            cell = await k.execute("import subprocess\nsubprocess.run(['sleep', '300'])", never())
            assert "job 1" in cell.content
            await asyncio.sleep(0.3)
            pids = k.pids()
            sid = session_of(min(pids))
            assert sid is not None and sorted(in_session(sid)) == sorted(pids)
            assert len(pids) >= 6  # the kernel, three shells' worth of sleeps, the cell's sleep
        finally:
            start = time.monotonic()
            await k.close()
            took = time.monotonic() - start
        assert took < 3
        assert not [p for p in pids if alive(p)]
        assert in_session(sid) == [] and k.pids() == []
        await k.close()  # again: nothing to do
        closed = await k.execute("1", never())
        assert closed.is_error and "closed" in closed.content

    asyncio.run(go())


_HOST = """
import asyncio, os, sys
from eukhe.kernel import Kernel

async def main():
    k = Kernel(sys.argv[1], budget_ms=300, runtime_dir=sys.argv[2])
    await k.execute('h = bash("sleep 300")\\nh2 = bash("sleep 300 & wait")', asyncio.Event())
    await k.execute("import time; time.sleep(300)", asyncio.Event())
    await asyncio.sleep(0.3)
    print(*k.pids(), flush=True)
    os._exit(0)  # killed, as it were: no close

asyncio.run(main())
"""


@pytest.mark.timeout(30)
def test_a_host_that_dies_without_closing_leaves_nothing(tmp_path: Path, runtime: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", _HOST, str(tmp_path), str(runtime)], capture_output=True, text=True, timeout=20
    )
    pids = [int(p) for p in out.stdout.split()]
    assert len(pids) >= 4, out  # the kernel, two shells, their sleeps
    deadline = time.monotonic() + 20  # the kernel's watch of its host notices within a few seconds
    while ([p for p in pids if alive(p)] or list(runtime.iterdir())) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [p for p in pids if alive(p)]
    assert list(runtime.iterdir()) == []  # its connection file went too


@pytest.mark.timeout(30)
def test_close_removes_the_kernels_files(tmp_path: Path, runtime: Path) -> None:

    async def go(k: Kernel) -> list[Path]:
        await k.execute('bash("echo hi").wait()', never())
        files = sorted(p.name for p in runtime.glob("*/*"))
        assert "connection.json" in files and "bash-1.bytes" in files
        await k.close()
        return list(runtime.iterdir())

    assert with_kernel(tmp_path, go, runtime_dir=runtime) == []


@pytest.mark.timeout(30)
def test_a_kernel_that_does_not_start_says_why(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'No module named ipykernel_launcher' >&2\nexit 3\n")
    fake.chmod(0o755)

    async def go(k: Kernel) -> tuple[Result, list[int]]:
        return await k.execute("1", never()), k.pids()

    r, pids = with_kernel(tmp_path, go, python=str(fake))
    assert r.is_error
    assert r.content.startswith(
        "the Python kernel did not start: it ended (exit code 3) before it answered.\n"
    )
    assert f"Its command: {fake} -m ipykernel_launcher -f " in r.content
    assert r.content.endswith("Its stderr:\nNo module named ipykernel_launcher")
    assert pids == []


# --- the tool ----------------------------------------------------------------------------------------------


@pytest.mark.timeout(30)
def test_cancel_ends_a_blocking_cell_within_a_second(tmp_path: Path) -> None:
    async def go(k: Kernel) -> None:
        ctx = Context(tmp_path, kernel=k)
        assert await IPYTHON.run({"code": "v = 'kept'"}, ctx) == Result("(no output)", False)
        task = asyncio.ensure_future(
            IPYTHON.run({"code": "print('started', flush=True)\nimport time; time.sleep(60)"}, ctx)
        )
        await asyncio.sleep(0.5)
        start = time.monotonic()
        ctx.cancel.set()
        r = await asyncio.wait_for(task, 3)
        assert time.monotonic() - start < 1.0
        assert r.is_error
        assert r.content.startswith("started\n")
        assert r.content.endswith("aborted: the cell was interrupted (the kernel keeps its variables)")
        assert await IPYTHON.run({"code": "v"}, Context(tmp_path, kernel=k)) == Result("'kept'\n", False)

    with_kernel(tmp_path, go, budget_ms=10_000)


@pytest.mark.timeout(30)
def test_the_tool_runs_cells_and_job_actions(tmp_path: Path) -> None:
    async def go(k: Kernel) -> None:
        tools = {"ipython": IPYTHON}
        ctx = Context(tmp_path, kernel=k)
        assert await call(tools, "ipython", {"code": "6 * 7"}, ctx) == Result("42\n", False)
        assert (
            "job 1" in (await call(tools, "ipython", {"code": "import time; time.sleep(0.8)"}, ctx)).content
        )
        status = await call(tools, "ipython", {"job": 1}, ctx)
        assert status.content.startswith("job 1 is running: ")
        done = await call(tools, "ipython", {"job": 1, "action": "wait"}, ctx)
        assert done.content.startswith("[job 1 finished after 0.")
        bad = await call(tools, "ipython", {"job": 1, "action": "stop"}, ctx)
        assert bad.is_error and bad.content.startswith("argument 'action': expected one of")

    with_kernel(tmp_path, go, budget_ms=500)


def test_the_tool_without_a_kernel_or_with_bad_arguments_says_so(tmp_path: Path) -> None:
    tools = {"ipython": IPYTHON}

    def run(args: dict[str, Any], kernel: object = None) -> Result:
        return asyncio.run(call(tools, "ipython", args, Context(tmp_path, kernel=kernel)))

    assert run({"code": "1"}) == Result(
        "no Python kernel is offered in this run, so 'ipython' cannot run code here", True
    )
    k = Kernel(tmp_path)  # never started: these are refused before it is asked
    assert run({"code": "1", "job": 1}, k).content == (
        "give either 'code' (a cell to run) or 'job' (a job to look at), not both"
    )
    assert run({}, k).content.startswith("missing argument: give 'code'")
    assert run({"code": "1", "action": "wait"}, k).content == "'action' goes with 'job', not with 'code'"
    assert run({"cell": "1"}, k).content.startswith("unknown argument 'cell'")
    assert run({"job": 0}, k).content == "argument 'job': must be at least 1, got 0"
    assert run({"job": 3}, k) == Result("there is no job 3: no cell has become a job", True)
    assert not k.started and k.pids() == []
    assert IPYTHON.replay_safe is False
    assert IPYTHON.schema["additionalProperties"] is False


def test_the_tool_gives_the_model_a_head_and_a_tail_of_a_long_result(tmp_path: Path) -> None:
    from eukhe.tools.ipython import bounded

    ctx = Context(tmp_path)
    long = Result("a" * 30_000 + "b" * 30_000, False)
    got = bounded(long, ctx)
    assert got.content.startswith("a" * 20_000) and got.content.endswith("b" * 20_000)
    assert "[... 20000 bytes cut: a job's latest output stays readable with its tail ...]" in got.content
    assert bounded(Result("short", True), ctx) == Result("short", True)


def test_a_run_that_runs_no_cell_never_loads_jupyter() -> None:
    """The run's machinery loads without jupyter_client and zmq (80 ms of every `eukhe run`'s start):
    the kernel comes with a run's first cell."""
    probe = (
        "import sys, eukhe.run.workflow\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('jupyter_client', 'zmq')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_a_strangers_repository_cannot_put_its_own_kernel_in_place_of_the_real_one(tmp_path: Path) -> None:
    """The attack: a cloned repository holds `ipykernel_launcher.py`. The kernel starts as
    `python -m ipykernel_launcher` in the project's folder; had that folder been first on its
    path, the stranger's file would have run instead of the kernel, in place of the cell the
    user approved. The project's own modules still import from a cell."""
    pwned = tmp_path / "PWNED"
    (tmp_path / "ipykernel_launcher.py").write_text(
        f"open({str(pwned)!r}, 'w').write('ran')\n"
        "from ipykernel import kernelapp as app\napp.launch_new_instance()\n"
    )
    (tmp_path / "mine.py").write_text("VALUE = 'the project module'\n")

    async def go(k: Kernel) -> list[Result]:
        return [
            await k.execute("import mine; mine.VALUE", never()),
            await k.execute("import os; os.environ.get('PYTHONSAFEPATH')", never()),
        ]

    mine, safe = with_kernel(tmp_path, go)
    assert not pwned.exists(), "the stranger's ipykernel_launcher.py ran"
    assert mine == Result("'the project module'\n", False)
    assert safe == Result("(no output)", False)  # a command the cell starts gets the usual path
