"""Areas with a break on purpose, for the tests of the engine (imported by the prover too)."""

from __future__ import annotations

import dataclasses

from eukhe.laws import wait
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
