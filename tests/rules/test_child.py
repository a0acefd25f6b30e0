"""The watch's pause and stall budget, and the report rule, as numbers a user reads."""

from __future__ import annotations

import pytest

from eukhe.rules import child
from eukhe.rules.child import Fate, Move, Poll, Reading, Verdict


def test_the_pause_doubles_per_failed_poll_from_2_s_to_32_s() -> None:
    cfg = child.limits(0)
    w = child.full(cfg)
    pauses = [child.pause(cfg, w)]
    for _ in range(cfg.polls - 1):
        w = child.look(cfg, w, Poll(Reading.FAILED, delay=pauses[-1])).w
        pauses.append(child.pause(cfg, w))
    assert pauses == [2_000, 4_000, 8_000, 16_000, 32_000]
    assert sum(pauses[1:]) == 60_000  # about a minute of failed polls before unreachable


@pytest.mark.parametrize("setting", [0, -5])
def test_an_unset_or_zero_stall_budget_is_the_default(setting: int) -> None:
    assert child.limits(setting).stall == child.STALL_MS == 600_000
    assert child.limits(1234).stall == 1234


def test_the_fifth_failed_poll_in_a_row_is_unreachable_and_a_reading_between_resets_it() -> None:
    cfg = child.limits(0)
    w = child.full(cfg)
    verdicts = []
    for i in range(9):
        p = Poll(Reading.TOKEN, 0, 1) if i == 3 else Poll(Reading.FAILED, delay=1)
        seen = child.look(cfg, w, p)
        verdicts.append(seen.verdict)
        w = seen.w
    assert verdicts[:8] == [Verdict.WATCH] * 8 and verdicts[8] is Verdict.UNREACHABLE


def test_the_report_rule() -> None:
    assert child.move(Fate.NONE, True) is Move.SUBMIT
    assert child.move(Fate.NONE, False) is Move.WAIT  # a closed parent admits nothing
    assert child.move(Fate.QUEUED, True) is Move.WAIT
    assert child.move(Fate.WITHDRAWN, True) is Move.SUBMIT
    assert child.move(Fate.PLACED, False) is Move.END
