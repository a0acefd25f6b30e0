"""PermissionRequest and Notification hooks at the permission gate (`run.permit.Gate`), with
real hook scripts: when eukhe's rules would ask a person, the PermissionRequest hooks answer
first, in Claude Code's shape (`hookSpecificOutput.decision.behavior`); their allow runs the
call unasked, their deny (or a guard that crashes) denies it with the hook's reason, and
anything else asks the person, while the Notification hooks run beside the ask. A call the
rules allow or deny never reaches them."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from eukhe.ai.reply import ToolCall
from eukhe.hooks.config import Hook, Hooks, Matcher
from eukhe.rules import hook as rule
from eukhe.rules.permission import Answer, Cfg, Kind, Mode, PermissionState, Policy, Rule, Source
from eukhe.run.hook_events import RunHooks
from eukhe.run.permit import Asked, Gate, Permit

ASK_TOUCH = (Rule(Kind.ASK, "Bash", "touch *", Source.HOME), Rule(Kind.ALLOW, "Bash", "ls*", Source.HOME))


class Person:
    """Answers yes, once `before` (a file) exists if it is given, and keeps what it was asked."""

    def __init__(self, before: Path | None = None) -> None:
        self.asked: list[Asked] = []
        self.before = before

    async def ask(self, q: Asked) -> tuple[Answer, str]:
        self.asked.append(q)
        while self.before is not None and not self.before.exists():
            await asyncio.sleep(0.01)  # the test's own bound: asyncio.wait_for in `permit`
        return Answer.ONCE, ""


def hooks_of(tmp_path: Path, *matchers: tuple[rule.Event, str, str]) -> Hooks:
    return Hooks(
        tuple(
            Matcher(e, m, (Hook(c, 10_000, False, (), tmp_path / "settings.json"),)) for e, m, c in matchers
        )
    )


def script(tmp_path: Path, name: str, text: str) -> str:
    f = tmp_path / name
    f.write_text(text)
    f.chmod(0o755)
    return str(f)


def permit(
    tmp_path: Path, hooks: Hooks, command: str, before: Path | None = None
) -> tuple[Permit, Person, list[tuple[str, str]]]:
    """The gate's answer on `bash command`, asked with `hooks`; the person (who answers once
    `before` exists); the hook lines shown."""
    person = Person(before)
    shown: list[tuple[str, str]] = []

    async def main() -> Permit:
        cancel = asyncio.Event()

        def show(kind: str, text: str, data: object = None) -> None:
            shown.append((kind, text))

        run_hooks = RunHooks(hooks, "s", "s/0001", tmp_path, dict(os.environ), cancel, show)
        cfg = Cfg(Mode.WORKSPACE_WRITE, Policy.ON_REQUEST, True, True, ASK_TOUCH)
        gate = Gate(PermissionState(cfg), tmp_path, tmp_path / "home", person, cancel=cancel, hooks=run_hooks)
        try:
            return await asyncio.wait_for(gate.permit(ToolCall("c1", "bash", "", {"command": command})), 30)
        finally:
            await run_hooks.close()

    return asyncio.run(main()), person, shown


ALLOW = """#!/bin/bash
cat > "$(dirname "$0")/payload.json"
echo '{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}'
"""

DENY = """#!/usr/bin/env python3
import json, sys
json.load(sys.stdin)
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
      "decision": {"behavior": "deny", "message": "no touching on Fridays"}}}))
"""


def test_a_permission_request_hook_that_allows_runs_the_call_and_nobody_is_asked(tmp_path: Path) -> None:
    hooks = hooks_of(tmp_path, (rule.Event.PERMISSION_REQUEST, "Bash", script(tmp_path, "allow.sh", ALLOW)))
    got, person, _ = permit(tmp_path, hooks, "touch a")
    assert got.runs and person.asked == []
    sent = json.loads((tmp_path / "payload.json").read_text())
    assert sent["hook_event_name"] == "PermissionRequest" and sent["tool_name"] == "Bash"
    assert sent["tool_input"] == {"command": "touch a"}
    assert sent["permission_reason"] == "an ask rule matches it"


def test_a_permission_request_hook_that_denies_denies_with_its_message(tmp_path: Path) -> None:
    hooks = hooks_of(tmp_path, (rule.Event.PERMISSION_REQUEST, "", script(tmp_path, "deny.py", DENY)))
    got, person, _ = permit(tmp_path, hooks, "touch a")
    assert not got.runs and person.asked == []
    assert got.rule == "PermissionRequest hook"
    assert got.result == "Tool bash was not run: a PermissionRequest hook denied it: no touching on Fridays"


def test_a_permission_request_guard_that_crashes_denies_and_says_why(tmp_path: Path) -> None:
    hooks = hooks_of(tmp_path, (rule.Event.PERMISSION_REQUEST, "Bash", "jq-that-is-not-there .tool_name"))
    got, person, shown = permit(tmp_path, hooks, "touch a")
    assert not got.runs and person.asked == []
    assert got.result.startswith(
        "Tool bash was not run: a PermissionRequest hook denied it: denied: the guard failed"
    )
    assert "exited 127" in got.result
    assert any(k == "hook" and "exited 127" in t for k, t in shown), shown


def test_a_hook_that_says_nothing_leaves_the_ask_to_the_person_and_notifies_beside_it(tmp_path: Path) -> None:
    said = tmp_path / "notified.json"
    hooks = hooks_of(
        tmp_path,
        (rule.Event.PERMISSION_REQUEST, "Bash", "cat > /dev/null"),
        (rule.Event.NOTIFICATION, "permission_prompt", f"cat > {said}.part && mv {said}.part {said}"),
        (rule.Event.NOTIFICATION, "idle_prompt", f"touch {tmp_path / 'wrong'}"),
    )
    got, person, _ = permit(tmp_path, hooks, "touch a", before=said)
    assert got.runs and [q.text for q in person.asked] == ["touch a"]
    sent = json.loads(said.read_text())
    assert sent["hook_event_name"] == "Notification" and sent["notification_type"] == "permission_prompt"
    assert sent["message"] == "eukhe needs your permission to use bash"
    assert not (tmp_path / "wrong").exists()  # its matcher takes another kind of notification


def test_a_call_the_rules_decide_never_reaches_the_permission_request_hooks(tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    hooks = hooks_of(tmp_path, (rule.Event.PERMISSION_REQUEST, "", f"touch {ran}"))
    got, person, _ = permit(tmp_path, hooks, "ls")
    assert got.runs and person.asked == [] and not ran.exists()
