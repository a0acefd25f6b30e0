"""What `make test` spends, part by part, in CPU-seconds of every process each part starts,
with the machine's calibration, so that figures from two machines compare.

`python tests/cpu.py run LOG NAME -- COMMAND...` runs COMMAND and appends to LOG the CPU
(user + system) of it and of every process under it, and its wall time; it exits as COMMAND
does. It counts what `/usr/bin/time` misses: a process that outlives its parent (an owner
whose client ended, a test's fork template, a server a test started) is handed to this one
by the kernel (it is the "child subreaper" of what it runs, Linux's PR_SET_CHILD_SUBREAPER),
which waits for it and so counts it. Run under `/usr/bin/time`, a pytest that started
eukhe processes showed 379 CPU-seconds where the whole tree spent 713.

`python tests/cpu.py report LOG` prints each part's CPU-seconds and wall, their sum, and the
calibration: the seconds `sum(i*i for i in range(10_000_000))` takes, best of three, on this
machine now. The standard library only: it runs before any install."""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36
ORPHANS_DEADLINE = 60.0
"""Seconds to wait, after the command ended, for the processes it left (an idle owner ends
within a few seconds); those still running then are said, and not counted."""
CALIBRATION = "sum(i*i for i in range(10_000_000))"


def _subreaper() -> bool:
    """Become the reaper of every process under this one that outlives its parent (Linux)."""
    try:
        return bool(ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _spent() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _reap_orphans(deadline: float) -> int:
    """Wait for every process left under this one, until `deadline`; how many still run."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return 0
        if pid == 0:
            if time.monotonic() > deadline:
                return sum(1 for p in Path("/proc").iterdir() if p.name.isdigit() and _ppid(p) == os.getpid())
            time.sleep(0.05)


def _ppid(proc: Path) -> int:
    try:
        stat = (proc / "stat").read_text()
    except OSError:
        return -1
    return int(stat[stat.rindex(")") + 2 :].split()[1])


def run(log: Path, name: str, argv: list[str]) -> int:
    counted_all = _subreaper()
    t0 = time.monotonic()
    # Ctrl-C reaches the command as it would have without this one (the terminal's whole
    # group; a job in a script's background ignores it), and this one waits for its end
    was = signal.getsignal(signal.SIGINT)
    theirs = signal.SIG_IGN if was == signal.SIG_IGN else signal.SIG_DFL
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        child = subprocess.Popen(argv, preexec_fn=lambda: signal.signal(signal.SIGINT, theirs))
    except OSError as e:
        print(f"cpu: {name}: cannot run {argv[0]}: {e}", file=sys.stderr)
        return 127
    code = child.wait()
    wall = time.monotonic() - t0
    left = _reap_orphans(time.monotonic() + ORPHANS_DEADLINE)
    entry = {
        "part": name,
        "cpu": round(_spent(), 2),
        "wall": round(wall, 1),
        "from": round(time.time() - wall, 1),
        "left": left,
        "all": counted_all,
    }
    with log.open("a") as f:
        f.write(json.dumps(entry) + "\n")
    if left:
        print(f"cpu: {name}: {left} processes it left still run; their CPU is not counted", file=sys.stderr)
    return code


def calibration() -> float:
    """Seconds the calibration takes here, best of three."""
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        sum(i * i for i in range(10_000_000))
        best = min(best, time.perf_counter() - t)
    return best


def report(log: Path, cal: float | None = None) -> str:
    """The line `make test` ends with; `cal`: the calibration, measured now when not given."""
    parts: dict[str, list[float]] = {}
    missed = False
    began, ended = float("inf"), 0.0
    for line in log.read_text().splitlines():
        e = json.loads(line)
        got = parts.setdefault(e["part"], [0.0, 0.0])
        got[0] += e["cpu"]
        got[1] += e["wall"]
        began, ended = min(began, e["from"]), max(ended, e["from"] + e["wall"])
        missed |= bool(e["left"]) or not e["all"]
    total = sum(cpu for cpu, _ in parts.values())
    each = ", ".join(f"{name} {_s(cpu)} ({wall:.0f} s of wall)" for name, (cpu, wall) in parts.items())
    cal = calibration() if cal is None else cal
    return (
        f"CPU-seconds: {each}; {_s(total)} in all, in {_s(ended - began)} s of wall"
        + (" (some processes not counted, said above)" if missed else "")
        + f". Calibration {cal:.3f} s ({CALIBRATION}, best of 3): {total * 1.05 / cal:.0f} CPU-seconds"
        " on a machine of 1.05 s."
    )


def _s(seconds: float) -> str:
    return f"{seconds:.1f}" if seconds < 10 else f"{seconds:.0f}"


def main(args: list[str]) -> int:
    if len(args) >= 4 and args[0] == "run" and "--" in args:
        cut = args.index("--")
        return run(Path(args[1]), " ".join(args[2:cut]), args[cut + 1 :])
    if len(args) == 2 and args[0] == "report":
        print(report(Path(args[1])))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
