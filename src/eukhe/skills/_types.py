"""What the loaders give: skills, prompt templates, subagents users define, and diagnostics."""

from __future__ import annotations

from dataclasses import dataclass, field

from eukhe.json_types import JsonMapping, JsonObject
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


@dataclass(frozen=True)
class Agent:
    """A subagent the user defined: its name, description and prompt (its file's body),
    the file it came from and where (`project` or `user`), the tools it names (eukhe's
    names; None: its parent's), those it denies, and its model as written (None: its
    parent's), and its `isolation` ("worktree": it works in a git worktree of its own unless
    the spawn says otherwise; "": none). `json`/`of`: as a run's spec carries it."""

    name: str
    description: str
    prompt: str
    path: str
    source: str
    tools: tuple[str, ...] | None = None
    denied: tuple[str, ...] = ()
    model: str | None = None
    isolation: str = ""

    def json(self) -> JsonObject:
        out: JsonObject = {
            "name": self.name,
            "description": self.description,
            "prompt": self.prompt,
            "path": self.path,
            "source": self.source,
        }
        if self.tools is not None:
            out["tools"] = list(self.tools)
        if self.denied:
            out["denied"] = list(self.denied)
        if self.model is not None:
            out["model"] = self.model
        if self.isolation:
            out["isolation"] = self.isolation
        return out

    @classmethod
    def of(cls, d: JsonMapping) -> Agent:
        tools = d.get("tools")
        return cls(
            name=str(d["name"]),
            description=str(d.get("description") or ""),
            prompt=str(d.get("prompt") or ""),
            path=str(d.get("path") or ""),
            source=str(d.get("source") or ""),
            tools=None if tools is None else tuple(map(str, tools)),
            denied=tuple(map(str, d.get("denied") or ())),
            model=None if d.get("model") is None else str(d["model"]),
            isolation=str(d.get("isolation") or ""),
        )
