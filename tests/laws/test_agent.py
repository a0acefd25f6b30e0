"""The laws of the subagents users define are there, and kill every break."""

from __future__ import annotations

from eukhe.laws import areas, engine


def test_the_laws_kill_every_break() -> None:
    report = engine.check([areas.AREAS["agent"]], proofs=False, examples=20)
    assert report.passed
    killed = {m.name: m.killed_by for m in report.mutants}
    assert killed["an agent given the tools it names, offered or not"] == "agent_never_widens"
    assert killed["an unknown tool name loaded"] == "agent_loaded_or_said"
    assert killed["an agent naming no tools given none"] == "agent_inherits_unnamed"
    assert all(killed.values())
