"""Every area whose laws `eukhe laws` checks, by name."""

from __future__ import annotations

from eukhe.laws import recovery, run, wait
from eukhe.laws.engine import Area

AREAS: dict[str, Area] = {
    "run": run.AREA,
    "recovery": recovery.AREA,
    "wait": wait.AREA,
}
