"""`read`, `write` and `edit`: normal use, ranges and caps, binary refusal, atomic writes, and
every error message."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from eukhe.tools import BUILTIN, Context, Result, call
from eukhe.tools.files import why

from .helpers import ctx, matches, run


def tool(cwd: Path, name: str, **args: Any) -> Result:
    return run(
        call(BUILTIN, name, args, ctx(cwd, read_max_file=10_000, read_max_output=300, read_max_line=40))
    )


# --- read ----------------------------------------------------------------------------------------------


def lines(n: int) -> str:
    return "".join(f"line {i}\n" for i in range(1, n + 1))


def test_read_numbers_the_lines(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\r\n\nfour")
    matches(r"1\tone\n2\ttwo\n3\t\n4\tfour", tool(tmp_path, "read", path="a.txt"), error=False)
    r = tool(tmp_path, "read", path=str(tmp_path / "a.txt"), limit=1)
    matches(r"1\tone\n\[showed lines 1-1 of 4; read more with offset=2\]", r, error=False)


def test_read_a_range_says_where_to_go_on(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(lines(20))
    matches(
        r" 9\tline 9\n10\tline 10\n\[showed lines 9-10 of 20; read more with offset=11\]",
        tool(tmp_path, "read", path="a.txt", offset=9, limit=2),
        error=False,
    )
    matches(r"19\tline 19\n20\tline 20", tool(tmp_path, "read", path="a.txt", offset=19), error=False)
    matches(r"20\tline 20", tool(tmp_path, "read", path="a.txt", offset=20, limit=5), error=False)
    matches(
        r"'a.txt' has 20 lines; offset 21 is past the end",
        tool(tmp_path, "read", path="a.txt", offset=21),
        error=True,
    )


def test_read_caps_its_output(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(lines(100))
    r = tool(tmp_path, "read", path="a.txt")
    matches(
        r" 1\tline 1\n.*\n(\d+)\tline \1\n\[output capped at 300 characters: showed lines 1-\1 of 100; "
        r"read more with offset=\d+\]",
        r,
        error=False,
    )
    assert len(r.content) < 400


def test_read_cuts_long_lines(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x" * 1000 + "\nshort\n")
    matches(
        r"1\tx{40} \[… line cut: 1,001 bytes in all\]\n2\tshort",
        tool(tmp_path, "read", path="a.txt"),
        error=False,
    )


def test_read_refuses_a_whole_big_file_but_reads_a_range(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text(lines(2000))  # 18,893 bytes, over the 10,000 cap
    matches(
        r"'big.txt' is 18,893 bytes, over the 10,000 bytes cap for reading a whole file; "
        r"read a range of it with offset and limit",
        tool(tmp_path, "read", path="big.txt"),
        error=True,
    )
    matches(
        r"1500\tline 1500\n\[showed lines 1500-1500; read more with offset=1501\]",
        tool(tmp_path, "read", path="big.txt", offset=1500, limit=1),
        error=False,
    )


def test_read_refuses_binary_files(tmp_path: Path) -> None:
    (tmp_path / "x.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0" + bytes(range(256)) * 48)
    matches(
        r"'x.png' is a binary file \(12,299 bytes\); read reads text files",
        tool(tmp_path, "read", path="x.png"),
        error=True,
    )
    (tmp_path / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    matches(
        r"'latin1.txt' is a binary file \(5 bytes\); read reads text files",
        tool(tmp_path, "read", path="latin1.txt"),
        error=True,
    )


def test_read_marks_bad_utf8_past_the_sniffed_start(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"a\n" * 5000 + b"caf\xe9\n")
    r = tool(tmp_path, "read", path="a.txt", offset=5001)
    matches(r"5001\tcaf�\n\[some bytes are not valid UTF-8 and are shown as �\]", r, error=False)


def test_read_says_why_it_cannot(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "d").mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("x")
    secret.chmod(0)
    os.mkfifo(tmp_path / "fifo")
    matches(r"'empty.txt' is empty \(0 bytes\)", tool(tmp_path, "read", path="empty.txt"), error=False)
    matches(r"'zzz.txt' does not exist", tool(tmp_path, "read", path="zzz.txt"), error=True)
    matches(
        r"'note.txt' does not exist; did you mean 'notes.txt'\?",
        tool(tmp_path, "read", path="note.txt"),
        error=True,
    )
    matches(
        r"'no/such/x.txt' does not exist \(there is no directory 'no/such'\)",
        tool(tmp_path, "read", path="no/such/x.txt"),
        error=True,
    )
    matches(
        r"'d' is a directory; read reads files \(list a folder with ls\)",
        tool(tmp_path, "read", path="d"),
        error=True,
    )
    matches(
        r"'fifo' is not a regular file \(a device, pipe or socket\); read reads files",
        tool(tmp_path, "read", path="fifo"),
        error=True,
    )
    if os.geteuid() != 0:  # root reads anything
        matches(
            r"'secret.txt' cannot be read: permission denied",
            tool(tmp_path, "read", path="secret.txt"),
            error=True,
        )


# --- write ---------------------------------------------------------------------------------------------


def test_write_creates_with_parents_and_says_how_much(tmp_path: Path) -> None:
    matches(
        r"created 'a/b/c.txt': 9 bytes, 2 lines",
        tool(tmp_path, "write", path="a/b/c.txt", content="héllo\nyo"),
        error=False,
    )
    assert (tmp_path / "a/b/c.txt").read_text() == "héllo\nyo"
    matches(
        r"overwrote 'a/b/c.txt': 0 bytes, 0 lines",
        tool(tmp_path, "write", path="a/b/c.txt", content=""),
        error=False,
    )
    matches(
        r"overwrote 'a/b/c.txt': 1 byte, 1 line",
        tool(tmp_path, "write", path="a/b/c.txt", content="\n"),
        error=False,
    )


def test_write_is_atomic_and_keeps_the_mode(tmp_path: Path) -> None:
    f = tmp_path / "run.sh"
    f.write_text("old")
    f.chmod(0o751)
    inode = f.stat().st_ino
    tool(tmp_path, "write", path="run.sh", content="#!/bin/sh\n")
    assert f.read_text() == "#!/bin/sh\n"
    assert f.stat().st_mode & 0o7777 == 0o751
    assert f.stat().st_ino != inode  # replaced, not rewritten in place
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.sh"]  # no temporary file left


def test_a_new_file_gets_the_umask_mode(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        tool(tmp_path, "write", path="n.txt", content="x")
    finally:
        os.umask(old)
    assert (tmp_path / "n.txt").stat().st_mode & 0o7777 == 0o644


def test_write_goes_through_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("old")
    (tmp_path / "link.txt").symlink_to("real.txt")
    tool(tmp_path, "write", path="link.txt", content="new")
    assert (tmp_path / "link.txt").is_symlink() and (tmp_path / "real.txt").read_text() == "new"


def test_write_says_why_it_cannot(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "f").write_text("x")
    matches(
        r"'d' is a directory; write writes regular files only",
        tool(tmp_path, "write", path="d", content="x"),
        error=True,
    )
    matches(
        r"'f/x.txt' cannot be written: a part of its directory path is a file",
        tool(tmp_path, "write", path="f/x.txt", content="x"),
        error=True,
    )
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o555)
        matches(
            r"'ro/x.txt' cannot be written: permission denied",
            tool(tmp_path, "write", path="ro/x.txt", content="x"),
            error=True,
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["d", "f", *(["ro"] if os.geteuid() else [])])


# --- edit ----------------------------------------------------------------------------------------------


def edit(cwd: Path, old: str, new: str, path: str = "a.py") -> Result:
    return tool(cwd, "edit", path=path, old_text=old, new_text=new)


SOURCE = "def f():\n    return 1\n\n\ndef g():\n    return 1\n"


def test_edit_replaces_a_unique_match(tmp_path: Path) -> None:
    f = tmp_path / "a.py"
    f.write_text(SOURCE)
    f.chmod(0o700)
    matches(
        r"edited 'a.py': replaced lines 5-6 with 3 lines",
        edit(tmp_path, "def g():\n    return 1\n", "def g():\n    x = 2\n    return x\n"),
        error=False,
    )
    assert f.read_text() == SOURCE.replace("def g():\n    return 1", "def g():\n    x = 2\n    return x")
    assert f.stat().st_mode & 0o7777 == 0o700
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py"]
    matches(r"edited 'a.py': replaced line 1 with 1 line", edit(tmp_path, "def f", "def h"), error=False)
    matches(r"edited 'a.py': deleted lines 1-2", edit(tmp_path, "def h():\n    return 1\n", ""), error=False)
    assert f.read_text().startswith("\n\ndef g():")


def test_edit_refuses_several_matches(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(SOURCE)
    matches(
        r"old_text matches 2 times in 'a.py' \(at lines 2, 6\); it must match exactly once: "
        r"add surrounding lines to old_text to make it unique",
        edit(tmp_path, "    return 1", "    return 2"),
        error=True,
    )
    (tmp_path / "b.txt").write_text("aaa")
    matches(
        r"old_text matches 2 times in 'b.txt' \(at lines 1, 1\).*",
        edit(tmp_path, "aa", "b", "b.txt"),
        error=True,
    )
    assert (tmp_path / "a.py").read_text() == SOURCE and (tmp_path / "b.txt").read_text() == "aaa"


def test_edit_says_when_text_is_missing_or_differs_in_whitespace(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(SOURCE)
    matches(
        r"old_text was not found in 'a.py'; read the file and copy the text to replace exactly",
        edit(tmp_path, "def k():", "x"),
        error=True,
    )
    matches(
        r"old_text was not found in 'a.py', but it differs only in whitespace from the text at lines 1-2 "
        r"\(indentation, spaces or line breaks differ\); copy the text exactly:\n"
        r"1\tdef f\(\):\n2\t    return 1",
        edit(tmp_path, "def f():\n  return 1", "x"),
        error=True,
    )
    matches(
        r"old_text was not found in 'a.py'; its first line appears at line 1, but the lines after it differ; "
        r"read the file and copy the text to replace exactly",
        edit(tmp_path, "def f():\n    return 2", "x"),
        error=True,
    )
    assert (tmp_path / "a.py").read_text() == SOURCE


def test_edit_keeps_crlf_line_endings(tmp_path: Path) -> None:
    f = tmp_path / "w.txt"
    f.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    matches(
        r"edited 'w.txt': replaced lines 1-2 with 2 lines \(the file has CRLF line endings; they were kept\)",
        edit(tmp_path, "one\ntwo\n", "1\n2\n", "w.txt"),
        error=False,
    )
    assert f.read_bytes() == b"1\r\n2\r\nthree\r\n"


@pytest.mark.parametrize(
    ("old", "new", "path", "message"),
    [
        (
            "",
            "x",
            "a.py",
            r"old_text is empty; give the exact text to replace \(to write a whole file, use write\)",
        ),
        ("x", "x", "a.py", r"old_text and new_text are the same; the edit would change nothing"),
        ("x", "y", "nope.py", r"'nope.py' does not exist \(to create a file, use write\)"),
        ("x", "y", "d", r"'d' is a directory; edit edits regular files only"),
        ("x", "y", "b.bin", r"'b.bin' is a binary file \(3 bytes\); edit edits text files"),
    ],
)
def test_edit_errors(tmp_path: Path, old: str, new: str, path: str, message: str) -> None:
    (tmp_path / "a.py").write_text(SOURCE)
    (tmp_path / "d").mkdir()
    (tmp_path / "b.bin").write_bytes(b"x\0y")
    matches(message, edit(tmp_path, old, new, path), error=True)


def test_the_default_cap_is_10_mb(tmp_path: Path) -> None:
    (tmp_path / "big.log").write_bytes(b"0123456789abcde\n" * 700_000)  # 11,200,000 bytes
    r = run(call(BUILTIN, "read", {"path": "big.log"}, Context(tmp_path)))
    matches(r"'big.log' is 11,200,000 bytes, over the 10 MB cap for reading a whole file; .*", r, error=True)
    r = run(call(BUILTIN, "read", {"path": "big.log", "offset": 699_999}, Context(tmp_path)))
    matches(r"699999\t0123456789abcde\n700000\t0123456789abcde", r, error=False)


def test_why_names_the_reason() -> None:
    assert why(PermissionError(13, "Permission denied")) == "permission denied"
    assert why(NotADirectoryError(20, "Not a directory")) == "a part of the path is not a directory"
    assert why(OSError(28, "No space left on device")) == "No space left on device"
