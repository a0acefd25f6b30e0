"""The laws of H7.1/H7.2 are there by the spec's names, and kill every break."""

from __future__ import annotations

from eukhe.laws import areas
from eukhe.laws import aux_fallback as laws


def test_the_spec_s_laws_by_name() -> None:
    assert [law.name for law in areas.AREAS["aux_fallback"].laws] == [
        "fallback_is_reported",
        "fallback_quiet_when_routed",
        "fallback_quiet_when_unset",
        "fallback_quiet_when_same",
    ]


def test_the_spec_s_breaks_are_meant_for_its_laws() -> None:
    """`eukhe laws` kills each break by the law `MEANT` names (`engine.check_mutant`), once a
    run; here that the aim covers every break and names the spec's."""
    area = areas.AREAS["aux_fallback"]
    assert area.meant is laws.MEANT and set(laws.MEANT) == {m.name for m in area.mutants}
    assert laws.MEANT["a fallback that shows nothing"] == "fallback_is_reported"
    assert laws.MEANT["a notice shown twice"] == "fallback_is_reported"
