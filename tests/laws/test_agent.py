"""The laws of the subagents users define are there, and kill every break."""

from __future__ import annotations

from eukhe.laws import agent as laws
from eukhe.laws import areas


def test_every_break_is_meant_for_one_of_the_laws() -> None:
    """`eukhe laws` kills each break by the law `MEANT` names (`engine.check_mutant`), once a
    run; here that the aim covers every break and each law has one."""
    area = areas.AREAS["agent"]
    assert area.meant is laws.MEANT and set(laws.MEANT) == {m.name for m in area.mutants}
    assert laws.MEANT["an agent given the tools it names, offered or not"] == "agent_never_widens"
    assert laws.MEANT["an unknown tool name loaded"] == "agent_loaded_or_said"
    assert laws.MEANT["an agent naming no tools given none"] == "agent_inherits_unnamed"
    assert set(laws.MEANT.values()) == {law.name for law in area.laws}
