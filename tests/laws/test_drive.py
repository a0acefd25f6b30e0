"""The laws of the session loop every face shares (issue 52) are there by their names, each
kills the breaks meant for it, and a session is walked by hand."""

from __future__ import annotations

from eukhe.laws import areas, engine
from eukhe.laws import drive as laws
from eukhe.rules.drive import Kind

MEANT = {
    "FINISH fires SessionEnd again": "drive_session_end_once",
    "SessionEnd at the grace, its run still at work": "drive_session_end_once",
    "SessionEnd on a cut that leaves subagents at work": "drive_session_end_once",
    "no SessionEnd once the subagents are done": "drive_session_end_once",
    "FINISH with nothing at work ends nothing": "drive_session_end_once",
    "the close skips SessionEnd": "drive_session_end_once",
    "a cut leaves its subagents attached": "drive_session_end_once",
    "a request while a run works runs beside it": "drive_requests_none_lost",
    "a request while a work goes on is dropped": "drive_requests_none_lost",
    "the answer forgets what was queued meanwhile": "drive_requests_none_lost",
    "the last look finds a request and ends": "drive_requests_none_lost",
    "a request after a cancel waits for ever": "drive_requests_none_lost",
    "the last run not said before the next": "drive_each_run_said_once",
    "the last run said again before the next work": "drive_each_run_said_once",
    "the grace a second late": "drive_cancel_within_grace",
    "wake forgets the cancel's grace": "drive_cancel_within_grace",
    "a held work's cancel waits for the grace": "drive_cancel_within_grace",
}


def test_the_laws_by_name() -> None:
    assert areas.AREAS["drive"] is laws.AREA
    assert [law.name for law in laws.AREA.laws] == [
        "drive_session_end_once",
        "drive_cancel_within_grace",
        "drive_requests_none_lost",
        "drive_each_run_said_once",
    ]


def test_every_law_passes_and_every_break_is_killed_by_its_law() -> None:
    report = engine.check([laws.AREA], proofs=False, examples=40)
    assert report.passed, [(n, v.failures) for n, v in report.laws if v.failures]
    killed = {m.name: m.killed_by for m in report.mutants}
    assert killed == MEANT


def walk(cfg: laws.DCfg, *xs: laws.DIn) -> laws.DState:
    s = laws.start(laws.MODEL, cfg)
    for x in xs:
        t = laws.nxt(laws.MODEL, cfg, s, x)
        for law in laws.LAWS:
            assert law.history is not None and law.history(laws.MODEL, cfg, None, s, x, t), (law.name, x)
        s = t
    return s


def test_a_follow_up_queued_while_a_run_works_is_the_next_run_and_the_session_ends_once() -> None:
    cfg = laws.DCfg(laws.Which.CONTROL)
    s = walk(
        cfg,
        laws.DIn(Kind.PROMPT, 0),
        laws.DIn(Kind.PROMPT, 10),  # while the run works: queued
        laws.DIn(Kind.RUN_ENDED, 20, outcome=0, waiting=True),  # its end finds it: the next run
        laws.DIn(Kind.FINISH, 30),  # standard input closes: the session ends with its work
        laws.DIn(Kind.RUN_ENDED, 40, outcome=0),
    )
    assert (s.runs, s.queues, s.says, s.ends, s.responds) == (2, 1, 2, 1, 1)
    assert s.inbox == 0 and not s.left


def test_the_command_line_cut_while_its_subagent_works_detaches_it_and_ends_nothing() -> None:
    cfg = laws.DCfg(laws.Which.COMMAND)
    s = walk(
        cfg,
        laws.DIn(Kind.PROMPT, 0),
        laws.DIn(Kind.RUN_ENDED, 20, outcome=0, live=True),  # held for its subagent
        laws.DIn(Kind.CANCEL, 30),  # Ctrl-C: answered at once, its subagent left at work
    )
    assert (s.runs, s.says, s.ends, s.detaches, s.responds) == (1, 1, 0, 1, 1) and s.left
