"""What durability costs: eukhe's durable round against pydantic-ai's DBOSAgent, on the same DBOS.

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python bench/durable.py [--rounds N] [--repeat R] [--smoke]

On one faux server, side by side in each repeat:
- eukhe: an N-round task (one `read` call a round, then the answer) and a 0-round task,
  each a durable run as `eukhe run` makes it (`open_runtime`, its owner warm, then the
  runtime); its round is (N-round time - 0-round time) / N;
- pydantic-ai's `DBOSAgent` on the same DBOS and SQLite, the same tasks, its `read` a
  DBOS step (so a round records its tool result, as eukhe's does). It runs in a process
  of its own, on a SQLite file beside eukhe's: DBOS is one per process, and eukhe's
  store writes only its own types (store/codec.py), never pydantic-ai's;
- DBOS steps eukhe records a round, and for the 0-round task;
- `eukhe run` as a process against the warm owner, which has started its warm template
  (`warm/__main__.py`) that forks the run: the 0-round task's wall time and its time to the
  first line of output.

Targets (issue 26): eukhe's round at most 0.75x DBOSAgent's; at most 2 steps a tool
round; a 0-round `eukhe run` at most 1.0 s. Nothing here asserts a time: `--smoke`
runs every path once, small, so a bench that breaks fails `make test`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from dbos import DBOS, SetWorkflowID
from pydantic_ai import Agent, UsageLimits
from pydantic_ai.durable_exec.dbos import DBOSAgent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from eukhe.ai.faux import FauxServer, parse
from eukhe.client import protocol
from eukhe.ids import new_session
from eukhe.run.outcome import RunOutcome
from eukhe.run.sink import Silent
from eukhe.run.spec import STEPS, RunSpec
from eukhe.runtime import Runtime, open_runtime
from eukhe.store import session_runs

TASK = "Read one file a round, then say done."
ZERO = "Answer at once: say done."


def script(rounds: int) -> list[dict[str, Any]]:
    """One server for both tasks and both harnesses: a reply is picked by the task's
    words and the tool results the request holds."""

    def read(n: int) -> dict[str, Any]:
        call = {"name": "read", "arguments": {"path": f"f{n}.txt"}}
        return {"when": "Read one file", "results": n, "calls": [call]}

    return [
        {"when": "Answer at once", "results": 0, "text": "done"},
        *(read(n) for n in range(rounds)),
        {"when": "Read one file", "results": rounds, "text": "done"},
    ]


def peer(url: str, cwd: Path, recorded: bool) -> DBOSAgent[None, str]:
    """pydantic-ai's durable agent, made before DBOS launches, as its docs ask;
    `recorded`: its `read` a DBOS step, so a round records its tool result as eukhe's
    does (pydantic-ai's default records only the model's replies)."""

    async def read(path: str) -> str:
        """Read a file of the task's folder."""
        return (cwd / path).read_text()

    model = OpenAIChatModel("faux", provider=OpenAIProvider(base_url=url, api_key="x"))
    tool = DBOS.step(name="bench.read")(read) if recorded else read
    return DBOSAgent(Agent(model, name="recorded" if recorded else "plain", tools=[tool]))


class Ends(Silent):
    """The bench's `RunSink`: the runs' ends, nothing shown."""

    def __init__(self) -> None:
        self.outcomes: list[RunOutcome] = []

    def ended(self, run: str | None, outcome: RunOutcome) -> None:
        self.outcomes.append(outcome)


async def through_eukhe(runtime: Runtime, url: str, cwd: Path, prompt: str) -> tuple[float, int]:
    """Seconds for one durable run of `prompt`, and the DBOS steps it recorded."""
    spec = RunSpec(prompt=prompt, model="vllm/m", base_url=url, cwd=str(cwd), steps=STEPS)
    session = new_session()
    ends = runtime.process.sink
    assert isinstance(ends, Ends)
    ends.outcomes.clear()
    t = time.perf_counter()
    await runtime.drive(spec, session, by_owner=False)
    took = time.perf_counter() - t
    got = ends.outcomes
    assert got and got[0].outcome == "answered", got
    [w] = await session_runs.runs(session)
    return took, len(await DBOS.list_workflow_steps_async(w.workflow_id))


