"""The laws of H7.1/H7.2 are there by the spec's names, and kill every break."""

from __future__ import annotations

from eukhe.laws import areas, engine


def test_the_spec_s_laws_by_name() -> None:
    assert [law.name for law in areas.AREAS["aux_fallback"].laws] == [
        "fallback_is_reported",
        "fallback_quiet_when_routed",
        "fallback_quiet_when_unset",
        "fallback_quiet_when_same",
    ]


def test_the_spec_s_breaks_are_killed() -> None:
    report = engine.check([areas.AREAS["aux_fallback"]], proofs=False, examples=30)
    assert report.passed
    killed = {m.name: m.killed_by for m in report.mutants}
    assert killed["a fallback that shows nothing"] == "fallback_is_reported"
    assert killed["a notice shown twice"] == "fallback_is_reported"
    assert all(killed.values())
