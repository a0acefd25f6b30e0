"""`eukhe skills`, `eukhe prompts` and `eukhe settings` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.proc import eukhe


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_eukhe_skills_lists_what_loaded_and_every_diagnostic(tmp_path: Path) -> None:
    good = write(tmp_path / "home" / "skills" / "pdf" / "SKILL.md", "---\ndescription: Fill PDF forms\n---\n")
    bad = write(tmp_path / ".eukhe" / "skills" / "bad" / "SKILL.md", "no frontmatter\n")
    done = eukhe("skills", "--json", "--skill", "gone", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "skills": [{"name": "pdf", "path": str(good), "description": "Fill PDF forms"}],
        "diagnostics": [
            {"path": str(bad), "error": "skill without description"},
            {"path": str(tmp_path / "gone"), "error": "path missing"},
        ],
    }
    text = eukhe("skills", cwd=tmp_path).stdout.splitlines()
    assert text == [
        "1 skill loaded",
        f"  pdf: Fill PDF forms ({good})",
        "1 diagnostic",
        f"  {bad}: skill without description",
    ]


def test_eukhe_prompts_lists_what_loaded_and_every_diagnostic(tmp_path: Path) -> None:
    first = write(tmp_path / "home" / "prompts" / "review.md", "Review the diff\n")
    loser = write(tmp_path / ".eukhe" / "prompts" / "review.md", "Another\n")
    done = eukhe("prompts", "--json", "--prompt", "notes.txt", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "prompts": [{"name": "review", "path": str(first), "description": "Review the diff"}],
        "diagnostics": [
            {
                "path": str(loser),
                "error": f"template losing a name collision: 'review' was loaded first from {first}",
            },
            {"path": str(tmp_path / "notes.txt"), "error": "path missing"},
        ],
    }


def test_eukhe_settings_shows_each_value_and_its_source(tmp_path: Path) -> None:
    user = write(tmp_path / "home" / "settings.json", '{"auxiliaryModel": "openai/gpt-4.1-mini"}')
    done = eukhe("settings", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["settings"]["auxiliaryModel"] == "openai/gpt-4.1-mini"
    assert out["sources"]["auxiliaryModel"] == str(user)
    assert out["sources"]["maxToolRounds"] == "default" and out["settings"]["maxToolRounds"] == 250
    text = eukhe("settings", cwd=tmp_path).stdout
    assert 'auxiliaryModel = "openai/gpt-4.1-mini"' in text and f"({user})" in text


def test_a_malformed_settings_file_fails_each_command_clearly_and_stays(tmp_path: Path) -> None:
    bad = write(tmp_path / ".eukhe" / "settings.json", '{"skills": [}')
    for command in ("settings", "skills", "prompts"):
        done = eukhe(command, cwd=tmp_path)
        assert done.returncode == 2
        assert done.stderr == (
            f"eukhe {command}: settings file {bad}, line 1 column 13: not valid JSON: Expecting value\n"
        )
    assert bad.read_text() == '{"skills": [}'
