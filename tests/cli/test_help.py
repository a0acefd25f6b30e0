"""Help that helps, at 80 columns: a command's description reads as its sentences (not
broken where its docstring's lines break), and `chat zoom`'s arguments say what they are."""

from __future__ import annotations

import re
from pathlib import Path

from tests.proc import eukhe


def help_of(*command: str, cwd: Path) -> str:
    done = eukhe(*command, "--help", cwd=cwd, extra={"COLUMNS": "80"}, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def words(text: str) -> str:
    """The text's words in order, the help's frame (boxes, indents) and line breaks gone."""
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


def test_descriptions_read_as_sentences_and_fit_80_columns(tmp_path: Path) -> None:
    top = help_of(cwd=tmp_path)
    assert "The run is durable: if the process dies" in words(top)  # was "The run is │ │ durable"
    assert "every recovery shows as it happens" in words(top)
    run = help_of("run", cwd=tmp_path)
    assert "The run is durable: if the process dies, the next eukhe run" in words(run)
    for text in (top, run, help_of("chat", "zoom", cwd=tmp_path)):
        assert max(len(line) for line in text.splitlines()) <= 80


def test_chat_zoom_says_what_its_arguments_are(tmp_path: Path) -> None:
    got = words(help_of("chat", "zoom", cwd=tmp_path))
    assert "The line's first message" in got and "How many messages it covers" in got


def test_a_flag_shows_no_value_and_an_argument_its_name(tmp_path: Path) -> None:
    run = help_of("run", cwd=tmp_path)
    assert "Usage: eukhe run [OPTIONS] [PROMPT]" in run  # was [prompt]
    flags = [line for line in run.splitlines() if re.match(r"│ --(json|events|dry-run)\b", line)]
    assert flags and not [line for line in flags if "<bool>" in line], flags  # a flag takes no value
    for text in (run, help_of(cwd=tmp_path), help_of("session", "fork", cwd=tmp_path)):
        assert "<bool>" not in text and re.search(r"│ --help +Show this message", text)  # --help too
    assert "SESSION" in help_of("session", "show", cwd=tmp_path).splitlines()[1]
    zoom = help_of("chat", "zoom", cwd=tmp_path)
    assert re.search(r"zoom \[OPTIONS\] \W*ID\W+N\b", zoom)  # its arguments by name, upper case
