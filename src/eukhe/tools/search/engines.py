"""The two engines behind `grep` and `glob`: ripgrep when it is installed and bubblewrap can
confine it, and Python's walk and `re` otherwise. Both see the same files (`walk`'s rules,
which are ripgrep's), pick them with the same pattern, and give the same lines in the same
order, so the tools read one answer.

Both search only the root that was opened and decided on (`Root`), never a name: Python's walk
goes by descriptors (`walk.walk_fds`), and ripgrep runs in a sandbox that shows it that root
alone, bound from its descriptor (`confined`). Each file a search meets is asked about
(`Pick.keep`: deny rules, the places no tool reaches), by its real path. A file whose bytes
hold one of the run's secret values (`Hidden`) is never searched: none of its lines come
back, whatever the pattern, and the answer names it (`Found.secret`); ripgrep looks for the
values beside the pattern, Python line by line, so the answer never depends on whether the
pattern matched a secret. Every hit is read again through descriptors before it is shown
(`confirm`), with its context lines: what ripgrep read by name is shown only if it is what
the descriptors reach.

ripgrep runs as a process with every wait bounded: it is killed on the run's abort, at the
deadline, or once enough has come back. Python's walk runs in a thread that stops at the same
three, checked between files and every few thousand lines.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import json
import os
import re
import shutil
import signal
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pathspec

from eukhe import waits
from eukhe.json_types import JsonObject
from eukhe.rules.wait import End
from eukhe.settings.secrets import MIN_KEY, Redaction
from eukhe.tools.search import confined
from eukhe.tools.search.walk import DIR_FLAGS, Walked, open_file, walk_fds

T = TypeVar("T")

__all__ = [
    "BINARY_SNIFF",
    "CONTEXT_FILE",
    "Found",
    "Hidden",
    "Hit",
    "Pick",
    "Root",
    "Search",
    "chosen",
    "files",
    "hits",
    "ripgrep",
]

BINARY_SNIFF = 64 * 1024
"""Bytes from a file's start in which a NUL byte makes it binary, skipped (ripgrep's first buffer)."""

CONTEXT_FILE = 10 * 1024 * 1024
"""Bytes a file may have for its context lines to be shown (its matches show either way)."""

CONFIRM_GRACE = 2.0
"""Seconds the hits of a search cut short may take to be read again (else none is shown)."""

MAX_LINE = 1 << 24
"""Bytes of one line of ripgrep's output read at most (a longer one is skipped)."""

YIELD_EVERY = 32
"""Lines of ripgrep's output read between two turns of the loop (an abort is seen at the next)."""

DRAIN = 2.0
"""Seconds ripgrep's pipes may take to close once bubblewrap is killed (it dies with it)."""

RG_GRACE = 3 * DRAIN + 1.0
"""Seconds a ripgrep cut short is given to end: killed, its pipes' end and its errors awaited."""

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
class Root:
    """Where a search starts, opened and decided on: `fd`, a folder open for listing or a regular
    file open for reading; `real`, the real path of what it holds; `shown`, the path as the
    model named it, made absolute (the answer's paths start with it)."""

    fd: int
    real: Path
    shown: Path
    folder: bool

    @property
    def beneath(self) -> str:
        """What the real paths beneath the root start with."""
        return str(self.real).rstrip("/") + "/"

    def named(self, p: Path) -> Path:
        """A real path beneath the root as the model named the root."""
        return self.shown if p == self.real else self.shown / p.relative_to(self.real)


@dataclass(frozen=True)
class Pick:
    """Which files a search takes: under `root`, the ones `glob` (a gitignore pattern, relative to
    the root; None: all) picks and `keep` allows (false: a deny rule keeps it from being read,
    or it is a place no tool reaches), both asked by real path."""

    root: Root
    glob: str | None = None
    keep: Callable[[Path], bool] = lambda p: True

    def spec(self) -> pathspec.GitIgnoreSpec | None:
        return pathspec.GitIgnoreSpec.from_lines([self.glob]) if self.glob else None

    def picks(self, spec: pathspec.GitIgnoreSpec | None, p: Path) -> bool:
        """Whether the pattern picks the file `p`, beneath the root (the root itself, a file,
        always)."""
        if spec is None or p == self.root.real:
            return True
        return spec.check_file(str(p)[len(self.root.beneath) :]).include is True

    def takes(self, spec: pathspec.GitIgnoreSpec | None, p: Path) -> bool:
        """Whether the file `p` is searched: picked, and allowed by `keep`."""
        return self.picks(spec, p) and self.keep(p)


