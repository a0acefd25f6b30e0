"""Subagents users define: found, checked by the rule (`rules.agent`), loaded or diagnosed.

Locations, in order: the project's `.eukhe/agents/` and `.claude/agents/` (Claude Code's,
so a team's agents work unchanged), only in a folder its user trusts
(`settings.trust`); then `<home>/agents/`; then each plugin in effect's `agents/`
(`eukhe.plugins`: added by the person, so loaded in any folder, source `plugin:<name>`).
Each `*.md` file of a location (not its
hidden ones, nor its folders) is one definition. The first agent of a name wins: a
project's over the user's, as in Claude Code; a later one loses a name collision,
reported.

Every folder and file is opened as a skill's is (`ownfiles`, through `_files.read_text`)
and its frontmatter parsed by the skills' parser: a project's never leads by a link out
of the project (nor, like every file eukhe reads for a prompt, into a secret place such
as `~/.ssh`); the home's may lead into the user's dotfiles. An untrusted project's
agents are not read at all: one diagnostic a folder says so, and how to trust it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from eukhe.ownfiles import Bound, Refused, home_bound, open_folder, project_bound
from eukhe.plugins import in_effect
from eukhe.rules import agent as rule
from eukhe.rules import registry
from eukhe.rules.skill_load import Read
from eukhe.settings.trust import TrustError, verdict
from eukhe.skills._files import read_text, why
from eukhe.skills._frontmatter import parse
from eukhe.skills._types import Agent, Diagnostic

FOLDERS = tuple(Path(e.path.rstrip("/")) for e in registry.ENTRIES if e.loader is registry.Loader.AGENTS)
"""A project's folders of agents, in the order they are loaded (`rules.registry`'s)."""

HOME_FOLDER = "agents"
"""The home's folder of agents."""

WHERE = (".claude/agents/*.md", ".eukhe/agents/*.md", f"<home>/{HOME_FOLDER}/*.md")
"""Where agents are defined, as a line says it."""


@dataclass(frozen=True)
class Agents:
    """What loading agents gave: the agents, and every diagnostic."""

    agents: tuple[Agent, ...]
    diagnostics: tuple[Diagnostic, ...]


@dataclass
class _Loader:
    winners: dict[str, str] = field(default_factory=dict)
    files: set[str] = field(default_factory=set)
    agents: list[Agent] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def said(self, path: str, *messages: str) -> None:
        self.diagnostics += [Diagnostic(path, m) for m in messages]

    def unlisted(self, path: str, detail: str) -> None:
        self.said(path, *rule.check_file(rule.File(Read.ENTRY, detail=detail), self.winners).messages)

    def folder(self, folder: Path, source: str, bound: Bound) -> None:
        """Every definition in `folder`, in name order; a missing folder is no failure."""
        path = os.fspath(folder)
        if not os.path.lexists(path):
            return
        try:
            fd, _ = open_folder(path, bound)
        except Refused as e:  # a link out of the project, or into a place no prompt reads
            self.unlisted(path, str(e))
            return
        except OSError as e:
            self.unlisted(path, why(e))
            return
        try:
            with os.scandir(fd) as it:
                entries = sorted(e.name for e in it if e.name.endswith(".md") and not e.name.startswith("."))
        except OSError as e:
            self.unlisted(path, why(e))
            return
        finally:
            os.close(fd)
        for name in entries:
            self.file(os.path.join(path, name), source, bound)

    def file(self, path: str, source: str, bound: Bound) -> None:
        try:
            real = os.path.realpath(path)
        except (OSError, ValueError):
            real = path
        if real in self.files:  # loaded already (through a link): one definition
            return
        if os.path.isdir(path):  # a folder named *.md: not a definition
            return
        got = read_text(path, bound, rule.MAX_PROMPT)
        if got.text is None:
            f = rule.File(got.read, detail=got.detail)
        else:
            p = parse(got.text)
            f = rule.File(Read.OK, p.front, p.detail, p.meta, p.body, got.cut)
        checked = rule.check_file(f, self.winners)
        if not checked.loads:
            self.said(path, *checked.messages)
            return
        carried = sum(len(a.prompt) for a in self.agents) + len(checked.prompt)
        if len(self.agents) >= rule.MAX_AGENTS or carried > rule.MAX_PROMPTS:
            self.said(path, rule.too_many())
            return
        self.winners[checked.name] = path
        self.files.add(real)
        self.agents.append(
            Agent(
                name=checked.name,
                # Claude Code reads `\n` in an agent's description as a line break (its agent
                # wizard writes descriptions on one line so)
                description=checked.description.replace("\\n", "\n"),
                prompt=checked.prompt,
                path=path,
                source=source,
                tools=checked.tools,
                denied=checked.denied,
                model=checked.model,
                isolation=checked.isolation,
            )
        )


def trusted(home: Path, project: Path) -> tuple[bool, str | None]:
    """Whether the project is trusted, and why not when its records cannot be read (they
    then trust nothing)."""
    try:
        return verdict(home, project) is True, None
    except TrustError as e:
        return False, f"{e}; this folder is taken as untrusted"


def load_agents(home: Path, project: Path | None = None) -> Agents:
    """The agents of a trusted `project` (None: none) and of the home, and every
    diagnostic. Never raises for what it finds on disk."""
    loader = _Loader()
    if project is not None:
        found = [project / f for f in FOLDERS if os.path.lexists(project / f)]
        ok, unread = trusted(home, project) if found else (False, None)
        for folder in found:
            if ok:
                loader.folder(folder, "project", project_bound(project, home))
            else:
                held = f"{unread}; its agents are not loaded" if unread else rule.untrusted(str(project))
                loader.said(os.fspath(folder), held)
    loader.folder(home / HOME_FOLDER, "user", home_bound(home))
    for p in in_effect(home, project).plugins:
        loader.folder(Path(p.root) / HOME_FOLDER, f"plugin:{p.name}", home_bound(home))
    return Agents(tuple(loader.agents), tuple(loader.diagnostics))


def listing(agents: Sequence[Agent], diagnostics: Sequence[Diagnostic]) -> list[str]:
    """The lines `/agents` shows: each agent (name, description, tools, model, where it came
    from), then each definition that did not load, and why."""
    out = [] if agents else [f"no agents are defined ({', '.join(WHERE)})"]
    for a in agents:
        tools = "its parent's" if a.tools is None else ", ".join(a.tools) or "none"
        denied = f" (less {', '.join(a.denied)})" if a.denied else ""
        alone = f" · isolation: {a.isolation}" if a.isolation else ""
        out += [
            f"{a.name}: {a.description}",
            f"  tools: {tools}{denied} · model: {a.model or 'inherit'}{alone} · {a.source}: {a.path}",
        ]
    for d in diagnostics:
        out.append(f"not loaded: {d.path}: {d.error}")
    return out
