"""`grep` over 10,000 files (100 folders of 100 small files), as the model calls it, against
plain `rg` run directly on the same tree in the same run: eukhe's grep with ripgrep (confined in
bubblewrap, where it can run) and with its Python engine, each the median of `--runs` calls.

The peer stands for the grep before it was confined: that grep ran this same `rg` and read its
output, so `rg` alone is its floor, and the ratio eukhe / rg is what confining it costs on top
of reading ripgrep's answer. The search walks the whole tree (a pattern that matches one line
in every 100th file, under the call's limit), with the run's secret values to keep out (a few,
as a run has) given to the tool. `glob` of the tree is measured the same way.

Target (issue 40): a grep over 10,000 files costs at most 1.2x what it cost before.

    .venv/bin/python bench/search.py [--runs 15] [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from eukhe.tools import Context, Limits, call
from eukhe.tools.search.glob import Glob
from eukhe.tools.search.grep import Grep

HIDDEN = (
    "sk-bench-openai-0123456789abcdef",
    "aws-bench-secret-0123456789",
    "ghp_bench0123456789abcdef",
    "hunter2-but-much-longer",
)
"""Secret values the run keeps from the model, as a run with a few keys in its environment has."""

RG_FLAGS = ("--no-config", "--no-require-git", "--no-ignore-exclude", "--no-ignore-global", "--sort", "path")


def tree(root: Path, folders: int, files: int) -> None:
    for d in range(folders):
        folder = root / f"d{d:03}"
        folder.mkdir()
        for f in range(files):
            mark = "needle" if f == 0 else "straw"
            (folder / f"f{f:03}.txt").write_text(f"{mark} {d} {f}\n" + "hay and more hay\n" * 5)


def timed(fn: Callable[[], object], runs: int) -> float:
    fn()  # warm: the disk cache, the imports
    took = []
    for _ in range(runs):
        began = time.perf_counter()
        fn()
        took.append(time.perf_counter() - began)
    return statistics.median(took)


def tool(root: Path, name: str, engine: str, args: dict[str, object]) -> Callable[[], object]:
    tools = {"grep": Grep(engine), "glob": Glob(engine)}

    def once() -> object:
        ctx = Context(root, limits=Limits(), hidden=HIDDEN)
        r = asyncio.run(call(tools, name, args, ctx))
        if r.is_error:
            raise RuntimeError(r.content)
        return r

    return once


def plain(rg: str, argv: list[str]) -> Callable[[], object]:
    def once() -> object:
        return subprocess.run([rg, *RG_FLAGS, *argv], capture_output=True, check=False)

    return once


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--smoke", action="store_true", help="every path once, small: the bench still runs")
    args = ap.parse_args()
    folders, files, runs = (5, 20, 1) if args.smoke else (100, 100, args.runs)
    rg = shutil.which("rg")
    with tempfile.TemporaryDirectory(prefix="eukhe-search-") as tmp:
        root = Path(tmp)
        tree(root, folders, files)
        grep = {"pattern": "needle", "limit": 1000}
        glob = {"pattern": "*.txt"}
        rows: list[tuple[str, float, float | None]] = []
        peer_grep = timed(plain(rg, ["--json", "--regexp", "needle", str(root)]), runs) if rg else None
        peer_glob = timed(plain(rg, ["--files", str(root)]), runs) if rg else None
        for engine in (["rg"] if rg else []) + ["python"]:
            rows.append((f"grep, engine {engine}", timed(tool(root, "grep", engine, grep), runs), peer_grep))
            rows.append((f"glob, engine {engine}", timed(tool(root, "glob", engine, glob), runs), peer_glob))
    print(f"{folders * files:,} files, medians of {runs} calls (ms); the peer: plain rg on the same tree")
    if rg is None:
        print("  (ripgrep is not installed: no peer, the Python engine alone)")
    for name, took, peer in rows:
        ratio = f"{took / peer:.2f}x plain rg ({peer * 1000:.1f} ms)" if peer else "no peer"
        print(f"  {name:<20} {took * 1000:8.1f}   {ratio}")


if __name__ == "__main__":
    main()
