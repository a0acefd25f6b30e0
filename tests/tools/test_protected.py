"""The attacks on eukhe's own files through `write` and `edit`: the home's settings, trust records and
store (the whole home: `rules.confine` places it), and any `.eukhe/` (the project's, at the working
directory or above it, or anywhere), named directly, through a symlink or through `..`, are refused
and left exactly as they were."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from eukhe.tools import BUILTIN, Result, call

from .helpers import ctx, matches, run

ORIG = '{"allow": []}\n'

HOME = "it touches eukhe's own files: its home, which no tool reads or writes"
SETTINGS = "it touches eukhe's own files: the home, .eukhe/ or .mcp.json"
TRUST = STORE = HOME

HOME_FILES = {
    "settings.json": HOME,
    "trust.json": TRUST,
    "eukhe.sqlite": STORE,
    "eukhe.sqlite-wal": STORE,
    "eukhe.sqlite-shm": STORE,
    "eukhe.sqlite-journal": STORE,
}


@dataclass(frozen=True)
class World:
    home: Path
    repo: Path
    cwd: Path
    """repo/sub/deep, with a `.eukhe/settings.json` of its own and one at the repository's root."""


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    home = tmp_path / "home"
    home.mkdir()
    for name in HOME_FILES:
        (home / name).write_text(ORIG)
    repo = tmp_path / "repo"
    cwd = repo / "sub" / "deep"
    (repo / ".git").mkdir(parents=True)
    for d in (repo, cwd):
        (d / ".eukhe").mkdir(parents=True)
        (d / ".eukhe" / "settings.json").write_text(ORIG)
    monkeypatch.setenv("EUKHE_HOME", str(home))
    return World(home, repo, cwd)


def act(tool: str, cwd: Path, path: str) -> Result:
    args = {"path": path, "content": '{"allow": ["*"]}\n'}
    if tool == "edit":
        args = {"path": path, "old_text": "[]", "new_text": '["*"]'}
    return run(call(BUILTIN, tool, args, ctx(cwd)))


def refused(r: Result, shown: str, reason: str, leads_to: Path | None = None) -> None:
    lead = "" if leads_to is None else rf" \(it leads to '{re.escape(str(leads_to))}'\)"
    did = r"not (written|edited)"
    matches(rf"{did}: '{re.escape(shown)}'{lead} may not be touched: {re.escape(reason)}", r, error=True)


def untouched(f: Path) -> None:
    assert not f.is_symlink() and f.is_file() and f.read_text() == ORIG


# every protected file, named as the model could name it from the working directory
TARGETS = [*(f"home/{n}" for n in HOME_FILES), "cwd/.eukhe/settings.json", "repo/.eukhe/settings.json"]


def locate(w: World, target: str) -> tuple[Path, str]:
    """The protected file and its reason."""
    where, name = target.split("/", 1)
    if where == "home":
        return w.home / name, HOME_FILES[name]
    return (w.cwd if where == "cwd" else w.repo) / name, SETTINGS


def named(w: World, f: Path) -> str:
    """`f` as the model names it: relative inside the repository, else absolute."""
    return os.path.relpath(f, w.cwd) if f.is_relative_to(w.repo) else str(f)


@pytest.mark.parametrize("tool", ["write", "edit"])
@pytest.mark.parametrize("target", TARGETS)
def test_a_protected_file_named_directly_is_refused(world: World, tool: str, target: str) -> None:
    f, reason = locate(world, target)
    shown = named(world, f)
    refused(act(tool, world.cwd, shown), shown, reason)
    untouched(f)


@pytest.mark.parametrize("tool", ["write", "edit"])
@pytest.mark.parametrize("target", TARGETS)
def test_a_protected_file_through_a_symlink_is_refused(world: World, tool: str, target: str) -> None:
    f, reason = locate(world, target)
    (world.cwd / "notes.json").symlink_to(f)
    refused(act(tool, world.cwd, "notes.json"), "notes.json", reason, leads_to=f)
    untouched(f)
    assert os.readlink(world.cwd / "notes.json") == str(f)


