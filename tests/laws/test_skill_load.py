"""The laws of H7.3 are there by the spec's names, and kill every break."""

from __future__ import annotations

import pytest

from eukhe.cli.main import main
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


def test_eukhe_laws_area_skill_load_passes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["laws", "--area", "skill_load", "--no-proofs", "--examples", "20"])
    out = capsys.readouterr().out
    assert done.value.code == 0, out
    assert "2 of 2 laws pass, 7 of 7 mutants killed" in out
