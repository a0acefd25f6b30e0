"""The resource snapshot: skills, prompt templates, the subagents users define and their
diagnostics together, and the part of the system prompt that offers the skills to the model."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from eukhe.json_types import JsonMapping, JsonObject
from eukhe.settings import home as settings_home
from eukhe.settings import load as load_settings
from eukhe.skills._agents import load_agents
from eukhe.skills._prompts import load_prompts
from eukhe.skills._skills import load_skills
from eukhe.skills._types import Agent, Diagnostic, Skill, Template


@dataclass(frozen=True)
class ResourceSnapshot:
    """Skills, templates and agents loaded, and `diagnostics` = {"skills": (...), "prompts":
    (...), "agents": (...)}."""

    skills: tuple[Skill, ...]
    prompts: tuple[Template, ...]
    diagnostics: Mapping[str, tuple[Diagnostic, ...]]
    agents: tuple[Agent, ...] = ()

    def json(self) -> JsonObject:
        return {
            "skills": [s.json() for s in self.skills],
            "prompts": [t.json() for t in self.prompts],
            "agents": [{k: v for k, v in a.json().items() if k != "prompt"} for a in self.agents],
            "diagnostics": {k: [d.json() for d in v] for k, v in self.diagnostics.items()},
        }


def _paths(settings: JsonMapping, key: str) -> list[str]:
    v = settings.get(key)
    return [p for p in v if isinstance(p, str)] if isinstance(v, list) else []


def get_resource_snapshot(
    project: Path | None = None,
    env: Mapping[str, str] | None = None,
    settings: JsonMapping | None = None,
    skill_paths: Sequence[str | Path] = (),
    prompt_paths: Sequence[str | Path] = (),
) -> ResourceSnapshot:
    """Load skills, prompt templates and agents for `project` (None: the user's only; a
    project's agents only where it is trusted).

    Explicit paths come from the settings `skills` and `prompts` (read from the
    files when `settings` is None; a malformed file raises `SettingsError`), then
    from the arguments."""
    if settings is None:
        settings = load_settings(project, env)
    home = settings_home(env)
    skills = load_skills(home, project, [*_paths(settings, "skills"), *skill_paths])
    prompts = load_prompts(home, project, [*_paths(settings, "prompts"), *prompt_paths])
    agents = load_agents(home, project)
    return ResourceSnapshot(
        skills.skills,
        prompts.prompts,
        {"skills": skills.diagnostics, "prompts": prompts.diagnostics, "agents": agents.diagnostics},
        agents.agents,
    )


SKILLS_INTRO = (
    "These skills hold instructions for particular tasks. When a task matches a skill's "
    "description, read its file (location) with the read tool before you start, and follow it. "
    "Paths inside a skill's file are relative to the folder that holds it."
)
"""The words before the list of skills in the system prompt."""


def system_prompt_section(skills: Iterable[Skill]) -> str:
    """The part of the system prompt that offers the skills to the model ("" when none
    is offered): each skill's name, description and file, except those the user alone
    may invoke (`disable-model-invocation: true`)."""
    offered = [s for s in skills if not s.disable_model_invocation]
    if not offered:
        return ""
    lines = [SKILLS_INTRO, "", "<available_skills>"]
    for s in offered:
        lines += [
            "  <skill>",
            f"    <name>{escape(s.name)}</name>",
            f"    <description>{escape(s.description)}</description>",
            f"    <location>{escape(s.path)}</location>",
            "  </skill>",
        ]
    lines.append("</available_skills>")
    return "\n".join(lines)
