"""The laws of hooks (issue 42) are there by the issue's names, and each kills the breaks
meant for it."""

from __future__ import annotations

from eukhe.laws import areas, engine
from eukhe.laws import hook as laws

MEANT = {
    "no SIGKILL after SIGTERM (waits for ever)": "hook_ends",
    "a timeout unseen without a tick (woken only at the deadline)": "hook_ends",
    "SIGTERM before the timeout": "hook_ends",
    "an abort that waits for the grace": "hook_ends",
    "a failure line dropped for exit 127": "hook_failure_shown",
    "a failure shown without its stderr": "hook_failure_shown",
    "a failure shown twice by combine": "hook_failure_shown",
    "a guard failure that passes": "hook_guard_fails_closed",
    "onFailure allow ignored (a failing guard always denies)": "hook_guard_fails_closed",
    "an ask beating a deny in combine": "hook_guard_fails_closed",
    "a stop cap off by one (late)": "stop_hook_bounded",
    "stop blocks not counted": "stop_hook_bounded",
    "the stop cap ignored": "stop_hook_bounded",
    "fire always RUN (a replay runs the hook again)": "hook_fires_once",
    "fire never RUN (an event that never fires)": "hook_fires_once",
}


def test_the_issue_s_laws_by_name() -> None:
    assert areas.AREAS["hook"] is laws.AREA
    assert [law.name for law in laws.AREA.laws] == [
        "hook_ends",
        "hook_failure_shown",
        "hook_guard_fails_closed",
        "hook_guard_ask_asks",
        "stop_hook_bounded",
        "hook_fires_once",
    ]


def test_every_law_passes_and_every_break_is_killed_by_its_law() -> None:
    report = engine.check([laws.AREA], proofs=False, examples=40)
    assert report.passed, [(n, v.failures) for n, v in report.laws if v.failures]
    killed = {m.name: m.killed_by for m in report.mutants}
    assert all(killed.values())
    for name, law in MEANT.items():
        assert killed[name] == law, name
    by_law = {law.name: sum(1 for k in killed.values() if k == law.name) for law in laws.AREA.laws}
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
