"""The two engines behind `grep` and `glob`: ripgrep when it is installed, and Python's walk and `re`
when it is not. Both see the same files (`walk`'s rules, which are ripgrep's), pick them with the
same pattern, and give the same lines in the same order, so the tools read one answer.

ripgrep runs as a process with every wait bounded: it is killed on the run's abort, at the
deadline, or once enough has come back. Python's walk runs in a thread that stops at the same
three, checked between files and every few thousand lines.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import re
import shutil
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pathspec

from eukhe import waits
from eukhe.tools.search.walk import Walked, walk

__all__ = ["BINARY_SNIFF", "Found", "Hit", "Pick", "Search", "chosen", "files", "hits", "ripgrep"]

BINARY_SNIFF = 64 * 1024
"""Bytes from a file's start in which a NUL byte makes it binary, skipped (ripgrep's first buffer)."""

RG_FLAGS = ("--no-config", "--no-require-git", "--no-ignore-exclude", "--no-ignore-global", "--sort", "path")
"""ripgrep with no config file of the user's, the ignore rules `walk` reads, and the walk's order."""


def ripgrep() -> str | None:
    """The `rg` on PATH, or None: the Python engine runs."""
    return shutil.which("rg")


def chosen(engine: str) -> str | None:
    """The ripgrep an engine name runs (None: Python's): "auto" is ripgrep when installed."""
    if engine == "python":
        return None
    rg = ripgrep()
    if engine == "rg" and rg is None:
        raise RuntimeError("ripgrep (rg) is not installed: apt-get install ripgrep")
    return rg


@dataclass(frozen=True)
class Pick:
    """Which files a search takes: under `root`, the ones `glob` (a gitignore pattern, relative to
    the root; None: all) picks and `keep` allows (false: a deny rule keeps it from being read)."""

    root: Path
    glob: str | None = None
    keep: Callable[[Path], bool] = lambda p: True

    def spec(self) -> pathspec.GitIgnoreSpec | None:
        return pathspec.GitIgnoreSpec.from_lines([self.glob]) if self.glob else None

    def takes(self, spec: pathspec.GitIgnoreSpec | None, p: Path) -> bool:
        """Whether the file `p` is searched: the root itself when it is a file, else a file the
        pattern picks; either only when `keep` allows it."""
        if (
            spec is not None
            and p != self.root
            and spec.check_file(p.relative_to(self.root).as_posix()).include is not True
        ):
            return False
        return self.keep(p)


@dataclass(frozen=True)
class Hit:
    path: Path
    line: int
    text: str


@dataclass
class Found:
    """What a search gave: files or hits in walk order, and what cut it short."""

    files: list[Path] = field(default_factory=list)
    hits: list[Hit] = field(default_factory=list)
    walked: Walked = field(default_factory=Walked)
    more: bool = False  # more matched than was asked for
    ended: waits.Raced[Any] | None = None
    error: str = ""


@dataclass(frozen=True)
class Search:
    """How long a search may take, how many files `glob` lists at most, and `rg`: the ripgrep to run
    (None: the Python engine)."""

    timeout: float
    max_files: int
    rg: str | None


# ---------------------------------------------------------------- the Python engine


def _py_files(pick: Pick, want: int, found: Found, stop: threading.Event, max_files: int) -> None:
    """Into `found` as they come: a search stopped at its deadline keeps what it had."""
    spec = pick.spec()
    paths = [pick.root] if pick.root.is_file() else walk(pick.root, found.walked, max_files, stop.is_set)
    for p in paths:
        if pick.takes(spec, p):
            if len(found.files) >= want:
                found.more = True
                return
            found.files.append(p)


def _lines(path: Path, stop: threading.Event) -> Iterator[tuple[int, bytes]]:
    """A file's lines without their `\\n`, numbered from 1; none if it is binary (a NUL in its
    first 64 KiB); up to the line with a later NUL, where ripgrep stops too."""
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError:
        return
    with f:
        head = f.read(BINARY_SNIFF)
        if b"\0" in head:
            return
        f.seek(0)
        for n, raw in enumerate(f, 1):
            if b"\0" in raw:
                return
            if n % 4096 == 0 and stop.is_set():
                return
            yield n, raw.removesuffix(b"\n")


def _py_hits(pick: Pick, rx: re.Pattern[str], want: int, found: Found, stop: threading.Event) -> None:
    """Into `found` as they come: a search stopped at its deadline keeps what it had."""
    spec = pick.spec()
    paths = [pick.root] if pick.root.is_file() else walk(pick.root, found.walked, 1 << 62, stop.is_set)
    for p in paths:
        if not pick.takes(spec, p):
            continue
        for n, raw in _lines(p, stop):
            text = raw.decode("utf-8", errors="replace")
            if rx.search(text):
                if len(found.hits) >= want:
                    found.more = True
                    return
                found.hits.append(Hit(p, n, text))
        if stop.is_set():
            found.walked.stopped = True
            return


async def _threaded(
    fn: Callable[[threading.Event], None], how: Search, cancel: asyncio.Event
) -> waits.Raced[Any]:
    stop = threading.Event()
    try:
        return await _race(asyncio.to_thread(fn, stop), how, cancel)
    finally:
        stop.set()  # a thread still walking ends at its next check


# ---------------------------------------------------------------- ripgrep


def _text(d: dict[str, Any]) -> str:
    if "text" in d:
        return str(d["text"])
    return base64.b64decode(d.get("bytes", "")).decode("utf-8", errors="replace")


def _path(d: dict[str, Any]) -> Path:
    if "text" in d:
        return Path(d["text"])
    return Path(os.fsdecode(base64.b64decode(d.get("bytes", ""))))


async def _rg(argv: list[str], each: Callable[[bytes], bool], found: Found) -> None:
    """Run ripgrep, giving `each` its output's lines until it says enough; killed when it ends,
    however it ends."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=1 << 24,
    )
    assert proc.stdout is not None and proc.stderr is not None
    err = asyncio.ensure_future(proc.stderr.read(1 << 16))
    try:
        while True:
            try:
                line = await proc.stdout.readline()
            except ValueError:  # a line over the reader's bound: ripgrep's output of a huge line
                continue
            if not line or not each(line):
                break
            await asyncio.sleep(0)  # buffered output reads without a pause: let an abort be seen
    finally:
        if proc.returncode is None:  # os.kill, not proc.kill: that one reaps a child asyncio still waits for
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGKILL)
        await proc.wait()
        text = (await err).decode("utf-8", errors="replace")
        if proc.returncode == 2 and "regex parse error" in text:  # else: unreadable files, said on stderr
            found.error = "the pattern does not compile: " + " ".join(text.split())[:500]


def _rg_listing(found: Found, pick: Pick, want: int, max_files: int) -> Callable[[bytes], bool]:
    spec = pick.spec()

    def each(line: bytes) -> bool:
        p = Path(os.fsdecode(line.rstrip(b"\n")))
        if found.walked.files >= max_files:
            found.walked.capped = True
            return False
        found.walked.files += 1
        if pick.takes(spec, p):
            if len(found.files) >= want:
                found.more = True
                return False
            found.files.append(p)
        return True

    return each


def _rg_matches(found: Found, pick: Pick, want: int) -> Callable[[bytes], bool]:
    spec = pick.spec()
    taken: dict[Path, bool] = {}

    def each(line: bytes) -> bool:
        try:
            msg = json.loads(line)
        except ValueError:
            return True
        kind, data = msg.get("type"), msg.get("data") or {}
        if kind != "match":
            return True
        p = _path(data.get("path") or {})
        if p not in taken:
            taken[p] = pick.takes(spec, p)
        if not taken[p]:
            return True
        if len(found.hits) >= want:
            found.more = True
            return False
        text = _text(data.get("lines") or {}).removesuffix("\n")
        found.hits.append(Hit(p, int(data.get("line_number") or 0), text))
        return True

    return each


# ---------------------------------------------------------------- the searches


async def files(pick: Pick, want: int, how: Search, cancel: asyncio.Event) -> Found:
    """The files a search sees under `pick`, in walk order, at most `want` (`more`: there were more)."""
    found = Found()
    if how.rg is None:
        found.ended = await _threaded(
            lambda stop: _py_files(pick, want, found, stop, how.max_files), how, cancel
        )
        return found
    argv = [how.rg, *RG_FLAGS, "--files", "--", str(pick.root)]
    found.ended = await _race(_rg(argv, _rg_listing(found, pick, want, how.max_files), found), how, cancel)
    return found


async def hits(pick: Pick, pattern: str, want: int, how: Search, cancel: asyncio.Event) -> Found:
    """The lines under `pick` that `pattern` (in `subset`'s subset) matches, at most `want`."""
    found = Found()
    if how.rg is None:
        try:
            rx = re.compile(pattern)
        except re.error as e:
            found.error = f"the pattern does not compile: {e}"
            return found

        found.ended = await _threaded(lambda stop: _py_hits(pick, rx, want, found, stop), how, cancel)
        return found
    argv = [how.rg, *RG_FLAGS, "--json", "--regexp", pattern, "--", str(pick.root)]
    found.ended = await _race(_rg(argv, _rg_matches(found, pick, want), found), how, cancel)
    return found


async def _race(work: Any, how: Search, cancel: asyncio.Event) -> waits.Raced[Any]:
    clock = waits.LoopClock()
    return await waits.race(work, clock.now() + how.timeout, cancel, clock, grace=0.0)
