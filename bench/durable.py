"""What durability costs: a durable round of eukhe against the bare DBOS floor.

    .venv/bin/python bench/durable.py [--rounds N] [--repeat R]

In one run, on one SQLite file:
- a 50-round task (one `read` call a round, then the answer) against the faux
  server, once as a durable run (a DBOS workflow, every effect a step) and once
  in memory; the durable round's own cost is the difference per round;
- the floor: a bare DBOS workflow making the same number of steps (counted from
  the durable run's record) that do nothing;
- the start-up time of `eukhe run` to its first output line.

Target: the durable round's own cost is at most 1.25x the floor.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from dbos import DBOS

from eukhe.ai.faux import FauxServer, parse
from eukhe.ai.openai_chat import OpenAIChat
from eukhe.ids import new_session
from eukhe.run import driver
from eukhe.run.loop import Generation, Settings
from eukhe.run.session import runner, tool_specs
from eukhe.run.spec import RunSpec
from eukhe.store import durable, sessions
from eukhe.tools import BUILTIN, Context

PROMPT = "Read one file a round, then say done."


def script(rounds: int) -> Any:
    def read(n: int) -> dict[str, Any]:
        return {"results": n, "calls": [{"name": "read", "arguments": {"path": f"f{n}.txt"}}]}

    return [*(read(n) for n in range(rounds)), {"results": rounds, "text": "done"}]


@DBOS.workflow(name="bench.floor")
async def floor(steps: int) -> int:
    async def nothing() -> int:
        return 0

    for _ in range(steps):
        await DBOS.run_step_async({"name": "nothing"}, nothing)
    return steps


async def in_memory(url: str, cwd: Path) -> float:
    p = OpenAIChat("faux", base_url=url, timeout=30)
    g = Generation(p, "m", tool_specs(BUILTIN), runner(BUILTIN, Context(cwd=cwd)), Settings())
    t = time.perf_counter()
    out = await g.run(PROMPT)
    took = time.perf_counter() - t
    await p.close()
    assert out.outcome == "answered", (out.outcome, out.message)
    return took


async def durable_run(url: str, cwd: Path) -> tuple[float, int]:
    spec = RunSpec(prompt=PROMPT, model="vllm/m", base_url=url, cwd=str(cwd))
    session = new_session()
    t = time.perf_counter()
    got: list[dict[str, Any]] = []
    await driver.drive(spec, session, lambda s: None, got.append)
    took = time.perf_counter() - t
    out = got[0] if got else None
    assert out is not None and out["outcome"] == "answered", out
    [w] = await sessions.runs(session)
    steps = len(await DBOS.list_workflow_steps_async(w.workflow_id))
    return took, steps


async def floor_run(steps: int) -> float:
    t = time.perf_counter()
    handle = await DBOS.start_workflow_async(floor, steps)
    await handle.get_result()
    return time.perf_counter() - t


def startup(url: str, cwd: Path, home: Path) -> float:
    """Seconds from starting `eukhe run` to its first line of output."""
    env = {**os.environ, "EUKHE_HOME": str(home)}
    argv = [sys.executable, "-m", "eukhe", "run", "--model", "vllm/m", "--base-url", url, "hi"]
    t = time.perf_counter()
    p = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert p.stdout is not None
    p.stdout.readline()
    took = time.perf_counter() - t
    p.wait(timeout=120)
    p.stdout.close()
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="eukhe-bench-") as tmp:
        cwd, home = Path(tmp), Path(tmp) / "home"
        for n in range(args.rounds):
            (cwd / f"f{n}.txt").write_text(f"contents {n}\n")
        store = durable.open_store(home, {})
        try:
            with FauxServer(parse(script(args.rounds))) as server:
                mem, dur, flo = [], [], []
                steps = 0
                for _ in range(args.repeat):
                    mem.append(asyncio.run(in_memory(server.url, cwd)))
                    took, steps = asyncio.run(durable_run(server.url, cwd))
                    dur.append(took)
                    flo.append(asyncio.run(floor_run(steps)))
        finally:
            store.close()
        with FauxServer(parse(["hello"])) as server:
            up = statistics.median(startup(server.url, cwd, home) for _ in range(args.repeat))
    r = args.rounds
    d, m, f = statistics.median(dur) / r, statistics.median(mem) / r, statistics.median(flo) / r
    own = d - m
    print(f"rounds: {r}, steps recorded by the durable run: {steps} ({steps / r:.1f} a round)")
    print(f"durable round:         {d * 1000:8.2f} ms")
    print(f"in-memory round:       {m * 1000:8.2f} ms")
    print(f"durability per round:  {own * 1000:8.2f} ms  (durable minus in-memory)")
    print(
        f"bare DBOS floor:       {f * 1000:8.2f} ms  ({steps / r:.1f} empty steps of "
        f"{f / (steps / r) * 1000:.2f} ms, same SQLite file)"
    )
    print(f"ratio durability/floor: {own / f:.2f}  (target <= 1.25)")
    print(f"eukhe run start-up to first output: {up * 1000:.0f} ms")


if __name__ == "__main__":
    main()
