"""A guard's `ask` asks (issue 51): a real PreToolUse hook, of the kind published for Claude
Code, that answers `permissionDecision: "ask"` for `chmod 777`. Headless (`eukhe run`), the
command never runs and the model reads the hook's reason; with a person, they are asked with
the hook's reason, their yes runs it and their no does not; no allow rule, no mode, no
PermissionRequest hook runs it unasked, and a person's "always" keeps no rule that would
silence the guard next time."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

from eukhe.ai.faux import FauxServer, parse
from eukhe.ai.reply import ToolCall
from eukhe.hooks.config import Hooks
from eukhe.rules import hook as rule
from eukhe.rules.permission import Answer, Cfg, Kind, Mode, PermissionState, Policy, Rule, Source
from eukhe.run.hook_events import RunHooks
from eukhe.run.permit import Asked, Gate, Permit
from tests.hooks.test_permission_request import ALLOW, hooks_of
from tests.hooks.test_run_hooks import bash, home_with, on, outcome, said_to_model, script
from tests.proc import eukhe

REASON = "chmod 777 is dangerous"

CHMOD_GUARD = """#!/usr/bin/env python3
import json, sys
data = json.load(sys.stdin)
command = data.get("tool_input", {}).get("command", "")
if data["tool_name"] == "Bash" and "chmod 777" in command:
    print(json.dumps({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "ask",
        "permissionDecisionReason": "chmod 777 is dangerous",
    }}))
"""


def mode_of(f: Path) -> int:
    return stat.S_IMODE(f.stat().st_mode)


# ---------------------------------------------------------------- headless: eukhe run


def test_headless_a_guards_ask_is_a_denial_and_the_model_reads_the_hooks_reason(tmp_path: Path) -> None:
    x = tmp_path / "x"
    x.write_text("secret")
    x.chmod(0o600)
    home = home_with(tmp_path, on("PreToolUse", script(tmp_path, "guard.py", CHMOD_GUARD), "Bash"))
    turns = [{"results": 0, **bash("chmod 777 x")}, {"results": 1, "text": "ok"}]
    with FauxServer(parse(turns)) as server:
        done = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "--json", "go", cwd=tmp_path, home=home
        )  # fmt: skip
        seen = [s.body for s in server.seen]
    assert done.returncode == 0, done.stderr
    assert mode_of(x) == 0o600  # the command never ran
    told = said_to_model(seen[-1])
    assert "a PreToolUse hook asks a person about it" in told and REASON in told, told
    [denial] = outcome(done)["denials"]
    assert denial["tool"] == "bash" and denial["rule"] == "PreToolUse hook", denial


def test_headless_in_full_access_with_an_allow_rule_a_guards_ask_is_still_a_denial(tmp_path: Path) -> None:
    x = tmp_path / "x"
    x.write_text("secret")
    x.chmod(0o600)
    guard = on("PreToolUse", script(tmp_path, "guard.py", CHMOD_GUARD), "Bash")
    home = home_with(tmp_path, guard, permissions={"allow": ["Bash(chmod *)"]})
    turns = [{"results": 0, **bash("chmod 777 x")}, {"results": 1, "text": "ok"}]
    with FauxServer(parse(turns)) as server:
        done = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "--json", "--sandbox", "danger-full-access",
            "go", cwd=tmp_path, home=home,
        )  # fmt: skip
        seen = [s.body for s in server.seen]
    assert done.returncode == 0, done.stderr
    assert mode_of(x) == 0o600
    assert REASON in said_to_model(seen[-1])


# ---------------------------------------------------------------- a person: the gate


class Person:
    """Answers in turn, and keeps what it was asked."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.asked: list[Asked] = []

    async def ask(self, q: Asked) -> tuple[Answer, str]:
        self.asked.append(q)
        return self.answers.pop(0), ""


