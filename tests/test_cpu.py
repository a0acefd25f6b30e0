"""`tests/cpu.py`, the meter of `make test`'s parts: it counts the CPU of a process that outlives
its parent (as a test's owner or fork template does), which the parent's own resource usage
never includes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests import cpu

# a process that starts a grandchild and ends at once; the grandchild, an orphan, spends its
# CPU after its parent has gone and writes how much
ORPHAN = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    time.sleep(0.2)
    sum(i * i for i in range(2_000_000))
    open(sys.argv[1], "w").write(str(time.process_time()))
    os._exit(0)
"""


def meter(log: Path, part: str, *argv: str) -> int:
    done = subprocess.run(
        [sys.executable, cpu.__file__, "run", str(log), part, "--", *argv], capture_output=True, timeout=60
    )
    return done.returncode


def test_the_meter_counts_a_process_that_outlived_its_parent_and_exits_as_its_command(tmp_path: Path) -> None:
    log, spent = tmp_path / "cpu.log", tmp_path / "spent"
    assert meter(log, "the part", sys.executable, "-c", ORPHAN, str(spent)) == 0
    entry = json.loads(log.read_text())
    orphan = float(spent.read_text())  # written before it ended, so the meter waited for it
    assert entry["part"] == "the part" and entry["left"] == 0
    assert entry["cpu"] >= orphan > 0.05, (entry, orphan)

    assert meter(log, "lint", sys.executable, "-c", "raise SystemExit(3)") == 3
    shown = cpu.report(log, cal=0.5)
    assert shown.startswith("CPU-seconds: the part ") and ", lint " in shown, shown
    assert "Calibration 0.500 s" in shown and " on a machine of 1.05 s." in shown, shown
