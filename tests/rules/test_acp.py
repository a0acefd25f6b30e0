"""The model of the editor face (issue 43): a prompt answered once, each permission request
ended once, the setup requests bounded."""

from __future__ import annotations

import dataclasses

import pytest

from eukhe.rules import acp
from eukhe.rules import drive as turn
from eukhe.rules.acp import SETUP_MS, Setup
from eukhe.rules.drive import (
    CANCEL_GRACE_MS,
    ROUNDS_CAP,
    Action,
    AskEnd,
    Do,
    Input,
    Kind,
    Reason,
)

ANSWERED = Action(Do.RESPOND, Reason.END_TURN)
CANCELLED = Action(Do.RESPOND, Reason.CANCELLED)


def end_ask(ask: int, how: AskEnd) -> Action:
    return Action(Do.END_ASK, ask=ask, how=how)


def ask(ask: int, now: int, deadline: int) -> Input:
    return Input(Kind.ASK, now, ask=ask, deadline=deadline)


# ---------------------------------------------------------------- the answer


@pytest.mark.parametrize(
    ("outcome", "code", "cut", "reason"),
    [
        ("answered", None, False, Reason.END_TURN),
        ("answered", None, True, Reason.MAX_TOKENS),
        ("aborted", None, False, Reason.CANCELLED),
        ("failed", ROUNDS_CAP, False, Reason.MAX_TURN_REQUESTS),
        ("failed", "model_error", False, Reason.FAILED),
        ("failed", None, True, Reason.FAILED),
    ],
)
def test_a_run_s_end_is_answered_with_the_protocol_s_stop_reason(
    outcome: str, code: str | None, cut: bool, reason: Reason
) -> None:
    assert turn.answer_of(outcome, code, cut) is reason


def test_a_run_that_ends_answers_the_prompt_once() -> None:
    t, out = turn.step(turn.begin(0), Input(Kind.RUN_ENDED, 50, Reason.END_TURN))
    assert out == [ANSWERED] and t.answered is Reason.END_TURN
    assert turn.step(t, Input(Kind.RUN_ENDED, 60, Reason.FAILED)) == (t, [])
    assert turn.step(t, Input(Kind.CANCEL, 70)) == (t, [])
    assert turn.wake(t) is None


# ---------------------------------------------------------------- the cancel


def test_a_cancel_aborts_the_run_ends_its_asks_and_the_run_s_end_answers_cancelled() -> None:
    t, _ = turn.step(turn.begin(0), ask(1, 10, 60_000))
    t, out = turn.step(t, Input(Kind.CANCEL, 20))
    assert out == [Action(Do.ABORT), end_ask(1, AskEnd.CANCELLED)]
    assert turn.step(t, Input(Kind.CANCEL, 30)) == (t, [])  # a second cancel: nothing more
    t, out = turn.step(t, Input(Kind.RUN_ENDED, 40, Reason.END_TURN))  # it answered all the same
    assert out == [CANCELLED]


def test_a_run_that_ignores_the_cancel_is_answered_at_the_grace_and_its_end_later_answers_nothing() -> None:
    t, _ = turn.step(turn.begin(0), Input(Kind.CANCEL, 100))
    assert turn.wake(t) == 100 + CANCEL_GRACE_MS
    assert turn.step(t, Input(Kind.TICK, 100 + CANCEL_GRACE_MS - 1)) == (t, [])
    t, out = turn.step(t, Input(Kind.TICK, 100 + CANCEL_GRACE_MS))
    assert out == [CANCELLED] and turn.wake(t) is None and t.outlived
    ended = dataclasses.replace(t, outlived=False)  # nothing else changes: its run is over
    assert turn.step(t, Input(Kind.RUN_ENDED, 9_000, Reason.END_TURN)) == (ended, [])


def test_an_ask_after_the_cancel_or_the_answer_ends_at_once() -> None:
    t, _ = turn.step(turn.begin(0), Input(Kind.CANCEL, 5))
    assert turn.step(t, ask(2, 6, 60_000)) == (t, [end_ask(2, AskEnd.CANCELLED)])
    t, _ = turn.step(t, Input(Kind.TICK, 5 + CANCEL_GRACE_MS))
    assert turn.step(t, ask(3, 6 + CANCEL_GRACE_MS, 60_000)) == (t, [end_ask(3, AskEnd.CANCELLED)])


