"""Checkpoints and `eukhe rewind --files`: a run's first call that may write records the
project's files in a shadow repository in the home; a rewind puts them back (what `write`,
`edit` and bash changed), names the files a person changed by hand since and keeps them, and
holds after a crash between the checkpoint and its step."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

import pytest

from eukhe.ai.faux import FauxServer, parse
from eukhe.run import checkpoint
from eukhe.run.checkpoint import Shadow, project_of
from tests.proc import eukhe

SCRIPT = [
    {"calls": [{"name": "write", "arguments": {"path": "a.txt", "content": "new\n"}}]},
    {"calls": [{"name": "edit", "arguments": {"path": "d.txt", "old_text": "one", "new_text": "two"}}]},
    {"calls": [{"name": "bash", "arguments": {"command": "echo made > b.txt && rm c.txt"}}]},
    "Done.",
]


def project(tmp_path: Path) -> Path:
    p = tmp_path / "proj"
    p.mkdir()
    (p / "a.txt").write_text("old\n")
    (p / "c.txt").write_text("keep\n")
    (p / "d.txt").write_text("one\n")
    (p / ".gitignore").write_text("ignored/\n")
    (p / "ignored").mkdir()
    (p / "ignored" / "big.bin").write_text("not in a checkpoint\n")
    return p


def run(p: Path, home: Path, url: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return eukhe("run", "--model", "vllm/m", "--base-url", url, "--json", "change things", cwd=p, home=home,
                 extra=extra or None)  # fmt: skip


def session_of(done: subprocess.CompletedProcess[str]) -> str:
    line = next(x for x in done.stderr.splitlines() if x.startswith("session "))
    return line.split()[1].rstrip(",")


def files(p: Path) -> dict[str, str]:
    return {str(f.relative_to(p)): f.read_text() for f in sorted(p.rglob("*")) if f.is_file()}


def test_a_rewind_puts_back_what_write_edit_and_bash_changed(tmp_path: Path) -> None:
    p, home = project(tmp_path), tmp_path / "home"
    before = files(p)
    with FauxServer(parse(SCRIPT)) as server:
        done = run(p, home, server.url)
    assert done.returncode == 0, done.stderr
    changed = {**before, "a.txt": "new\n", "b.txt": "made\n", "d.txt": "two\n"}
    del changed["c.txt"]
    assert files(p) == changed
    session = session_of(done)
    plan = eukhe("rewind", session, "--to", "1", cwd=p, home=home)  # stdin is no terminal: the plan only
    assert plan.returncode == 0, plan.stderr
    assert plan.stdout.splitlines()[1:5] == [
        "  restore a.txt",
        "  remove b.txt",
        "  restore c.txt",
        "  restore d.txt",
    ]
    assert "not applied: run it again with --yes" in plan.stdout and "c.txt" not in files(p)
    done = eukhe("rewind", session, "--to", f"{session}/0001", "--yes", cwd=p, home=home)
    assert done.returncode == 0, done.stderr
    assert "restored 4 files" in done.stdout
    assert files(p) == before
    shadow = Shadow(project_of(p), home)
    assert shadow.git_dir.is_relative_to(home) and not (p / ".git").exists()  # never the project's own


def test_a_file_changed_by_hand_since_is_named_and_kept(tmp_path: Path) -> None:
    p, home = project(tmp_path), tmp_path / "home"
    with FauxServer(parse(SCRIPT)) as server:
        done = run(p, home, server.url)
    assert done.returncode == 0, done.stderr
    (p / "a.txt").write_text("my own fix\n")  # by hand, after the run
    done = eukhe("rewind", session_of(done), "--to", "1", "--yes", cwd=p, home=home)
    assert done.returncode == 0, done.stderr
    assert "  restore a.txt  (changed by hand: kept unless you confirm)" in done.stdout
    assert "restored 3 files; kept 1 you changed by hand" in done.stdout
    assert (p / "a.txt").read_text() == "my own fix\n" and (p / "c.txt").read_text() == "keep\n"


def test_a_crash_between_the_checkpoint_and_its_step_keeps_the_checkpoint_from_before(tmp_path: Path) -> None:
    p, home = project(tmp_path), tmp_path / "home"
    before = files(p)
    marker = tmp_path / "crashed"
    with FauxServer(parse(SCRIPT)) as server:
        crashed = run(p, home, server.url, EUKHE_CRASH_AT=f"checkpointed:{marker}")
        assert crashed.returncode != 0 and marker.exists(), crashed.stderr
        resumed = eukhe("resume", cwd=p, home=home, extra={"EUKHE_CRASH_AT": f"checkpointed:{marker}"})
        assert resumed.returncode == 0, resumed.stderr
    assert (p / "a.txt").read_text() == "new\n" and (p / "b.txt").exists()  # the resumed run did its work
    done = eukhe("rewind", session_of(crashed), "--to", "1", "--yes", cwd=p, home=home)
    assert done.returncode == 0, done.stderr
    assert files(p) == before


def test_a_rewind_with_nothing_to_undo_says_so(tmp_path: Path) -> None:
    p, home = project(tmp_path), tmp_path / "home"
    with FauxServer(parse(["Only words."])) as server:
        done = run(p, home, server.url)
    assert done.returncode == 0, done.stderr
    said = eukhe("rewind", session_of(done), "--to", "1", cwd=p, home=home)
    assert said.returncode == 0 and "nothing to rewind" in said.stdout
    bad = eukhe("rewind", session_of(done), "--to", "x", cwd=p, home=home)
    assert bad.returncode == 2 and "--to 'x': give a run's number" in bad.stderr
    both = eukhe("rewind", session_of(done), "--to", "1", "--both", cwd=p, home=home)
    assert both.returncode == 0 and "nothing to rewind" in both.stdout  # the files: none changed
    assert "  run 1: change things" in both.stdout and "not applied" in both.stdout  # the conversation
    assert json.loads(done.stdout.strip().splitlines()[-1])["outcome"] == "answered"
    assert os.path.isdir(p)


def test_no_checkpoint_of_a_huge_tree_or_a_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = project(tmp_path)  # three files a search sees
    monkeypatch.setattr(checkpoint, "MAX_FILES", 2)
    with pytest.raises(checkpoint.CheckpointError, match="holds more than 2 files"):
        asyncio.run(Shadow(p, tmp_path / "home").take("S/0001"))
    with pytest.raises(checkpoint.CheckpointError, match="is a home folder or the root"):
        asyncio.run(Shadow(Path.home(), tmp_path / "home").take("S/0001"))


def test_a_home_inside_the_project_is_never_in_its_checkpoints(tmp_path: Path) -> None:
    """With the home in the project (EUKHE_HOME=./home), its store and the shadow repository are
    not snapshotted: a rewind never puts an old store back over the live one."""
    p = project(tmp_path)
    home = p / "home"
    home.mkdir()
    (home / "eukhe.sqlite").write_text("the store now\n")
    shadow = Shadow(project_of(p), home)
    asyncio.run(shadow.take("s/0001"))
    (home / "eukhe.sqlite").write_text("the store later\n")
    (p / "a.txt").write_text("changed\n")
    commit, _name, changes, _hand, _how = asyncio.run(checkpoint.plan(shadow, "s", 1))
    assert commit is not None and [c.path for c in changes] == ["a.txt"]
    asyncio.run(shadow.restore(commit, changes))
    assert (home / "eukhe.sqlite").read_text() == "the store later\n" and (p / "a.txt").read_text() == "old\n"


def test_a_rewind_writes_and_removes_nothing_outside_through_a_link_planted_since(tmp_path: Path) -> None:
    """The attack on a rewind (issue 40): after the checkpoint, a folder of the project becomes a
    link to one outside, which holds files of the same names. Removing `sub/new.txt` (added since)
    must not remove the file outside (on the code before, it went through the link), and putting
    back `deep/a.txt` through a folder turned link is refused, touching nothing."""
    p = project(tmp_path)
    (p / "sub").mkdir()
    (p / "deep").mkdir()
    (p / "deep" / "a.txt").write_text("old\n")
    shadow = Shadow(project_of(p), tmp_path / "home")
    asyncio.run(shadow.take("s/0001"))
    (p / "sub" / "new.txt").write_text("added since\n")
    commit, _name, changes, _hand, _how = asyncio.run(checkpoint.plan(shadow, "s", 1))
    assert commit is not None and [c.path for c in changes] == ["sub/new.txt"]
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "new.txt").write_text("the victim's\n")
    (victim / "a.txt").write_text("the victim's\n")
    os.rename(p / "sub", tmp_path / "moved")
    (p / "sub").symlink_to(victim)
    asyncio.run(shadow.restore(commit, changes))
    assert (victim / "new.txt").read_text() == "the victim's\n"
    (p / "deep" / "a.txt").write_text("changed\n")
    commit, _name, changes, _hand, _how = asyncio.run(checkpoint.plan(shadow, "s", 1))
    os.rename(p / "deep", tmp_path / "moved-deep")
    (p / "deep").symlink_to(victim)
    with pytest.raises(checkpoint.CheckpointError, match=r"^deep/a.txt could not be put back: a part of"):
        asyncio.run(shadow.restore(commit, changes))
    assert (victim / "a.txt").read_text() == "the victim's\n" and (p / "deep").is_symlink()


def test_a_rewind_puts_back_a_link_and_a_file_a_link_replaced(tmp_path: Path) -> None:
    """What the checkpoint held is what comes back: a link as a link, and a file that a link
    replaced since as the file (the link itself replaced, never followed)."""
    p = project(tmp_path)
    (p / "to-a").symlink_to("a.txt")
    shadow = Shadow(project_of(p), tmp_path / "home")
    asyncio.run(shadow.take("s/0001"))
    outside = tmp_path / "outside.txt"
    outside.write_text("outside\n")
    (p / "d.txt").unlink()
    (p / "d.txt").symlink_to(outside)
    (p / "to-a").unlink()
    commit, _name, changes, _hand, _how = asyncio.run(checkpoint.plan(shadow, "s", 1))
    assert commit is not None
    asyncio.run(shadow.restore(commit, changes))
    assert not (p / "d.txt").is_symlink() and (p / "d.txt").read_text() == "one\n"
    assert outside.read_text() == "outside\n"
    assert os.readlink(p / "to-a") == "a.txt"
