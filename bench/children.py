"""What a subagent costs: a spawn, to the child's first model request, and one poll of
its parent's watch.

    .venv/bin/python bench/children.py [--spawns N] [--polls N]

In this process, on a temporary home's SQLite store, against the faux model server:
- `spawn`: from the `spawn` tool's call to the child's first request at the server
  (its run and its task started as DBOS workflows, the child's run set up: settings,
  route, tools, its first request);
- `poll`: one poll as the watch makes it inside its workflow (a recorded step that
  reads the child's status and its progress token), against the bare status read
  (`DBOS.get_workflow_status_async`) it is built on.

Prints medians and p90 in milliseconds, and the ratio of a poll to the bare read.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from dbos import DBOS

from eukhe.ai.faux import FauxServer, parse
from eukhe.ids import new_session
from eukhe.run import children, workflow
from eukhe.run.runtime import Runtime
from eukhe.run.spec import RunSpec
from eukhe.skills import Agent
from eukhe.store import durable, session_runs
from eukhe.tools import Spawned


def script(n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for k in range(n):
        out += [
            {"when": f"task {k} ", "results": 0, "text": f"done {k}"},
            {
                "when": f"go {k} ",
                "results": 0,
                "calls": [{"name": "spawn", "arguments": {"task": f"task {k} "}}],
            },
            {"when": f"go {k} ", "results": 1, "text": "spawned"},
        ]
    return [*out, {"when": "[child-", "results": 0, "text": "noted"}]


def watch_requests(server: FauxServer, seen: dict[int, float], stop: threading.Event) -> None:
    """When each child's first request came (by its task's number), polled every 0.2 ms."""
    n = 0
    while not stop.is_set():
        while n < len(server.seen):
            s = server.seen[n]
            n += 1
            text = (
                str(s.body.get("messages", [{}])[-1].get("content", "")) if isinstance(s.body, dict) else ""
            )
            if text.startswith("task "):
                seen.setdefault(int(text.split()[1]), time.perf_counter())
        time.sleep(0.0002)


@DBOS.workflow(name="eukhe.bench.polls")
async def polls(cid: str, n: int) -> list[float]:
    port = children.DurablePort({"child": cid, "session": "bench"}, workflow.process())
    out = []
    for _ in range(n):
        began = time.perf_counter()
        await port.read()
        out.append(time.perf_counter() - began)
    return out


def ms(xs: list[float]) -> str:
    xs = sorted(xs)
    return f"median {statistics.median(xs) * 1000:7.2f} ms, p90 {xs[int(len(xs) * 0.9)] * 1000:7.2f} ms"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--spawns", type=int, default=10)
    ap.add_argument("--polls", type=int, default=200)
    ap.add_argument("--smoke", action="store_true", help="every path once, small: the bench still runs")
    a = ap.parse_args()
    if a.smoke:
        a.spawns, a.polls = 2, 10
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir(mode=0o700)
        os.environ["EUKHE_HOME"] = str(home)
        store = durable.open_store(home, {})
        runtime = Runtime(home, store, workflow.begin(workflow.ProcessContext(chat_url=store.url)))
        started: dict[int, float] = {}
        first: dict[int, float] = {}
        spawn = children.Children.spawn

        async def timed(
            self: children.Children,
            prompt: str,
            model: str | None,
            agent: Agent | None = None,
            isolation: str | None = None,
        ) -> Spawned:
            started[int(prompt.split()[1])] = time.perf_counter()
            return await spawn(self, prompt, model, agent, isolation)

        children.Children.spawn = timed  # type: ignore[method-assign]
        stop = threading.Event()
        try:
            with FauxServer(parse(script(a.spawns))) as server:
                threading.Thread(target=watch_requests, args=(server, first, stop), daemon=True).start()
                for k in range(a.spawns):
                    spec = RunSpec(prompt=f"go {k} ", model="vllm/m", base_url=server.url, cwd=tmp)
                    asyncio.run(runtime.drive(spec, new_session() + f"-{k}", by_owner=False))
                stop.set()
                cid = next(iter(sorted(w.workflow_id for w in asyncio.run(_children()))))

                async def bare() -> list[float]:
                    out = []
                    for _ in range(a.polls):
                        began = time.perf_counter()
                        await DBOS.get_workflow_status_async(cid)
                        out.append(time.perf_counter() - began)
                    return out

                base = asyncio.run(bare())
                handle = DBOS.start_workflow(polls, cid, a.polls)
                polled = handle.get_result()
        finally:
            children.Children.spawn = spawn  # type: ignore[method-assign]
            workflow.begin(workflow.ProcessContext())
            store.close()
        costs = [first[k] - started[k] for k in started if k in first]
        print(f"spawn, to the child's first request ({len(costs)} spawns): {ms(costs)}")
        print(f"poll, a recorded step of the watch ({len(polled)} polls):  {ms(polled)}")
        print(f"bare status read ({len(base)} reads):                   {ms(base)}")
        print(f"a poll costs {statistics.median(polled) / statistics.median(base):.1f}x the bare status read")
    sys.stdout.flush()


async def _children() -> list[Any]:
    return await DBOS.list_workflows_async(name=session_runs.CHILD_RUN, load_input=False)


if __name__ == "__main__":
    main()
