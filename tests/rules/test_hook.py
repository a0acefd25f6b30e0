"""The model of the user's hooks (issue 42), in Claude Code's format: matchers, what a
hook's end means for its event, a hook's process over time, Stop blocks, and replays."""

from __future__ import annotations

import pytest

from eukhe.rules import hook
from eukhe.rules.hook import (
    BLOCKS,
    GRACE_MS,
    STDERR_SHOWN,
    TIMEOUT_MS,
    Action,
    Answer,
    Event,
    Fire,
    Input,
    Kind,
    Phase,
    Ran,
    StopNext,
    Verdict,
)

ENDED = hook.Proc(0, TIMEOUT_MS, Phase.ENDED, 40)
NOTHING = Answer()


def ran(status: int | None, stderr: str = "", answer: Answer | None = NOTHING, **kw: bool) -> Ran:
    return Ran("./check.sh", ENDED, status, stderr, answer, **kw)


# ---------------------------------------------------------------- matchers


def test_a_matcher_of_alternatives_takes_eukhe_s_tools_by_claude_s_names() -> None:
    assert hook.matches("Edit|Write", "edit") and hook.matches("Edit|Write", "write")
    assert not hook.matches("Edit|Write", "read")
    assert hook.claude_name("bash") == "Bash" and hook.claude_name("spawn") == "Task"
    assert hook.matches("Bash", "bash") and not hook.matches("bash", "bash")


def test_a_plain_name_takes_that_tool_only() -> None:
    assert hook.matches("Write", "write")
    assert not hook.matches("Edit", "multi_edit") and not hook.matches("Wri", "write")


def test_an_mcp_matcher_takes_every_tool_of_its_server() -> None:
    assert hook.matches("mcp__github__.*", "mcp__github__create_issue")
    assert not hook.matches("mcp__github__.*", "mcp__gitlab__create_issue")
    assert hook.claude_name("mcp__github__create_issue") == "mcp__github__create_issue"


def test_star_and_empty_matchers_take_every_tool() -> None:
    for tool in ("bash", "read", "mcp__x__y", "ipython"):
        assert hook.matches("*", tool) and hook.matches("", tool)


@pytest.mark.parametrize("matcher", ["(", "[a-", "a{4294967296}", "(?<=a+)b", "*Edit"])
def test_a_matcher_that_is_no_regular_expression_takes_none(matcher: str) -> None:
    assert not hook.matches(matcher, "edit")


# ---------------------------------------------------------------- verdicts


def test_exit_2_at_a_guard_denies_with_its_stderr_as_the_reason() -> None:
    v = hook.verdict(Event.PRE_TOOL_USE, ran(BLOCKS, "no rm -rf here\n"))
    assert v.kind is Kind.DENY and v.reason == "no rm -rf here" and not v.failures


def test_exit_2_at_stop_blocks_and_at_a_notification_is_only_shown() -> None:
    stop = hook.verdict(Event.STOP, ran(BLOCKS, "the tests fail"))
    assert stop.kind is Kind.BLOCK and stop.reason == "the tests fail"
    note = hook.verdict(Event.NOTIFICATION, ran(BLOCKS, "said so"))
    assert note == Verdict(messages=("said so",))


def test_exit_2_never_reads_its_stdout() -> None:
    v = hook.verdict(Event.POST_TOOL_USE, ran(BLOCKS, "look again", answer=None))
    assert v.kind is Kind.BLOCK and not v.failures


def test_a_permission_decision_of_deny_denies_with_its_reason() -> None:
    a = Answer(permission="deny", permission_reason="writes outside the project")
    v = hook.verdict(Event.PRE_TOOL_USE, ran(0, answer=a))
    assert v == Verdict(Kind.DENY, "writes outside the project")
    assert hook.verdict(Event.PERMISSION_REQUEST, ran(0, answer=Answer(permission="ask"))).kind is Kind.ASK
    assert hook.verdict(Event.PRE_TOOL_USE, ran(0, answer=Answer(permission="deny"))).reason


def test_a_permission_decision_decides_nothing_after_the_call() -> None:
    v = hook.verdict(Event.POST_TOOL_USE, ran(0, answer=Answer(permission="deny")))
    assert v.kind is Kind.PASS


def test_decision_block_at_stop_keeps_the_run_going_with_the_reason() -> None:
    v = hook.verdict(Event.STOP, ran(0, answer=Answer(decision="block", reason="run the tests first")))
    assert v.kind is Kind.BLOCK and v.reason == "run the tests first"
    assert hook.after_stop(0, 8, v) == (1, StopNext.GO_ON)


def test_continue_false_stops_with_its_reason_and_message() -> None:
    a = Answer(proceed=False, stop_reason="enough", system_message="the hook stopped the run")
    v = hook.verdict(Event.POST_TOOL_USE, ran(0, answer=a))
    assert v.stop and v.stop_reason == "enough" and v.messages == ("the hook stopped the run",)


def test_plain_stdout_is_context_at_user_prompt_submit_only() -> None:
    plain = ran(0, answer=Answer(plain="the branch is main"))
    assert hook.verdict(Event.USER_PROMPT_SUBMIT, plain).context == "the branch is main"
    assert hook.verdict(Event.SESSION_START, plain).context == "the branch is main"
    assert hook.verdict(Event.POST_TOOL_USE, plain) == Verdict()


