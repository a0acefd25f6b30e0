"""The laws of the editor face (issue 43) are there by the issue's names, and each kills the
breaks meant for it; a turn held for its subagents is walked by hand."""

from __future__ import annotations

from dataclasses import replace

from eukhe.laws import acp as laws
from eukhe.laws import areas, engine
from eukhe.rules import drive as acp
from eukhe.rules.drive import CANCEL_GRACE_MS, AskEnd, Kind, Reason


def test_the_issue_s_laws_by_name() -> None:
    assert areas.AREAS["acp"] is laws.AREA
    assert [law.name for law in laws.AREA.laws] == [
        "acp_prompt_answered_once",
        "acp_ask_ends",
        "acp_held_for_subagents",
        "acp_setup_bounded",
    ]


def test_the_setup_law_is_proven() -> None:
    verdicts = {law.name: engine.Verdict(law.name, law.rule) for law in laws.AREA.laws}
    engine.collect(engine.prove(laws.AREA, verdicts, timeout=60), verdicts)
    v = verdicts["acp_setup_bounded"]
    assert v.methods == ["proven"] and not v.failures and v.cases["proven"] == 3, v


def walk(cfg: laws.ACfg, *xs: laws.TIn) -> laws.TState:
    s = laws.start(laws.MODEL, cfg)
    for x in xs:
        t = laws.nxt(laws.MODEL, cfg, s, x)
        for law in laws.LAWS[:3]:
            assert law.history is not None and law.history(laws.MODEL, cfg, None, s, x, t), (law.name, x)
        s = t
    assert isinstance(s, laws.TState)
    return s


def test_a_cancelled_run_that_never_stops_is_answered_at_the_grace_and_only_then() -> None:
    cfg = laws.ACfg(laws.Track.TURN, window=5_000, asks=2, jump=10_000)
    s = walk(
        cfg,
        laws.TIn(Kind.ASK, 0, ask=1),
        laws.TIn(Kind.CANCEL, 10),
        laws.TIn(Kind.ASK, 20, ask=2),  # the aborting run asks again: ended at once
        laws.TIn(Kind.TICK, 10 + CANCEL_GRACE_MS),
        laws.TIn(Kind.RUN_ENDED, 9_000, outcome=0),  # it answered in the end: too late to say so
        laws.TIn(Kind.CHOSEN, 9_000, ask=1),
        laws.TIn(Kind.CLOSED, 9_000),
    )
    assert s.responses == (Reason.CANCELLED,) and s.aborts == 1 and s.leaves == 0
    assert s.ends == ((1, AskEnd.CANCELLED), (2, AskEnd.CANCELLED))


def test_the_walk_catches_a_model_that_answers_nothing_after_the_close() -> None:
    """The first draft of `rules.acp` did nothing once closed, so an ask the left run sent
    then waited for ever: the ask law's counterexample, two inputs deep."""

    def draft(t: acp.Work, x: acp.Input) -> tuple[acp.Work, list[acp.Action]]:
        return (t, []) if t.closed else acp.step(t, x)

    model = replace(laws.MODEL, step=draft)
    cfg = laws.ACfg(laws.Track.TURN, window=1_000, asks=1, jump=10_000)
    s = laws.start(model, cfg)
    s = laws.nxt(model, cfg, s, laws.TIn(Kind.CLOSED, 0))
    x = laws.TIn(Kind.ASK, 0, ask=1)
    t = laws.nxt(model, cfg, s, x)
    assert isinstance(t, laws.TState) and laws.pending(t) == [1]
    assert not laws.acp_ask_ends(model, cfg, None, s, x, t)


HELD = laws.ACfg(laws.Track.TURN, window=5_000, asks=1, jump=10_000, poll=500)


def test_a_held_turn_runs_each_report_and_is_answered_once_its_subagents_are_done() -> None:
    s = walk(
        HELD,
        laws.TIn(Kind.RUN_ENDED, 100, outcome=1, live=True),  # cut at the output limit: held
        laws.TIn(Kind.ASK, 200, ask=1),  # the subagent asks: the editor is asked
        laws.TIn(Kind.TICK, 600),  # the look
        laws.TIn(Kind.CHILDREN, 650, live=True, waiting=True),  # a report: the next run
        laws.TIn(Kind.CHOSEN, 700, ask=1),
        laws.TIn(Kind.RUN_ENDED, 900, outcome=0, live=False),  # nothing at work: answered
    )
    assert (s.runs, s.looks, s.responses) == (1, 1, (Reason.END_TURN,))
    assert s.ends == ((1, AskEnd.CHOSEN),)
    s = walk(
        HELD,
        laws.TIn(Kind.RUN_ENDED, 100, outcome=1, live=True),
        laws.TIn(Kind.TICK, 600),
        laws.TIn(Kind.CHILDREN, 650),  # all done, nothing waits: the run's own answer
    )
    assert s.responses == (Reason.MAX_TOKENS,) and s.runs == 0


def test_a_report_and_a_cancel_race_and_the_turn_is_answered_once() -> None:
    s = walk(
        HELD,
        laws.TIn(Kind.RUN_ENDED, 100, outcome=0, live=True),
        laws.TIn(Kind.ASK, 200, ask=1),
        laws.TIn(Kind.TICK, 600),
        laws.TIn(Kind.CANCEL, 610),  # no run at work: answered at once, its ask ended
        laws.TIn(Kind.CHILDREN, 650, waiting=True),  # the look's result, too late: no run
        laws.TIn(Kind.TICK, 610 + CANCEL_GRACE_MS),
    )
    assert (s.responses, s.aborts, s.runs) == ((Reason.CANCELLED,), 0, 0)
    assert s.ends == ((1, AskEnd.CANCELLED),)


def test_each_break_is_meant_for_a_law_and_each_law_has_two() -> None:
    """`eukhe laws` kills each break by the law `MEANT` names (`engine.check_mutant`): here
    only that the aim names real breaks and laws, at least two breaks a law."""
    names = {m.name for m in laws.AREA.mutants}
    assert set(laws.MEANT) <= names and laws.AREA.meant is laws.MEANT
    by_law = {law.name: sum(1 for k in laws.MEANT.values() if k == law.name) for law in laws.AREA.laws}
    assert min(by_law.values()) >= 2, by_law


def test_a_break_killed_by_another_law_than_its_own_survives_and_says_which() -> None:
    mu = next(m for m in laws.AREA.mutants if laws.MEANT.get(m.name) == "acp_ask_ends")
    aimed = engine.check_mutant(laws.AREA, mu)
    assert aimed.killed_by == "acp_ask_ends"
    wrong = replace(laws.AREA, meant={mu.name: "acp_held_for_subagents"})
    missed = engine.check_mutant(wrong, mu)
    assert missed.killed_by is None
    assert missed.how == "killed by acp_ask_ends, not by acp_held_for_subagents, its law"
