"""`eukhe demo` as a user runs it (`make demo`): the scripted misbehaving model through the
runtime `eukhe run` uses, in a temporary home whose `eukhe sessions` lists it afterwards."""

from __future__ import annotations

import json
import os
import shlex
import shutil
from pathlib import Path

from eukhe.cli.demo import TASK, sandbox_mode
from eukhe.sandbox.bwrap import why_not
from tests.proc import eukhe

ANSWERED = {
    "outcome": "answered",
    "answer": "The project is called eukhe.",
    "error": None,
    "calls": 8,  # the four rounds, the three notes and the answer
    "rounds": 4,
    "notes": 3,
    "retries": 0,
    "cut": False,
    "denials": [],
    "usage": {"input": 70, "output": 70, "cached": 0, "reasoning": 0},  # 10 and 10 a reply; a stall none
}
RECOVERIES = ("no text and no tool call", "rebuilt from markup", "5 times in a row", "produced no output")


def _answered(stdout: str) -> tuple[str, str]:
    """The demo's `--json` is `ANSWERED`, with the session and run it names (returned), its
    duration, and its cost: 0.0, the scripted model has no price."""
    told = json.loads(stdout.strip().splitlines()[-1])
    session, run, took = told.pop("session_id"), told.pop("run_id"), told.pop("duration_ms")
    assert told.pop("total_cost_usd") == 0.0 and isinstance(took, int), told
    assert told == ANSWERED
    return session, run


def _demo_home(stderr: str) -> tuple[list[str], Path]:
    """The command the demo says lists its session, as words, and the home it names."""
    lines = stderr.splitlines()
    said = [line for line in lines if line.startswith("EUKHE_HOME=") and line.endswith(" sessions")]
    assert len(said) == 1, stderr
    words = shlex.split(said[0])
    return words, Path(words[0].removeprefix("EUKHE_HOME="))


def _gone(tmp_path: Path, home: Path) -> None:
    """The demo's owner ended, and its folder (the home and the project beside it) removed."""
    eukhe("shutdown", cwd=tmp_path, home=home)
    assert home.parent.name.startswith("eukhe.demo."), home
    shutil.rmtree(home.parent, ignore_errors=True)


def test_the_demo_runs_as_eukhe_run_and_its_session_is_listed_in_its_home(tmp_path: Path) -> None:
    done = eukhe("demo", "--json", cwd=tmp_path)
    words, home = _demo_home(done.stderr)
    try:
        assert done.returncode == 0, done.stderr
        session, run = _answered(done.stdout)
        for seen in RECOVERIES:
            assert seen in done.stderr
        assert sandbox_mode(why_not())[1] in done.stderr  # the mode it chose, said
        # through the runtime: the home's store, its owner, the run's sandbox folder; not the caller's home
        assert (home / "eukhe.sqlite").is_file() and (home / "owner.json").is_file()
        assert (home / "sandbox").is_dir()
        assert not (tmp_path / "home" / "eukhe.sqlite").exists()
        assert words[1:] == ["eukhe", "sessions"]
        listed = eukhe(*words[2:], "--json", cwd=tmp_path, home=home)  # the command it printed
        assert listed.returncode == 0, listed.stderr
        rows = json.loads(listed.stdout)["sessions"]
        assert [(r["runs"], r["outcome"], r["lastPrompt"]) for r in rows] == [(1, "answered", TASK)]
        assert f"session {rows[0]['id']}, run 1" in done.stderr
        assert (session, run) == (rows[0]["id"], f"{rows[0]['id']}/0001")  # what its JSON named
        shown = eukhe("session", "show", rows[0]["id"], cwd=tmp_path, home=home)
        assert "── run " in shown.stdout and "The project is called eukhe." in shown.stdout, shown.stderr
    finally:
        _gone(tmp_path, home)


def _path_without(name: str, links: Path) -> str:
    """PATH with no `name` on it: each folder that holds one is replaced by `links`, a folder
    of links to the other programs of those folders."""
    links.mkdir()
    kept = []
    for folder in os.environ["PATH"].split(os.pathsep):
        if not (Path(folder) / name).exists():
            kept.append(folder)
            continue
        for program in Path(folder).iterdir():
            if program.name != name and not (links / program.name).exists():
                (links / program.name).symlink_to(program)
    return os.pathsep.join([str(links), *kept])


def test_without_bubblewrap_the_demo_runs_read_only_says_so_and_ends_answered(tmp_path: Path) -> None:
    done = eukhe("demo", "--json", cwd=tmp_path, extra={"PATH": _path_without("bwrap", tmp_path / "bin")})
    _, home = _demo_home(done.stderr)
    try:
        assert done.returncode == 0, done.stderr
        _answered(done.stdout)
        assert "sandbox: read-only, as the task only reads (bubblewrap is not installed" in done.stderr
        assert "sandbox.mode is 'read-only'" in done.stderr  # the run's own notice: the mode in force
        for seen in RECOVERIES:
            assert seen in done.stderr
    finally:
        _gone(tmp_path, home)
