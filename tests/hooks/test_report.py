"""The hooks as a person reads them (`hooks.report`: what `eukhe hooks list`, `/hooks` and
`eukhe hooks test` print), and the payloads a hook gets in Claude Code's names
(`hooks.payload`: a run's and `eukhe hooks test`'s sample)."""

from __future__ import annotations

from pathlib import Path

from eukhe.hooks import payload
from eukhe.hooks.config import Hook, Hooks, Loaded, Matcher
from eukhe.hooks.report import clean, ended, listing, listing_json, ran_lines
from eukhe.hooks.runner import EventRun, HookRun
from eukhe.rules import hook as rule

PRE, STOP = rule.Event.PRE_TOOL_USE, rule.Event.STOP
HOME = Path("/h/settings.json")
TEAM = Path("/p/.claude/settings.json")


def test_the_listing_groups_by_event_with_matcher_timeout_onfailure_env_and_source() -> None:
    guard = Hook("./guard.sh", 10_000, False, (), HOME)
    lint = Hook("ruff format .\nruff check .", None, True, ("GITHUB_TOKEN",), TEAM)
    done = Hook("make test", 1_500, False, (), HOME)
    start = Hook("echo hi", None, False, (), HOME)
    hooks = Hooks(
        (
            Matcher(STOP, "", (done,)),
            Matcher(PRE, "Bash", (guard,)),
            Matcher(PRE, "*", (lint,)),
            Matcher(rule.Event.SESSION_START, "startup", (start,)),
            Matcher(rule.Event.PRE_COMPACT, "", (start,)),
        ),
        3,
    )
    got = listing(Loaded(hooks, ("a notice",)), Path("/p"))
    assert got == [
        "hooks in effect in /p:",
        "SessionStart (1 hook)",
        "  [startup] echo hi",
        f"    timeout 60 s (the default) · onFailure deny · from {HOME}",
        "PreToolUse (2 hooks)",
        "  [Bash] ./guard.sh",
        f"    timeout 10 s · onFailure deny · from {HOME}",
        "  [every tool] ruff format . ⏎ ruff check .",
        f"    timeout 60 s (the default) · onFailure allow · env GITHUB_TOKEN · from {TEAM}",
        "PreCompact (1 hook)",
        "  [every trigger] echo hi",
        f"    timeout 60 s (the default) · onFailure deny · from {HOME}",
        "Stop (1 hook)",
        "  make test",
        f"    timeout 1.5 s · onFailure deny · from {HOME}",
        "Stop hooks keep a run going at most 3 times (hookLimits.maxStopBlocks)",
        "held back or left out:",
        "  a notice",
    ]
    as_json = listing_json(Loaded(hooks), Path("/p"))
    assert list(as_json["events"]) == ["SessionStart", "PreToolUse", "PreCompact", "Stop"]
    assert as_json["maxStopBlocks"] == 3 and as_json["notices"] == []


def test_nothing_in_effect_is_one_line_saying_where_hooks_go_then_the_notices() -> None:
    assert listing(Loaded(Hooks()), Path("/p")) == [
        "no hooks are in effect in /p: they go in ~/.eukhe/settings.json ($EUKHE_HOME) "
        "or a trusted project's .claude/settings.json (see docs/hooks.md)"
    ]
    got = listing(Loaded(Hooks(), ("held: 2 hooks",)), Path("/p"))
    assert got[1:] == ["held back or left out:", "  held: 2 hooks"]


def ran(status: int | None, *, timed_out: bool = False, aborted: bool = False, stderr: str = "") -> rule.Ran:
    proc = rule.Proc(0, 1_000, rule.Phase.GONE if status is None else rule.Phase.ENDED, 0, timed_out, aborted)
    return rule.Ran("./h.sh", proc, status, stderr)


def test_how_a_hook_ended_is_said_in_words() -> None:
    assert ended(ran(0)) == "exit 0"
    assert ended(ran(2)) == "exit 2 (a block)"
    assert ended(ran(-9)) == "killed by signal 9 (SIGKILL)"
    assert ended(ran(-15, timed_out=True)) == "timed out after 1 s: ended by its SIGTERM"
    assert ended(ran(None, timed_out=True)) == "timed out after 1 s: SIGTERM, then SIGKILL 2 s later"
    assert ended(ran(None, aborted=True)).startswith("cancelled (Ctrl-C)")


def test_a_test_run_shows_each_hook_then_the_verdict_and_whether_all_ran_clean() -> None:
    h = Hook("./h.sh", 1_000, False, (), HOME)
    runs = (HookRun(h, ran(2, stderr="no"), 0.01), HookRun(h, ran(None, timed_out=True), 3.0))
    got = EventRun(rule.combine([rule.verdict(PRE, r.ran) for r in runs]), runs)
    failure = "PreToolUse hook `./h.sh` timed out after 1 s"
    assert ran_lines(PRE, got) == [
        "`./h.sh`: exit 2 (a block), in 0.01 s",
        "`./h.sh`: timed out after 1 s: SIGTERM, then SIGKILL 2 s later, in 3 s",
        f"  failed: {failure}",
        "verdict: deny",
        "  reason: no",
        f"  reason: denied: the guard failed ({failure})",
    ]
    assert not clean(PRE, got) and clean(PRE, EventRun(got.verdict, runs[:1]))


def test_a_tool_is_named_either_way_and_its_sample_is_in_claude_codes_names() -> None:
    assert [payload.eukhe_name(t) for t in ("Bash", "bash", "WebFetch", "task", "mcp__g__x")] == [
        "bash",
        "bash",
        "web_fetch",
        "spawn",
        "mcp__g__x",
    ]
    cwd = Path("/p")
    edit = payload.sample(rule.Event.POST_TOOL_USE, "edit", None, cwd)
    assert edit["tool_name"] == "Edit" and edit["tool_response"]["newString"] == "hello, world"
    assert edit["tool_response"]["structuredPatch"][0]["lines"] == ["-hello", "+hello, world"]
    assert edit["tool_input"] == {
        "path": "hello.txt",
        "old_text": "hello",
        "new_text": "hello, world",
        "file_path": "/p/hello.txt",
        "old_string": "hello",
        "new_string": "hello, world",
    }
    stop = payload.sample(STOP, None, None, cwd)
    assert stop["stop_hook_active"] is False and stop["hook_event_name"] == "Stop"
    assert stop["session_id"] == "test" and stop["cwd"] == "/p"
    prompt = payload.sample(rule.Event.USER_PROMPT_SUBMIT, None, None, cwd)
    assert isinstance(prompt["prompt"], str) and "tool_name" not in prompt
