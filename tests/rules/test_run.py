"""The H4 model: constants, limits, and scripted runs read as a user would."""

from __future__ import annotations

from eukhe.rules import run
from eukhe.rules.run import Cfg, End, Input, Kind, Phase


def feed(cfg: Cfg, *inputs: Input) -> run.Run:
    s = run.start(cfg)
    for x in inputs:
        assert run.accepts(s.phase, x.kind), f"{x} in {s.phase}"
        s = run.step(cfg, s, x)
    return s


PREPARED = Input(Kind.PREPARED)
CALLS = Input(Kind.CALLS)
ROUND = Input(Kind.ROUND_END)
NOTED = Input(Kind.ERROR, retryable=True, noted=True)
TRANSIENT = Input(Kind.ERROR, retryable=True)


def test_constants_have_the_spec_values() -> None:
    assert run.MAX_NOTES == 8
    assert run.DEFAULT_MAX_TOOL_ROUNDS == 250
    assert run.round_cap(0) == 250
    assert run.round_cap(-3) == 250
    assert run.round_cap(7) == 7


def test_limits_give_notes_even_when_the_retry_policy_is_off() -> None:
    cfg = run.limits(max_tool_rounds=0, max_retries=3, retry_enabled=False, polls=4)
    assert cfg == Cfg(cap=250, retries=0, notes=8, polls=4)
    assert run.limits(5, 3, True, 0) == Cfg(5, 3, 8, 0)


def test_bound_is_the_spec_formula() -> None:
    assert run.bound(Cfg(0, 0, 0, 0)) == 1 * (2 + 2 * 2)
    assert run.bound(Cfg(250, 2, 8, 3)) == 250 * (2 + 12 * 5)
    for cfg in (Cfg(0, 0, 0, 0), Cfg(3, 1, 2, 2), Cfg(250, 2, 8, 3)):
        assert run.measure(cfg, run.start(cfg)) == run.bound(cfg)


def test_ended_reply_is_calls_then_text_then_no_answer() -> None:
    assert run.ended_reply(has_calls=True, has_text=True) is Kind.CALLS
    assert run.ended_reply(has_calls=True, has_text=False) is Kind.CALLS
    assert run.ended_reply(has_calls=False, has_text=True) is Kind.ANSWER
    assert run.ended_reply(has_calls=False, has_text=False) is Kind.NO_ANSWER


def test_a_run_that_keeps_calling_tools_fails_at_the_round_cap() -> None:
    cfg = Cfg(cap=3, retries=0, notes=0, polls=0)
    s = feed(cfg, *([PREPARED, CALLS, ROUND] * 2))
    assert s.live and s.rounds == 1
    s = feed(cfg, *([PREPARED, CALLS, ROUND] * 3))
    assert s.end is End.RUN_LIMIT
    assert run.ERROR_CODES[s.end] == "run_limit"


def test_every_noted_retry_names_a_new_attempt_until_the_notes_run_out() -> None:
    cfg = Cfg(cap=1, retries=2, notes=run.MAX_NOTES, polls=0)
    s = run.start(cfg)
    sent = []
    for _ in range(run.MAX_NOTES):
        s = run.step(cfg, s, PREPARED)
        sent.append(s.request)
        s = run.step(cfg, s, Input(Kind.NO_ANSWER))
        assert s.live and s.retries == 2
    assert len(set(sent)) == run.MAX_NOTES
    assert sent[0] == (0, 0) and sent[-1] == (0, run.MAX_NOTES - 1)
    s = run.step(cfg, run.step(cfg, s, PREPARED), Input(Kind.NO_ANSWER))
    assert s.end is End.MODEL_ERROR


def test_a_transient_error_resends_the_same_request_and_spends_a_retry() -> None:
    cfg = Cfg(cap=1, retries=1, notes=2, polls=0)
    s = feed(cfg, PREPARED, NOTED, PREPARED)
    assert s.request == (0, 1)
    s = run.step(cfg, s, TRANSIENT)
    assert (s.retries, s.notes, s.request) == (0, 1, (0, 1))
    s = feed(cfg, PREPARED, TRANSIENT, PREPARED, TRANSIENT)
    assert s.end is End.MODEL_ERROR


def test_a_deferred_answer_fails_after_polls_plus_one_deferred_replies() -> None:
    cfg = Cfg(cap=1, retries=0, notes=0, polls=2)
    deferred = Input(Kind.DEFERRED)
    s = feed(cfg, PREPARED, deferred, deferred)
    assert s.phase is Phase.POLL and s.live
    assert feed(cfg, PREPARED, deferred, deferred, deferred).end is End.NOT_READY
    assert feed(cfg, PREPARED, deferred, deferred, Input(Kind.ANSWER)).end is End.ANSWERED


def test_a_failed_poll_polls_the_same_job_again_and_past_the_deadline_fails() -> None:
    cfg = Cfg(cap=1, retries=2, notes=0, polls=2)
    s = feed(cfg, PREPARED, Input(Kind.DEFERRED), Input(Kind.POLL_FAILED, retryable=True))
    assert s.phase is Phase.POLL and s.failures == 1 and s.retries == 1
    s = run.step(cfg, s, Input(Kind.DEFERRED))
    assert s.failures == 0
    assert run.step(cfg, s, Input(Kind.POLL_FAILED, retryable=True, late=True)).end is End.NOT_READY


def test_an_abort_ends_a_run_in_every_phase() -> None:
    cfg = Cfg(cap=2, retries=0, notes=0, polls=1)
    for prefix in ([], [PREPARED], [PREPARED, Input(Kind.DEFERRED)], [PREPARED, CALLS]):
        assert feed(cfg, *prefix, run.ABORT).end is End.ABORTED


def test_a_hook_that_fails_ends_the_run_before_any_request() -> None:
    s = feed(Cfg(1, 3, 8, 0), Input(Kind.HOOK_FAILED))
    assert s.end is End.HOOK_FAILED


def test_an_overflow_compacts_once_and_keeps_the_note() -> None:
    cfg = Cfg(cap=1, retries=0, notes=1, polls=0)
    s = feed(cfg, PREPARED, NOTED, PREPARED, Input(Kind.OVERFLOW))
    assert s.phase is Phase.OVERFLOW
    s = run.step(cfg, s, Input(Kind.COMPACTED, entry=True))
    assert s.phase is Phase.CALL and s.request == (1, 1)
    assert run.step(cfg, s, Input(Kind.OVERFLOW)).end is End.COMPACTION_FAILED


def test_inputs_a_phase_does_not_take_change_nothing() -> None:
    cfg = Cfg(1, 0, 0, 0)
    s = run.start(cfg)
    assert run.step(cfg, s, Input(Kind.ANSWER)) == s


def test_a_control_stop_ends_the_run_uncounted_and_a_continuation_waits_for_the_cap() -> None:
    cfg = Cfg(cap=2, retries=0, notes=0, polls=0)
    assert feed(cfg, PREPARED, CALLS, Input(Kind.ROUND_END, stop=True)).end is End.STOPPED
    reset = Input(Kind.ROUND_END, reset=True)
    assert feed(cfg, PREPARED, CALLS, reset).end is End.CONTINUED
    # cap first: the last round's count fails the run even with a continuation queued
    assert feed(cfg, PREPARED, CALLS, ROUND, PREPARED, CALLS, reset).end is End.RUN_LIMIT
