"""The H1 and H2.2 laws over the compactor model: every law by its spec name, and every
law catches a break on its own (that all pass and every break is killed is `eukhe
laws`'s to check, in `make test`)."""

from __future__ import annotations

import dataclasses

from eukhe.laws import compactor as laws
from eukhe.laws import engine

SPEC_LAWS = [
    "line_calls_at_most_tries",
    "line_stops_when_not_shorter",
    "line_fits",
    "line_takes_first_fit",
    "line_empty_is_a_try",
    "line_error_fails",
    "fail_cap_builds",
    "settle_falls",
    "settle_bounded",
    "settle_reached",
    "settle_start",
]


def test_every_law_of_the_spec_is_there_by_its_name() -> None:
    assert [law.name for law in laws.AREA.laws] == SPEC_LAWS
    assert len(laws.AREA.mutants) >= 10


CATCHES = {
    "line_calls_at_most_tries": "a try past TRIES",
    "line_stops_when_not_shorter": "a follow-up not shorter that does not stop the tries",
    "line_fits": "a line over NODE",
    "line_takes_first_fit": "a fitting follow-up that loses to the best over-long reply",
    "line_empty_is_a_try": "an empty reply counted as a failure",
    "line_error_fails": "a provider error that does not fail",
    "fail_cap_builds": "a fail cap off by one (early)",
    "settle_falls": "an outcome that does not lower the measure",
    "settle_bounded": "a disk failure that resets the failures left",
    "settle_reached": "an outcome that does not lower the measure",
    "settle_start": "a fail cap off by one (late)",
}


def test_every_law_catches_a_break_on_its_own() -> None:
    """A law that no break makes fail is worth nothing."""
    mutants = {m.name: m for m in laws.AREA.mutants}
    for law in laws.AREA.laws:
        alone = dataclasses.replace(laws.AREA, laws=(law,), mutants=())
        found = engine.check_exhaustive(alone, mutants[CATCHES[law.name]].model, None, stop_at_first=True)
        assert law.name in found, f"{law.name} does not catch {CATCHES[law.name]!r}"


def test_the_late_cap_and_the_counted_stop_break_the_cap_from_a_fresh_node() -> None:
    """fail_cap_builds reads the cap from a fresh node too: FAILURES failures build it."""
    mutants = {m.name: m for m in laws.AREA.mutants}
    (law,) = [law for law in laws.AREA.laws if law.name == "fail_cap_builds"]
    alone = dataclasses.replace(laws.AREA, laws=(law,), mutants=())
    for name in (
        "a fail cap off by one (late)",
        "a disk failure counted as a failure",
        "a stop counted as a failure",
        "a saved line that leaves the node pending",
    ):
        assert "fail_cap_builds" in engine.check_exhaustive(
            alone, mutants[name].model, None, stop_at_first=True
        )


def test_the_views_of_several_lines_catch_what_one_line_cannot_show() -> None:
    """Over views of up to LINES lines: a fresh view's measure, every order of outcomes."""
    assert all(v is None for v in laws._views(laws.MODEL, 3).values())
    mutants = {m.name: m for m in laws.AREA.mutants}
    assert laws._views(mutants["a fail cap off by one (late)"].model, 3)["start"]
    assert laws._views(mutants["an outcome that does not lower the measure"].model, 3)["falls"]
    assert laws._views(mutants["a disk failure that resets the failures left"].model, 3)["bounded"]