async def through_peer(agent: DBOSAgent[None, str], prompt: str, rounds: int) -> tuple[float, int]:
    wid = f"bench-{new_session()}"
    t = time.perf_counter()
    with SetWorkflowID(wid):
        result = await agent.run(prompt, usage_limits=UsageLimits(request_limit=rounds + 5))
    took = time.perf_counter() - t
    assert result.output == "done", result.output
    return took, len(await DBOS.list_workflow_steps_async(wid))


def eukhe_run(url: str, cwd: Path, home: Path) -> tuple[float, float]:
    """`eukhe run` of the 0-round task as a process: seconds to its first line, and in all."""
    env = {**os.environ, "EUKHE_HOME": str(home)}
    argv = [sys.executable, "-m", "eukhe", "run", "--model", "vllm/m", "--base-url", url, ZERO]
    t = time.perf_counter()
    p = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert p.stdout is not None
    p.stdout.readline()
    first = time.perf_counter() - t
    rest = p.stdout.read()
    code = p.wait(timeout=120)
    took = time.perf_counter() - t
    p.stdout.close()
    assert code == 0, rest
    return first, took


def warm(home: Path) -> None:
    """Wait for the owner's warm template to listen (`warm/__main__.py`): it imports as the
    first runs go."""
    end = time.monotonic() + 60
    while time.monotonic() < end:
        with socket.socket(socket.AF_UNIX) as s:
            try:
                s.connect(str(protocol.warm_path(home)))
                return
            except OSError:
                time.sleep(0.05)
    raise RuntimeError(
        f"no warm template listened within 60 s: {protocol.log_path(home).read_text()[-2000:]}"
    )


def per_round(n: list[float], zero: list[float], rounds: int) -> float:
    """(median N-round time - median 0-round time) / N: one slow 0-round run (a settle
    wait of the chat, say) moves it little, where each repeat's own difference swings."""
    return (statistics.median(n) - statistics.median(zero)) / rounds


def each(xs: list[float]) -> str:
    """Each repeat's own round, the least and the most, in ms."""
    return f"({min(xs) * 1000:.1f} to {max(xs) * 1000:.1f} a repeat)"


def spread(xs: list[float], scale: float = 1000.0) -> str:
    """The median, and the least and most, in ms."""
    return f"{statistics.median(xs) * scale:8.1f} ms  ({min(xs) * scale:.1f} to {max(xs) * scale:.1f})"


def the_peer(url: str, cwd: Path, rounds: int) -> None:
    """The peer's process: DBOS on its own SQLite file; for each agent (its tool
    recorded, then not) a warm-up, then one N-round and one 0-round task; prints their
    seconds and steps as JSON."""
    agents = [peer(url, cwd, True), peer(url, cwd, False)]
    DBOS(config={"name": "bench-peer", "system_database_url": f"sqlite:///{cwd / 'peer.sqlite'}"})
    DBOS.launch()

    async def go() -> list[tuple[float, int]]:
        got = []
        for agent in agents:
            await through_peer(agent, ZERO, 0)
            got += [await through_peer(agent, TASK, rounds), await through_peer(agent, ZERO, 0)]
        return got

    try:
        print(json.dumps(asyncio.run(go())))
    finally:
        DBOS.destroy()


