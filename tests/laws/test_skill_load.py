"""The laws of H7.3 are there by the spec's names, and kill every break."""

from __future__ import annotations

from eukhe.laws import areas, engine


def test_the_spec_s_laws_by_name() -> None:
    assert [law.name for law in areas.AREAS["skill_load"].laws] == [
        "skill_failure_reported",
        "skill_loaded_not_failed",
    ]


def test_the_spec_s_breaks_are_killed() -> None:
    report = engine.check([areas.AREAS["skill_load"]], proofs=False, examples=30)
    assert report.passed
    killed = {m.name: m.killed_by for m in report.mutants}
    assert killed["a failing skill neither loaded nor reported"] == "skill_failure_reported"
    assert killed["a skill without description loaded with a warning"] == "skill_loaded_not_failed"
    assert all(killed.values())
