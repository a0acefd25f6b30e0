"""The laws of hooks (issue 42) are there by the issue's names, and each kills the breaks
meant for it."""

from __future__ import annotations

from eukhe.laws import areas
from eukhe.laws import hook as laws


def test_the_issue_s_laws_by_name() -> None:
    assert areas.AREAS["hook"] is laws.AREA
    assert [law.name for law in laws.AREA.laws] == [
        "hook_ends",
        "hook_failure_shown",
        "hook_guard_fails_closed",
        "hook_guard_ask_asks",
        "stop_hook_bounded",
        "hook_fires_once",
        "hook_call_end_fired",
        "hook_mode_said",
    ]


def test_every_break_is_meant_for_a_law_and_each_law_has_two() -> None:
    """`eukhe laws` kills each break by the law `MEANT` names (`engine.check_mutant`), once a
    run; here that the aim covers every break, at least two a law."""
    assert laws.AREA.meant is laws.MEANT
    assert set(laws.MEANT) == {m.name for m in laws.AREA.mutants}
    assert laws.MEANT["fire always RUN (a replay runs the hook again)"] == "hook_fires_once"
    assert laws.MEANT["a guard failure that passes"] == "hook_guard_fails_closed"
    by_law = {law.name: sum(1 for k in laws.MEANT.values() if k == law.name) for law in laws.AREA.laws}
    assert min(by_law.values()) >= 2, by_law


def test_a_crash_between_the_answer_and_its_record_runs_the_hook_again_and_only_then() -> None:
    cfg = laws.HCfg(laws.Track.FIRE, steps=1, crashes=1)
    s = laws.start(laws.MODEL, cfg)
    go, crash = laws.FIn(laws.Go.GO), laws.FIn(laws.Go.CRASH)
    for x in (go, crash, go, go):  # ran, crashed before the record, replayed: ran again, recorded
        s = laws.nxt(laws.MODEL, cfg, s, x)
    assert isinstance(s, laws.FState)
    assert s.runs == (2,) and s.window == (1,) and s.records == s.used == (1,)
    cfg = laws.HCfg(laws.Track.FIRE, steps=1, crashes=1)
    s = laws.start(laws.MODEL, cfg)
    for x in (go, go, crash, go):  # ran, recorded, crashed, replayed: read the record
        s = laws.nxt(laws.MODEL, cfg, s, x)
    assert isinstance(s, laws.FState)
    assert s.runs == (1,) and s.records == s.used == (0,)
