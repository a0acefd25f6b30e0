"""What the loaders give: skills, prompt templates and diagnostics."""

from __future__ import annotations

from dataclasses import dataclass, field

from eukhe.ownfiles import NOWHERE, Bound


@dataclass(frozen=True)
class Diagnostic:
    """One failing candidate (or ignore file, or ignore rule): its absolute path and the error."""

    path: str
    error: str

    def json(self) -> dict[str, str]:
        return {"path": self.path, "error": self.error}


@dataclass(frozen=True)
class Skill:
    """A loaded skill: its name, description, the absolute path of its SKILL.md, its
    folder, where it was found (`user`, `project` or `path`), whether only the user
    may invoke it (`disable-model-invocation`), and the folder its file is read within
    when it is invoked (`ownfiles.Bound`: none, for a skill no loader found)."""

    name: str
    description: str
    path: str
    folder: str
    source: str
    disable_model_invocation: bool = False
    bound: Bound = field(default=NOWHERE, compare=False, repr=False)

    def json(self) -> dict[str, str]:
        return {"name": self.name, "path": self.path, "description": self.description}


@dataclass(frozen=True)
class Template:
    """A loaded prompt template: `/name args` expands its content."""

    name: str
    description: str
    path: str
    source: str
    content: str
    argument_hint: str = ""

    def json(self) -> dict[str, str]:
        return {"name": self.name, "path": self.path, "description": self.description}
