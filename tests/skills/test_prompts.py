"""Prompt templates found, loaded or diagnosed, and `/name args` expanded (H7.3)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from eukhe.skills import Diagnostic, Template, expand, load_prompts, parse_args, substitute
from tests.skills.helpers import write


def test_reports_each_template_that_fails(tmp_path: Path, deny: Callable[[Path], None]) -> None:
    home, project = tmp_path / "home", tmp_path / "proj"
    review = write(
        home / "prompts" / "review.md", "---\ndescription: Review staged changes\n---\nReview $@\n"
    )
    write(home / "prompts" / "notes.txt", "not a template, and not looked at")
    write(home / "prompts" / "sub" / "deeper.md", "not searched below")
    broken = write(home / "prompts" / "broken.md", "---\ndescription:\n  [x\n---\nbody\n")
    locked = write(home / "prompts" / "locked.md", "body")
    deny(locked)
    loser = write(project / ".eukhe" / "prompts" / "review.md", "Another review\n")
    first_line = write(project / ".eukhe" / "prompts" / "fix.md", "\n  " + "Fix " * 30 + "\nthen more\n")
    closed = write(tmp_path / "closed" / "a.md", "x").parent
    deny(closed)
    extra = write(tmp_path / "extra.md", "---\nargument-hint: <file>\n---\nLook at $1\n")

    got = load_prompts(home, project, [extra, "gone.md", tmp_path / "home" / "prompts" / "notes.txt", closed])

    assert [(t.name, t.path, t.description) for t in got.prompts] == [
        ("review", str(review), "Review staged changes"),
        ("fix", str(first_line), ("Fix " * 15).strip()),
        ("extra", str(extra), "Look at $1"),
    ]
    assert got.prompts[2].argument_hint == "<file>"
    assert got.diagnostics == (
        Diagnostic(
            str(broken), "invalid YAML frontmatter: line 4 column 1: did not find expected ',' or ']'"
        ),
        Diagnostic(str(locked), "unreadable file: Permission denied"),
        Diagnostic(str(loser), f"template losing a name collision: 'review' was loaded first from {review}"),
        Diagnostic(str(project / "gone.md"), "path missing"),
        Diagnostic(str(home / "prompts" / "notes.txt"), "path not markdown: expected a .md file"),
        Diagnostic(str(closed), "unreadable entry: Permission denied"),
    )


def test_a_template_too_large_is_reported(tmp_path: Path) -> None:
    big = write(tmp_path / "home" / "prompts" / "big.md", "x" * ((1 << 20) + 1))
    got = load_prompts(tmp_path / "home")
    assert got.prompts == ()
    assert got.diagnostics == (Diagnostic(str(big), "unreadable file: larger than 1048576 characters"),)


ARGS = ["a", "b c", "d"]


@pytest.mark.parametrize(
    ("content", "expanded"),
    [
        ("$1|$2|$3|$4", "a|b c|d|"),
        ("$@", "a b c d"),
        ("$ARGUMENTS!", "a b c d!"),
        ("${@:2}", "b c d"),
        ("${@:2:1}", "b c"),
        ("${@:1:2}", "a b c"),
        ("${@:9}|${@:0}", "|a b c d"),
        ("$0 $10 \\$1 $$1", "  \\a $a"),
    ],
)
def test_arguments_expand_once(content: str, expanded: str) -> None:
    assert substitute(content, ARGS) == expanded


def test_values_are_not_expanded_again() -> None:
    assert substitute("$1 $2", ["$2", "$ARGUMENTS"]) == "$2 $ARGUMENTS"


def test_arguments_split_like_a_shell() -> None:
    assert parse_args(" a  'b c' \"d\"e '' \"open ended") == ["a", "b c", "de", "", "open ended"]


def test_slash_name_expands_its_template() -> None:
    t = Template("review", "Review", "/r.md", "user", "Review $1 for ${@:2}")
    assert expand("/review main.py bugs style", [t]) == "Review main.py for bugs style"
    assert expand("/review", [t]) == "Review  for "
    assert expand("/other x", [t]) is None and expand("review x", [t]) is None
