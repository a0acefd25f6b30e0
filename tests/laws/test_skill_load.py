"""The laws of H7.3 are there by the spec's names, and kill every break."""

from __future__ import annotations

from eukhe.laws import areas
from eukhe.laws import skill_load as laws


def test_the_spec_s_laws_by_name() -> None:
    assert [law.name for law in areas.AREAS["skill_load"].laws] == [
        "skill_failure_reported",
        "skill_loaded_not_failed",
    ]


def test_the_spec_s_breaks_are_meant_for_its_laws() -> None:
    """`eukhe laws` kills each break by the law `MEANT` names (`engine.check_mutant`), once a
    run; here that the aim covers every break and names the spec's."""
    area = areas.AREAS["skill_load"]
    assert area.meant is laws.MEANT and set(laws.MEANT) == {m.name for m in area.mutants}
    assert laws.MEANT["a failing skill neither loaded nor reported"] == "skill_failure_reported"
    assert laws.MEANT["a skill without description loaded with a warning"] == "skill_loaded_not_failed"
    assert set(laws.MEANT.values()) == {law.name for law in area.laws}
