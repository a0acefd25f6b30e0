"""A fresh home is the user's alone: after a real `eukhe run` against the faux model,
the home and its folders are 0700 and every file in it 0600 (the store, its SQLite
journals, the logs, the owner's files), and the interactive agent's history too;
while the file the `write` tool made in the project keeps the user's umask."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

from eukhe.ai.faux import FauxServer, parse
from eukhe.ui.app import _history
from tests.home.modes import loose
from tests.proc import env


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_run_leaves_the_home_private_and_the_projects_file_with_the_users_umask(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    script = [
        {"calls": [{"name": "write", "arguments": {"path": "made.txt", "content": "hi"}}]},
        {"text": "done"},
    ]
    with FauxServer(parse(script)) as server:
        done = subprocess.run(
            [sys.executable, "-m", "eukhe", "run", "--model", "vllm/m", "--base-url", server.url, "write it"],
            cwd=project,
            env=env(home),
            capture_output=True,
            text=True,
            timeout=120,
            umask=0o022,  # a usual umask: eukhe's files in the home are 0600 in spite of it
        )
    assert done.returncode == 0, done.stderr
    for made in ("eukhe.sqlite", "logs/dbos.log", "owner.log", "owner.lock"):
        assert (home / made).exists(), made
    assert loose(home) == {}
    assert (project / "made.txt").read_text() == "hi"
    assert mode(project / "made.txt") == 0o644  # the tools' files keep the user's umask: it was not lowered


def test_sqlites_journals_are_born_with_the_stores_private_mode(tmp_path: Path) -> None:
    """SQLite makes `-journal`, `-wal` and `-shm` with the main file's mode: eukhe's
    store is 0600 before SQLite first opens it, so they are too."""
    home = tmp_path / "home"
    done = subprocess.run(
        [sys.executable, "-m", "eukhe", "chat", "status"],
        cwd=tmp_path,
        env=env(home),
        capture_output=True,
        text=True,
        timeout=120,
        umask=0o022,
    )
    assert done.returncode == 0, done.stderr
    store = home / "eukhe.sqlite"
    db = sqlite3.connect(store, isolation_level=None)
    try:
        db.execute("BEGIN IMMEDIATE")
        db.execute("CREATE TABLE probe (x)")
        assert mode(Path(f"{store}-journal")) == 0o600
        db.execute("COMMIT")
        assert db.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
        db.execute("INSERT INTO probe VALUES (1)")
        assert mode(Path(f"{store}-wal")) == 0o600
        assert mode(Path(f"{store}-shm")) == 0o600
        assert loose(home) == {}
    finally:
        db.close()


def test_the_prompts_history_is_the_users_alone(tmp_path: Path) -> None:
    home = tmp_path / "home"
    old = os.umask(0o022)
    try:
        history = _history(home)
        history.append_string("my secret prompt")
    finally:
        os.umask(old)
    assert "my secret prompt" in (home / "history").read_text()
    assert mode(home) == 0o700
    assert mode(home / "history") == 0o600
