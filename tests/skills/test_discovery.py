"""Skills found, loaded or diagnosed (H7.3)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from eukhe.rules import skill_load
from eukhe.skills import Diagnostic, _ignore, load_skills
from tests.skills.helpers import skill, write


def test_reports_each_skill_file_and_ignore_rule_that_fails(
    tmp_path: Path, deny: Callable[[Path], None]
) -> None:
    home, project = tmp_path / "home", tmp_path / "proj"
    user, proj = home / "skills", project / ".eukhe" / "skills"
    skill(user / "pdf-tools", "description: Fill PDF forms\n")
    skill(user / "group" / "nested", "name: nested\ndescription: Found below a plain folder\n")
    bad_yaml = skill(user / "bad-yaml", "name:\n  [oops\ndescription: x\n")
    no_desc = skill(user / "no-desc", "name: no-desc\n")
    bad_name = skill(user / "Bad_Name", "description: d\n")
    locked = skill(user / "locked", "description: d\n")
    deny(locked)
    closed = user / "closed"
    skill(closed / "inner", "description: d\n")
    deny(closed)
    write(user / ".gitignore", "ignored-*\n")
    skill(user / "ignored-one", "name: [never read\n")
    bad_rules = write(
        user / ".ignore", "# rules\n\\\n!\n[abc\nfoo[a-\n[[:word:]]\n\\[literal\n[]]\ndrafts-*\ntmp/\n"
    )
    skill(user / "drafts-one", "name: [never read\n")  # a rule after the bad ones still applies
    locked_rules = write(proj / ".fdignore", "x\n")
    deny(locked_rules)
    loser = skill(proj / "pdf-tools", "description: Another PDF skill\n")
    os.symlink("loop", proj / "loop")
    own = skill(project / "extra" / "mine", "description: An explicit one\n")

    got = load_skills(home, project, [own.parent, "missing/SKILL.md", project / "notes.txt"])

    assert sorted((s.name, s.path, s.source) for s in got.skills) == [
        ("mine", str(own), "path"),
        ("nested", str(user / "group" / "nested" / "SKILL.md"), "user"),
        ("pdf-tools", str(user / "pdf-tools" / "SKILL.md"), "user"),
    ]
    assert sorted(got.diagnostics, key=lambda d: (d.path, d.error)) == sorted(
        [
            Diagnostic(str(bad_rules), "non-glob ignore rule on line 2: '\\\\': Invalid git pattern: '\\\\'"),
            Diagnostic(str(bad_rules), "non-glob ignore rule on line 3: '!': Invalid git pattern: '!'"),
            Diagnostic(
                str(bad_rules), "non-glob ignore rule on line 4: '[abc': unclosed character class '['"
            ),
            Diagnostic(
                str(bad_rules), "non-glob ignore rule on line 5: 'foo[a-': unclosed character class '['"
            ),
            Diagnostic(
                str(bad_rules),
                "non-glob ignore rule on line 6: '[[:word:]]': unknown character class '[:word:]'",
            ),
            Diagnostic(
                str(bad_yaml), "invalid YAML frontmatter: line 4 column 12: did not find expected ',' or ']'"
            ),
            Diagnostic(str(no_desc), "skill without description"),
            Diagnostic(
                str(bad_name), "invalid name 'Bad_Name': use lowercase letters, digits and single hyphens"
            ),
            Diagnostic(str(locked), "unreadable file: Permission denied"),
            Diagnostic(str(closed), "unreadable entry: Permission denied"),
            Diagnostic(str(locked_rules), "unreadable ignore file: Permission denied"),
            Diagnostic(
                str(loser),
                f"skill losing a name collision: 'pdf-tools' was loaded first from {user}/pdf-tools/SKILL.md",
            ),
            Diagnostic(str(proj / "loop"), "unreadable entry: Too many levels of symbolic links"),
            Diagnostic(str(project / "missing" / "SKILL.md"), "path missing"),
            Diagnostic(str(project / "notes.txt"), "path missing"),
        ],
        key=lambda d: (d.path, d.error),
    )
    assert sorted(got.ignored) == [str(user / "drafts-one"), str(user / "ignored-one")]
    assert (got.tally.loaded, got.tally.diagnosed, got.tally.candidates) == (3, 9, 12)


@pytest.mark.parametrize(
    ("rule", "why"),
    [
        ("[", "unclosed character class '['"),
        ("[abc", "unclosed character class '['"),
        ("foo[a-", "unclosed character class '['"),
        ("a[b]c[", "unclosed character class '['"),
        ("[]", "unclosed character class '['"),  # a `]` first is a member, not the end
        ("[!]", "unclosed character class '['"),
        ("[a\\]", "unclosed character class '['"),  # `\]` is an escaped member
        ("[\\", "unclosed character class '['"),
        ("[[:alpha:]", "unclosed character class '['"),  # the `]` closes `[:alpha:`, not the class
        ("!sub/[x", "unclosed character class '['"),
        ("  [", "unclosed character class '['"),  # only a `#` first makes a comment
        ("[[:word:]]", "unknown character class '[:word:]'"),
        ("x[![::]]", "unknown character class '[::]'"),
        ("foo\\", "Invalid git pattern: 'foo\\\\'"),  # what pathspec refuses is still reported
        ("!", "Invalid git pattern: '!'"),
        ("\\[literal", None),
        ("\\[", None),
        ("!\\[", None),
        ("[]]", None),
        ("[!]]", None),
        ("[]-a]", None),
        ("[][!]", None),
        ("[!a]", None),
        ("[^a]", None),
        ("[a-]", None),
        ("[\\]]", None),
        ("[[]", None),
        ("x]", None),
        ("*.py[cod]", None),
        ("[[:alpha:]]", None),
        ("[[:alpha:][:digit:]_]", None),
        ("[[:]", None),  # no `:]`: a plain `[` and `:`
        ("[[:a]", None),
        ("**/x", None),
        ("a/**/b", None),
        ("***", None),
        ("!x", None),
        ("!/", None),
        ("# [", None),
        ("#", None),
        ("", None),
        ("   ", None),
        ("x   ", None),
        ("foo\\ ", None),
    ],
)
def test_which_ignore_rules_are_globs(rule: str, why: str | None) -> None:
    assert _ignore.flaw(rule) == why


def test_an_explicit_file_must_be_markdown_and_may_be_any_md(tmp_path: Path) -> None:
    txt = write(tmp_path / "notes.txt", "x")
    md = write(tmp_path / "tools" / "guide.md", "---\ndescription: A guide\n---\n")
    got = load_skills(tmp_path / "home", None, [txt, md, md])
    assert [(s.name, s.path) for s in got.skills] == [("tools", str(md))]
    assert got.diagnostics == (Diagnostic(str(txt), "path not markdown: expected a .md file"),)


def test_a_skill_folder_is_not_searched_for_more_skills_and_hidden_ones_are_passed_over(
    tmp_path: Path,
) -> None:
    root = tmp_path / "home" / "skills"
    skill(root / "outer", "description: outer\n")
    skill(root / "outer" / "inner", "description: inner\n")
    skill(root / ".hidden", "description: hidden\n")
    got = load_skills(tmp_path / "home")
    assert [s.name for s in got.skills] == ["outer"] and got.diagnostics == ()


def test_deeper_ignore_rules_and_negations_decide_last(tmp_path: Path) -> None:
    root = tmp_path / "home" / "skills"
    write(root / ".gitignore", "team-*/\n")
    write(root / ".fdignore", "!team-keep/\n")
    write(root / "more" / ".ignore", "local\n")
    for name in ("team-drop", "team-keep", "more/local", "more/kept"):
        skill(root / name, "description: d\n")
    got = load_skills(tmp_path / "home")
    assert sorted(s.name for s in got.skills) == ["kept", "team-keep"]
    assert sorted(got.ignored) == [str(root / "more" / "local"), str(root / "team-drop")]


def test_links_reach_a_file_once_and_a_loop_ends(tmp_path: Path) -> None:
    root = tmp_path / "home" / "skills"
    skill(root / "real", "description: d\n")
    os.symlink(root / "real", root / "alias")
    os.symlink(root, root / "real-parent")
    got = load_skills(tmp_path / "home")
    assert [s.path for s in got.skills] == [str(root / "alias" / "SKILL.md")]
    assert got.diagnostics == ()


@pytest.mark.parametrize(
    ("content", "error"),
    [
        (b"\xff\xfe\x00garbage", "unreadable file: not UTF-8 text (byte 0)"),
        ("---\ndescription: x\n", "invalid YAML frontmatter: no closing '---' line"),
        ("---\n- a\n- b\n---\n", "invalid YAML frontmatter: expected key: value pairs, got list"),
        (
            "---\ndescription: d\nx:\n  y: !!int z\n---\n",
            "invalid YAML frontmatter: invalid literal for int() with base 10: 'z'",
        ),
        ("---\n" + "[" * 5000 + "\n---\n", None),
    ],
)
def test_a_broken_file_is_one_clear_diagnostic(
    tmp_path: Path, content: str | bytes, error: str | None
) -> None:
    path = skill(tmp_path / "home" / "skills" / "s", "")
    write(path, content)
    got = load_skills(tmp_path / "home")
    assert got.skills == () and len(got.diagnostics) == 1 and got.diagnostics[0].path == str(path)
    if error is None:
        assert got.diagnostics[0].error.startswith("invalid YAML frontmatter")
    else:
        assert got.diagnostics[0].error == error


def test_a_fifo_is_never_waited_on(tmp_path: Path) -> None:
    folder = tmp_path / "home" / "skills" / "pipe"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "SKILL.md")
    got = load_skills(tmp_path / "home")
    fifo = "unreadable file: it is a FIFO (named pipe), not a regular file"
    assert got.diagnostics == (Diagnostic(str(folder / "SKILL.md"), fifo),)


def test_a_huge_skill_file_reads_only_its_head(tmp_path: Path) -> None:
    path = skill(tmp_path / "home" / "skills" / "big", "description: big\n", "x" * (8 << 20))
    got = load_skills(tmp_path / "home")
    assert [s.path for s in got.skills] == [str(path)]


def test_the_loader_asks_the_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tie: another check, another outcome (the loader decides nothing itself)."""
    skill(tmp_path / "home" / "skills" / "fine", "description: d\n")
    refuse = skill_load.Verdict(False, (skill_load.Problem.NO_DESCRIPTION,))
    monkeypatch.setattr(skill_load, "check", lambda lim, c: refuse)
    got = load_skills(tmp_path / "home")
    assert got.skills == () and [d.error for d in got.diagnostics] == ["skill without description"]
