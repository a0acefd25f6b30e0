"""What deciding on the object opened costs `read` and `write` (issue 40), against the same
tools opening by name as they did before, in the same run.

    .venv/bin/python bench/reach.py [--files 10000] [--rounds 3]

- read: the `read` tool's work on each of `files` small files (20 lines, in 100 folders):
  opened with O_PATH, its real path read back from /proc/self/fd and decided on by the run's
  gate (`run.permit.Gate.opened`, the confine rule), then read through the descriptor;
  against the way it was before: stat and open by name, then the same numbering. Target:
  at most 1.2x.
- write: `write` of each file through its folder's descriptor (decided on, renameat),
  against the atomic write by name of before (realpath, a temporary file, rename).

Each figure is the best of `rounds` passes over every file (the machine's noise lands on
both sides alike); the ratio is printed.
"""

from __future__ import annotations

import argparse
import os
import secrets
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from eukhe.rules.access import Cfg, Mode, Policy
from eukhe.rules.permission import PermissionState
from eukhe.run.permit import Gate
from eukhe.tools.base import Limits, Result
from eukhe.tools.files import SNIFF, is_binary, resolve
from eukhe.tools.read import _numbered, _read
from eukhe.tools.write import _write


def by_name(shown: str, cwd: Path, lim: Limits) -> Result:
    """`read` as it was before: stat and open by name (no decision on the object)."""
    path = resolve(shown, cwd)
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        return Result("not a file", True)
    with open(path, "rb") as f:
        if is_binary(f.read(SNIFF)):
            return Result("binary", True)
        f.seek(0)
        return _numbered(shown, f, st.st_size, 1, None, lim)


def write_by_name(shown: str, content: str, cwd: Path) -> Result:
    """`write` as it was before: the atomic write by name (realpath, temporary file, rename)."""
    target = Path(os.path.realpath(resolve(shown, cwd)))
    tmp = target.parent / f".{target.name}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        os.write(fd, content.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, target)
    return Result("ok")


def best(rounds: int, each: Callable[[str], Result], names: list[str]) -> float:
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        for n in names:
            got = each(n)
            assert not got.is_error, got.content
        times.append(time.perf_counter() - began)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="every path once, small")
    args = ap.parse_args()
    files, rounds = (200, 1) if args.smoke else (args.files, args.rounds)
    with tempfile.TemporaryDirectory() as d:
        root = Path(d) / "project"
        names = [f"d{i % 100:02d}/f{i}.py" for i in range(files)]
        text = "".join(f"line {k} of a small source file\n" for k in range(20))
        for n in names:
            (root / n).parent.mkdir(parents=True, exist_ok=True)
            (root / n).write_text(text)
        gate = Gate(
            PermissionState(Cfg(Mode.WORKSPACE_WRITE, Policy.ON_REQUEST, person=False, sandbox=True)),
            root,
            Path(d) / "home",
            user=Path(d) / "user",
        )
        lim = Limits()
        check = gate.opened
        before = best(rounds, lambda n: by_name(n, root, lim), names)
        after = best(rounds, lambda n: _read(n, None, None, root, lim, check), names)
        print(
            f"read of {files:,} files: {after * 1e6 / files:.1f} µs a file, by name before "
            f"{before * 1e6 / files:.1f} µs: {after / before:.2f}x (target at most 1.2x)"
        )
        before = best(rounds, lambda n: write_by_name(n, text, root), names)
        after = best(rounds, lambda n: _write(n, text, root, check), names)
        print(
            f"write of {files:,} files: {after * 1e6 / files:.1f} µs a file, by name before "
            f"{before * 1e6 / files:.1f} µs: {after / before:.2f}x"
        )


if __name__ == "__main__":
    main()
