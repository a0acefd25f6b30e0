"""`eukhe hooks list` and `eukhe hooks test` through the real command line, with hooks in the
home's settings.json and real scripts: the listing names each hook's source and what an
untrusted project holds back; a test run shows how each hook ended and their verdict, its
exit status 0 when every hook ran clean and 1 when one timed out."""

from __future__ import annotations

import json
import time
from pathlib import Path

from eukhe.rules import hook as rule
from tests.proc import eukhe


def script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def home_with(tmp_path: Path, hooks: dict[str, object]) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"hooks": hooks}))
    return home


def guard(command: str, matcher: str = "Bash", **more: object) -> list[dict[str, object]]:
    return [{"matcher": matcher, "hooks": [{"type": "command", "command": command, **more}]}]


def test_list_shows_every_hook_by_event_with_its_matcher_timeout_and_source(tmp_path: Path) -> None:
    check = script(tmp_path / "guard.sh", "exit 0\n")
    stop = {"hooks": [{"type": "command", "command": "make -s test >&2 || exit 2", "onFailure": "allow"}]}
    home = home_with(tmp_path, {"PreToolUse": guard(str(check), timeout=5), "Stop": [stop]})
    source = home / "settings.json"
    done = eukhe("hooks", "list", cwd=tmp_path, home=home)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"hooks in effect in {tmp_path}:"
    pre = lines.index("PreToolUse (1 hook)")
    assert lines[pre + 1 : pre + 3] == [
        f"  [Bash] {check}",
        f"    timeout 5 s · onFailure deny · from {source}",
    ]
    at = lines.index("Stop (1 hook)")
    assert lines[at + 1 : at + 3] == [
        "  make -s test >&2 || exit 2",
        f"    timeout 60 s (the default) · onFailure allow · from {source}",
    ]
    assert pre < at and "held back or left out:" not in lines

    got = json.loads(eukhe("hooks", "list", "--json", cwd=tmp_path, home=home).stdout)
    [pre_hook] = got["events"]["PreToolUse"]
    assert pre_hook == {
        "matcher": "Bash",
        "command": str(check),
        "timeout": 5,
        "timeoutDefault": False,
        "onFailure": "deny",
        "env": [],
        "source": str(source),
    }
    assert got["events"]["Stop"][0]["onFailure"] == "allow" and got["notices"] == []
    assert got["cwd"] == str(tmp_path) and got["maxStopBlocks"] == rule.MAX_STOP_BLOCKS


def test_an_untrusted_projects_hooks_show_as_held_back_counted(tmp_path: Path) -> None:
    home = home_with(tmp_path, {})
    team = tmp_path / ".claude" / "settings.json"
    team.parent.mkdir()
    team.write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "rm -rf ~"}]}]}})
    )
    done = eukhe("hooks", "list", cwd=tmp_path, home=home)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"no hooks are in effect in {tmp_path}: ") and "docs/hooks.md" in lines[0]
    assert lines[1] == "held back or left out:"
    [held] = lines[2:]
    assert str(team) in held and "(1 hook: Stop 1)" in held and f"eukhe trust {tmp_path}" in held
    assert "rm -rf" not in done.stdout  # held back: its command is not in effect, nor shown as one


def test_nothing_configured_says_where_hooks_go(tmp_path: Path) -> None:
    done = eukhe("hooks", "list", cwd=tmp_path, home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    [line] = done.stdout.splitlines()
    assert line.startswith("no hooks are in effect") and "docs/hooks.md" in line


def test_malformed_hooks_are_one_line_and_exit_2(tmp_path: Path) -> None:
    home = home_with(tmp_path, {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "prompt"}]}]})
    done = eukhe("hooks", "list", cwd=tmp_path, home=home)
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("eukhe hooks: setting hooks.PreToolUse[0].hooks[0].type='prompt' in "), line


def test_a_guard_that_exits_2_shows_the_deny_and_its_reason_on_a_sample_bash_call(tmp_path: Path) -> None:
    check = script(
        tmp_path / "guard.sh", 'cat > "$CLAUDE_PROJECT_DIR/got.json"\necho "no rm here" >&2\nexit 2\n'
    )
    home = home_with(tmp_path, {"PreToolUse": guard(str(check)), "PostToolUse": guard("exit 1")})
    done = eukhe("hooks", "test", "PreToolUse", "--tool", "Bash", cwd=tmp_path, home=home)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("PreToolUse Bash: 1 hook, on stdin: {")
    assert lines[1].startswith(f"`{check}`: exit 2 (a block), in ")
    assert lines[2:] == ["verdict: deny", "  reason: no rm here"]
    sent = json.loads((tmp_path / "got.json").read_text())
    assert sent == {
        "session_id": "test",
        "transcript_path": "",
        "cwd": str(tmp_path),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "run_id": "test",
        "tool_name": "Bash",
        "tool_input": {"command": "echo hello"},
        "tool_use_id": "test-call",
    }
    given = '{"command": "rm -rf build"}'  # eukhe's name, and the input given
    again = eukhe("hooks", "test", "PreToolUse", "--tool", "bash", "--input", given, cwd=tmp_path, home=home)
    assert again.returncode == 0, again.stdout + again.stderr
    assert json.loads((tmp_path / "got.json").read_text())["tool_input"] == {"command": "rm -rf build"}


def test_a_guard_that_sleeps_past_its_timeout_shows_it_timed_out_and_exits_1(tmp_path: Path) -> None:
    home = home_with(tmp_path, {"PreToolUse": guard("sleep 30", timeout=1)})
    began = time.monotonic()
    done = eukhe("hooks", "test", "PreToolUse", "--tool", "Bash", cwd=tmp_path, home=home)
    took = time.monotonic() - began
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[1].startswith("`sleep 30`: timed out after 1 s: "), lines
    failure = "PreToolUse hook `sleep 30` timed out after 1 s"
    assert lines[2] == f"  failed: {failure}"
    assert lines[3:] == ["verdict: deny", f"  reason: denied: the guard failed ({failure})"]
    assert took < 1 + rule.GRACE_MS / 1000 + 5, took  # the hook's bound, and the command's start


def test_an_unknown_event_is_refused_with_the_events_and_exit_2(tmp_path: Path) -> None:
    done = eukhe("hooks", "test", "BeforeToolUse", cwd=tmp_path, home=tmp_path / "home")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("eukhe hooks: no event 'BeforeToolUse'; the events: SessionStart, ")
    assert all(e.value in done.stderr for e in rule.Event)