def through_peer_process(url: str, cwd: Path, rounds: int) -> list[tuple[float, int]]:
    argv = [sys.executable, __file__, "--peer", url, "--cwd", str(cwd), "--rounds", str(rounds)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return [(t, s) for t, s in json.loads(done.stdout.strip().splitlines()[-1])]


async def through_eukhe_both(runtime: Runtime, url: str, cwd: Path) -> tuple[float, int, float, int]:
    (t_n, s_n) = await through_eukhe(runtime, url, cwd, TASK)
    (t_0, s_0) = await through_eukhe(runtime, url, cwd, ZERO)
    return t_n, s_n, t_0, s_0


def measure(runtime: Runtime, url: str, cwd: Path, rounds: int, repeat: int) -> dict[str, list[float]]:
    keys = ("eukhe", "peer", "plain", "steps", "zero_steps", "peer_steps", "zero")
    keys += ("n", "peer_n", "peer_0", "plain_n", "plain_0")  # the totals the rounds come from
    out: dict[str, list[float]] = {k: [] for k in keys}
    asyncio.run(through_eukhe(runtime, url, cwd, ZERO))  # warm: the owner up, the store's tables read
    for _ in range(repeat):  # each repeat runs both, so drift on the machine hits both
        e_n, s_n, e_0, s_0 = asyncio.run(through_eukhe_both(runtime, url, cwd))
        (p_n, ps_n), (p_0, ps_0), (q_n, _), (q_0, _) = through_peer_process(url, cwd, rounds)
        out["eukhe"].append((e_n - e_0) / rounds)
        out["peer"].append((p_n - p_0) / rounds)
        out["plain"].append((q_n - q_0) / rounds)
        out["steps"].append((s_n - s_0) / rounds)
        out["zero_steps"].append(s_0)
        out["peer_steps"].append((ps_n - ps_0) / rounds)
        out["zero"].append(e_0)
        for k, v in (("n", e_n), ("peer_n", p_n), ("peer_0", p_0), ("plain_n", q_n), ("plain_0", q_0)):
            out[k].append(v)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--smoke", action="store_true", help="every path once, small: the bench still runs")
    ap.add_argument("--peer", help=argparse.SUPPRESS)  # the faux server's URL: be the peer's process
    ap.add_argument("--cwd", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.peer:
        return the_peer(args.peer, Path(args.cwd), args.rounds)
    rounds, repeat = (2, 1) if args.smoke else (args.rounds, args.repeat)
    with tempfile.TemporaryDirectory(prefix="eukhe-bench-") as tmp:
        cwd, home = Path(tmp), Path(tmp) / "home"
        home.mkdir(mode=0o700)
        os.environ["EUKHE_HOME"] = str(home)
        os.environ["EUKHE_WARM"] = "1"  # the owner starts its warm template (a test's runs go without)
        for n in range(rounds):
            (cwd / f"f{n}.txt").write_text(f"contents {n}\n")
        with FauxServer(parse(script(rounds))) as server:
            runtime = open_runtime(home, {}, Ends())
            try:
                got = measure(runtime, server.url, cwd, rounds, repeat)
                warm(home)
                procs = [eukhe_run(server.url, cwd, home) for _ in range(repeat)]
            finally:
                runtime.close()
    e, p = per_round(got["n"], got["zero"], rounds), per_round(got["peer_n"], got["peer_0"], rounds)
    q = per_round(got["plain_n"], got["plain_0"], rounds)
    print(f"rounds: {rounds}, repeats: {repeat}; a round from the medians; else median (least to most)")
    print(f"eukhe durable round:           {e * 1000:8.1f} ms  {each(got['eukhe'])}")
    print(f"pydantic-ai DBOSAgent round:   {p * 1000:8.1f} ms  {each(got['peer'])}")
    print(f"ratio eukhe/DBOSAgent:         {e / p:8.2f}  (target <= 0.75)")
    # from above: the whole N-round task over N, its start and end counted in (a 0-round run
    # after a long task may wait for the chat's lines, which the difference above takes out)
    e_all, p_all = statistics.median(got["n"]) / rounds, statistics.median(got["peer_n"]) / rounds
    print(f"the whole task / N, eukhe:     {e_all * 1000:8.1f} ms;  DBOSAgent {p_all * 1000:.1f} ms")
    print(f"  their ratio:                 {e_all / p_all:8.2f}")
    print(f"DBOSAgent, its tool no step:   {q * 1000:8.1f} ms  {each(got['plain'])}  (no tool result kept)")
    print(f"ratio eukhe/that:              {e / q:8.2f}")
    print(f"DBOS steps a round, eukhe:     {statistics.median(got['steps']):8.1f}  (target <= 2)")
    print(f"DBOS steps a round, DBOSAgent: {statistics.median(got['peer_steps']):8.1f}")
    print(f"DBOS steps, a 0-round task:    {statistics.median(got['zero_steps']):8.0f}")
    print(f"0-round durable run, in-process: {spread(got['zero'])}")
    print(f"0-round eukhe run, process:    {spread([t for _, t in procs])}  (target <= 1000)")
    print(f"  its first line after:        {spread([f for f, _ in procs])}  (target <= 500)")


if __name__ == "__main__":
    main()
