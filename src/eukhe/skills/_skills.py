"""Skills: found, checked by the model (`rules.skill_load`), loaded or diagnosed.

Locations, in order: `<home>/skills/`, `<project>/.eukhe/skills/`, then each
explicit path, then each plugin in effect's `skills/` (source `plugin:<name>`).
A folder holding `SKILL.md` is a skill (its other files are the
skill's own, and are not searched for more skills); other folders are walked
for skills. Hidden entries are passed over; `.gitignore`, `.ignore` and
`.fdignore` rules are honoured. The first skill of a name wins; a later one
loses a name collision, reported.

Every candidate (a `SKILL.md`, an explicit path, an entry that cannot be
looked at) is loaded or diagnosed, never both; a file reached twice (through a
link, or listed twice) is one candidate; a folder reached twice is walked once,
so a link loop ends.

Every file and folder is opened within the folder it belongs to (`ownfiles`), and
decided on as it is opened: the project's `.eukhe/` never leads by a link out of the
project (a `SKILL.md -> ~/.aws/credentials` is diagnosed, with where it leads); the
home's may lead into the user's dotfiles; an explicit path inside the project is the
project's, one outside it is read where it is. None is read in /proc, /sys, /dev, a
process's folder, a secret place or (but for the home's own) eukhe's home.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from eukhe.errors import Code, EukheError
from eukhe.ownfiles import NOWHERE, Bound, Refused, home_bound, named_bound, open_folder, project_bound
from eukhe.plugins import in_effect
from eukhe.rules import registry, skill_load
from eukhe.rules.confine import under
from eukhe.rules.skill_load import File, Front, Kind, Read
from eukhe.skills._files import read_text, why
from eukhe.skills._frontmatter import parse
from eukhe.skills._ignore import Rules, ignored, read_rules
from eukhe.skills._types import Diagnostic, Skill

SKILL_FILE = "SKILL.md"


@dataclass(frozen=True)
class Skills:
    """What loading skills gave: the skills, every diagnostic, the paths ignore rules
    left out, and the model's tally of candidates."""

    skills: tuple[Skill, ...]
    diagnostics: tuple[Diagnostic, ...]
    ignored: tuple[str, ...] = ()
    tally: skill_load.Tally = skill_load.START

    def json(self) -> dict[str, object]:
        return {
            "skills": [s.json() for s in self.skills],
            "diagnostics": [d.json() for d in self.diagnostics],
        }


def absolute(path: str | Path, base: Path) -> str:
    """`~` expanded; relative paths from `base`; links kept (the path the user gave)."""
    p = os.path.expanduser(os.fspath(path))
    return os.path.normpath(p if os.path.isabs(p) else os.path.join(os.fspath(base), p))


def bound_of(path: str, home: Path, project: Path | None, base: Path) -> Bound:
    """The folder an explicit `path` (absolute, links kept) is read within: the project's
    when it is written inside the project, the home's inside the home, else where it is
    (never a place no prompt reads)."""
    if project is not None and under(path, absolute(project, base)):
        return project_bound(project, home)
    if under(path, absolute(home, base)):
        return home_bound(home)
    return named_bound(project if project is not None else base, home)


@dataclass
class _Loader:
    kind: Kind
    bound: Bound = NOWHERE  # the folder the location being loaded belongs to
    winners: dict[str, str] = field(default_factory=dict)
    files: set[str] = field(default_factory=set)
    folders: set[str] = field(default_factory=set)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    tally: skill_load.Tally = skill_load.START

    def candidate(self, f: File, path: str) -> skill_load.Checked:
        """Ask the model about one candidate, and keep its answer."""
        checked = skill_load.check_file(f, self.winners)
        self.tally = skill_load.count(self.tally, checked.verdict)
        if checked.loads:
            self.winners[checked.name] = path
        else:
            self.diagnostics += [Diagnostic(path, m) for m in checked.messages]
        return checked

    def failed(self, path: str, read: Read, detail: str = "") -> None:
        self.candidate(File(self.kind, os.path.basename(path), read, Front.NONE, detail), path)

    def read(self, path: str, name: str) -> tuple[skill_load.Checked, str] | None:
        """Check the file at `path`; None when this file was met already."""
        try:
            real = os.path.realpath(path)
        except (OSError, ValueError):
            real = path
        if real in self.files:
            return None
        self.files.add(real)
        got = read_text(path, self.bound)
        if got.text is None:
            return self.candidate(File(self.kind, name, got.read, Front.NONE, got.detail), path), ""
        if got.cut and self.kind is Kind.TEMPLATE:
            big = File(self.kind, name, Read.FILE, Front.NONE, f"larger than {len(got.text)} characters")
            return self.candidate(big, path), ""
        p = parse(got.text)
        return self.candidate(File(self.kind, name, Read.OK, p.front, p.detail, p.meta, p.body), path), p.body

    def folder(self, path: str, source: str) -> None:
        """A location that is a folder: every candidate in it."""
        raise NotImplementedError

    def file(self, path: str, source: str) -> None:
        """An explicit path that is a Markdown file: that one candidate."""
        raise NotImplementedError

    def listed(self, folder: str) -> tuple[str, list[str]] | None:
        """The folder's real path and its entries' names, in order, opened within the
        bound; None when it cannot be (diagnosed)."""
        try:
            fd, real = open_folder(folder, self.bound)
        except Refused as e:
            self.failed(folder, Read.ENTRY, str(e))
            return None
        except OSError as e:
            self.failed(folder, Read.ENTRY, why(e))
            return None
        try:
            with os.scandir(fd) as it:
                return real, sorted(e.name for e in it)
        except OSError as e:
            self.failed(folder, Read.ENTRY, why(e))
            return None
        finally:
            os.close(fd)

    def root(self, path: str, source: str, explicit: bool, bound: Bound) -> None:
        """One location: a folder of candidates, or (given explicitly) one Markdown
        file, each read within `bound`. A missing default location is no failure; a
        missing explicit one is."""
        self.bound = bound
        try:
            st = os.stat(path)
        except FileNotFoundError:
            if os.path.lexists(path):
                self.failed(path, Read.ENTRY, "a broken link")
            elif explicit:
                self.failed(path, Read.MISSING)
            return
        except (OSError, ValueError) as e:
            self.failed(path, Read.ENTRY, why(e) if isinstance(e, OSError) else str(e))
            return
        if stat.S_ISDIR(st.st_mode):
            self.folder(path, source)
        elif not explicit:
            self.failed(path, Read.ENTRY, "not a folder")
        elif not path.endswith(".md"):
            self.failed(path, Read.NOT_MARKDOWN)
        else:
            self.file(path, source)


