"""The attacks of odd files on `write` and `edit`: a FIFO, a device node, a socket or a directory,
named directly or through a symlink, is refused and left as it was (the atomic write's rename would
replace it with a regular file, and opening a FIFO blocks until a peer opens it); and `edit` refuses a
file over `read`'s cap before reading it (a sparse file of a few GB, not real data)."""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import threading
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from eukhe.rules.confine import Act
from eukhe.tools import BUILTIN, Context, Result, call
from eukhe.tools.reach import slot

from .helpers import ctx, matches, run

NULL = os.makedev(1, 3)
"""The major and minor of /dev/null: a device node that is harmless to write to."""


def write(cwd: Path, path: str) -> Result:
    return run(call(BUILTIN, "write", {"path": path, "content": "pwned\n"}, ctx(cwd)))


def edit(cwd: Path, path: str) -> Result:
    return run(call(BUILTIN, "edit", {"path": path, "old_text": "x", "new_text": "pwned"}, ctx(cwd)))


def promptly(fifo: Path, act: Callable[[], Result], within: float = 5.0) -> Result:
    """`act()`'s result, or the test fails if it still runs after `within` seconds (an open of the FIFO
    blocked): the FIFO's other ends are then opened, so the blocked call ends and the test never hangs."""
    out: list[Result] = []
    worker = threading.Thread(target=lambda: out.append(act()), daemon=True)
    worker.start()
    worker.join(within)
    if worker.is_alive():
        # a reader frees a writer blocked in open, and a writer a reader
        for flags in (os.O_RDONLY | os.O_NONBLOCK, os.O_WRONLY | os.O_NONBLOCK):
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, flags))
        worker.join(within)
        pytest.fail(f"the call was still blocked on the FIFO '{fifo}' after {within} s")
    return out[0]


def device(path: Path) -> None:
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, NULL)
    except PermissionError:
        pytest.skip("making a device node needs CAP_MKNOD")


@pytest.mark.parametrize("tool", ["write", "edit"])
@pytest.mark.parametrize("through", ["direct", "symlink"])
def test_a_fifo_is_refused_promptly_and_left_a_fifo(tmp_path: Path, tool: str, through: str) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    name = "fifo"
    if through == "symlink":
        (tmp_path / "link").symlink_to("fifo")
        name = "link"
    act = write if tool == "write" else edit
    r = promptly(fifo, lambda: act(tmp_path, name))
    does = "write writes" if tool == "write" else "edit edits"
    lead = "is" if through == "direct" else f"leads to '{fifo}', which is"
    matches(rf"'{name}' {lead} a FIFO \(named pipe\); {does} regular files only", r, error=True)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted({"fifo", name})  # no temporary file left


@pytest.mark.parametrize("tool", ["write", "edit"])
@pytest.mark.parametrize("through", ["direct", "symlink"])
def test_a_device_node_is_refused_and_left_a_device(tmp_path: Path, tool: str, through: str) -> None:
    node = tmp_path / "null"
    device(node)
    name = "null"
    if through == "symlink":
        (tmp_path / "link").symlink_to(node)
        name = "link"
    r = (write if tool == "write" else edit)(tmp_path, name)
    does = "write writes" if tool == "write" else "edit edits"
    lead = "is" if through == "direct" else f"leads to '{node}', which is"
    matches(rf"'{name}' {lead} a character device; {does} regular files only", r, error=True)
    st = os.lstat(node)
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == NULL


@pytest.mark.parametrize("tool", ["write", "edit"])
def test_a_socket_and_a_directory_are_refused_and_left_as_they_were(tmp_path: Path, tool: str) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "dlink").symlink_to("d")
    act = write if tool == "write" else edit
    does = "write writes" if tool == "write" else "edit edits"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(tmp_path / "sock"))
        matches(rf"'sock' is a socket; {does} regular files only", act(tmp_path, "sock"), error=True)
        assert stat.S_ISSOCK(os.lstat(tmp_path / "sock").st_mode)
    matches(rf"'d' is a directory; {does} regular files only", act(tmp_path, "d"), error=True)
    matches(
        rf"'dlink' leads to '{tmp_path / 'd'}', which is a directory; {does} regular files only",
        act(tmp_path, "dlink"),
        error=True,
    )
    assert (tmp_path / "d").is_dir() and list((tmp_path / "d").iterdir()) == []


