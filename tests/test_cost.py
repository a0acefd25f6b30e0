"""`tests/cost.py`, each test's CPU: it counts what a process the test started spends after that
process's parent has gone (as a test's owner does), which the worker's own resource usage never
includes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests import cost

# a process that leaves an orphan spending CPU; the meter's figure, then the orphan's own
SPENDER = """
import os, sys, time
from pathlib import Path
from tests.cost import Meter
meter = Meter()
before = meter.spent()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        sum(i * i for i in range(3_000_000))
        Path(sys.argv[1]).write_text(str(time.process_time()))
        os._exit(0)
    os._exit(0)
os.wait()
end = time.monotonic() + 60
while not Path(sys.argv[1]).exists() and time.monotonic() < end:
    time.sleep(0.01)
time.sleep(0.1)
print(meter.group is not None, meter.spent() - before)
meter.close()
"""


def test_a_tests_cost_counts_a_process_that_outlived_its_parent(tmp_path: Path) -> None:
    if not cost.CPUACCT.is_dir():
        pytest.skip("no cpuacct cgroup here: tests/cost.py counts the worker's own CPU only")
    spent = tmp_path / "spent"
    done = subprocess.run(
        [sys.executable, "-c", SPENDER, str(spent)],
        cwd=Path(__file__).resolve().parent.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    cost.sweep()  # the spender's cgroup, empty now
    assert done.returncode == 0, done.stderr
    whole, counted = done.stdout.split()
    if whole != "True":
        pytest.skip(
            "no cgroup could be made here (not root?): tests/cost.py counts the worker's own CPU only"
        )
    orphan = float(spent.read_text())
    assert float(counted) >= orphan > 0.05, (counted, orphan)