@dataclass
class _SkillLoader(_Loader):
    skills: list[Skill] = field(default_factory=list)

    def skill_file(self, path: str, source: str) -> None:
        folder = os.path.dirname(path)
        got = self.read(path, os.path.basename(folder))
        if got is not None and got[0].loads:
            c = got[0]
            self.skills.append(
                Skill(c.name, c.description, path, folder, source, c.disable_model_invocation, self.bound)
            )

    def walk(self, root: str, source: str) -> None:
        """Every skill under the folder `root`, depth first in name order."""
        stack: list[tuple[str, str, tuple[Rules, ...]]] = [(root, "", ())]
        while stack:
            folder, rel, chain = stack.pop()
            got = self.listed(folder)
            if got is None:
                continue
            real, names = got
            if real in self.folders:
                continue
            self.folders.add(real)
            rules, found = read_rules(folder, rel, self.bound)
            self.diagnostics += found
            inner = (*chain, *rules)
            if SKILL_FILE in names:
                rel_file = f"{rel}/{SKILL_FILE}" if rel else SKILL_FILE
                if not ignored(inner, rel_file, False):
                    self.skill_file(os.path.join(folder, SKILL_FILE), source)
                    continue
                self.ignored.append(os.path.join(folder, SKILL_FILE))
            below: list[tuple[str, str, tuple[Rules, ...]]] = []
            for name in names:
                if name.startswith(".") or name == SKILL_FILE:
                    continue
                path = os.path.join(folder, name)
                rel_path = f"{rel}/{name}" if rel else name
                try:
                    is_dir = stat.S_ISDIR(os.stat(path).st_mode)
                except (OSError, ValueError) as e:
                    if not ignored(inner, rel_path, False):
                        self.failed(path, Read.ENTRY, why(e) if isinstance(e, OSError) else str(e))
                    continue
                if not is_dir:
                    continue
                if ignored(inner, rel_path, True):
                    self.ignored.append(path)
                    continue
                below.append((path, rel_path, inner))
            stack += reversed(below)

    def folder(self, path: str, source: str) -> None:
        self.walk(path, source)

    def file(self, path: str, source: str) -> None:
        self.skill_file(path, source)


def load_skills(home: Path, project: Path | None = None, paths: Sequence[str | Path] = ()) -> Skills:
    """Skills from `<home>/skills/`, `<project>/.eukhe/skills/` and each explicit path
    (relative ones from the project, else the working folder). Never raises for what
    it finds on disk: each failure is a diagnostic."""
    base = project if project is not None else Path.cwd()
    loader = _SkillLoader(Kind.SKILL)
    loader.root(absolute(home / "skills", base), "user", False, home_bound(home))
    if project is not None:
        loader.root(
            absolute(registry.at(str(project), ".eukhe/skills"), base),
            "project",
            False,
            project_bound(project, home),
        )
    for p in paths:
        path = absolute(p, base)
        loader.root(path, "path", True, bound_of(path, home, project, base))
    for plugin in in_effect(home, project).plugins:
        loader.root(os.path.join(plugin.root, "skills"), f"plugin:{plugin.name}", False, home_bound(home))
    return Skills(tuple(loader.skills), tuple(loader.diagnostics), tuple(loader.ignored), loader.tally)


class SkillError(EukheError, ValueError):
    """`/skill:name` names no loaded skill, or its file cannot be read now: says which and why."""

    code = Code.SETTINGS


_INVOKE = "/skill:"


def invoke_skill(text: str, skills: Sequence[Skill]) -> str | None:
    """`/skill:name args`: the user's message that hands the model the skill's text (its
    body, after the frontmatter) and then the arguments; None when `text` is no such
    command. The file is read now, so an edit since loading counts."""
    if not text.startswith(_INVOKE):
        return None
    name, _, args = text[len(_INVOKE) :].partition(" ")
    name = name.strip()
    found = next((s for s in skills if s.name == name), None)
    if found is None:
        known = ", ".join(sorted(s.name for s in skills)) or "none loaded"
        raise SkillError(f"no skill {name!r} (the skills: {known})")
    got = read_text(found.path, found.bound)  # within the folder it was loaded from
    if got.text is None:
        raise SkillError(f"skill {name!r}: cannot read {found.path}: {got.detail}")
    body = parse(got.text).body.strip()
    head = f'<skill name="{found.name}" location="{found.path}">\nReferences are relative to {found.folder}.'
    message = f"{head}\n\n{body}\n</skill>"
    return f"{message}\n\n{args.strip()}" if args.strip() else message
