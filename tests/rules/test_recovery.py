"""The H4.8 model: caps with the spec's values, and each recovery played out."""

from __future__ import annotations

from eukhe.rules import recovery, run
from eukhe.rules.recovery import CAPS, Act, Cause, Out, Reply


def play(*replies: Reply) -> list[Act]:
    r = recovery.START
    acts = []
    for x in replies:
        t = recovery.step(CAPS, r, x)
        acts.append(t.act)
        r = t.rec
    return acts


def test_caps_have_the_spec_values() -> None:
    assert (recovery.LENGTH_NOTES, recovery.LEAK_NOTES, recovery.REDIRECT_NOTES) == (3, 2, 2)
    assert recovery.REPEAT_CALLS == 5 and recovery.ARGUMENTS_SHOWN == 400
    assert CAPS == recovery.RCfg(3, 2, 2, 5)


def test_length_stops_while_reasoning_fail_the_run_after_three_length_notes() -> None:
    acts = play(*[Reply(Out.LENGTH)] * 4)
    assert acts == [Act.REDO, Act.REDO, Act.REDO, Act.QUIT]


def test_a_broken_leaked_tool_call_is_noted_and_then_stands_as_text_after_two_notes() -> None:
    assert play(*[Reply(Out.LEAK)] * 3) == [Act.REDO, Act.REDO, Act.STAND]


def test_the_same_call_with_the_same_results_is_redirected_on_the_fifth_round_and_then_fails() -> None:
    rounds = [Reply(Out.CALLS, like=True), Reply(Out.RESULTS, like=True)] * 4
    acts = play(Reply(Out.CALLS), Reply(Out.RESULTS), *rounds[2:], *[Reply(Out.CALLS, like=True)] * 3)
    execs = [a for a in acts if a is Act.EXEC]
    assert len(execs) == 4
    assert acts[-3:] == [Act.REDO, Act.REDO, Act.QUIT]


def test_the_same_calls_whose_results_change_keep_running() -> None:
    replies = [Reply(Out.CALLS)] + [Reply(Out.RESULTS), Reply(Out.CALLS, like=True)] * 20
    assert all(a in (Act.EXEC, Act.PASS) for a in play(*replies))


def test_a_user_message_ends_the_row() -> None:
    r = recovery.START
    for x in [Reply(Out.CALLS)] + [Reply(Out.CALLS, like=True)] * 3:
        r = recovery.step(CAPS, r, x).rec
    assert r.same == 4
    r = recovery.step(CAPS, r, Reply(Out.USER)).rec
    t = recovery.step(CAPS, r, Reply(Out.CALLS, like=True))
    assert t.act is Act.EXEC and t.rec.same == 1


def test_another_cause_resets_the_row_and_a_transient_retry_keeps_it() -> None:
    r = recovery.step(CAPS, recovery.START, Reply(Out.LENGTH)).rec
    assert (r.cause, r.row) == (Cause.LENGTH, 1)
    assert recovery.step(CAPS, r, Reply(Out.OTHER)).rec == r
    assert recovery.step(CAPS, r, Reply(Out.NOTED)).rec.row == 0


def test_acts_become_the_replies_the_run_reads() -> None:
    passed = run.Input(run.Kind.DEFERRED)
    assert recovery.act_reply(Act.PASS, passed) is passed
    assert recovery.act_reply(Act.EXEC, passed).kind is run.Kind.CALLS
    assert recovery.act_reply(Act.STAND, passed).kind is run.Kind.ANSWER
    redo = recovery.act_reply(Act.REDO, passed)
    assert redo.kind is run.Kind.ERROR and redo.noted
    quit_ = recovery.act_reply(Act.QUIT, passed)
    assert quit_.kind is run.Kind.ERROR and not quit_.noted and not quit_.retryable
