"""How fast eukhe starts, in one run: medians of 10 starts of

- the interactive agent (`eukhe` with no arguments), to an editable prompt: the time
  from the process's start until its prompt mark is on the terminal (a pseudo-terminal
  read as a person's terminal would be), after which every key typed is kept and
  editable (the terminal holds it until the agent reads it);
- the same, to the agent's own prompt: its status line drawn (prompt_toolkit's, with
  the keys typed so far in it);
- `eukhe run "task"` against the faux model on loopback, to its first line of output;
- `python -c pass`, the floor: the interpreter's own start.

Target: the prompt editable within 0.3 s.

    .venv/bin/python bench/startup.py [--runs 10]
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from eukhe.ai.faux import FauxServer, parse
from eukhe.ui import PROMPT

TARGET = 0.3


def to_prompt(home: Path, cwd: Path) -> tuple[float, float]:
    """Seconds from the start of `eukhe` until its prompt mark is on its terminal, and until
    the agent's status line is."""
    env = {**os.environ, "EUKHE_HOME": str(home), "TERM": "xterm-256color"}
    pid, fd = pty.fork()
    if pid == 0:  # the child: eukhe on the pseudo-terminal
        os.chdir(cwd)
        os.execve(sys.executable, [sys.executable, "-m", "eukhe"], env)
    began = time.perf_counter()
    mark = PROMPT.strip().encode()  # the terminal may get the space after it as a cursor move
    seen = b""
    times: list[float] = []
    try:
        for wanted in (mark, b"/help"):  # the mark; the status line ("ready · session … · /help")
            while wanted not in seen:
                left = began + 10 - time.perf_counter()
                ready, _, _ = select.select([fd], [], [], max(left, 0))
                if not ready:
                    raise RuntimeError(f"no {wanted!r} within 10 s; the terminal shows {seen[-400:]!r}")
                seen += os.read(fd, 65536)
            times.append(time.perf_counter() - began)
        return times[0], times[1]
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)


def to_first_line(home: Path, cwd: Path) -> float:
    """Seconds from the start of `eukhe run` until its first line of output."""
    env = {**os.environ, "EUKHE_HOME": str(home)}
    began = time.perf_counter()
    p = subprocess.Popen(
        [sys.executable, "-m", "eukhe", "run", "hello"],
        cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    assert p.stdout is not None
    first = p.stdout.readline()
    took = time.perf_counter() - began
    p.communicate(timeout=120)
    if not first:
        raise RuntimeError("eukhe run printed nothing")
    return took


def floor() -> float:
    began = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - began


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--smoke", action="store_true", help="every path once, small: the bench still runs")
    args = ap.parse_args()
    if args.smoke:
        args.runs = 1
    with tempfile.TemporaryDirectory(prefix="eukhe-startup-") as tmp, FauxServer(parse(["Hello."])) as server:
        home, cwd = Path(tmp) / "home", Path(tmp)
        home.mkdir()
        settings = {"model": "vllm/m", "providers": {"vllm": {"baseUrl": server.url}}}
        (home / "settings.json").write_text(json.dumps(settings))
        to_prompt(home, cwd)  # the first start writes the home's files and warms the disk cache
        both = [to_prompt(home, cwd) for _ in range(args.runs)]
        prompts, drawn = [b[0] for b in both], [b[1] for b in both]
        lines = [to_first_line(home, cwd) for _ in range(args.runs)]
        floors = [floor() for _ in range(args.runs)]
        env = {**os.environ, "EUKHE_HOME": str(home)}
        subprocess.run([sys.executable, "-m", "eukhe", "shutdown"], env=env, capture_output=True, timeout=60)
    p, d, r, f = (statistics.median(x) for x in (prompts, drawn, lines, floors))
    print(f"medians of {args.runs} starts (seconds):")
    met = "met" if p <= TARGET else "MISSED"
    print(f"  eukhe, to an editable prompt:   {p:.3f}   target <= {TARGET}: {met}")
    print(f"  eukhe, to the agent's own prompt and status line: {d:.3f}")
    print(f"  eukhe run, to its first line:   {r:.3f}")
    print(f"  python -c pass (the floor):     {f:.3f}")
    print(f"  the prompt over the floor:      {p / f:.1f}x")
    print(f"  eukhe run's first line over the prompt: {r / p:.1f}x")


if __name__ == "__main__":
    main()
