"""The guard's walk, on the host (no sandbox needed): it lists again only the folders that changed,
tells what a window made from what was there, never removes what only moved or what a person
allowed, says when it was cut and goes further the next time, and removes nothing outside the
workspace, even when a folder on the way is swapped for a link. And `ending`: the wait for a
sandbox's pid namespace to end, which bubblewrap's own exit does not mark."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from pathlib import Path

from eukhe.rules import registry
from eukhe.sandbox import ending
from eukhe.sandbox.guard import PROTECTED, Guard, _Mark, _remove
from tests.sandbox.test_bwrap import needs_bwrap


def tree(root: Path, width: int, depth: int) -> int:
    """width ** depth leaf folders under `root`; how many folders in all (root included)."""
    n = 1
    level = [root]
    for _ in range(depth):
        level = [d / f"d{i}" for d in level for i in range(width)]
        for d in level:
            d.mkdir(parents=True)
        n += len(level)
    time.sleep(0.05)  # later changes come in a later clock tick than these folders' ctimes
    return n


def test_a_look_lists_again_only_the_folders_whose_ctime_moved(tmp_path: Path) -> None:
    n = tree(tmp_path, 4, 3)
    g = Guard(settle_ns=0)
    first = g.begin(str(tmp_path))
    assert (first.folders, first.listed, first.cut) == (n, n, None)
    again = g.end(str(tmp_path))
    assert (again.folders, again.listed, again.removed) == (n, 0, ())
    g.begin(str(tmp_path))
    (tmp_path / "d1" / "d2" / ".git").mkdir()  # made while a window is open
    (tmp_path / "d3" / "new" / "deeper").mkdir(parents=True)
    (tmp_path / "d3" / "new" / "deeper" / ".mcp.json").write_text("{}")
    made = g.end(str(tmp_path))
    assert made.removed == (("d1/d2/.git", "folder"), ("d3/new/deeper/.mcp.json", "file"))
    assert made.listed == 4  # d1/d2, d3, and the two new folders
    assert not (tmp_path / "d1" / "d2" / ".git").exists()
    assert (tmp_path / "d3" / "new" / "deeper").is_dir()


def test_what_a_person_makes_between_windows_stays_and_is_held(tmp_path: Path) -> None:
    g = Guard(settle_ns=0)
    g.begin(str(tmp_path))
    g.end(str(tmp_path))
    (tmp_path / "sub" / ".git").mkdir(parents=True)  # no window open: a person's
    (tmp_path / ".mcp.json").write_text("{}")
    opened = g.begin(str(tmp_path))
    assert opened.removed == ()
    assert opened.protected == (str(tmp_path / ".mcp.json"), str(tmp_path / "sub" / ".git"))
    closed = g.end(str(tmp_path))
    assert closed.removed == () and (tmp_path / "sub" / ".git").is_dir()


def test_a_name_sandbox_writable_lifts_is_neither_held_nor_removed(tmp_path: Path) -> None:
    g = Guard(settle_ns=0)
    lifted = [str(tmp_path / "sub" / ".git")]
    g.begin(str(tmp_path), lifted)
    (tmp_path / "sub" / ".git").mkdir(parents=True)
    assert g.end(str(tmp_path), lifted).removed == ()
    assert g.begin(str(tmp_path), lifted).protected == ()
    g.end(str(tmp_path), lifted)


def test_a_repository_that_only_moved_is_not_removed(tmp_path: Path) -> None:
    """A folder above a held `.git` renamed (the sandbox can: only the `.git` is a mount point)."""
    (tmp_path / "vendor" / "lib" / ".git").mkdir(parents=True)
    time.sleep(0.05)
    g = Guard(settle_ns=0)
    g.begin(str(tmp_path))
    (tmp_path / "vendor" / "lib").rename(tmp_path / "vendor" / "lib2")
    closed = g.end(str(tmp_path))
    assert closed.removed == () and (tmp_path / "vendor" / "lib2" / ".git").is_dir()
    assert closed.protected == (str(tmp_path / "vendor" / "lib2" / ".git"),)


def test_a_cut_look_says_so_and_the_next_goes_further(tmp_path: Path) -> None:
    n = tree(tmp_path, 3, 3)  # 40 folders
    g = Guard(settle_ns=0, max_listed=15)
    looks = [g.begin(str(tmp_path)), g.end(str(tmp_path)), g.begin(str(tmp_path))]
    assert [c.listed for c in looks] == [15, 15, 10]
    assert [c.cut is None for c in looks] == [False, False, True]
    assert "it stopped after listing 15 folders (at most 15 a look)" in (looks[0].cut or "")
    note = looks[0].notes("this command")
    assert note and note[-1].startswith(
        "[the look for what eukhe and git load (.git, .eukhe, .mcp.json, .claude, ...) in the workspace "
        "was cut"
    )
    (tmp_path / "d2" / "d2" / "d2" / ".eukhe").mkdir()
    closed = g.end(str(tmp_path))
    assert closed.removed == (("d2/d2/d2/.eukhe", "folder"),) and closed.folders == n


def test_a_link_is_held_where_it_leads_inside_and_a_new_target_is_its_change(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "mcp.json").write_text("{}")
    (tmp_path / ".mcp.json").symlink_to("conf/mcp.json")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".mcp.json").symlink_to("/etc/hostname")  # outside: read-only already
    (tmp_path / "sub" / ".eukhe").symlink_to("nothing")  # leads nowhere yet
    time.sleep(0.05)
    g = Guard(settle_ns=0)
    opened = g.begin(str(tmp_path))
    assert opened.protected == (str(tmp_path / "conf" / "mcp.json"),)
    (tmp_path / "sub" / "nothing").mkdir()  # made through the link: .eukhe leads somewhere now
    closed = g.end(str(tmp_path))
    assert closed.removed == (("sub/.eukhe", "link"),)
    assert (tmp_path / ".mcp.json").is_symlink() and (tmp_path / "sub" / ".mcp.json").is_symlink()


def test_removal_never_follows_a_link_out_of_the_workspace(tmp_path: Path) -> None:
    """A kernel's thread swaps a folder on the way for a link between the look and the removal."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sub" / ".git").mkdir(parents=True)
    (outside / ".git").mkdir(parents=True)
    mark = _Mark("folder", (root / "sub" / ".git").stat().st_ino)
    (root / "sub").rename(root / "was")
    (root / "sub").symlink_to(outside)
    why = _remove(str(root), str(root / "sub"), ".git", mark)
    assert why is not None and why.startswith("its folder could not be opened without following a link")
    assert (outside / ".git").is_dir()
    other = _Mark("folder", (outside / ".git").stat().st_ino + 1)
    assert (
        _remove(str(root), str(root / "was"), ".git", other) == "it was replaced while it was being removed"
    )
    assert (
        _remove(str(root), str(root / "was"), ".git", mark) is None and not (root / "was" / ".git").exists()
    )


