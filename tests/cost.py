"""Each test's CPU-seconds, the processes it starts included (its forked `eukhe` processes, their
owners, the servers it starts), to find the tests worth making cheaper.

`pytest --cost-log LOG ...` (a plugin of tests/conftest.py's) puts each pytest worker, and so
everything it starts (a process's control group is inherited at fork, whoever its parent is
later), into a cgroup of its own (Linux's cpuacct controller, as root), and appends to LOG a
line per test: its node id, the CPU-seconds the worker's cgroup spent from its setup to its
teardown, and its wall. Where no cgroup can be made, the line holds the worker's own and its
reaped children's CPU instead, and says so (`"whole": false`): a forked `eukhe` process's CPU
is then missed.

A process a test left running (an owner ends some seconds after its last client) is counted in
the tests that follow on that worker; a session fixture's cost, in the first test that uses it.

`python tests/cost.py report LOG [N]` prints the N (20) costliest tests, a table for
docs/development.md."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import sys
import time
from collections.abc import Generator
from pathlib import Path

import pytest

CPUACCT = Path("/sys/fs/cgroup/cpuacct")


class Meter:
    """The CPU-seconds spent so far by this process and everything it started."""

    def __init__(self) -> None:
        self.group: Path | None = None
        self.home: Path | None = None
        mine = CPUACCT / f"eukhe-test-{os.getpid()}"
        sweep()
        try:
            self.home = CPUACCT / _own_group()
            mine.mkdir(exist_ok=True)
            (mine / "cgroup.procs").write_text(str(os.getpid()))
            self.group = mine
        except (OSError, ValueError):
            self.group = None

    def spent(self) -> float:
        if self.group is not None:
            return int((self.group / "cpuacct.usage").read_text()) / 1e9
        me = resource.getrusage(resource.RUSAGE_SELF)
        them = resource.getrusage(resource.RUSAGE_CHILDREN)
        return me.ru_utime + me.ru_stime + them.ru_utime + them.ru_stime

    def close(self) -> None:
        """Back into the cgroup this process came from. Its own stays until what it started
        (the fork template ends after the worker) has ended: `sweep` removes it then."""
        if self.group is not None and self.home is not None:
            with contextlib.suppress(OSError):
                (self.home / "cgroup.procs").write_text(str(os.getpid()))


def sweep() -> None:
    """Remove the workers' cgroups no process is in any more (the kernel refuses the others)."""
    for group in CPUACCT.glob("eukhe-test-*"):
        with contextlib.suppress(OSError):
            group.rmdir()


def _own_group() -> str:
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "cpuacct" in controllers.split(","):
            return path.lstrip("/")
    raise ValueError("no cpuacct cgroup")


class Costs:
    def __init__(self, log: Path) -> None:
        self.log = log
        self.meter = Meter()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, None, None]:
        cpu, wall = self.meter.spent(), time.monotonic()
        yield
        line = {
            "test": item.nodeid,
            "cpu": round(self.meter.spent() - cpu, 3),
            "wall": round(time.monotonic() - wall, 3),
            "whole": self.meter.group is not None,
        }
        with self.log.open("a") as f:
            f.write(json.dumps(line) + "\n")

    def pytest_unconfigure(self) -> None:
        self.meter.close()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--cost-log", default=None, help="append each test's CPU-seconds to this file")


def pytest_configure(config: pytest.Config) -> None:
    log = config.getoption("--cost-log")
    # under xdist, the controller runs no test: only its workers measure
    if log and (hasattr(config, "workerinput") or not config.pluginmanager.hasplugin("dsession")):
        config.pluginmanager.register(Costs(Path(log)), "eukhe-costs")


def report(log: Path, n: int = 20) -> str:
    tests = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    total = sum(t["cpu"] for t in tests)
    rows = ["| CPU-s | wall s | test |", "|---:|---:|---|"]
    rows += [
        f"| {t['cpu']:.1f} | {t['wall']:.1f} | `{t['test']}` |"
        for t in sorted(tests, key=lambda t: -t["cpu"])[:n]
    ]
    partial = "" if all(t["whole"] for t in tests) else " (some without their processes: no cgroup)"
    return "\n".join(rows) + f"\n\n{len(tests)} tests, {total:.0f} CPU-seconds{partial}."


if __name__ == "__main__":
    if len(sys.argv) in (3, 4) and sys.argv[1] == "report":
        sweep()
        print(report(Path(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) == 4 else 20))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
