"""Skills and prompt templates, with a diagnostic for every candidate that fails (H7.3).

The check of each candidate (its name, whether it loads, its messages) is the
model's, `eukhe.rules.skill_load`; this package finds candidates, reads them
without ever waiting on one, parses their YAML frontmatter and honours ignore
files.

- `load_skills`, `load_prompts`: what loaded and every diagnostic (`.json()`
  gives the object `eukhe skills --json` / `eukhe prompts --json` print).
- `get_resource_snapshot`: both, with `diagnostics.skills` and
  `diagnostics.prompts`.
- `system_prompt_section`: the part of the system prompt that offers the
  skills to the model.
- `expand`: `/name args` through a template; `invoke_skill`: `/skill:name args`.
- `load_agents`: the subagents users define (`.claude/agents/*.md`, in a trusted
  project, and the home's), each that did not load diagnosed; `agents_listing`: the
  lines `/agents` shows.
- `load_instructions`: the project instructions (`AGENTS.md`, `CLAUDE.md`) for the
  system prompt, within `context.instructionsBytes`; `instruction_digests`: each one's
  digest, by `instruction_key`, to tell which a run changed (`rules.instructed`).
"""

from eukhe.skills._agents import Agents, load_agents
from eukhe.skills._agents import listing as agents_listing
from eukhe.skills._digests import digests as instruction_digests
from eukhe.skills._digests import project as instruction_project
from eukhe.skills._digests import text as instruction_text
from eukhe.skills._instructions import Instructions, load_instructions
from eukhe.skills._instructions import file_key as instruction_key
from eukhe.skills._prompts import Prompts, expand, load_prompts, parse_args, substitute
from eukhe.skills._skills import SkillError, Skills, invoke_skill, load_skills
from eukhe.skills._snapshot import (
    SKILLS_INTRO,
    ResourceSnapshot,
    get_resource_snapshot,
    system_prompt_section,
)
from eukhe.skills._types import Agent, Diagnostic, Skill, Template

__all__ = [
    "SKILLS_INTRO",
    "Agent",
    "Agents",
    "Diagnostic",
    "Instructions",
    "Prompts",
    "ResourceSnapshot",
    "Skill",
    "SkillError",
    "Skills",
    "Template",
    "agents_listing",
    "expand",
    "get_resource_snapshot",
    "instruction_digests",
    "instruction_key",
    "instruction_project",
    "instruction_text",
    "invoke_skill",
    "load_agents",
    "load_instructions",
    "load_prompts",
    "load_skills",
    "parse_args",
    "substitute",
    "system_prompt_section",
]
