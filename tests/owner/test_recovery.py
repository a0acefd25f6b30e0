"""The owner takes up a closed client's runs only once that client's process is gone:
a connection closes before the process that exits is gone (the kernel closes its
files first), and a run whose process still runs is never taken from it."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from eukhe.owner.recovery import Recovery
from eukhe.store.processes import started


async def unopened(home: Path, show: Any) -> Any:
    raise AssertionError("these tests open no runtime")


class Recorded(Recovery):
    """The recovery with its store part replaced by a record of when it was asked."""

    def __init__(self, home: Path, gone_wait: float) -> None:
        super().__init__(home, unopened, gone_wait)
        self.asked: list[tuple[float, list[str]]] = []
        self.lines: list[str] = []

    async def now(self, cut: list[str]) -> dict[str, Any]:
        self.asked.append((time.monotonic(), cut))
        return {"runs": cut, "said": []}

    def say(self, line: str) -> None:
        self.lines.append(line)


def about(p: subprocess.Popen[bytes]) -> dict[str, Any]:
    return {"pid": p.pid, "started": started(p.pid), "host": socket.gethostname()}


def test_a_closed_clients_runs_are_taken_up_once_its_process_is_gone(tmp_path: Path) -> None:
    began = time.monotonic()
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.6)"])
    r = Recorded(tmp_path, gone_wait=30.0)

    async def main() -> None:
        waiting = asyncio.ensure_future(r.orphans(["s/0001"], about(p)))
        await asyncio.sleep(0.2)
        assert r.asked == [] and r.busy == 1  # the process still runs: not yet, and the owner stays
        await asyncio.to_thread(p.wait, 10)
        await asyncio.wait_for(waiting, 5)
        [(at, cut)] = r.asked
        # not before the process could end (0.6 s after it started); the moment p.wait returns in
        # its thread may come later than the owner's look, which also sees the process gone
        assert cut == ["s/0001"] and at >= began + 0.6

    asyncio.run(main())
    assert r.busy == 0
    assert any("a client died with s/0001 in flight" in x for x in r.lines)


def test_a_closed_client_whose_process_still_runs_keeps_its_runs(tmp_path: Path) -> None:
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        r = Recorded(tmp_path, gone_wait=0.3)
        began = time.monotonic()
        asyncio.run(asyncio.wait_for(r.orphans(["s/0001"], about(p)), 5))
        assert r.asked == [] and time.monotonic() - began >= 0.3
        assert any(f"client pid {p.pid} closed with s/0001 in flight and still runs" in x for x in r.lines)
    finally:
        p.kill()
        p.wait(10)


def test_a_killed_clients_runs_are_taken_up_at_once(tmp_path: Path) -> None:
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    who = about(p)
    p.kill()
    p.wait(10)
    r = Recorded(tmp_path, gone_wait=30.0)
    began = time.monotonic()
    asyncio.run(asyncio.wait_for(r.orphans(["s/0001"], who), 5))
    assert [cut for _, cut in r.asked] == [["s/0001"]] and time.monotonic() - began < 3.0  # not the 30 s wait
