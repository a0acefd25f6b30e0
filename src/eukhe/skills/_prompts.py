"""Prompt templates: `.md` files whose body `/name args` expands.

Locations, in order: `<home>/prompts/*.md`, `<project>/.eukhe/prompts/*.md`
(not searched below), then each explicit path (a `.md` file, or a folder's
`.md` files), then each plugin in effect's `commands/*.md` (Claude Code's commands, source
`plugin:<name>`, `${CLAUDE_PLUGIN_ROOT}` in their text the plugin's folder).
The name is the file's, without `.md`; the description is the
frontmatter's `description` or the body's first line cut at 60 characters
(`rules.skill_load.summary`); `argument-hint` says what arguments it takes.
The first template of a name wins; a later one loses a name collision,
reported. A path missing or not Markdown, and a file that cannot be read or
has invalid YAML frontmatter, is reported too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from eukhe.ownfiles import home_bound, project_bound
from eukhe.plugins import Plugin, in_effect, root_in
from eukhe.rules import registry
from eukhe.rules.skill_load import Kind
from eukhe.skills._skills import _Loader, absolute, bound_of
from eukhe.skills._types import Diagnostic, Template


@dataclass(frozen=True)
class Prompts:
    """What loading prompt templates gave: the templates and every diagnostic."""

    prompts: tuple[Template, ...]
    diagnostics: tuple[Diagnostic, ...]

    def json(self) -> dict[str, object]:
        return {
            "prompts": [t.json() for t in self.prompts],
            "diagnostics": [d.json() for d in self.diagnostics],
        }


@dataclass
class _PromptLoader(_Loader):
    prompts: list[Template] = field(default_factory=list)
    plugin: Plugin | None = None  # the plugin whose commands are being loaded

    def template(self, path: str, source: str) -> None:
        got = self.read(path, os.path.basename(path)[: -len(".md")])
        if got is not None and got[0].loads:
            c, body = got
            body = root_in(body, self.plugin) if self.plugin is not None else body
            self.prompts.append(Template(c.name, c.description, path, source, body, c.argument_hint))

    def folder(self, path: str, source: str) -> None:
        got = self.listed(path)
        if got is None:
            return
        for name in got[1]:
            if name.endswith(".md") and not name.startswith("."):
                self.template(os.path.join(path, name), source)

    def file(self, path: str, source: str) -> None:
        self.template(path, source)


def load_prompts(home: Path, project: Path | None = None, paths: Sequence[str | Path] = ()) -> Prompts:
    """Templates from `<home>/prompts/`, `<project>/.eukhe/prompts/` and each explicit
    path (relative ones from the project, else the working folder). Never raises for
    what it finds on disk: each failure is a diagnostic."""
    base = project if project is not None else Path.cwd()
    loader = _PromptLoader(Kind.TEMPLATE)
    loader.root(absolute(home / "prompts", base), "user", False, home_bound(home))
    if project is not None:
        loader.root(
            absolute(registry.at(str(project), ".eukhe/prompts"), base),
            "project",
            False,
            project_bound(project, home),
        )
    for p in paths:
        path = absolute(p, base)
        loader.root(path, "path", True, bound_of(path, home, project, base))
    for plugin in in_effect(home, project).plugins:
        loader.plugin = plugin
        loader.root(os.path.join(plugin.root, "commands"), f"plugin:{plugin.name}", False, home_bound(home))
    return Prompts(tuple(loader.prompts), tuple(loader.diagnostics))


# ---------------------------------------------------------------- expansion


def parse_args(text: str) -> list[str]:
    """Arguments as a shell splits words: blanks separate, quotes group (an unclosed
    quote runs to the end), quotes themselves are dropped."""
    args: list[str] = []
    current = ""
    started = False
    quote = ""
    for ch in text:
        if quote:
            if ch == quote:
                quote = ""
            else:
                current += ch
        elif ch in "\"'":
            quote = ch
            started = True
        elif ch.isspace():
            if started:
                args.append(current)
                current, started = "", False
        else:
            current += ch
            started = True
    if started:
        args.append(current)
    return args


_REF = re.compile(r"\$\{@:(\d{1,9})(?::(\d{1,9}))?\}|\$(ARGUMENTS|@|\d{1,9})")


def substitute(content: str, args: Sequence[str]) -> str:
    """`$1`.. the arguments by place (missing ones empty), `$@` and `$ARGUMENTS` all of
    them, `${@:N}` those from the Nth on, `${@:N:L}` L of them from the Nth. One pass:
    what an argument holds is never expanded in turn."""

    def one(m: re.Match[str]) -> str:
        start, length, simple = m.group(1), m.group(2), m.group(3)
        if start is not None:
            i = max(int(start), 1) - 1
            picked = args[i:] if length is None else args[i : i + int(length)]
            return " ".join(picked)
        if simple in ("ARGUMENTS", "@"):
            return " ".join(args)
        n = int(simple)
        return args[n - 1] if 1 <= n <= len(args) else ""

    return _REF.sub(one, content)


_COMMAND = re.compile(r"/(\S+)(?:\s+(.*))?", re.DOTALL)


def expand(text: str, templates: Sequence[Template]) -> str | None:
    """`/name args` expanded by the template `name`; None when `text` names none."""
    m = _COMMAND.fullmatch(text)
    if m is None:
        return None
    name, rest = m.group(1), m.group(2)
    for t in templates:
        if t.name == name:
            return substitute(t.content, parse_args(rest or ""))
    return None