@pytest.mark.parametrize("tool", ["write", "edit"])
@pytest.mark.parametrize("target", TARGETS)
def test_a_protected_file_through_dotdot_is_refused(world: World, tool: str, target: str) -> None:
    f, reason = locate(world, target)
    (f.parent / "x").mkdir()
    shown = os.path.join(named(world, f.parent), "x", "..", f.name)
    refused(act(tool, world.cwd, shown), shown, reason)
    untouched(f)


@pytest.mark.parametrize("tool", ["write", "edit"])
def test_a_symlinked_directory_on_the_way_is_seen_through(world: World, tool: str) -> None:
    (world.cwd / "h").symlink_to(world.home)
    (world.cwd / "up").symlink_to(world.repo)
    refused(act(tool, world.cwd, "h/settings.json"), "h/settings.json", HOME, world.home / "settings.json")
    f = world.repo / ".eukhe" / "settings.json"
    refused(act(tool, world.cwd, "up/.eukhe/settings.json"), "up/.eukhe/settings.json", SETTINGS, f)
    untouched(world.home / "settings.json")
    untouched(f)


def test_a_missing_protected_file_is_not_created(world: World) -> None:
    (world.home / "trust.json").unlink()
    (world.cwd / ".eukhe" / "settings.json").unlink()
    (world.cwd / "dangling").symlink_to(world.home / "trust.json")
    refused(act("write", world.cwd, str(world.home / "trust.json")), str(world.home / "trust.json"), TRUST)
    refused(act("write", world.cwd, "dangling"), "dangling", TRUST, world.home / "trust.json")
    refused(act("write", world.cwd, ".eukhe/settings.json"), ".eukhe/settings.json", SETTINGS)
    assert not (world.home / "trust.json").exists()
    assert not (world.cwd / ".eukhe" / "settings.json").exists()


@pytest.mark.parametrize("tool", ["write", "edit"])
def test_a_settings_file_that_is_a_symlink_protects_what_it_leads_to(world: World, tool: str) -> None:
    # settings.json read through its link: writing the file it leads to, by its own name, changes the rights
    elsewhere = world.repo.parent / "elsewhere"
    elsewhere.mkdir()
    for i, f in enumerate((world.home / "settings.json", world.cwd / ".eukhe" / "settings.json")):
        real = elsewhere / f"cfg{i}.json"
        real.write_text(ORIG)
        f.unlink()
        f.symlink_to(real)
        refused(act(tool, world.cwd, str(real)), str(real), HOME)
        refused(act(tool, world.cwd, str(f)), str(f), HOME, leads_to=real)
        untouched(real)
        assert f.is_symlink()


@pytest.mark.parametrize("tool", ["write", "edit"])
def test_any_eukhe_settings_file_is_refused(world: World, tool: str) -> None:
    other = world.repo.parent / "other" / ".eukhe" / "settings.json"
    other.parent.mkdir(parents=True)
    other.write_text(ORIG)
    refused(act(tool, world.cwd, str(other)), str(other), SETTINGS)
    untouched(other)


def test_the_home_is_the_one_in_effect_when_the_tool_runs(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    later = tmp_path / "later"
    later.mkdir()
    (later / "settings.json").write_text(ORIG)
    monkeypatch.setenv("EUKHE_HOME", str(tmp_path / "via-link"))
    (tmp_path / "via-link").symlink_to(later)  # a home reached through a link is the same home
    refused(act("edit", world.cwd, str(later / "settings.json")), str(later / "settings.json"), HOME)
    untouched(later / "settings.json")
    # the home of before is a folder outside the workspace now, no longer eukhe's own
    old = world.home / "trust.json"
    refused(act("edit", world.cwd, str(old)), str(old), "it writes outside the workspace")
    untouched(old)


def test_the_files_beside_them_are_still_written(world: World) -> None:
    for f in (
        world.cwd / "settings.json",
        world.cwd / "trust.json",
        world.cwd / ".eukhe-notes" / "settings.json",
        world.cwd / "eukhe" / "settings.json",
    ):
        f.parent.mkdir(exist_ok=True)
        f.write_text(ORIG)
        shown = named(world, f)
        matches(r"edited '.*': replaced line 1 with 1 line", act("edit", world.cwd, shown), error=False)
        matches(r"overwrote '.*': 17 bytes, 1 line", act("write", world.cwd, shown), error=False)
        assert f.read_text() == '{"allow": ["*"]}\n'