def test_a_symlink_loop_is_refused_and_left_a_link(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    for act, does in ((write, "write writes"), (edit, "edit edits")):
        matches(
            rf"'a' is a symlink loop \(its links never reach a file\); "
            rf"{does} regular files only",
            act(tmp_path, "a"),
            error=True,
        )
    assert os.readlink(tmp_path / "a") == "b" and os.readlink(tmp_path / "b") == "a"


def test_edit_refuses_a_sparse_file_over_the_cap_before_reading_it(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_text("x = 1\n")
    os.truncate(big, 3 * 1024**3)  # 3 GB of holes: no disk, and reading it whole would take 3 GB of memory
    tracemalloc.start()
    began = time.monotonic()
    try:
        r = run(
            call(BUILTIN, "edit", {"path": "big.txt", "old_text": "x", "new_text": "y"}, Context(tmp_path))
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    matches(
        r"'big.txt' is 3,221,225,472 bytes, over the 10 MB cap for editing a file \(edit reads it whole\); "
        r"change a file this big with bash \(e\.g\. sed\)",
        r,
        error=True,
    )
    assert peak < 16 * 1024**2, f"edit took {peak:,} bytes: it read the file"
    assert time.monotonic() - began < 5
    with big.open("rb") as f:
        assert big.stat().st_size == 3 * 1024**3 and f.read(6) == b"x = 1\n"


def test_edit_reads_a_file_at_the_cap(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("x" * 99 + "\n")  # 100 bytes: at the cap, not over it
    r = run(
        call(
            BUILTIN,
            "edit",
            {"path": "a.txt", "old_text": "x\n", "new_text": "y\n"},
            ctx(tmp_path, read_max_file=100),
        )
    )
    matches(r"edited 'a.txt': replaced line 1 with 1 line", r, error=False)
    f.write_text("x" * 100 + "\n")
    r = run(
        call(
            BUILTIN,
            "edit",
            {"path": "a.txt", "old_text": "x\n", "new_text": "y\n"},
            ctx(tmp_path, read_max_file=100),
        )
    )
    matches(r"'a.txt' is 101 bytes, over the 100 bytes cap for editing a file .*", r, error=True)
    assert f.read_text() == "x" * 100 + "\n"


def test_the_atomic_write_itself_replaces_only_a_regular_file(tmp_path: Path) -> None:
    # the second line of defence, for any caller: the rename would swap the FIFO for a regular file
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "link").symlink_to("fifo")
    for name in ("fifo", "link"):
        fifo_said = r"it is a FIFO \(named pipe\), not a regular file"
        with (
            slot(tmp_path / name, lambda act, real: None, name) as there,
            pytest.raises(OSError, match=fifo_said),
        ):
            there.replace(b"pwned\n")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "link"]


@pytest.mark.parametrize("tool", ["write", "edit"])
def test_a_fifo_made_after_the_check_is_still_refused_promptly(tmp_path: Path, tool: str) -> None:
    # the race: the path was a regular file when the boundary decided on it, a FIFO when opened or
    # replaced (the boundary's own answer is the moment the FIFO is put there)
    fifo = tmp_path / "fifo"
    fifo.write_text("x\n")

    def swapped(act: Act, real: str) -> None:
        if os.path.lexists(fifo) and not stat.S_ISFIFO(os.lstat(fifo).st_mode):
            fifo.unlink()
            os.mkfifo(fifo)

    args = {"path": "fifo", "content": "pwned\n"}
    if tool == "edit":
        args = {"path": "fifo", "old_text": "x", "new_text": "pwned"}
    here = Context(tmp_path, reach=swapped)
    r = promptly(fifo, lambda: run(call(BUILTIN, tool, args, here)))
    message = {
        "write": r"'fifo' cannot be written: it is a FIFO \(named pipe\), not a regular file",
        "edit": r"'fifo' is a FIFO \(named pipe\); edit edits regular files only",
    }[tool]
    matches(message, r, error=True)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_edit_of_a_process_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    # a /proc file says 0 bytes and is made as it is read; a process's own is never touched at all
    status = Path("/proc/self/status")
    assert status.stat().st_size == 0 and len(status.read_bytes()) > 100
    r = run(
        call(
            BUILTIN,
            "edit",
            {"path": str(status), "old_text": "x", "new_text": "y"},
            ctx(tmp_path, read_max_file=100),
        )
    )
    matches(
        r"not edited: '/proc/self/status' \(it leads to '/proc/\d+/status'\) may not be touched: it reaches "
        r"a process's memory or environment \(/proc/<pid>/\), which no tool may touch",
        r,
        error=True,
    )