@dataclass(frozen=True)
class Hidden:
    """The secret values a search keeps out, as bytes: each as written and as JSON spells it,
    cut at line breaks (a line is what a search reads) into parts of MIN_KEY or more."""

    forms: tuple[bytes, ...] = ()
    rx: re.Pattern[bytes] | None = field(default=None, compare=False)

    @staticmethod
    def of(values: tuple[str, ...]) -> Hidden:
        parts = {p for f in Redaction(values).forms for p in re.split(r"[\r\n]+", f) if len(p) >= MIN_KEY}
        forms = tuple(sorted((p.encode() for p in parts), key=lambda b: (-len(b), b)))
        rx = re.compile(b"|".join(re.escape(f) for f in forms)) if forms else None
        return Hidden(forms, rx)

    def held(self, line: bytes) -> bool:
        """Whether `line` holds a secret value."""
        return self.rx is not None and self.rx.search(line) is not None

    def regexps(self) -> list[str]:
        """The values as ripgrep patterns, each char escaped the one way Rust's engine reads
        alike whatever flags the pattern before it set (case aside: those are checked here)."""
        out = []
        for f in self.forms:
            text = f.decode("utf-8", errors="replace")
            out.append("".join(c if c.isascii() and c.isalnum() else f"\\x{{{ord(c):X}}}" for c in text))
        return out


@dataclass(frozen=True)
class Hit:
    path: Path  # the real path
    line: int
    text: str


@dataclass
class Found:
    """What a search gave: files or hits in walk order, what cut it short, the files left out
    for the secret values they hold (`secret`), and for each file with hits, the lines around
    them that were read through descriptors (`lines`)."""

    files: list[Path] = field(default_factory=list)
    hits: list[Hit] = field(default_factory=list)
    walked: Walked = field(default_factory=Walked)
    more: bool = False  # more matched than was asked for
    ended: waits.Raced[Any] | None = None
    error: str = ""
    secret: list[Path] = field(default_factory=list)
    lines: dict[Path, dict[int, str]] = field(default_factory=dict)
    mtimes: dict[Path, float] = field(default_factory=dict)
    unconfined: bool = False  # bubblewrap could not run here: the Python engine ran instead


@dataclass(frozen=True)
class Search:
    """How long a search may take, how many files `glob` lists at most, `rg`: the ripgrep to run
    (None: the Python engine), `bwrap`: the bubblewrap that confines it (None: it cannot run
    here, and Python's engine runs), the secret values kept out, and the places beneath the
    root the boundary denies (`confined.beneath`: the walk skips them, the sandbox covers them)."""

    timeout: float
    max_files: int
    rg: str | None
    bwrap: str | None = None
    hidden: Hidden = Hidden()
    never: tuple[str, ...] = ()

    @property
    def python(self) -> bool:
        return self.rg is None or self.bwrap is None


# ---------------------------------------------------------------- reading through descriptors


def _lines(fd: int, stop: threading.Event) -> Iterator[tuple[int, bytes]]:
    """The lines of the file open as `fd` (taken: closed here) without their `\\n`, numbered from
    1; none if it is binary (a NUL in its first 64 KiB); up to the line with a later NUL, where
    ripgrep stops too."""
    with open(fd, "rb") as f:
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


def _whole(fd: int) -> Iterator[tuple[int, bytes]]:
    """`_lines` of a small file (taken: closed here), read at once."""
    chunks = []
    try:
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
    except OSError:
        return
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if b"\0" in data[:BINARY_SNIFF]:
        return
    lines = data.split(b"\n")
    if lines[-1] == b"":  # the end of the last line, not a line
        lines.pop()
    for n, raw in enumerate(lines, 1):
        if b"\0" in raw:
            return
        yield n, raw


