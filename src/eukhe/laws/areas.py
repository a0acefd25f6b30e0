"""Every area whose laws `eukhe laws` checks, by name."""

from __future__ import annotations

from eukhe.laws import run
from eukhe.laws.engine import Area

AREAS: dict[str, Area] = {
    "run": run.AREA,
}
