"""The public face of eukhe.skills, the resource snapshot and the system-prompt section."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import eukhe.skills
from eukhe.settings import SettingsError
from eukhe.skills import SKILLS_INTRO, Skill, get_resource_snapshot, system_prompt_section
from tests.skills.helpers import skill, write


def test_the_exports_are_the_public_names_and_nothing_private_leaks() -> None:
    public = {n for n in dir(eukhe.skills) if not n.startswith("_")}
    modules = {"_files", "_frontmatter", "_ignore", "_prompts", "_skills", "_snapshot", "_types"}
    assert public - modules == set(eukhe.skills.__all__)
    for name in eukhe.skills.__all__:
        assert getattr(eukhe.skills, name) is not None


def test_the_snapshot_carries_diagnostics_skills_and_prompts(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "proj"
    skill(home / "skills" / "good", "description: Good\n")
    broken = skill(project / ".eukhe" / "skills" / "bad", "description:\n  [\n")
    write(home / "prompts" / "t.md", "Do it\n")
    extra = write(project / "extra" / "x.md", "---\ndescription: From settings\n---\n")
    write(project / ".eukhe" / "settings.json", json.dumps({"prompts": ["extra/x.md"], "skills": ["nope"]}))
    snap = get_resource_snapshot(project, env={"EUKHE_HOME": str(home)})
    out = snap.json()
    assert [s["name"] for s in out["skills"]] == ["good"]
    assert [(p["name"], p["description"]) for p in out["prompts"]] == [("t", "Do it"), ("x", "From settings")]
    assert out["prompts"][1]["path"] == str(extra)
    assert [d["path"] for d in out["diagnostics"]["skills"]] == [str(broken), str(project / "nope")]
    assert out["diagnostics"]["prompts"] == []
    assert set(snap.diagnostics) == {"skills", "prompts", "agents"}


def test_a_malformed_settings_file_is_an_error_not_a_silent_skip(tmp_path: Path) -> None:
    write(tmp_path / "proj" / ".eukhe" / "settings.json", "{")
    with pytest.raises(SettingsError, match="line 1 column 2"):
        get_resource_snapshot(tmp_path / "proj", env={"EUKHE_HOME": str(tmp_path / "home")})


def test_the_system_prompt_offers_each_skill_the_model_may_use() -> None:
    skills = [
        Skill("pdf", "Fill <PDF> forms & more", "/s/pdf/SKILL.md", "/s/pdf", "user"),
        Skill("deploy", "Deploy", "/s/deploy/SKILL.md", "/s/deploy", "user", disable_model_invocation=True),
    ]
    assert system_prompt_section(skills) == "\n".join(
        [
            SKILLS_INTRO,
            "",
            "<available_skills>",
            "  <skill>",
            "    <name>pdf</name>",
            "    <description>Fill &lt;PDF&gt; forms &amp; more</description>",
            "    <location>/s/pdf/SKILL.md</location>",
            "  </skill>",
            "</available_skills>",
        ]
    )
    assert SKILLS_INTRO == (
        "These skills hold instructions for particular tasks. When a task matches a skill's description, "
        "read its file (location) with the read tool before you start, and follow it. Paths inside a "
        "skill's file are relative to the folder that holds it."
    )
    assert system_prompt_section(skills[1:]) == "" and system_prompt_section([]) == ""
