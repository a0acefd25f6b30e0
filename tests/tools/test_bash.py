"""`bash`: output, exit codes, bounded output, and every way a command ends kills its whole group."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest

from eukhe.tools import BASH, BUILTIN, Context, Result, call
from eukhe.tools.bash import Output

from .helpers import alive, ctx, gone_soon, matches, pid_in, run


def bash(c: Context, command: str, timeout: float | None = None) -> Result:
    args: dict[str, object] = {"command": command}
    if timeout is not None:
        args["timeout"] = timeout
    return run(BASH.run(args, c))


def test_output_is_merged_and_the_exit_code_said(tmp_path: Path) -> None:
    matches(r"out\nerr\nexit code 0", bash(ctx(tmp_path), "echo out; echo err >&2"), error=False)
    matches(r"out\nexit code 2", bash(ctx(tmp_path), "echo out; exit 2"), error=True)
    matches(r"\(no output\)\nexit code 0", bash(ctx(tmp_path), "true"), error=False)
    matches(r"no newline\nexit code 0", bash(ctx(tmp_path), "printf 'no newline'"), error=False)
    matches(r"\(no output\)\nkilled by SIGKILL", bash(ctx(tmp_path), "kill -KILL $$"), error=True)


def test_it_runs_in_the_working_directory_without_stdin(tmp_path: Path) -> None:
    matches(rf"{tmp_path}\nexit code 0", bash(ctx(tmp_path), "pwd"), error=False)
    matches(
        r"\(no output\)\nexit code 0", bash(ctx(tmp_path), "cat"), error=False
    )  # stdin is empty, not a wait
    matches(
        r"the working directory '.*/nope' does not exist or is not a directory",
        bash(ctx(tmp_path / "nope"), "true"),
        error=True,
    )


def test_long_output_keeps_head_and_tail(tmp_path: Path) -> None:
    r = bash(ctx(tmp_path, bash_head=1000, bash_tail=500), "seq 1 1000000; echo THE-END")
    head, _, tail = r.content.partition("\n[... ")
    assert head.startswith("1\n2\n3\n") and len(head) <= 1000
    cut = sum(len(f"{i}\n") for i in range(1, 1_000_001)) + len("THE-END\n") - 1000 - 500
    assert tail.startswith(f"{cut} bytes cut ...]\n")
    assert tail.endswith("999999\n1000000\nTHE-END\nexit code 0")
    assert not r.is_error


def test_huge_output_is_streamed_not_kept(tmp_path: Path) -> None:
    start = time.monotonic()
    r = bash(ctx(tmp_path), "yes | head -c 5000000")
    assert time.monotonic() - start < 5
    matches(r"(y\n){10000}\[\.\.\. 4960000 bytes cut \.\.\.\]\n(y\n){10000}exit code 0", r, error=False)


def test_output_buffer_is_bounded() -> None:
    out = Output(4, 3)
    for chunk in (b"ab", b"cdef", b"", b"ghij", b"k"):
        out.add(chunk)
    assert (bytes(out.head), bytes(out.tail), out.total, out.cut) == (b"abcd", b"ijk", 11, 4)
    assert out.text() == "abcd\n[... 4 bytes cut ...]\nijk"
    small = Output(4, 3)
    small.add("é€".encode())  # split across head and tail, still decoded whole
    assert small.text() == "é€"


def test_a_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    start = time.monotonic()
    r = bash(ctx(tmp_path), "echo started; sleep 60 & echo $! > pid; wait", timeout=0.5)
    assert time.monotonic() - start < 2.5
    matches(
        r"started\ntimed out after 0\.5 s \(the command and its process group were killed\)", r, error=True
    )
    assert gone_soon(int((tmp_path / "pid").read_text()))


def test_a_timeout_kills_what_ignores_sigterm(tmp_path: Path) -> None:
    start = time.monotonic()
    r = bash(ctx(tmp_path), "trap '' TERM; sleep 60 & echo $! > pid; wait", timeout=0.3)
    assert time.monotonic() - start < 2.5  # SIGKILL after the 0.5 s grace
    matches(r"\(no output\)\ntimed out after 0\.3 s .*", r, error=True)
    assert gone_soon(int((tmp_path / "pid").read_text()))


def test_a_background_process_holding_the_output_is_killed_after_exit(tmp_path: Path) -> None:
    start = time.monotonic()
    r = bash(ctx(tmp_path), "sleep 60 & echo $! > pid; echo bye")
    assert time.monotonic() - start < 2.5
    matches(
        r"bye\n\[processes the command left running still held its output 0\.3 s after it exited; "
        r"they were killed\]\nexit code 0",
        r,
        error=False,
    )
    assert gone_soon(int((tmp_path / "pid").read_text()))


def test_a_background_process_not_holding_the_output_is_left_alone(tmp_path: Path) -> None:
    r = bash(ctx(tmp_path), "sleep 60 >/dev/null 2>&1 & echo $! > pid")
    matches(r"\(no output\)\nexit code 0", r, error=False)
    pid = int((tmp_path / "pid").read_text())
    try:
        assert alive(pid)
    finally:
        os.kill(pid, signal.SIGKILL)


def test_abort_kills_the_group_promptly(tmp_path: Path) -> None:
    async def go() -> tuple[Result, int, float]:
        c = ctx(tmp_path)
        task = asyncio.create_task(call(BUILTIN, "bash", {"command": "sleep 60 & echo $! > pid; wait"}, c))
        pid = await pid_in(tmp_path / "pid")
        start = time.monotonic()
        c.cancel.set()
        r = await asyncio.wait_for(task, 2)
        return r, pid, time.monotonic() - start

    r, pid, took = asyncio.run(go())
    assert took < 1
    matches(r"\(no output\)\naborted \(the command and its process group were killed\)", r, error=True)
    assert gone_soon(pid)


def test_cancelling_the_task_kills_the_group_and_propagates(tmp_path: Path) -> None:
    async def go() -> int:
        task = asyncio.create_task(BASH.run({"command": "sleep 60 & echo $! > pid; wait"}, ctx(tmp_path)))
        pid = await pid_in(tmp_path / "pid")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 2)
        return pid

    assert gone_soon(asyncio.run(go()))


def test_the_timeout_is_bounded_by_the_schema(tmp_path: Path) -> None:
    r = run(call(BUILTIN, "bash", {"command": "true", "timeout": 601}, ctx(tmp_path)))
    matches(r"argument 'timeout': must be at most 600, got 601", r, error=True)
    r = run(call(BUILTIN, "bash", {"command": "true", "timeout": "5"}, ctx(tmp_path)))
    matches(r"argument 'timeout': expected a number, got \"5\"", r, error=True)
    matches(
        r"\(no output\)\nexit code 0",
        run(call(BUILTIN, "bash", {"command": "true", "timeout": 5}, ctx(tmp_path))),
        error=False,
    )
