"""A hook, as users write them (shell and Python scripts on disk, as Claude Code's docs show
them), run through `hooks.runner` and judged by `rules.hook`; written as the attacks on the
turn's liveness (`hook_ends`) and on the guard (`hook_guard_fails_closed`). Where a deadline
is involved the clock is the test's (`ManualClock`): it moves only when the test says, so the
timeout and the grace are reached without being waited out. Each test waits with a bound of
its own (`BOUND`), so a runner that lost its bound fails it instead of hanging."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import tracemalloc
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TypeVar

import pytest

from eukhe.hooks.config import Hook
from eukhe.hooks.runner import STDOUT_KEPT, EventRun, answer, run_event
from eukhe.rules import hook as rule
from eukhe.waits import Clock, LoopClock, ManualClock

T = TypeVar("T")

BOUND = 3.0
"""Real seconds any one wait of these tests takes at most."""

PRE = rule.Event.PRE_TOOL_USE
POST = rule.Event.POST_TOOL_USE


def payload(project: Path, event: rule.Event = PRE, **extra: object) -> dict[str, object]:
    """What Claude Code sends a PreToolUse hook (the caller builds it; these are its names)."""
    return {
        "session_id": "run-1",
        "transcript_path": str(project / "transcript.jsonl"),
        "cwd": str(project),
        "hook_event_name": event.value,
        "tool_name": "Bash",
        "tool_input": {"command": "rm -rf build", "description": "clean"},
        **extra,
    }


def hook(command: str, timeout_s: float | None = 1.0, allow: bool = False, env: tuple[str, ...] = ()) -> Hook:
    ms = None if timeout_s is None else int(timeout_s * 1000)
    return Hook(command, ms, allow, env, Path("settings.json"))


def said(event: rule.Event, command: str, how: str) -> str:
    """A failure's line as the rule shows it (the command's first 80 characters)."""
    return f"{event.value} hook `{command[:80]}` {how}"


def script(folder: Path, name: str, text: str) -> Path:
    """A hook script on disk, executable, as a user writes one."""
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / name
    p.write_text(text)
    p.chmod(0o755)
    return p


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "project"
    p.mkdir()
    return p


@pytest.fixture
def scripts(tmp_path: Path) -> Path:
    return tmp_path / "scripts"


ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent", "LANG": "C.UTF-8"}
"""The tools' environment these hooks get (a run passes `Secrets.env`)."""


def start(
    event: rule.Event,
    hooks: list[Hook],
    project: Path,
    clock: Clock,
    cancel: asyncio.Event | None = None,
    data: dict[str, object] | None = None,
    environ: dict[str, str] | None = None,
) -> asyncio.Task[EventRun]:
    return asyncio.ensure_future(
        run_event(
            event,
            hooks,
            data if data is not None else payload(project, event),
            cwd=project,
            env=ENV,
            environ=environ or {},
            cancel=cancel or asyncio.Event(),
            clock=clock,
        )
    )


async def until(what: str, cond: Callable[[], bool], within: float = BOUND) -> None:
    """Poll (real time, bounded) until `cond` holds: a process to get somewhere."""
    loop = asyncio.get_running_loop()
    end = loop.time() + within
    while not cond():
        if loop.time() > end:
            raise AssertionError(f"not within {within} s: {what}")
        await asyncio.sleep(0.01)


async def bounded(task: asyncio.Task[T], within: float = BOUND) -> T:
    """The task's result, or a failure (never a hang) when it takes longer than `within`."""
    done, _ = await asyncio.wait({task}, timeout=within)
    if not done:
        task.cancel()
        raise AssertionError(f"the hooks' wait did not end within {within} s")
    return task.result()


def members(pgid: int) -> list[int]:
    """The live (not zombie) processes of the group."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            out.append(int(d.name))
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rindex(")") + 2] != "Z"


def run(go: Coroutine[object, object, T]) -> T:
    return asyncio.run(go)


HANG = """#!/bin/bash
# never reads stdin; says where it is, then sleeps
echo $$ > "$1"
exec sleep 1000
"""

DEAF = """#!/bin/bash
# ignores SIGTERM (and so does every command it starts)
trap '' TERM
echo $$ > "$1"
while :; do sleep 0.05; done
"""

FORKS = """#!/bin/bash
# leaves a child behind that holds stdout, and exits at once
sleep 1000 &
echo $$ > "$1"
echo '{}'
exit 0
"""

ESCAPES = """#!/bin/bash
# leaves a child in a session of its own (out of reach of the group's signals) holding stdout
setsid sleep 1000 &
echo $! > "$1.child"
echo $$ > "$1"
exit 0
"""

FLOOD = """#!/usr/bin/env python3
import sys

