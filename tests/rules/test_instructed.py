"""`rules.instructed`: which instruction files a run changed, and what a session's start
says and asks of them (the laws walk every history: `eukhe laws --area instructed`)."""

from __future__ import annotations

from eukhe.rules import instructed as rule
from eukhe.rules.instructed import UNREAD, Change, Taken

A, C = "/p/AGENTS.md", "/p/CLAUDE.md"


def test_a_file_that_changed_appeared_or_vanished_is_recorded_as_the_run_left_it() -> None:
    before = {A: "a0", C: None}
    after = {A: None, C: "c1"}
    assert rule.changed(before, after) == (A, C)
    got = rule.recorded((), Taken(before), after, "s/1", "s", 5.0)
    assert got == (Change(A, "s/1", "s", 5.0, None), Change(C, "s/1", "s", 5.0, "c1"))
    assert rule.recorded((), Taken(before), before, "s/1", "s", 5.0) == ()  # nothing changed


def test_a_record_with_the_same_digest_keeps_the_run_that_ended_first() -> None:
    child = Change(A, "s/1.c1", "s", 1.0, "m1")  # the subagent wrote it, and ended first
    got = rule.recorded((child,), Taken({A: None}), {A: "m1"}, "s/1", "s", 2.0)
    assert got == (child,)
    newer = rule.recorded((child,), Taken({A: None}), {A: "m2"}, "s/1", "s", 2.0)
    assert newer == (Change(A, "s/1", "s", 2.0, "m2"),)


def test_a_text_a_run_beside_it_left_there_as_it_began_and_it_put_back_is_recorded() -> None:
    # run 2 began while run 1 was at work, with run 1's m1 in the file; run 1 then left m2 and
    # ended (recorded); run 2 wrote m1 again: its start and end agree, yet the text is a model's
    beside = Change(A, "s/1", "s", 1.0, "m2")
    taken = Taken({A: "m1"}, records=())
    assert rule.moved((beside,), taken, {A: "m1"}) == (A,)
    assert rule.recorded((beside,), taken, {A: "m1"}, "s/2", "s", 2.0) == (Change(A, "s/2", "s", 2.0, "m1"),)
    # a record there already as it began (a person's edit since made it stale) is no change of its
    assert rule.moved((beside,), Taken({A: "p1"}, (beside,)), {A: "p1"}) == ()


def test_a_session_says_what_is_as_the_run_left_it_asks_a_person_and_clears_the_stale() -> None:
    kept = (
        Change(A, "s/1", "s", 0.0, "m1"),  # still as the run left it
        Change(C, "s/1", "s", 0.0, "m2"),  # the person changed it since
        Change("/q/AGENTS.md", "s/1", "s", 0.0, "m3"),  # another folder's: left alone
    )
    now = {A: "m1", C: "p1"}
    headless = rule.at_start(kept, now, person=False)
    assert (headless.say, headless.ask, headless.clear) == ((kept[0],), (), (kept[1],))
    person = rule.at_start(kept, now, person=True)
    assert (person.say, person.ask, person.clear) == ((), (kept[0],), (kept[1],))
    assert rule.without(kept, person.clear) == (kept[0], kept[2])


def test_a_removal_or_a_file_that_does_not_load_is_said_to_a_person_once_not_asked() -> None:
    kept = (Change(A, "s/1", "s", 0.0, None), Change(C, "s/1", "s", 0.0, UNREAD))
    got = rule.at_start(kept, {A: None, C: UNREAD}, person=True)
    assert (got.say, got.ask, got.clear) == (kept, (), kept)
    assert rule.at_start(kept, {A: None, C: UNREAD}, person=False).clear == ()


def test_the_line_names_the_file_the_run_and_how_long_ago() -> None:
    c = Change("/p/AGENTS.md", "s/0001", "s", 100.0, "m1")
    assert (
        rule.line(c, 400.0, "look")
        == "AGENTS.md changed by run s/0001, by the model (5 min ago): /p/AGENTS.md; look"
    )
    gone = Change("/p/CLAUDE.md", "s/0002", "s", 0.0, None)
    assert rule.line(gone, 2 * 86400 + 5, "x").startswith(
        "CLAUDE.md removed by run s/0002, by the model (2 days ago)"
    )
    assert [rule.ago(s) for s in (-3, 12, 7200, 86400)] == ["0 s", "12 s", "2 h", "1 day"]


def test_a_record_reads_back_as_written_and_a_wrong_one_is_refused() -> None:
    c = Change(A, "s/1", "s", 1.5, None)
    assert Change.of(c.json()) == c
    taken = Taken({A: "m1", C: None}, (c,))
    assert Taken.of(taken.json()) == taken
    assert Taken.of(None) is None and Taken.of({"digests": 3}) is None
    for wrong in (
        [],
        {"path": A},
        {**c.json(), "at": "soon"},
        {**c.json(), "at": True},
        {**c.json(), "digest": 1},
    ):
        try:
            Change.of(wrong)
        except TypeError:
            continue
        raise AssertionError(f"{wrong!r} was read")
