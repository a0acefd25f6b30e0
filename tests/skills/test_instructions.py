"""Project instructions (issue 28): AGENTS.md, or CLAUDE.md where no AGENTS.md stands beside
it, from the home, each folder from the repository root down, and the current folder, in
that order, each under its path, within context.instructionsBytes; read once a session,
a change taken at the next turn; a real `eukhe run` sends them in its system prompt."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from eukhe.ai.faux import FauxServer, parse
from eukhe.run.spec import setup
from eukhe.skills import load_instructions
from eukhe.ui import commands
from tests.proc import eukhe


def tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A home, a repository with a folder in it; instruction files at each level."""
    home, repo = tmp_path / "home", tmp_path / "repo"
    cwd = repo / "pkg" / "sub"
    cwd.mkdir(parents=True)
    home.mkdir()
    (repo / ".git").mkdir()
    (home / "AGENTS.md").write_text("Always answer in English.\n")
    (repo / "CLAUDE.md").write_text("Run make test before you say done.\n")  # no AGENTS.md beside it
    (repo / "pkg" / "AGENTS.md").write_text("The package is typed.\n")
    (repo / "pkg" / "CLAUDE.md").write_text("never read: an AGENTS.md stands beside it\n")
    (cwd / "AGENTS.md").write_text("This folder holds the parser.\n")
    return home, repo, cwd


def test_the_files_in_their_order_each_under_its_path(tmp_path: Path) -> None:
    home, repo, cwd = tree(tmp_path)
    got = load_instructions(home, cwd)
    assert [p.path for p in got.parts] == [
        home / "AGENTS.md",
        repo / "CLAUDE.md",
        repo / "pkg" / "AGENTS.md",
        cwd / "AGENTS.md",
    ]
    s = got.section
    assert s.index("Always answer") < s.index("Run make test") < s.index("typed") < s.index("the parser")
    assert f"## {repo / 'CLAUDE.md'}\n\nRun make test before you say done." in s
    assert "never read" not in s
    assert got.lines()[0] == f"{home / 'AGENTS.md'}: 26 bytes"


def test_outside_a_repository_only_the_home_and_the_current_folder(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "a" / "b"
    cwd.mkdir(parents=True)
    home.mkdir()
    (tmp_path / "a" / "AGENTS.md").write_text("not this: no repository holds it\n")
    (cwd / "AGENTS.md").write_text("this\n")
    assert [p.path for p in load_instructions(home, cwd).parts] == [cwd / "AGENTS.md"]


def test_the_budget_cuts_the_later_files_and_says_so(tmp_path: Path) -> None:
    home, _, cwd = tree(tmp_path)
    (cwd / "AGENTS.md").write_text("x" * 100)
    got = load_instructions(home, cwd, budget=120)
    shown = [p.shown for p in got.parts]
    assert sum(shown) == 120 and shown[-1] < 100
    assert (
        f"[… {100 - shown[-1]} more bytes of {cwd / 'AGENTS.md'} were cut: context.instructionsBytes]"
        in got.section
    )
    assert got.lines()[-1] == f"{cwd / 'AGENTS.md'}: {shown[-1]} of 100 bytes (context.instructionsBytes)"


def test_a_fifo_or_a_file_that_is_not_text_never_blocks_and_is_said(tmp_path: Path) -> None:
    home, repo, cwd = tree(tmp_path)
    (cwd / "AGENTS.md").unlink()
    os.mkfifo(cwd / "AGENTS.md")
    (repo / "CLAUDE.md").write_bytes(b"\xff\xfe bad")
    got = load_instructions(home, cwd)
    problems = {p.path: p.problem for p in got.parts if p.problem}
    assert problems == {
        repo / "CLAUDE.md": "not UTF-8 text (byte 0)",
        cwd / "AGENTS.md": "it is a FIFO (named pipe), not a regular file",
    }
    assert f"{cwd / 'AGENTS.md'}: not loaded: it is a FIFO (named pipe), not a regular file" in got.lines()


def test_a_session_reads_them_once_and_takes_a_change_at_the_next_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, _, cwd = tree(tmp_path)
    monkeypatch.setenv("EUKHE_HOME", str(home))
    made = setup(cwd, "vllm/m", "http://127.0.0.1:9/v1")
    first = made.system
    assert "This folder holds the parser." in first
    assert made.instructions_changed() is None and made.system == first  # byte-identical
    (cwd / "AGENTS.md").write_text("This folder holds the lexer.\n")
    changed = made.instructions_changed()
    assert (
        changed is not None
        and changed.said.startswith("the instruction files changed (")
        and "enter at this turn" in changed.said
    )
    assert "the parser" in made.system  # the session takes them as a new setup
    made = dataclasses.replace(made, instructions=changed.instructions)
    assert "the lexer" in made.system and "the parser" not in made.system


def test_a_run_sends_them_in_its_system_prompt(tmp_path: Path) -> None:
    home, _, cwd = tree(tmp_path)
    with FauxServer(parse([{"text": "ok"}])) as server:
        done = eukhe("run", "--model", "vllm/m", "--base-url", server.url, "hi", cwd=cwd, home=home)
        system = server.seen[-1].body["messages"][0]
    assert done.returncode == 0, done.stderr
    assert system["role"] == "system"
    assert (
        "Always answer in English." in system["content"]
        and "This folder holds the parser." in system["content"]
    )
    assert json.dumps(system).count("## ") >= 4


def test_the_agents_context_command_shows_the_files_and_their_sizes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, repo, cwd = tree(tmp_path)
    monkeypatch.setenv("EUKHE_HOME", str(home))
    s = SimpleNamespace(made=setup(cwd, "vllm/m", "http://127.0.0.1:9/v1"))
    cmd, _ = commands.command_of("/context", s)  # type: ignore[arg-type]
    assert cmd is commands.COMMANDS["context"]
    lines = asyncio.run(cmd.run(s, ""))  # type: ignore[arg-type]
    assert lines == [
        f"{home / 'AGENTS.md'}: 26 bytes",
        f"{repo / 'CLAUDE.md'}: 35 bytes",
        f"{repo / 'pkg' / 'AGENTS.md'}: 22 bytes",
        f"{cwd / 'AGENTS.md'}: 30 bytes",
    ]