chunk = b"x" * (1 << 20)
for _ in range(50):  # 50 MB
    sys.stdout.buffer.write(chunk)
"""

GARBAGE = """#!/usr/bin/env python3
print("{not json")
"""

BLOCKS = """#!/bin/bash
echo "rm -rf is not allowed here: use make clean" >&2
exit 2
"""

# Claude Code's docs' PreToolUse guard in Python: read the call, answer JSON
GUARD = """#!/usr/bin/env python3
import json
import sys

data = json.load(sys.stdin)
command = data.get("tool_input", {}).get("command", "")
if "rm -rf" in command:
    out = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": f"{data['tool_name']}: rm -rf is blocked by policy",
        }
    }
else:
    out = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}
print(json.dumps(out))
"""

ALLOWS = """#!/usr/bin/env python3
import json, sys
json.load(sys.stdin)
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                  "permissionDecisionReason": "fine by me"}}))
"""


# ---------------------------------------------------------------- (a) .. (c): the deadline


def test_a_hook_that_never_reads_stdin_and_sleeps_ends_at_its_timeout_shown_as_timed_out(
    project: Path, scripts: Path, tmp_path: Path
) -> None:
    hang = script(scripts, "hang.sh", HANG)
    pid_file = tmp_path / "pid"
    big = payload(project, filler="y" * (1 << 20))  # more than a pipe holds, never read

    async def go() -> None:
        clock = ManualClock()
        task = start(PRE, [hook(f"{hang} {pid_file}")], project, clock, data=big)
        await until("the hook runs, its deadline set", lambda: pid_file.exists() and clock.sleepers == 1)
        await asyncio.sleep(0.1)
        assert not task.done()  # it sleeps, and nothing reads it out early
        clock.advance(1.0)  # its timeout: SIGTERM, and sleep ends on it
        got = await bounded(task)
        [r] = got.runs
        assert r.ran.proc.timed_out and r.ran.proc.phase is rule.Phase.ENDED
        assert r.ran.status == -signal.SIGTERM
        assert got.verdict.kind is rule.Kind.DENY  # a guard that timed out denies
        [line] = got.verdict.failures
        assert line == said(PRE, f"{hang} {pid_file}", "timed out after 1 s")
        assert r.seconds == 1.0  # on the test's clock
        assert members(int(pid_file.read_text())) == []

    run(go())


def test_a_hook_that_ignores_sigterm_is_killed_at_its_timeout_plus_the_grace(
    project: Path, scripts: Path, tmp_path: Path
) -> None:
    deaf = script(scripts, "deaf.sh", DEAF)
    pid_file = tmp_path / "pid"

    async def go() -> None:
        clock = ManualClock()
        task = start(POST, [hook(f"{deaf} {pid_file}")], project, clock)
        await until("the trap is set", lambda: pid_file.exists() and clock.sleepers == 1)
        pgid = int(pid_file.read_text())
        clock.advance(1.0)  # SIGTERM: ignored
        await until("the grace's deadline is set", lambda: clock.sleepers == 1)
        await asyncio.sleep(0.2)
        assert not task.done() and members(pgid)  # the attack holds: TERM did not end it
        clock.advance(rule.GRACE_MS / 1000)  # the grace is out: SIGKILL, and the turn goes on
        got = await bounded(task, 1.0)
        [r] = got.runs
        assert r.ran.proc.phase is rule.Phase.GONE and r.ran.status is None
        assert got.verdict.kind is rule.Kind.PASS  # no guard: the failure is shown, the call stands
        assert got.verdict.failures == (said(POST, f"{deaf} {pid_file}", "timed out after 1 s"),)
        await until("the group is gone", lambda: members(pgid) == [])

    run(go())


def test_a_child_that_holds_stdout_after_the_hook_exits_does_not_hold_the_turn_past_the_timeout(
    project: Path, scripts: Path, tmp_path: Path
) -> None:
    forks = script(scripts, "forks.sh", FORKS)
    pid_file = tmp_path / "pid"

    async def go() -> None:
        clock = ManualClock()
        task = start(POST, [hook(f"{forks} {pid_file}")], project, clock)
        await until("the hook has exited", lambda: pid_file.exists() and not alive(int(pid_file.read_text())))
        pgid = int(pid_file.read_text())
        await asyncio.sleep(0.1)
        assert not task.done() and members(pgid)  # its child holds the pipe
        clock.advance(1.0)  # the timeout: the group (the child) gets SIGTERM
        got = await bounded(task, 1.0)
        [r] = got.runs
        assert r.ran.proc.timed_out and r.ran.status == 0
        assert got.verdict.failures == (said(POST, f"{forks} {pid_file}", "timed out after 1 s"),)
        await until("the child is gone", lambda: members(pgid) == [])

    run(go())


def test_a_child_out_of_the_group_that_holds_stdout_is_left_at_the_timeout_plus_the_grace(
    project: Path, scripts: Path, tmp_path: Path
) -> None:
    escapes = script(scripts, "escapes.sh", ESCAPES)
    pid_file = tmp_path / "pid"
    child_file = tmp_path / "pid.child"

    async def go() -> None:
        clock = ManualClock()
        task = start(POST, [hook(f"{escapes} {pid_file}")], project, clock)
        await until("the hook has exited", lambda: pid_file.exists() and not alive(int(pid_file.read_text())))
        child = int(child_file.read_text())
        try:
            pgid = int(pid_file.read_text())
            await until("the child has left the group", lambda: members(pgid) == [] and alive(child))
            clock.advance(1.0)  # SIGTERM to a group with nobody left in it
            await until("the grace's deadline is set", lambda: clock.sleepers == 1)
            await asyncio.sleep(0.1)
            assert not task.done()  # the escaped child still holds stdout
            clock.advance(rule.GRACE_MS / 1000)
            got = await bounded(task, 1.0)
            assert alive(child)  # not waited for: the turn went on without it
            [r] = got.runs
            assert r.ran.proc.phase is rule.Phase.GONE and r.ran.status is None
            assert "timed out after 1 s" in got.verdict.failures[0]
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)

    run(go())


# ---------------------------------------------------------------- (d), (e): what it prints


def test_a_hook_that_prints_50_mb_ends_its_output_drained_and_memory_bounded(
    project: Path, scripts: Path
) -> None:
    flood = script(scripts, "flood.py", FLOOD)

    async def go() -> EventRun:
        return await bounded(start(POST, [hook(str(flood), 10.0)], project, LoopClock()))

    tracemalloc.start()
    try:
        got = run(go())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < STDOUT_KEPT + (4 << 20), f"{peak:,} bytes at the peak for 50 MB of output"
    [r] = got.runs
    assert r.ran.status == 0 and not r.ran.proc.timed_out
    assert r.ran.answer is None  # more than is kept: no answer can be read from part of it
    [failure] = got.verdict.failures  # the command as the rule shows it: its first 80 characters
    assert failure == f"PostToolUse hook `{str(flood)[:80]}` answered with output that is no JSON object"


def test_a_hook_that_prints_garbage_for_json_gets_a_failure_line_naming_it(
    project: Path, scripts: Path
) -> None:
    garbage = script(scripts, "garbage.py", GARBAGE)

    async def go() -> tuple[EventRun, EventRun]:
        post = await bounded(start(POST, [hook(str(garbage), 5.0)], project, LoopClock()))
        pre = await bounded(start(PRE, [hook(str(garbage), 5.0)], project, LoopClock()))
        return post, pre

    post, pre = run(go())
    line = said(POST, str(garbage), "answered with output that is no JSON object")
    assert post.verdict == rule.Verdict(failures=(line,))
    assert pre.verdict.kind is rule.Kind.DENY and "no JSON object" in pre.verdict.reason


# ---------------------------------------------------------------- (f) .. (i): the guard


def test_a_guard_whose_command_is_missing_denies_with_the_cause_unless_it_fails_open(project: Path) -> None:
    missing = "no-such-guard-5d1f --check"

    async def go() -> tuple[EventRun, EventRun]:
        closed = await bounded(start(PRE, [hook(missing, 5.0)], project, LoopClock()))
        opened = await bounded(start(PRE, [hook(missing, 5.0, allow=True)], project, LoopClock()))
        return closed, opened

    closed, opened = run(go())
    assert closed.runs[0].ran.status == 127
    assert closed.verdict.kind is rule.Kind.DENY
    assert closed.verdict.reason.startswith(
        f"denied: the guard failed (PreToolUse hook `{missing}` exited 127: "
    )
    assert "no-such-guard-5d1f: command not found" in closed.verdict.reason
    assert opened.verdict.kind is rule.Kind.PASS
    [line] = opened.verdict.failures
    assert line.startswith(f"PreToolUse hook `{missing}` exited 127: ") and "command not found" in line


def test_exit_2_denies_a_tool_call_with_its_stderr_as_the_reason(project: Path, scripts: Path) -> None:
    blocks = script(scripts, "block.sh", BLOCKS)
    got = run(bounded_run(PRE, [hook(str(blocks), 5.0)], project))
    assert got.verdict == rule.Verdict(rule.Kind.DENY, "rm -rf is not allowed here: use make clean")


def test_a_permission_decision_deny_in_json_denies_with_its_reason(project: Path, scripts: Path) -> None:
    guard = script(scripts, "guard.py", GUARD)
    got = run(bounded_run(PRE, [hook(str(guard), 5.0)], project))
    assert got.verdict.kind is rule.Kind.DENY
    assert got.verdict.reason == "Bash: rm -rf is blocked by policy"
    ls = payload(project, tool_input={"command": "ls"})
    assert run(bounded_run(PRE, [hook(str(guard), 5.0)], project, ls)).verdict.kind is rule.Kind.ALLOW


def test_of_two_hooks_on_one_event_one_allowing_and_one_denying_the_deny_wins(
    project: Path, scripts: Path
) -> None:
    allows = script(scripts, "allow.py", ALLOWS)
    blocks = script(scripts, "block.sh", BLOCKS)
    got = run(bounded_run(PRE, [hook(str(allows), 5.0), hook(str(blocks), 5.0)], project))
    assert [r.hook.command for r in got.runs] == [str(allows), str(blocks)]
    assert got.runs[0].ran.answer is not None and got.runs[0].ran.answer.permission == "allow"
    assert got.verdict.kind is rule.Kind.DENY
    assert got.verdict.reason == "rm -rf is not allowed here: use make clean"


async def bounded_run(
    event: rule.Event, hooks: list[Hook], project: Path, data: dict[str, object] | None = None
) -> EventRun:
    return await bounded(start(event, hooks, project, LoopClock(), data=data))


# ---------------------------------------------------------------- (j): stdin, the environment


def test_the_payload_arrives_on_stdin_in_claude_codes_names_and_stdin_is_closed(
    project: Path, tmp_path: Path
) -> None:
    got_file = tmp_path / "got.json"
    sent = payload(project)
    # `cat` ends only when its stdin is closed: without the close it would sleep to the timeout
    got = run(bounded_run(PRE, [hook(f"cat > {got_file}", 30.0)], project, sent))
    assert json.loads(got_file.read_text()) == sent
    [r] = got.runs
    assert r.ran.status == 0 and not r.ran.proc.timed_out and got.verdict == rule.Verdict()


def test_a_hook_sees_the_tools_environment_the_project_and_only_the_variables_it_names(
    project: Path, tmp_path: Path
) -> None:
    out = tmp_path / "env"
    command = (
        f'printf "%s|%s|%s|%s|%s" "$CLAUDE_PROJECT_DIR" "$EUKHE_PROJECT_DIR" "$PWD" "$NAMED" "$OTHER" > {out}'
    )
    environ = {"NAMED": "yes", "OTHER": "a secret the hook did not name"}

    async def go() -> EventRun:
        h = hook(command, 5.0, env=("NAMED",))
        return await bounded(start(POST, [h], project, LoopClock(), environ=environ))

    run(go())
    assert out.read_text() == f"{project}|{project}|{project}|yes|"


# ---------------------------------------------------------------- (k): the run's abort


def test_the_runs_abort_ends_the_wait_at_once_and_kills_the_group(
    project: Path, scripts: Path, tmp_path: Path
) -> None:
    deaf = script(scripts, "deaf.sh", DEAF)
    pid_file = tmp_path / "pid"

    async def go() -> None:
        clock = ManualClock()
        cancel = asyncio.Event()
        task = start(PRE, [hook(f"{deaf} {pid_file}", 60.0)], project, clock, cancel)
        await until("the hook runs", lambda: pid_file.exists() and clock.sleepers == 1)
        pgid = int(pid_file.read_text())
        cancel.set()  # the clock does not move: only the abort can end it
        got = await bounded(task, 1.0)
        [r] = got.runs
        assert r.ran.proc.aborted and r.ran.proc.phase is rule.Phase.GONE
        assert got.verdict == rule.Verdict()  # an aborted hook decides nothing, fails nothing
        await until("the group is gone", lambda: members(pgid) == [])

    run(go())


def test_a_cancelled_caller_kills_every_group_and_stays_cancelled(
    project: Path, scripts: Path, tmp_path: Path
) -> None:
    deaf = script(scripts, "deaf.sh", DEAF)
    pids = [tmp_path / "pid-1", tmp_path / "pid-2"]

    async def go() -> None:
        clock = ManualClock()
        task = start(POST, [hook(f"{deaf} {p}", 60.0) for p in pids], project, clock)
        await until("both run", lambda: all(p.exists() for p in pids) and clock.sleepers == 2)
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=1.0)
        assert done and task.cancelled()
        for p in pids:
            pgid = int(p.read_text())
            await until("the group is gone", lambda pgid=pgid: members(pgid) == [])  # type: ignore[misc]

    run(go())


def test_a_big_payload_to_a_hook_that_exits_unread_ends_without_waiting(project: Path) -> None:
    big = payload(project, filler="z" * (4 << 20))
    got = run(bounded_run(POST, [hook("exit 0", 30.0)], project, big))
    assert got.runs[0].ran.status == 0 and got.verdict == rule.Verdict()


def test_a_hook_that_cannot_start_is_a_failure_with_its_reason(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    got = run(bounded_run(PRE, [hook("true", 5.0)], gone))
    assert got.runs[0].ran.status == 127
    assert got.verdict.kind is rule.Kind.DENY and "could not start bash -c" in got.verdict.reason


def test_no_hooks_decide_nothing(project: Path) -> None:
    assert run(bounded_run(PRE, [], project)) == EventRun(rule.Verdict(), ())


# ---------------------------------------------------------------- what it answered, read


@pytest.mark.parametrize(
    ("stdout", "want"),
    [
        (b"", rule.Answer()),
        (b"  \n", rule.Answer()),
        (b"checked 3 files\n", rule.Answer(plain="checked 3 files")),
        (b"{not json", None),
        (b"[1, 2]", rule.Answer(plain="[1, 2]")),
        (b'{"a": 1} trailing', None),
        (b'{"continue": "no"}', None),
        (b'{"hookSpecificOutput": []}', None),
        (b'{"reason": 3, "decision": "block"}', None),
        (
            json.dumps(
                {
                    "decision": "block",
                    "reason": "r",
                    "continue": False,
                    "stopReason": "s",
                    "systemMessage": "m",
                    "hookSpecificOutput": {
                        "hookEventName": "PreToolUse",
                        "permissionDecision": "ask",
                        "permissionDecisionReason": "pr",
                        "additionalContext": "c",
                        "updatedInput": {"command": "ls"},
                    },
                }
            ).encode(),
            rule.Answer("block", "r", False, "s", "m", "ask", "pr", "c", True, ""),
        ),
    ],
)
def test_stdout_is_read_as_claude_codes_answer(stdout: bytes, want: rule.Answer | None) -> None:
    assert answer(stdout) == want


def test_stdout_past_what_is_kept_is_no_answer() -> None:
    assert answer(b"{}", over=True) is None
    assert answer(b'{"a": ' * 100_000 + b"1" + b"}" * 100_000) is None  # nested past Python's stack


# ---------------------------------------------------------------- the tie: the rule decides


def test_the_runner_does_what_the_rule_says_and_nothing_of_its_own(
    project: Path, scripts: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deaf = script(scripts, "deaf.sh", DEAF)
    pid_file = tmp_path / "pid"
    real_step = rule.step

    def no_grace(p: rule.Proc, x: rule.Input, now: int) -> tuple[rule.Proc, rule.Action]:
        q, action = real_step(p, x, now)
        return (q, rule.Action.KILL) if action is rule.Action.TERM else (q, action)

    def always_denies(event: rule.Event, r: rule.Ran) -> rule.Verdict:
        return rule.Verdict(rule.Kind.DENY, f"the swapped rule: {r.status}")

    monkeypatch.setattr(rule, "step", no_grace)
    monkeypatch.setattr(rule, "verdict", always_denies)

    async def go() -> None:
        clock = ManualClock()
        task = start(POST, [hook(f"{deaf} {pid_file}")], project, clock)
        await until("the trap is set", lambda: pid_file.exists() and clock.sleepers == 1)
        clock.advance(1.0)  # the real rule would TERM here and wait out the grace; this one kills
        got = await bounded(task, 1.0)
        assert got.verdict == rule.Verdict(rule.Kind.DENY, "the swapped rule: None")
        await until("the group is gone", lambda: members(int(pid_file.read_text())) == [])

    run(go())
