"""Runs of one home take turns (H6.2): what N runs started together cost against the same N
one after another, in one home, against the faux model (issue 56).

    .venv/bin/python bench/turns.py [--runs N] [--rounds R] [--smoke]

A temporary home, warmed by one run first; each run is a real `eukhe run` process (as a
script or CI starts it) of R tool rounds (a `read` each) and an answer. Prints the wall time
of N runs one after another and of N started at once (each until the last has ended), the
ratio of the two (the target: at most 1.1 for N = 20), and the first runs' times after the
warm-up, each against the last (a home warm from its first run: within 1.2x).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from eukhe.ai.faux import FauxServer, parse


def script(rounds: int) -> list[dict[str, object]]:
    def read(r: int) -> dict[str, object]:
        return {"results": r, "calls": [{"name": "read", "arguments": {"path": f"notes{r}.txt"}}]}

    summaries = [  # the chat's compactor, which the session model serves (no auxiliaryModel)
        {"when": "Compress this message", "results": 0, "text": "a short summary line."},
        {"when": "Merge these two", "results": 0, "text": "a merged summary line."},
    ]
    return [*summaries, *(read(r) for r in range(rounds)), {"results": rounds, "text": "done"}]


def start(url: str, cwd: Path, home: Path, n: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "EUKHE_HOME": str(home)}
    env.pop("EUKHE_WARM", None)  # as a user's shell starts it: with the home's warm template
    return subprocess.Popen(
        [sys.executable, "-m", "eukhe", "run", "--model", "vllm/m", "--base-url", url, f"read the notes {n}"],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def ended(p: subprocess.Popen[bytes]) -> None:
    _, err = p.communicate(timeout=600)
    if p.returncode != 0:
        raise SystemExit(f"a run failed ({p.returncode}): {err.decode(errors='replace')[-2000:]}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--smoke", action="store_true", help="2 runs of 1 round: every path once")
    a = ap.parse_args()
    runs, rounds = (2, 1) if a.smoke else (a.runs, a.rounds)
    faux = FauxServer(parse(script(rounds)))
    with tempfile.TemporaryDirectory(prefix="eukhe-bench-turns-") as d, faux as server:
        cwd, home = Path(d), Path(d) / "home"
        for r in range(rounds):
            (cwd / f"notes{r}.txt").write_text(f"the notes, part {r}\n")
        first: list[float] = []
        for n in range(5 if not a.smoke else 1):  # the home's first runs, one after another
            t = time.perf_counter()
            ended(start(server.url, cwd, home, n))
            first.append(time.perf_counter() - t)
        t = time.perf_counter()
        for n in range(runs):
            ended(start(server.url, cwd, home, n))
        serial = time.perf_counter() - t
        t = time.perf_counter()
        procs = [start(server.url, cwd, home, n) for n in range(runs)]
        for p in procs:
            ended(p)
        together = time.perf_counter() - t
        # the home's owner and its template end now, not at their idle time after the home is gone
        subprocess.run(
            [sys.executable, "-m", "eukhe", "shutdown"],
            env={**os.environ, "EUKHE_HOME": str(home)},
            capture_output=True,
            timeout=60,
        )
    print(f"{runs} runs of {rounds} rounds, one home, Python {sys.version.split()[0]}")
    print("the home's first runs: " + ", ".join(f"{s:.2f} s ({s / first[-1]:.2f}x the last)" for s in first))
    print(f"one after another: {serial:.2f} s ({serial / runs:.2f} s a run)")
    print(f"all at once:       {together:.2f} s ({together / runs:.2f} s a run)")
    print(f"ratio together / one after another: {together / serial:.2f} (target: at most 1.10 for 20 runs)")


if __name__ == "__main__":
    main()