def test_a_crash_is_shown_with_its_status_and_the_tail_of_its_stderr() -> None:
    v = hook.verdict(Event.POST_TOOL_USE, ran(127, "sh: ./check.sh: not found\n"))
    assert v.kind is Kind.PASS
    assert v.failures == ("PostToolUse hook `./check.sh` exited 127: sh: ./check.sh: not found",)
    long = "".join(f"line {i}\n" for i in range(500))
    (line,) = hook.verdict(Event.STOP, ran(1, long)).failures
    shown = line.split(": ", 1)[1]
    assert len(shown) == STDERR_SHOWN and shown.startswith("…") and shown.endswith("line 499")


def test_bad_json_and_a_signal_are_failures_and_exit_0_is_none() -> None:
    assert hook.failure_line(Event.STOP, ran(0, answer=None)) == (
        "Stop hook `./check.sh` answered with output that is no JSON object"
    )
    assert "killed by signal 9" in (hook.failure_line(Event.STOP, ran(-9)) or "")
    assert hook.failure_line(Event.STOP, ran(0)) is None
    assert hook.failure_line(Event.STOP, ran(BLOCKS, answer=None)) is None


def test_a_guard_that_fails_denies_with_the_cause_unless_it_opens_on_failure() -> None:
    v = hook.verdict(Event.PRE_TOOL_USE, ran(1, "boom"))
    assert v.kind is Kind.DENY and v.failures == ("PreToolUse hook `./check.sh` exited 1: boom",)
    assert v.failures[0] in v.reason
    opened = hook.verdict(Event.PRE_TOOL_USE, ran(1, "boom", open_on_failure=True))
    assert opened.kind is Kind.PASS and opened.failures == v.failures


def test_an_aborted_hook_says_nothing() -> None:
    gone = hook.Proc(0, 1000, Phase.GONE, 5, aborted=True)
    assert hook.verdict(Event.PRE_TOOL_USE, Ran("x", gone, None, "partial")) == Verdict()


def test_a_deny_wins_over_an_ask_and_an_allow_and_every_failure_is_kept_once() -> None:
    vs = [
        Verdict(Kind.ALLOW, "fine"),
        Verdict(Kind.DENY, "no", failures=("a failed",)),
        Verdict(Kind.ASK, "ask them", failures=("b failed",)),
    ]
    c = hook.combine(vs)
    assert c.kind is Kind.DENY and c.reason == "no" and c.failures == ("a failed", "b failed")
    assert hook.combine([]) == Verdict()


# ---------------------------------------------------------------- a hook's process


def test_a_hook_that_never_ends_gets_sigterm_at_its_timeout_and_sigkill_a_grace_later() -> None:
    p = hook.begin(100, None)
    assert p.timeout == TIMEOUT_MS and p.wake == 100 + TIMEOUT_MS
    p, act = hook.step(p, Input.TICK, 100 + TIMEOUT_MS - 1)
    assert act is Action.WAIT
    p, act = hook.step(p, Input.TICK, 100 + TIMEOUT_MS)
    assert act is Action.TERM and p.wake == hook.deadline(p) == 100 + TIMEOUT_MS + GRACE_MS
    p, act = hook.step(p, Input.TICK, hook.deadline(p))
    assert act is Action.KILL and p.settled and p.timed_out
    assert hook.step(p, Input.EXITED, hook.deadline(p) + 5) == (p, Action.DONE)
    assert "timed out after 60 s" in (hook.failure_line(Event.STOP, Ran("x", p, None)) or "")


def test_a_late_sigterm_still_ends_the_wait_at_the_deadline() -> None:
    p, act = hook.step(hook.begin(0, 1000), Input.TICK, 1500)
    assert act is Action.TERM and p.wake == 1000 + GRACE_MS


def test_the_abort_ends_the_wait_at_once() -> None:
    p, act = hook.step(hook.begin(0, 1000), Input.ABORT, 3)
    assert act is Action.KILL and p.settled and p.aborted


def test_an_exit_after_the_timeout_is_a_timeout() -> None:
    p, act = hook.step(hook.begin(0, 1000), Input.EXITED, 1000)
    assert act is Action.DONE and p.phase is Phase.ENDED and p.timed_out
    p, _ = hook.step(hook.begin(0, 1000), Input.EXITED, 999)
    assert not p.timed_out


# ---------------------------------------------------------------- stops and replays


def test_a_stop_hook_that_always_blocks_ends_the_run_failed_at_the_cap() -> None:
    always = Verdict(Kind.BLOCK, "keep going")
    blocks, seen = 0, []
    for _ in range(4):
        blocks, then = hook.after_stop(blocks, 2, always)
        seen.append(then)
    assert seen == [StopNext.GO_ON, StopNext.GO_ON, StopNext.FAIL, StopNext.FAIL] and blocks == 2
    assert hook.stop_hook_active(blocks) and not hook.stop_hook_active(0)
    assert hook.after_stop(1, 2, Verdict()) == (1, StopNext.END)
    assert hook.STOP_LIMIT == "stop_hook_limit"


def test_a_recorded_event_is_replayed_never_run_again() -> None:
    assert hook.fire(False) is Fire.RUN and hook.fire(True) is Fire.REPLAY


def test_a_permission_request_verdict_answers_the_ask_only_when_it_allows_or_denies() -> None:
    assert hook.answers_ask(hook.Verdict(hook.Kind.DENY, "no")) is hook.Kind.DENY
    assert hook.answers_ask(hook.Verdict(hook.Kind.ALLOW)) is hook.Kind.ALLOW
    for kind in (hook.Kind.ASK, hook.Kind.PASS, hook.Kind.BLOCK):
        assert hook.answers_ask(hook.Verdict(kind)) is None
