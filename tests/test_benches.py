"""Every bench still runs: each `bench/*.py` takes `--smoke` (every path once, small) and
ends well. No time is asserted here: the figures are the benches' to print, run by hand
on a quiet machine."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
BENCHES = sorted(p.name for p in BENCH.glob("*.py"))


def test_there_are_benches() -> None:
    assert "durable.py" in BENCHES and len(BENCHES) >= 9


HEAVY = {"fleet.py": pytest.mark.xdist_group("postgres-heavy")}
"""Benches whose smoke run takes many of Postgres's connections: on the worker of the tests
that do too (tests/store/test_tables_race.py, tests/store/test_fleet.py)."""


@pytest.mark.parametrize("name", [pytest.param(n, marks=HEAVY[n]) if n in HEAVY else n for n in BENCHES])
def test_a_bench_runs_in_smoke_mode(name: str, tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    env.pop("EUKHE_HOME", None)
    done = subprocess.run(
        [sys.executable, str(BENCH / name), "--smoke"],
        cwd=BENCH.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"bench/{name} --smoke exited {done.returncode}:\n{done.stderr[-4000:]}"
    assert done.stdout.strip(), f"bench/{name} --smoke printed no figures"
