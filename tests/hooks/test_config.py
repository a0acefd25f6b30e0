"""Hooks as users write them (`hooks.config`): Claude Code's shape, from the home, a trusted
project's `.claude/settings.json` (and `.local`) and `.eukhe/settings.json`; an untrusted
project's held back with a notice counting them; malformed ones named by file and key."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from eukhe.hooks.config import Hook, Hooks, Matcher, load
from eukhe.rules import hook as rule
from eukhe.settings import SettingsError, loaded, trust

PRE, POST, STOP = rule.Event.PRE_TOOL_USE, rule.Event.POST_TOOL_USE, rule.Event.STOP

CLAUDE_HOOKS = {
    "PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 30}]},
        {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "./lint.sh"}]},
    ],
    "Stop": [{"hooks": [{"type": "command", "command": "./check-done.sh", "timeout": 1.5}]}],
}
"""What a team's `.claude/settings.json` holds (its docs' examples)."""


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    return h


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "repo"
    p.mkdir()
    return p


def env(home: Path) -> dict[str, str]:
    return {"EUKHE_HOME": str(home)}


def commands(hooks: list[Hook]) -> list[str]:
    return [h.command for h in hooks]


def test_claude_codes_shape_is_read_from_the_home(home: Path) -> None:
    f = write(home / "settings.json", {"hooks": CLAUDE_HOOKS})
    got = load(None, env(home))
    assert got.notices == ()
    guard = Hook("./guard.sh", 30_000, False, (), f)
    assert got.hooks == Hooks(
        (
            Matcher(PRE, "Bash", (guard,)),
            Matcher(PRE, "Edit|Write", (Hook("./lint.sh", None, False, (), f),)),
            Matcher(STOP, "", (Hook("./check-done.sh", 1_500, False, (), f),)),
        ),
        rule.MAX_STOP_BLOCKS,
    )
    h = got.hooks
    assert h.for_event(PRE, "bash") == [guard]  # eukhe's names, matched as Claude Code's
    assert commands(h.for_event(PRE, "write")) == ["./lint.sh"]
    assert h.for_event(PRE, "read") == [] and h.for_event(POST, "bash") == []
    assert commands(h.for_event(STOP, None)) == ["./check-done.sh"]


def test_eukhes_own_fields_and_the_stop_cap_are_read(home: Path) -> None:
    spec = {"type": "command", "command": "gh-check", "onFailure": "allow", "env": ["GITHUB_TOKEN"]}
    write(
        home / "settings.json",
        {"hooks": {"PreToolUse": [{"hooks": [spec]}]}, "hookLimits": {"maxStopBlocks": 3}},
    )
    got = load(None, env(home)).hooks
    [h] = got.for_event(PRE, "anything")
    assert h.open_on_failure and h.env_names == ("GITHUB_TOKEN",) and got.max_stop_blocks == 3


def test_only_tool_events_match_on_tool_names_and_a_command_runs_once(home: Path) -> None:
    same = {"type": "command", "command": "./same.sh"}
    write(
        home / "settings.json",
        {
            "hooks": {
                "Stop": [{"matcher": "Bash", "hooks": [same]}],  # no tool to match: it runs
                "PostToolUse": [{"matcher": "*", "hooks": [same]}, {"matcher": "Bash", "hooks": [same]}],
            }
        },
    )
    got = load(None, env(home)).hooks
    assert commands(got.for_event(STOP, None)) == ["./same.sh"]
    assert commands(got.for_event(POST, "bash")) == ["./same.sh"]  # configured twice, run once


def test_a_trusted_projects_claude_files_and_eukhe_file_all_add_their_hooks(
    home: Path, project: Path
) -> None:
    def one(command: str) -> dict[str, object]:
        return {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}

    write(home / "settings.json", {"hooks": one("home")})
    team = write(
        project / ".claude" / "settings.json",
        # Claude Code's own keys, which mean other things than eukhe's, are not eukhe's to check
        {
            "hooks": CLAUDE_HOOKS,
            "sandbox": {"network": {"allowUnixSockets": ["/x"]}},
            "permissions": {"x": 1},
        },
    )
    write(project / ".claude" / "settings.local.json", {"hooks": one("mine")})
    write(project / ".eukhe" / "settings.json", {"hooks": one("eukhe"), "hookLimits": {"maxStopBlocks": 2}})
    trust.record(home, project, True)
    got = load(project, env(home))
    assert got.notices == ()
    assert commands(got.hooks.for_event(STOP)) == ["home", "./check-done.sh", "mine", "eukhe"]
    assert got.hooks.for_event(PRE, "bash")[0].source == team
    assert got.hooks.max_stop_blocks == 2


@pytest.mark.parametrize("answer", [None, False])
def test_an_untrusted_projects_hooks_are_held_back_with_a_notice_counting_them(
    home: Path, project: Path, answer: bool | None
) -> None:
    write(home / "settings.json", {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}})
    team = write(project / ".claude" / "settings.json", {"hooks": CLAUDE_HOOKS})
    own = write(
        project / ".eukhe" / "settings.json",
        {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "curl evil"}]}]}},
    )
    write(
        project / ".eukhe" / "settings.json",
        {**json.loads(own.read_text()), "hookLimits": {"maxStopBlocks": 99}},
    )
    if answer is not None:
        trust.record(home, project, answer)
    got = load(project, env(home))
    assert commands(got.hooks.for_event(STOP)) == ["mine"]  # the home's own still run
    assert got.hooks.for_event(PRE, "bash") == [] and got.hooks.max_stop_blocks == rule.MAX_STOP_BLOCKS
    team_line, own_line = got.notices
    assert team_line.startswith(f"{team}: hooks is ignored: this folder is not trusted, and hooks runs ")
    assert "(3 hooks: PreToolUse 2, Stop 1)" in team_line and f"eukhe trust {project}" in team_line
    assert own_line.startswith(f"{own}: hooks is ignored") and "(1 hook: PreToolUse 1)" in own_line
    # the very line the settings give for their own file: a face that shows both shows it once
    assert own_line in loaded(project, env(home)).notices


def test_an_untrusted_projects_unreadable_claude_file_is_a_notice_not_an_error(
    home: Path, project: Path
) -> None:
    bad = project / ".claude" / "settings.json"
    bad.parent.mkdir()
    bad.write_text("{not json")
    [line] = load(project, env(home)).notices
    assert line.startswith(f"settings file {bad}, line 1 column 2: not valid JSON") and "not trusted" in line
    trust.record(home, project, True)
    with pytest.raises(
        SettingsError, match=f"^settings file {re.escape(str(bad))}, line 1 column 2: not valid"
    ):
        load(project, env(home))


# ---------------------------------------------------------------- malformed


def guard(spec: object, matcher: object = "Bash") -> dict[str, object]:
    return {"hooks": {"PreToolUse": [{"matcher": matcher, "hooks": [spec]}]}}


CMD = {"type": "command", "command": "./guard.sh"}


@pytest.mark.parametrize(
    ("data", "where", "want"),
    [
        (guard({**CMD, "timeout": 0}), "hooks.PreToolUse[0].hooks[0].timeout=0", "a number of seconds > 0"),
        (guard({**CMD, "timeout": -5}), "hooks.PreToolUse[0].hooks[0].timeout=-5", "a number of seconds > 0"),
        (
            guard({**CMD, "timeout": "30"}),
            "hooks.PreToolUse[0].hooks[0].timeout='30'",
            "a number of seconds > 0",
        ),
        (
            guard({**CMD, "timeout": True}),
            "hooks.PreToolUse[0].hooks[0].timeout=True",
            "a number of seconds > 0",
        ),
        (
            guard({"type": "command", "command": ["rm"]}),
            "hooks.PreToolUse[0].hooks[0].command=['rm']",
            "a command (a non-empty string), run with bash -c",
        ),
        (
            guard({"type": "prompt", "prompt": "is it safe?"}),
            "hooks.PreToolUse[0].hooks[0].type='prompt'",
            '"command" (eukhe runs command hooks only)',
        ),
        (
            guard({**CMD, "onFailure": "maybe"}),
            "hooks.PreToolUse[0].hooks[0].onFailure='maybe'",
            'one of "deny", "allow"',
        ),
        (
            guard({**CMD, "env": ["OK", "NOT A NAME"]}),
            "hooks.PreToolUse[0].hooks[0].env=['OK', 'NOT A NAME']",
            'a list of environment variable names, such as ["GITHUB_TOKEN"]',
        ),
        (
            guard(CMD, "Bash("),
            "hooks.PreToolUse[0].matcher='Bash('",
            "a regular expression (missing ), unterminated subpattern at position 4)",
        ),
        (guard(CMD, 3), "hooks.PreToolUse[0].matcher=3", "a string (a regular expression over tool names)"),
        (
            {"hooks": {"PreToolUse": {"matcher": "Bash"}}},
            "hooks.PreToolUse={'matcher': 'Bash'}",
            'a list such as [{"matcher": "", "hooks": [...]}]',
        ),
    ],
)
def test_a_malformed_guard_is_an_error_naming_the_file_and_the_key(
    home: Path, data: dict[str, object], where: str, want: str
) -> None:
    f = write(home / "settings.json", data)
    with pytest.raises(SettingsError, match=f"^{re.escape(f'setting {where} in {f}: expected {want}')}$"):
        load(None, env(home))


def test_every_malformed_guard_is_named_at_once(home: Path) -> None:
    f = write(
        home / "settings.json",
        {"hooks": {"PreToolUse": [{"hooks": [{**CMD, "timeout": 0}]}, {"matcher": "(", "hooks": [CMD]}]}},
    )
    with pytest.raises(SettingsError) as got:
        load(None, env(home))
    lines = str(got.value).splitlines()
    assert [line.split("=")[0] for line in lines] == [
        "setting hooks.PreToolUse[0].hooks[0].timeout",
        "setting hooks.PreToolUse[1].matcher",
    ]
    assert all(f" in {f}: expected " in line for line in lines)


def test_a_malformed_hook_of_another_event_is_left_out_with_a_notice_and_the_rest_load(home: Path) -> None:
    f = write(
        home / "settings.json",
        {
            "hooks": {
                "Stop": [
                    {"hooks": [{**CMD, "timeout": -1}]},
                    {"hooks": [{"type": "command", "command": "./ok.sh"}]},
                ],
                "PreToolUse": [{"matcher": "Bash", "hooks": [CMD]}],
                "PostToolUsed": [{"hooks": [CMD, CMD]}],
            }
        },
    )
    got = load(None, env(home))
    assert commands(got.hooks.for_event(STOP)) == ["./ok.sh"]
    assert commands(got.hooks.for_event(PRE, "bash")) == ["./guard.sh"]
    bad, unknown = got.notices
    assert bad == (
        f"setting hooks.Stop[0].hooks[0].timeout=-1 in {f}: expected a number of seconds > 0; "
        "the hooks of hooks.Stop[0] are left out"
    )
    assert unknown.startswith(f"setting hooks.PostToolUsed in {f}: PostToolUsed is not an event eukhe ")
    assert unknown.endswith("; its 2 hooks: PostToolUsed 2 never run") and "PostToolUseFailure, " in unknown


def test_claude_codes_events_with_no_meaning_in_eukhe_are_said_with_why_and_the_rest_fire(home: Path) -> None:
    """Every event of Claude Code's current list is either fired or named, with why it has no
    meaning in eukhe: `eukhe hooks list` says so."""
    fired = ("PostToolUseFailure", "SubagentStart", "PostCompact", "StopFailure")
    said = ("TeammateIdle", "WorktreeCreate", "FileChanged")
    f = write(home / "settings.json", {"hooks": {e: [{"hooks": [CMD]}] for e in (*fired, *said)}})
    got = load(None, env(home))
    assert {m.event.value for m in got.hooks.matchers} == set(fired)
    assert len(got.notices) == len(said)
    for event, line in zip(said, got.notices, strict=True):
        assert line.startswith(
            f"setting hooks.{event} in {f}: {event} is Claude Code's, and eukhe never fires it: "
        )
        assert rule.NOT_FIRED[event] in line and line.endswith(f"its 1 hook: {event} 1 never run"), line
    claude_code = {  # Claude Code's events, as its hooks reference lists them
        "SessionStart", "Setup", "UserPromptSubmit", "UserPromptExpansion", "PreToolUse", "PermissionRequest",
        "PermissionDenied", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "Notification",
        "SubagentStart", "SubagentStop", "TaskCreated", "TaskCompleted", "Stop", "StopFailure",
        "TeammateIdle", "PreCompact", "PostCompact", "Elicitation", "ElicitationResult", "WorktreeCreate",
        "WorktreeRemove", "ConfigChange", "InstructionsLoaded", "CwdChanged", "FileChanged", "SessionEnd",
    }  # fmt: skip
    assert claude_code == {e.value for e in rule.Event} | set(rule.NOT_FIRED)


def test_hooks_that_are_no_object_are_the_settings_own_error(home: Path, project: Path) -> None:
    f = write(home / "settings.json", {"hooks": ["./guard.sh"]})
    with pytest.raises(
        SettingsError, match=f"^setting hooks=\\['./guard.sh'\\] in {re.escape(str(f))}: expected an object$"
    ):
        load(None, env(home))
    f.unlink()
    team = write(project / ".claude" / "settings.json", {"hooks": "./guard.sh"})
    trust.record(home, project, True)
    with pytest.raises(
        SettingsError, match=f"^setting hooks='./guard.sh' in {re.escape(str(team))}: expected an object of"
    ):
        load(project, env(home))