def gate_permits(
    tmp_path: Path, hooks: Hooks, person: Person, cfg: Cfg, commands: list[str]
) -> tuple[list[Permit], Gate]:
    """The gate's answers on `bash COMMAND` for each command in turn, with the guard."""

    async def main() -> tuple[list[Permit], Gate]:
        cancel = asyncio.Event()
        run_hooks = RunHooks(hooks, "s", "s/0001", tmp_path, dict(os.environ), cancel, lambda *a, **k: None)
        gate = Gate(PermissionState(cfg), tmp_path, tmp_path / "home", person, cancel=cancel, hooks=run_hooks)
        try:
            got = [
                await asyncio.wait_for(gate.permit(ToolCall(f"c{i}", "bash", "", {"command": c})), 30)
                for i, c in enumerate(commands)
            ]
        finally:
            await run_hooks.close()
        return got, gate

    return asyncio.run(main())


def guard(tmp_path: Path) -> Hooks:
    return hooks_of(tmp_path, (rule.Event.PRE_TOOL_USE, "Bash", script(tmp_path, "guard.py", CHMOD_GUARD)))


def interactive(mode: Mode = Mode.WORKSPACE_WRITE, *rules: Rule) -> Cfg:
    return Cfg(mode, Policy.ON_REQUEST, True, True, rules)


def test_a_person_is_asked_with_the_hooks_reason_and_their_yes_runs_the_call(tmp_path: Path) -> None:
    person = Person(Answer.ONCE)
    [got], _ = gate_permits(tmp_path, guard(tmp_path), person, interactive(), ["chmod 777 x"])
    assert got.runs
    [q] = person.asked
    assert q.text == "chmod 777 x" and REASON in q.why and "PreToolUse hook" in q.why, q


def test_a_persons_no_to_a_guards_ask_does_not_run_the_call(tmp_path: Path) -> None:
    person = Person(Answer.NO)
    [got], _ = gate_permits(tmp_path, guard(tmp_path), person, interactive(), ["chmod 777 x"])
    assert not got.runs and got.result.startswith(
        "Tool bash was not run: permission denied: a person denied it"
    )
    assert [REASON in q.why for q in person.asked] == [True]


def test_what_the_guard_lets_by_is_not_asked(tmp_path: Path) -> None:
    person = Person()
    [got], _ = gate_permits(tmp_path, guard(tmp_path), person, interactive(), ["chmod 644 x"])
    assert got.runs and person.asked == []


def test_no_allow_rule_and_no_mode_runs_a_guards_ask_unasked(tmp_path: Path) -> None:
    allow = Rule(Kind.ALLOW, "Bash", "chmod *", Source.HOME)
    for mode in Mode:
        person = Person(Answer.NO)
        [got], _ = gate_permits(tmp_path, guard(tmp_path), person, interactive(mode, allow), ["chmod 777 x"])
        assert not got.runs and len(person.asked) == 1, (mode, got)


def test_always_to_a_guards_ask_keeps_no_rule_and_the_guard_asks_again(tmp_path: Path) -> None:
    person = Person(Answer.SESSION, Answer.NO)
    got, gate = gate_permits(tmp_path, guard(tmp_path), person, interactive(), ["chmod 777 x", "chmod 777 x"])
    assert [p.runs for p in got] == [True, False]
    assert len(person.asked) == 2 and gate.session.cfg.rules == ()


def test_a_permission_request_hook_does_not_answer_a_guards_ask_for_the_person(tmp_path: Path) -> None:
    hooks = hooks_of(
        tmp_path,
        (rule.Event.PRE_TOOL_USE, "Bash", script(tmp_path, "guard.py", CHMOD_GUARD)),
        (rule.Event.PERMISSION_REQUEST, "Bash", script(tmp_path, "allow.sh", ALLOW)),
    )
    person = Person(Answer.NO)
    [got], _ = gate_permits(tmp_path, hooks, person, interactive(), ["chmod 777 x"])
    assert not got.runs and len(person.asked) == 1
