"""What the sandbox's watch over `.git`, `.eukhe` and `.mcp.json` costs on a big workspace: a tree of
about 10,000 folders (a file in each), three nested repositories in it.

    .venv/bin/python bench/sandbox_guard.py [--folders 10000] [--rounds 5]

Printed, the best of `rounds`: one look of the guard (`eukhe.sandbox.guard`) with nothing known
(a run's first command), one with nothing changed since (every folder stat'ed, none listed), one
after a command that made a folder and a file in a few places; and a sandboxed `bash` call running
`true` as the bash tool runs it, watched (a look before, the namespace's end, a look after) against
the same call unwatched (bubblewrap alone), with their ratio and the difference.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from eukhe.sandbox.bwrap import Sandbox, why_not
from eukhe.sandbox.guard import Guard
from eukhe.sandbox.session import for_run
from eukhe.tools import Context
from eukhe.tools.bash import BASH


def build(root: Path, folders: int) -> list[Path]:
    """About `folders` folders under `root`, 20 a level, a file in each: the deepest level made."""
    made, level = 0, [root]
    while made < folders:
        below = []
        for d in level:
            for i in range(20):
                if made >= folders:
                    break
                p = d / f"d{i}"
                p.mkdir()
                (p / "f.txt").write_text("x")
                below.append(p)
                made += 1
        level = below
    for i in range(3):
        subprocess.run(["git", "init", "-q", str(level[i * 7 % len(level)])], check=True)
    return level


def best(rounds: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        work()
        times.append(time.perf_counter() - began)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--folders", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--smoke", action="store_true", help="every path once, small: the bench still runs")
    args = ap.parse_args()
    if args.smoke:
        args.folders, args.rounds = 200, 1
    base = Path(tempfile.mkdtemp(prefix="eukhe-bench-guard-", dir="/var/tmp"))
    try:
        project, home = base / "project", base / "home"
        project.mkdir()
        home.mkdir()
        deepest = build(project, args.folders)
        time.sleep(2.1)  # past the guard's settle time: a folder's ctime is trusted from here on
        root = str(project)
        print(
            f"workspace: {args.folders} folders, a file in each, 3 nested repositories; best of {args.rounds}"
        )

        cold = best(args.rounds, lambda: Guard().check(root))
        g = Guard()
        g.check(root)
        warm = best(args.rounds, lambda: g.check(root))
        places = [project / "d3", deepest[len(deepest) // 2], deepest[-1]]

        def changed() -> None:
            for p in places:
                (p / f"n{uuid.uuid4().hex[:6]}").mkdir()
                (p / "g.txt").write_text("y")
            g.check(root)

        after = best(args.rounds, changed)
        print(f"look, nothing known:      {cold * 1000:8.1f} ms")
        print(f"look, nothing changed:    {warm * 1000:8.1f} ms")
        print(f"look, 3 folders changed:  {after * 1000:8.1f} ms")

        if why_not() is not None:
            print(f"bubblewrap cannot run here ({why_not()}): no bash figures")
            return
        box = for_run({}, project, home, "bench", user_home=Path.home(), temp=Path(tempfile.gettempdir()))
        bare = dataclasses.replace(box, mode="workspace-write")

        def call(sandbox: Sandbox) -> None:
            r = asyncio.run(BASH.run({"command": "true"}, Context(project, sandbox=sandbox)))
            assert not r.is_error, r.content

        watched = best(args.rounds, lambda: call(box))

        class Unwatched(Sandbox):  # the same sandbox, no look before or after
            @property
            def guarded(self) -> bool:
                return False

        plain = Unwatched(**{f.name: getattr(bare, f.name) for f in dataclasses.fields(bare)})
        alone = best(args.rounds, lambda: call(plain))
        print(f"bash `true`, watched:     {watched * 1000:8.1f} ms")
        print(f"bash `true`, unwatched:   {alone * 1000:8.1f} ms")
        print(f"ratio {watched / alone:.2f}x, {(watched - alone) * 1000:+.1f} ms a call")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