def _reopen(root: Root) -> int | None:
    """The root file, open again from its start (its own offset)."""
    try:
        return os.open(f"/proc/self/fd/{root.fd}", os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        return None


def _beneath(root: Root, p: Path) -> int | None:
    """The regular file at the real path `p` beneath the root, opened from the root's descriptor
    one folder at a time without following a link, or None."""
    if p == root.real:
        return _reopen(root) if not root.folder else None
    try:
        parts = p.relative_to(root.real).parts
    except ValueError:
        return None
    if not root.folder or not parts or any(part in ("", ".", "..") for part in parts):
        return None
    fd = root.fd
    try:
        for part in parts[:-1]:
            nxt = os.open(part, DIR_FLAGS, dir_fd=fd)
            if fd != root.fd:
                os.close(fd)
            fd = nxt
        return open_file(parts[-1], fd)
    except OSError:
        return None
    finally:
        if fd != root.fd:
            os.close(fd)


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


@dataclass
class _Confirmed:
    hits: list[Hit] = field(default_factory=list)
    secret: list[Path] = field(default_factory=list)
    lines: dict[Path, dict[int, str]] = field(default_factory=dict)


def _confirm(hits: list[Hit], root: Root, context: int, hidden: Hidden, stop: threading.Event) -> _Confirmed:
    """Each file's hits read again through descriptors from the root: a hit is kept only when
    its line is what it said, a file that now holds a secret value is left out, and the lines
    within `context` of each hit are kept for the answer (a file up to CONTEXT_FILE bytes)."""
    out = _Confirmed()
    i = 0
    while i < len(hits):
        p = hits[i].path
        j = i
        while j < len(hits) and hits[j].path == p:
            j += 1
        mine, i = hits[i:j], j
        if stop.is_set():
            raise TimeoutError("stopped")  # nothing unconfirmed is shown
        fd = _beneath(root, p)
        if fd is None:
            continue
        try:
            small = os.fstat(fd).st_size <= CONTEXT_FILE
        except OSError:
            small = False
        want = {n for h in mine for n in range(max(1, h.line - context), h.line + context + 1)}
        last = max(want)
        seen: dict[int, str] = {}
        held = False
        for n, raw in _whole(fd) if small else _lines(fd, stop):
            if hidden.held(raw):
                held = True
                break
            if n in want:
                seen[n] = _decode(raw)
            if n >= last:
                break
        if held:
            out.secret.append(p)
            continue
        ok = [h for h in mine if seen.get(h.line) == h.text]
        out.hits += ok
        if ok and small and context:
            out.lines[p] = seen
    return out


def _mtimes(found: Found, root: Root, stop: threading.Event) -> None:
    """The files' times, each asked of its folder opened from the root's descriptor without
    following a link (a file no longer there: 0)."""
    folder: tuple[Path, int] | None = None
    try:
        for p in found.files:
            if stop.is_set():
                return
            if folder is None or folder[0] != p.parent:
                if folder is not None:
                    os.close(folder[1])
                    folder = None
                fd = _folder(root, p.parent)
                folder = (p.parent, fd) if fd is not None else None
            try:
                if folder is None:
                    raise OSError
                found.mtimes[p] = os.stat(p.name, dir_fd=folder[1], follow_symlinks=False).st_mtime
            except OSError:
                found.mtimes[p] = 0.0
    finally:
        if folder is not None:
            os.close(folder[1])


def _folder(root: Root, p: Path) -> int | None:
    try:
        parts = p.relative_to(root.real).parts
    except ValueError:
        return None
    fd = os.dup(root.fd)
    try:
        for part in parts:
            nxt = os.open(part, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except OSError:
        os.close(fd)
        return None
    return fd


# ---------------------------------------------------------------- the Python engine


def _searched(pick: Pick, found: Found, stop: threading.Event, max_files: int) -> Iterator[tuple[int, Path]]:
    """The files a search reads, in walk order, each open (the caller's to close) with its real
    path; the folders and files `keep` refuses are never opened."""
    root = pick.root
    if not root.folder:
        if pick.keep(root.real):
            fd = _reopen(root)
            if fd is not None:
                yield fd, root.real
        return
    spec = pick.spec()
    for dfd, name, p in walk_fds(root.fd, root.real, found.walked, max_files, stop.is_set, pick.keep):
        if not pick.picks(spec, p):
            continue
        fd = open_file(name, dfd)
        if fd is not None:
            yield fd, p


def _py_files(pick: Pick, want: int, found: Found, stop: threading.Event, max_files: int) -> None:
    """Into `found` as they come: a search stopped at its deadline keeps what it had."""
    root = pick.root
    spec = pick.spec()
    for dfd, name, p in walk_fds(root.fd, root.real, found.walked, max_files, stop.is_set, pick.keep):
        if not pick.picks(spec, p):
            continue
        if len(found.files) >= want:
            found.more = True
            return
        found.files.append(p)
        try:
            found.mtimes[p] = os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mtime
        except OSError:
            found.mtimes[p] = 0.0


def _py_hits(
    pick: Pick, rx: re.Pattern[str], want: int, found: Found, stop: threading.Event, hidden: Hidden
) -> None:
    """Into `found` as they come, a file's hits once the whole file is read (a file holding a
    secret value gives none): a search stopped at its deadline keeps what it had."""
    for fd, p in _searched(pick, found, stop, 1 << 62):
        mine: list[Hit] = []
        held = False
        for n, raw in _lines(fd, stop):
            if hidden.held(raw):
                held = True
                break
            if len(mine) <= want:
                text = _decode(raw)
                if rx.search(text):
                    mine.append(Hit(p, n, text))
        if stop.is_set():  # cut inside the file: what it held further on is not known
            found.walked.stopped = True
            return
        if held:
            found.secret.append(p)
            continue
        for h in mine:
            if len(found.hits) >= want:
                found.more = True
                return
            found.hits.append(h)


async def _threaded(
    fn: Callable[[threading.Event], T], deadline: float, cancel: asyncio.Event
) -> waits.Raced[T]:
    stop = threading.Event()
    try:
        return await _race(asyncio.to_thread(fn, stop), deadline, cancel)
    finally:
        stop.set()  # a thread still walking ends at its next check


class _Owned:
    """A copy of the root's descriptor for a thread that may outlive its wait: closed by the
    thread when it ends, or here when it never started (the root's own may be closed and its
    number reused meanwhile)."""

    def __init__(self, pick: Pick) -> None:
        self.pick = dataclasses.replace(pick, root=dataclasses.replace(pick.root, fd=os.dup(pick.root.fd)))
        self.lock = threading.Lock()
        self.state = "new"  # "new", "running", "closed"

    def run(self, fn: Callable[[Pick, threading.Event], T]) -> Callable[[threading.Event], T | None]:
        def work(stop: threading.Event) -> T | None:
            with self.lock:
                if self.state != "new":
                    return None
                self.state = "running"
            try:
                return fn(self.pick, stop)
            finally:
                os.close(self.pick.root.fd)

        return work

    def release(self) -> None:
        with self.lock:
            if self.state == "new":
                self.state = "closed"
                os.close(self.pick.root.fd)


async def _in_thread(
    pick: Pick, fn: Callable[[Pick, threading.Event], T], deadline: float, cancel: asyncio.Event
) -> waits.Raced[T | None]:
    """`fn` in a thread on its own copy of the root, raced against `deadline` and `cancel`."""
    owned = _Owned(pick)
    try:
        return await _threaded(owned.run(fn), deadline, cancel)
    finally:
        owned.release()


# ---------------------------------------------------------------- ripgrep


def _raw(d: JsonObject) -> bytes:
    if "text" in d:
        return str(d["text"]).encode("utf-8", errors="surrogateescape")
    return base64.b64decode(d.get("bytes", ""))


def _path(d: JsonObject) -> Path:
    if "text" in d:
        return Path(d["text"])
    return Path(os.fsdecode(base64.b64decode(d.get("bytes", ""))))


async def _drained(stream: asyncio.StreamReader) -> None:
    while await stream.read(1 << 16):
        pass


async def _lines_of(stream: asyncio.StreamReader, each: Callable[[bytes], bool]) -> bool:
    """`stream`'s lines (without their `\\n`) to `each` until it says enough or the stream ends,
    read a chunk at a time; a line longer than MAX_LINE is skipped whole. The loop is let run
    every YIELD_EVERY lines, so that an abort is seen while buffered output is read. Whether
    anything came."""
    said = False
    pending: list[bytes] = []  # the line that has not ended yet, in pieces
    size = 0
    skipping = False  # inside a line over MAX_LINE
    n = 0
    while True:
        chunk = await stream.read(1 << 16)
        if not chunk:
            if pending and not skipping:
                each(b"".join(pending))  # a last line without its \n
            return said
        said = True
        parts = chunk.split(b"\n")
        if len(parts) == 1:
            pending.append(chunk)
            size += len(chunk)
            if size > MAX_LINE:
                pending, size, skipping = [], 0, True
            continue
        lines = [b"".join([*pending, parts[0]]), *parts[1:-1]]
        pending, size = [parts[-1]], len(parts[-1])
        for line in lines:
            if skipping:  # the end of a line too long to read
                skipping = False
                continue
            if not each(line):
                return said
            n += 1
            if n % YIELD_EVERY == 0:
                await asyncio.sleep(0)


async def _rg(argv: list[str], fds: list[int], each: Callable[[bytes], bool], found: Found) -> None:
    """Run ripgrep (in its sandbox), giving `each` its output's lines until it says enough;
    killed when it ends, however it ends."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={},
        pass_fds=fds,
    )
    assert proc.stdout is not None and proc.stderr is not None
    err = asyncio.ensure_future(proc.stderr.read(1 << 16))
    said = False
    try:
        said = await _lines_of(proc.stdout, each)
    finally:
        if proc.returncode is None:  # os.kill, not proc.kill: that one reaps a child asyncio still waits for
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGKILL)
        # ripgrep dies with bubblewrap a moment later, and only then are its pipes closed; the
        # process's end is known once they are (asyncio wakes `wait` then), so what ripgrep wrote
        # meanwhile is read away first: each bounded, nothing of the process outlives the search
        clock = waits.LoopClock()
        await waits.race(_drained(proc.stdout), clock.now() + DRAIN, None, clock, grace=0.0)
        got = await waits.race(err, clock.now() + DRAIN, None, clock, grace=0.0)
        await waits.race(proc.wait(), clock.now() + DRAIN, None, clock, grace=0.0)
        raw = got.value if got.end is End.EVENT and isinstance(got.value, bytes) else b""
        text = raw.decode("utf-8", errors="replace")
        if not said and confined.setup_failed(proc.returncode, raw):
            found.unconfined = True
        elif proc.returncode == 2 and "regex parse error" in text:  # else: unreadable files, said on stderr
            found.error = "the pattern does not compile: " + " ".join(text.split())[:500]


def _rg_listing(found: Found, pick: Pick, want: int, max_files: int) -> Callable[[bytes], bool]:
    spec = pick.spec()
    top = pick.root.beneath

    def each(line: bytes) -> bool:
        name = os.fsdecode(line)
        if not name.startswith(top) or len(name) == len(top):
            return True
        if found.walked.files >= max_files:
            found.walked.capped = True
            return False
        found.walked.files += 1
        if spec is None or spec.check_file(name[len(top) :]).include is True:
            p = Path(name)
            if pick.keep(p):
                if len(found.files) >= want:
                    found.more = True
                    return False
                found.files.append(p)
        return True

    return each


def _beneath_root(root: Root, p: Path) -> bool:
    return str(p).startswith(root.beneath) and p != root.real


@dataclass
class _File:
    """One file of ripgrep's answer while its lines come: taken or not, its hits, whether a line
    held a secret value."""

    path: Path
    taken: bool
    hits: list[Hit] = field(default_factory=list)
    held: bool = False


def _rg_matches(
    found: Found, pick: Pick, want: int, rx: re.Pattern[str], hidden: Hidden
) -> Callable[[bytes], bool]:
    spec = pick.spec()
    now: list[_File] = []  # the file whose lines are coming

    def each(line: bytes) -> bool:
        try:
            msg = json.loads(line)
        except ValueError:
            return True
        kind, data = msg.get("type"), msg.get("data") or {}
        if kind == "begin":
            p = _path(data.get("path") or {})
            now[:] = [_File(p, _beneath_root(pick.root, p) and pick.takes(spec, p))]
            return True
        if not now:
            return True
        f = now[0]
        if kind == "match" and f.taken and not f.held:
            raw = _raw(data.get("lines") or {}).removesuffix(b"\n")
            if hidden.held(raw):
                f.held = True
                f.hits.clear()
            elif len(f.hits) <= want:
                text = _decode(raw)
                # with the secret values among its patterns, ripgrep gives their lines too (any
                # case, under the pattern's flags): the pattern itself must match
                if hidden.rx is None or rx.search(text):
                    f.hits.append(Hit(f.path, int(data.get("line_number") or 0), text))
            return True
        if kind == "end":
            now.clear()
            if not f.taken:
                return True
            if f.held:
                found.secret.append(f.path)
                return True
            for h in f.hits:
                if len(found.hits) >= want:
                    found.more = True
                    return False
                found.hits.append(h)
        return True

    return each


# ---------------------------------------------------------------- the searches


def _deadline(how: Search) -> float:
    """The one deadline of a search, set as it starts: the search and its reading again share it."""
    return waits.LoopClock().now() + how.timeout


async def files(pick: Pick, want: int, how: Search, cancel: asyncio.Event) -> Found:
    """The files a search sees under the folder `pick.root`, in walk order, at most `want`
    (`more`: there were more), with their times."""
    deadline = _deadline(how)
    found = Found()
    if not how.python:
        assert how.rg is not None and how.bwrap is not None
        box = confined.box(how.bwrap, how.rg, pick.root.fd, str(pick.root.real), how.never)
        try:
            argv = [*box.argv, *RG_FLAGS, "--files", "--", str(pick.root.real)]
            each = _rg_listing(found, pick, want, how.max_files)
            found.ended = await _race(_rg(argv, box.fds, each, found), deadline, cancel, RG_GRACE)
        finally:
            box.close()
        if not found.unconfined:
            if found.ended is not None and found.ended.end is End.EVENT:
                got = await _in_thread(pick, lambda pk, stop: _mtimes(found, pk.root, stop), deadline, cancel)
                if got.end is not End.EVENT:
                    found.ended = got
            return found
    found = Found(unconfined=found.unconfined)
    found.ended = await _in_thread(
        pick, lambda pk, stop: _py_files(pk, want, found, stop, how.max_files), deadline, cancel
    )
    return found


async def hits(
    pick: Pick, pattern: str, want: int, how: Search, cancel: asyncio.Event, context: int = 0
) -> Found:
    """The lines under `pick` that `pattern` (in `subset`'s subset) matches, at most `want`,
    each read again through descriptors with the `context` lines around it (`Found.lines`)."""
    deadline = _deadline(how)
    try:
        rx = re.compile(pattern)
    except re.error as e:
        return Found(error=f"the pattern does not compile: {e}")
    found = Found()
    if not how.python and pick.root.folder:
        assert how.rg is not None and how.bwrap is not None
        box = confined.box(how.bwrap, how.rg, pick.root.fd, str(pick.root.real), how.never)
        try:
            values = [a for r in how.hidden.regexps() for a in ("--regexp", r)]
            argv = [*box.argv, *RG_FLAGS, "--json", "--regexp", pattern, *values, "--", str(pick.root.real)]
            each = _rg_matches(found, pick, want, rx, how.hidden)
            found.ended = await _race(_rg(argv, box.fds, each, found), deadline, cancel, RG_GRACE)
        finally:
            box.close()
        if found.unconfined:
            found = Found(unconfined=True)
    if how.python or not pick.root.folder or found.unconfined:
        found.ended = await _in_thread(
            pick, lambda pk, stop: _py_hits(pk, rx, want, found, stop, how.hidden), deadline, cancel
        )
    if found.error:
        return found
    # every hit is read again through descriptors before it is shown; a search cut short
    # (its deadline, the run's abort) has its hits confirmed within a grace of its own
    cut = found.ended is None or found.ended.end is not End.EVENT
    clock = waits.LoopClock()
    until = clock.now() + CONFIRM_GRACE if cut else deadline
    hits_now = list(found.hits)
    got = await _in_thread(
        pick,
        lambda pk, stop: _confirm(hits_now, pk.root, context, how.hidden, stop),
        until,
        asyncio.Event() if cut else cancel,
    )
    done = got.value if got.end is End.EVENT and got.error is None else None
    if isinstance(done, _Confirmed):
        found.hits, found.lines = done.hits, done.lines
        found.secret += [p for p in done.secret if p not in found.secret]
    else:
        found.hits = []  # not read again in time: nothing unconfirmed is shown
        if not cut:
            found.ended = got
    return found


async def _race(
    work: Awaitable[T], deadline: float, cancel: asyncio.Event, grace: float = 0.0
) -> waits.Raced[T]:
    """`work` raced against the search's deadline and the run's abort; a work that cleans up
    when cancelled (ripgrep's process) is given `grace` seconds to, a thread none."""
    return await waits.race(work, deadline, cancel, waits.LoopClock(), grace=grace)
