"""The laws of the session loop every face shares (issue 52) are there by their names, each
kills the breaks meant for it, and a session is walked by hand."""

from __future__ import annotations

from eukhe.laws import areas
from eukhe.laws import drive as laws
from eukhe.rules.drive import Kind


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


def test_every_break_is_meant_for_one_of_the_laws() -> None:
    """`eukhe laws` kills each break by the law `MEANT` names (`engine.check_mutant`), once
    a run; here that the aim covers every break, each law has one, and names real laws."""
    assert laws.AREA.meant is laws.MEANT
    assert set(laws.MEANT) == {m.name for m in laws.AREA.mutants}
    assert set(laws.MEANT.values()) == {law.name for law in laws.AREA.laws}
