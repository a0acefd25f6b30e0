"""Areas with a break on purpose, for the tests of the engine (imported by the prover too)."""

from __future__ import annotations

import dataclasses

from eukhe.laws import lease, wait
from eukhe.laws.engine import Law, Mutant
from eukhe.rules.wait import End, Tick


def wait_never_fires(m: wait.Model, cfg: wait.WCfg, w: wait.Wait, x: wait.In) -> bool:
    """A false law: a live wait's event fires it, so the prover must find that."""
    return not m.step(w, x.tick).fired


FALSE_LAW = dataclasses.replace(
    wait.AREA,
    laws=(
        Law(
            "wait_never_fires",
            "H6.1",
            "false on purpose",
            edge=wait_never_fires,
            scope=lambda s, x: s["end"] is End.LIVE and x["tick"] is Tick.EVENT,
        ),
    ),
    mutants=(),
    where="tests.laws.broken:FALSE_LAW",
)

SURVIVOR = dataclasses.replace(
    wait.AREA,
    mutants=(*wait.AREA.mutants, Mutant("the model itself", "H6.1", wait.MODEL)),
    where="eukhe.laws.wait:AREA",
)


def _fewer_than_40_inputs(m: object, cfg: object, g: int, s: object, x: object, t: object) -> bool:
    """False on purpose, but only 40 inputs deep: far past any exhaustive walk."""
    return g < 40


DEEP_LAW = dataclasses.replace(
    lease.AREA,
    laws=(Law("lease_shallow", "H7.1", "false past 40 inputs", history=_fewer_than_40_inputs, prove=False),),
    mutants=(),
    ghost_start=lambda cfg: 0,
    ghost_next=lambda m, cfg, g, s, x, t: g + 1,
    where="tests.laws.broken:DEEP_LAW",
)
