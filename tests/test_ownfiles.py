"""`eukhe.ownfiles`: what eukhe opens for itself is decided on by where it really is. A
project's file never follows a link out of the project; a home's file may lead into the
user's dotfiles; a named path may be anywhere; none is ever read in /proc, /sys, /dev, a
process's folder, a secret place or (but the home's own) eukhe's home; only regular files,
never waiting on a FIFO. And the places come from `rules.confine.place` (the tie)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from eukhe import ownfiles
from eukhe.ownfiles import Bound, Refused, home_bound, named_bound, open_file, open_folder, project_bound
from eukhe.rules.confine import Place


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's home (`HOME`) holding `.ssh/id`, dotfiles, eukhe's home and a project."""
    user = tmp_path / "user"
    for folder in (".ssh", "dotfiles", ".eukhe", "proj"):
        (user / folder).mkdir(parents=True)
    (user / ".ssh" / "id").write_text("KEY\n")
    (user / "dotfiles" / "AGENTS.md").write_text("mine\n")
    (user / ".eukhe" / "settings.json").write_text("{}\n")
    (user / "proj" / "a.md").write_text("a\n")
    monkeypatch.setenv("HOME", str(user))
    return user


def read(path: Path, bound: Bound) -> str:
    fd = open_file(path, bound)
    try:
        return os.read(fd, 100).decode()
    finally:
        os.close(fd)


def refused(path: Path, bound: Bound) -> str:
    with pytest.raises(Refused) as e:
        open_file(path, bound)
    return str(e.value)


def test_a_projects_file_stays_in_the_project(tree: Path) -> None:
    proj, home = tree / "proj", tree / ".eukhe"
    bound = project_bound(proj, home)
    (proj / "in.md").symlink_to("a.md")
    (proj / "out.md").symlink_to(tree / "dotfiles" / "AGENTS.md")
    (proj / "key").symlink_to(tree / ".ssh" / "id")
    (proj / "env").symlink_to("/proc/self/environ")
    (proj / "conf").symlink_to(home / "settings.json")
    assert read(proj / "in.md", bound) == "a\n"
    assert refused(proj / "out.md", bound) == (
        f"it is a link that leads outside the project (to {tree / 'dotfiles' / 'AGENTS.md'})"
    )
    assert refused(proj / "key", bound) == (
        "it is a link to one of the user's secret places, which eukhe never reads for a prompt "
        f"(to {tree / '.ssh' / 'id'})"
    )
    assert refused(proj / "env", bound).startswith(
        "it is a link to a process's memory or environment (/proc/<pid>/), which eukhe never reads "
        "for a prompt (to /proc/"
    )
    assert refused(proj / "conf", bound) == (
        f"it is a link to eukhe's home, which eukhe never reads for a prompt (to {home / 'settings.json'})"
    )


def test_a_homes_file_may_lead_into_the_dotfiles_but_never_to_a_secret(tree: Path) -> None:
    home = tree / ".eukhe"
    bound = home_bound(home)
    (home / "AGENTS.md").symlink_to(tree / "dotfiles" / "AGENTS.md")
    (home / "CLAUDE.md").symlink_to(tree / ".ssh" / "id")
    assert read(home / "AGENTS.md", bound) == "mine\n"
    assert read(home / "settings.json", bound) == "{}\n"  # the home's own
    assert "secret places" in refused(home / "CLAUDE.md", bound)


def test_a_named_path_may_be_anywhere_but_where_no_prompt_reads(tree: Path) -> None:
    bound = named_bound(tree / "proj", tree / ".eukhe")
    assert read(tree / "dotfiles" / "AGENTS.md", bound) == "mine\n"
    assert refused(tree / ".ssh" / "id", bound) == (
        "it is one of the user's secret places, which eukhe never reads for a prompt"
    )
    assert refused(tree / ".eukhe" / "settings.json", bound).startswith("it is eukhe's home")
    assert refused(Path("/proc/cpuinfo"), bound) == (
        "it is a kernel pseudo-file (/proc, /sys, /dev), which eukhe never reads for a prompt"
    )
    assert refused(Path("/dev/zero"), bound).startswith("it is a kernel pseudo-file")


def test_only_regular_files_and_a_fifo_is_never_waited_on(tree: Path) -> None:
    proj = tree / "proj"
    os.mkfifo(proj / "pipe")
    bound = project_bound(proj, tree / ".eukhe")
    assert refused(proj / "pipe", bound) == "it is a FIFO (named pipe), not a regular file"
    assert refused(proj, bound) == "it is a directory, not a regular file"
    with pytest.raises(FileNotFoundError):
        open_file(proj / "missing", bound)


def test_a_folder_is_decided_on_as_it_is_opened(tree: Path) -> None:
    proj = tree / "proj"
    (proj / "out").symlink_to(tree / "dotfiles")
    bound = project_bound(proj, tree / ".eukhe")
    fd, real = open_folder(proj, bound)
    os.close(fd)
    assert real == str(proj)
    with pytest.raises(Refused, match=r"^it is a link that leads outside the project"):
        open_folder(proj / "out", bound)


def test_the_places_come_from_the_confine_rule(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tie: another naming of places, another decision (ownfiles names none itself)."""
    bound = project_bound(tree / "proj", tree / ".eukhe")
    assert ownfiles.refusal(str(tree / "proj" / "a.md"), bound) is None
    monkeypatch.setattr(ownfiles, "place", lambda path, where: (Place.PROCESS, "/proc/1"))
    assert ownfiles.refusal(str(tree / "proj" / "a.md"), bound) == (
        "a process's memory or environment (/proc/<pid>/), which eukhe never reads for a prompt"
    )