def test_the_names_are_the_registrys() -> None:
    """What the guard holds is what eukhe and git load (`rules.registry`), never a list of its own."""
    assert set(PROTECTED) == {".git", ".eukhe", ".mcp.json", ".claude", ".husky"}
    assert PROTECTED == tuple(registry.NAMES)


@needs_bwrap
def test_the_wait_for_a_namespace_lasts_until_its_last_process_is_gone(tmp_path: Path) -> None:
    """Without --die-with-parent the namespace outlives bubblewrap by its background process: the
    wait ends only once that process has (its marker written), never at bubblewrap's exit."""
    marker = tmp_path / "marker"
    info, w = os.pipe()
    bwrap = [
        "bwrap", "--ro-bind", "/", "/", "--bind", str(tmp_path), str(tmp_path), "--dev", "/dev",
        "--proc", "/proc", "--unshare-pid", "--info-fd", str(w), "--",
        "bash", "-c", f"(sleep 0.7; touch {marker}) >/dev/null 2>&1 & true",
    ]  # fmt: skip
    proc = subprocess.Popen(bwrap, pass_fds=(w,))
    os.close(w)
    try:
        assert proc.wait(10) == 0
        inner = ending.read_info(info)
        assert inner is not None and not ending.gone(inner) and not marker.exists()
        assert asyncio.run(ending.ended(inner, grace=5.0))
        assert marker.exists() and ending.gone(inner)
    finally:
        os.close(info)


@needs_bwrap
def test_a_namespace_that_outlives_the_grace_is_killed(tmp_path: Path) -> None:
    info, w = os.pipe()
    bwrap = [
        "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid",
        "--info-fd", str(w), "--", "bash", "-c", "sleep 60 >/dev/null 2>&1 & true",
    ]  # fmt: skip
    proc = subprocess.Popen(bwrap, pass_fds=(w,))
    os.close(w)
    try:
        proc.wait(10)
        inner = ending.read_info(info)
        assert inner is not None
        began = time.monotonic()
        assert ending.ended_now(inner, grace=0.3) and time.monotonic() - began < 2.0
    finally:
        os.close(info)
