"""What a request to the home's owner costs, against the same work in process.

    .venv/bin/python bench/owner.py [--requests N]

A real owner process in a temporary home, one client over its unix socket:
- `status`: one request and its reply (the owner builds its status);
- `slot`: a model request's admission through the owner: `async with
  registry.slot(...)` (admit, the grant's reply, the release), one provider, no
  queue;
- `zoom`: a line of the chat the owner holds, opened (its one writer reads the
  message from the store);
- in process: `owner.status()` on an owner object, `async with` a slot of the
  in-process `Registry`, and `zoom` on a chat of this process over the same
  store: what the same work costs with no socket.

Prints the median and p99 of each in microseconds, and the ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from eukhe.admission import Registry
from eukhe.client.admission import RemoteRegistry
from eukhe.client.client import Client
from eukhe.client.protocol import RequestKind
from eukhe.client.remote_chat import Remote
from eukhe.memory.access import Local
from eukhe.memory.chat import Chat
from eukhe.memory.log import Entry
from eukhe.memory.log import EntryKind as LogKind
from eukhe.memory.tables import ChatStore
from eukhe.owner.server import Owner


async def timed(n: int, one: Callable[[], Awaitable[object]]) -> list[float]:
    for _ in range(min(n, 100)):  # warm up
        await one()
    out = []
    for _ in range(n):
        t = time.perf_counter()
        await one()
        out.append((time.perf_counter() - t) * 1e6)
    return out


def line(name: str, us: list[float]) -> tuple[float, float]:
    us = sorted(us)
    med, p99 = statistics.median(us), us[int(len(us) * 0.99) - 1]
    print(f"{name:<34} median {med:9.1f} µs   p99 {p99:9.1f} µs")
    return med, p99


async def main(n: int) -> None:
    with tempfile.TemporaryDirectory(prefix="eukhe-bench-") as d:
        home = Path(d)
        os.environ["EUKHE_OWNER_IDLE_MS"] = "2000"
        client = await Client.connect(home)
        registry = RemoteRegistry(home, connect=lambda: asyncio.sleep(0, client))
        print(f"owner pid {client.owner['pid']}, {n} requests each, Python {sys.version.split()[0]}")

        async def remote_slot() -> None:
            async with registry.slot("p", interactive=True):
                pass

        local = Registry()

        async def local_slot() -> None:
            async with local.slot("p", interactive=True):
                pass

        owner = Owner(home / "unused")

        async def local_status() -> None:
            owner.status()

        remote = Remote(registry.client, None, 128_000)
        await remote.log(
            [Entry("bench/0", LogKind.TALK, "a message of the chat " * 20, "2026-12-01T00:00:00+00:00")]
        )
        store = ChatStore(f"sqlite:///{home / 'eukhe.sqlite'}")
        here = Local(Chat(store))

        rs = line("status through the owner", await timed(n, lambda: client.request(RequestKind.STATUS)))
        ls = line("status in process", await timed(n, local_status))
        rm = line("slot through the owner", await timed(n, remote_slot))
        lm = line("slot in process", await timed(n, local_slot))
        rz = line("zoom through the owner", await timed(n, lambda: remote.zoom(0, 1)))
        lz = line("zoom in process", await timed(n, lambda: here.zoom(0, 1)))
        print(f"ratio status: median {rs[0] / ls[0]:.0f}×, p99 {rs[1] / ls[1]:.0f}×")
        print(f"ratio slot:   median {rm[0] / lm[0]:.0f}×, p99 {rm[1] / lm[1]:.0f}×")
        print(f"ratio zoom:   median {rz[0] / lz[0]:.1f}×, p99 {rz[1] / lz[1]:.1f}×")
        store.close()
        await client.request(RequestKind.SHUTDOWN)
        await client.close()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=5000)
    ap.add_argument("--smoke", action="store_true", help="every path once, small: the bench still runs")
    args = ap.parse_args()
    asyncio.run(main(20 if args.smoke else args.requests))
