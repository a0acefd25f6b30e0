"""The laws of H7.1/H7.2 are there by the spec's names, and kill every break."""

from __future__ import annotations

import pytest

from eukhe.cli.main import main
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


def test_eukhe_laws_area_aux_fallback_passes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["laws", "--area", "aux_fallback", "--no-proofs", "--examples", "20"])
    out = capsys.readouterr().out
    assert done.value.code == 0, out
    assert "4 of 4 laws pass, 7 of 7 mutants killed" in out
