"""The tie of the hook rule to a whole run (`rules.hook`, through the durable runtime in
this process): swap the rule's function and the run does what the swapped one says, so what
a run does with its hooks' answers is the rule's to decide, not a copy of it in the runtime;
a guard's ask is the permission rule's (`rules.permission.guarded`).
(`tests/hooks/test_runner.py` ties `step` and `verdict` to the runner the same way.)"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from eukhe.ai.faux import FauxServer, parse
from eukhe.rules import hook as rule
from eukhe.rules import permission
from eukhe.rules.permission import Why
from eukhe.run import workflow
from eukhe.run.outcome import RunOutcome
from eukhe.run.runtime import Runtime
from eukhe.run.spec import STEPS, RunSpec

# blocks the run's first end, lets the second go (Claude Code's docs' advice: read stop_hook_active)
ONCE = (
    "python3 -c 'import json,sys; d=json.load(sys.stdin); "
    'sys.exit(0 if d["stop_hook_active"] else (print("check the tests", file=sys.stderr) or 2))\''
)


def ran(runtime: Runtime, cwd: Path, hooks: dict[str, Any], turns: list[dict[str, Any]]) -> RunOutcome:
    (cwd / "home" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    with FauxServer(parse(turns)) as server:
        spec = RunSpec(prompt="go", model="vllm/m", base_url=server.url, cwd=str(cwd), steps=STEPS)
        asyncio.run(runtime.drive(spec, "s", by_owner=False))
    [(_, out)] = runtime.process.sink.outcomes
    return out


STOP = {"Stop": [{"hooks": [{"type": "command", "command": ONCE}]}]}
TWO_ENDS = [{"when": "check the tests", "text": "second"}, {"results": 0, "text": "first"}]


def test_the_rule_lets_a_stop_hook_keep_the_run_going_once(durable_runtime: Runtime, tmp_path: Path) -> None:
    out = ran(durable_runtime, tmp_path, STOP, TWO_ENDS)
    assert (out.outcome, out.answer) == ("answered", "second")


def test_swapping_after_stop_ends_the_run_where_the_swapped_rule_says(
    durable_runtime: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_second_chance(blocks: int, cap: int, v: rule.Verdict) -> tuple[int, rule.StopNext]:
        return blocks, rule.StopNext.FAIL if v.kind is rule.Kind.BLOCK else rule.StopNext.END

    monkeypatch.setattr(workflow, "after_stop", no_second_chance)
    out = ran(durable_runtime, tmp_path, STOP, TWO_ENDS)
    assert (out.outcome, out.code) == ("failed", rule.STOP_LIMIT), out


GUARD = {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo no >&2; exit 2"}]}]
}
TOUCH = [
    {"results": 0, "calls": [{"name": "bash", "arguments": {"command": "touch made"}}]},
    {"results": 1, "text": "done"},
]


def test_the_rule_runs_a_guard_that_has_not_answered(durable_runtime: Runtime, tmp_path: Path) -> None:
    out = ran(durable_runtime, tmp_path, GUARD, TOUCH)
    assert out.outcome == "answered" and not (tmp_path / "made").exists()
    assert [d["rule"] for d in out.denials] == ["PreToolUse hook"]


def test_swapping_fire_replays_an_answer_never_given_and_the_guard_never_runs(
    durable_runtime: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rule, "fire", lambda recorded: rule.Fire.REPLAY)
    out = ran(durable_runtime, tmp_path, GUARD, TOUCH)
    assert out.outcome == "answered" and out.denials == []
    assert (tmp_path / "made").exists()


CHMOD_GUARD = {
    "PreToolUse": [
        {
            "matcher": "Bash",
            "hooks": [
                {
                    "type": "command",
                    "command": 'echo \'{"hookSpecificOutput": {"hookEventName": "PreToolUse", '
                    '"permissionDecision": "ask", "permissionDecisionReason": "chmod 777 is dangerous"}}\'',
                }
            ],
        }
    ]
}
CHMOD = [
    {"results": 0, "calls": [{"name": "bash", "arguments": {"command": "chmod 777 x"}}]},
    {"results": 1, "text": "done"},
]


def test_the_rule_denies_a_guards_ask_with_nobody_to_answer(durable_runtime: Runtime, tmp_path: Path) -> None:
    (tmp_path / "x").write_text("")
    (tmp_path / "x").chmod(0o600)
    out = ran(durable_runtime, tmp_path, CHMOD_GUARD, CHMOD)
    assert out.outcome == "answered" and (tmp_path / "x").stat().st_mode & 0o777 == 0o600
    assert [(d["rule"], d["cause"]) for d in out.denials] == [("PreToolUse hook", Why.HOOK_UNASKED.value)]


def test_swapping_guarded_runs_what_the_guard_asked_about(
    durable_runtime: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "x").write_text("")
    (tmp_path / "x").chmod(0o600)
    monkeypatch.setattr(permission, "guarded", lambda d, call: d)  # a rule that ignores the guard
    out = ran(durable_runtime, tmp_path, CHMOD_GUARD, CHMOD)
    assert out.outcome == "answered" and out.denials == []
    assert (tmp_path / "x").stat().st_mode & 0o777 == 0o777


def _ends(tmp_path: Path) -> dict[str, Any]:
    """A hook on each end of a call, each leaving a file named for its event."""
    return {
        e: [{"matcher": "Bash", "hooks": [{"type": "command", "command": f"touch {tmp_path / e}"}]}]
        for e in ("PostToolUse", "PostToolUseFailure")
    }


FAILS = [
    {"results": 0, "calls": [{"name": "bash", "arguments": {"command": "exit 3"}}]},
    {"results": 1, "text": "it failed"},
]


def test_the_rule_fires_post_tool_use_failure_after_a_failed_call(
    durable_runtime: Runtime, tmp_path: Path
) -> None:
    out = ran(durable_runtime, tmp_path, _ends(tmp_path), FAILS)
    assert out.outcome == "answered"
    assert (tmp_path / "PostToolUseFailure").exists() and not (tmp_path / "PostToolUse").exists()


def test_swapping_after_tool_fires_the_event_the_swapped_rule_names(
    durable_runtime: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rule, "after_tool", lambda error: rule.Event.POST_TOOL_USE)
    out = ran(durable_runtime, tmp_path, _ends(tmp_path), FAILS)
    assert out.outcome == "answered"
    assert (tmp_path / "PostToolUse").exists() and not (tmp_path / "PostToolUseFailure").exists()
