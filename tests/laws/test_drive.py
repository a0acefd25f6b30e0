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
    "the agent holds its answer while subagents work": "drive_answer_not_held",
    "the idle agent stops watching its subagents": "drive_idle_watch",
    "every face watches its subagents while idle": "drive_idle_watch",
    "an idle look finds a report and runs nothing": "drive_idle_watch",
    "Ctrl-C's queued messages not given back": "drive_cancel_withdraws",
    "every answer gives the queued messages back": "drive_cancel_withdraws",
    "what is typed after Ctrl-C steers the stopped run": "drive_kept_after_cancel",
    "what is typed after Ctrl-C is forgotten": "drive_kept_after_cancel",
    "what is typed after Ctrl-C runs beside the stopped run": "drive_requests_none_lost",
}


def test_the_laws_by_name() -> None:
    assert areas.AREAS["drive"] is laws.AREA
    assert [law.name for law in laws.AREA.laws] == [
        "drive_session_end_once",
        "drive_cancel_within_grace",
        "drive_requests_none_lost",
        "drive_each_run_said_once",
        "drive_answer_not_held",
        "drive_idle_watch",
        "drive_cancel_withdraws",
        "drive_kept_after_cancel",
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


def test_the_agent_answers_at_once_watches_its_subagent_and_runs_its_report() -> None:
    cfg = laws.DCfg(laws.Which.AGENT, poll=500)
    s = walk(
        cfg,
        laws.DIn(Kind.TICK, 0),  # it opens: a look at what a closed terminal left
        laws.DIn(Kind.CHILDREN, 1),  # nothing
        laws.DIn(Kind.PROMPT, 10),
        laws.DIn(Kind.RUN_ENDED, 20, outcome=0, live=True),  # answered at once, its subagent at work
        laws.DIn(Kind.TICK, 520),  # idle, a poll on: it looks
        laws.DIn(Kind.CHILDREN, 530, live=False, waiting=True),  # the report: the next work
        laws.DIn(Kind.RUN_ENDED, 540, outcome=0),
        laws.DIn(Kind.CLOSED, 550),
    )
    assert (s.runs, s.says, s.responds, s.watches, s.ends) == (2, 2, 2, 2, 1)


def test_after_ctrl_c_the_agent_gives_back_what_was_queued_and_runs_what_was_typed() -> None:
    cfg = laws.DCfg(laws.Which.AGENT)
    s = walk(
        cfg,
        laws.DIn(Kind.PROMPT, 0),
        laws.DIn(Kind.PROMPT, 10),  # a steer: queued
        laws.DIn(Kind.CANCEL, 20),  # Ctrl-C
        laws.DIn(Kind.PROMPT, 30),  # typed while the run ends: kept
        laws.DIn(Kind.RUN_ENDED, 40, outcome=1, waiting=True),  # aborted: the steer given back
    )
    assert (s.queues, s.holds, s.withdrawals, s.runs, s.responds) == (1, 1, 1, 2, 1)
    assert s.running and s.inbox == 0 and s.kept == 0