# ---------------------------------------------------------------- asks


def test_an_ask_nobody_answers_ends_at_its_deadline_and_a_late_answer_does_nothing() -> None:
    t, out = turn.step(turn.begin(0), ask(1, 10, 1_000))
    assert out == [] and turn.wake(t) == 1_000
    assert turn.step(t, Input(Kind.TICK, 999)) == (t, [])
    t, out = turn.step(t, Input(Kind.TICK, 1_000))
    assert out == [end_ask(1, AskEnd.DEADLINE)] and turn.wake(t) is None
    assert turn.step(t, Input(Kind.CHOSEN, 1_200, ask=1)) == (t, [])


def test_the_editor_s_choice_ends_its_ask_once_and_a_stray_answer_changes_nothing() -> None:
    t, _ = turn.step(turn.begin(0), ask(1, 10, 1_000))
    t, _ = turn.step(t, ask(2, 20, 500))
    assert turn.wake(t) == 500  # the earliest pending deadline
    t, out = turn.step(t, Input(Kind.CHOSEN, 30, ask=2))
    assert out == [end_ask(2, AskEnd.CHOSEN)] and turn.wake(t) == 1_000
    assert turn.step(t, Input(Kind.CHOSEN, 40, ask=2)) == (t, [])
    assert turn.step(t, Input(Kind.CHOSEN, 40, ask=7)) == (t, [])


def test_the_run_s_end_ends_its_pending_asks() -> None:
    t, _ = turn.step(turn.begin(0), ask(1, 10, 1_000))
    t, out = turn.step(t, Input(Kind.RUN_ENDED, 20, Reason.FAILED))
    assert out == [end_ask(1, AskEnd.CANCELLED), Action(Do.RESPOND, Reason.FAILED)]


# ---------------------------------------------------------------- the close


def test_the_close_ends_the_asks_and_leaves_the_run_to_the_owner_without_abort_or_answer() -> None:
    t, _ = turn.step(turn.begin(0), ask(1, 10, 1_000))
    t, out = turn.step(t, Input(Kind.CLOSED, 20))
    assert out == [end_ask(1, AskEnd.CANCELLED), Action(Do.LEAVE)]
    assert turn.wake(t) is None
    assert turn.step(t, Input(Kind.RUN_ENDED, 30, Reason.END_TURN)) == (t, [])
    assert turn.step(t, Input(Kind.TICK, 10**6)) == (t, [])


def test_an_ask_the_run_sends_after_the_close_ends_at_once() -> None:
    t, _ = turn.step(turn.begin(0), Input(Kind.CLOSED, 20))
    assert turn.step(t, ask(1, 30, 1_000)) == (t, [end_ask(1, AskEnd.CANCELLED)])


def test_the_close_of_an_answered_turn_leaves_nothing() -> None:
    t, _ = turn.step(turn.begin(0), Input(Kind.RUN_ENDED, 10, Reason.END_TURN))
    t, out = turn.step(t, Input(Kind.CLOSED, 20))
    assert out == [Action(Do.END)] and t.closed  # no run left: the session ends, its SessionEnd once


# ---------------------------------------------------------------- setup


def test_a_setup_request_is_answered_by_its_work_or_fails_at_the_bound_once() -> None:
    s = Setup(100)
    assert acp.setup_step(s, False, 100 + SETUP_MS - 1) == (s, None)
    done, act = acp.setup_step(s, True, 200)
    assert act is Do.RESPOND and done == Setup(100, answered=True)
    failed, act = acp.setup_step(s, False, 100 + SETUP_MS)
    assert act is Do.RESPOND and failed == Setup(100, answered=True, failed=True)
    assert acp.setup_step(failed, True, 100 + SETUP_MS + 5) == (failed, None)
    assert acp.setup_step(done, False, 10**9) == (done, None)
