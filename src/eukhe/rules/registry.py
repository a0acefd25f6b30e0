"""What eukhe loads as code or configuration, and what git runs: one registry.

Every path that eukhe (or git, for the project) reads in a project as settings, hooks,
MCP servers, agents, skills, prompt templates, commands or instructions is declared here
once (`ENTRIES`), with what reads it (`Loader`) and what a write to it takes (`Guard`).
What is protected is computed from it, not listed again: `rules.confine` places a path
by it, the sandbox's guard watches its names at any depth, and every loader takes its
path from it (`at`), so a new loader cannot forget the boundary (`tests/settings/
test_registry.py` opens a whole run under an audit hook and fails on any configuration
file read that the registry does not name).

A name is compared as a filesystem that folds might compare it (`fold`): on a
case-insensitive or normalizing folder (macOS, ext4 casefold, NTFS), `.GIT`, `.Claude`
or `.mcp.jſon` are the same files as `.git`, `.claude` and `.mcp.json`. They are folded
everywhere, whatever the folder: a probe per folder would cost a look at every folder a
walk lists, and on a folder that does not fold, a `.GIT` that is protected costs nobody.

Besides the fixed entries, a run's registry holds the folders its settings and git name
(`named_folders`): a skills or prompts folder of `skills.paths`/`prompts.paths`, and the
folder `core.hooksPath` names (with husky's own folder above it).

Pure: standard library only, frozen data, total functions.
"""

from __future__ import annotations

import posixpath
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from eukhe.rules.states import Choice


class Loader(Choice):
    """What reads a registered path."""

    SETTINGS = "eukhe's settings (rules, mode, hooks, MCP servers, providers)"
    MCP = "the MCP servers eukhe starts"
    HOOKS = "Claude Code's settings, whose hooks eukhe runs"
    HOOK_SCRIPTS = "the scripts Claude Code's hooks run"
    AGENTS = "the subagents a person defines"
    SKILLS = "skills"
    PROMPTS = "prompt templates"
    COMMANDS = "Claude Code's commands"
    GIT = "git's configuration and hooks"
    GIT_HOOKS = "the hooks git runs at a commit"
    INSTRUCTIONS = "project instructions, read into every run's system prompt"


class Guard(Choice):
    """What a tool's write to a registered path takes."""

    NEVER = "never written by a tool"  # eukhe's own configuration
    PERSON = "written only with a person's yes, asked each time"  # what runs outside any sandbox
    SHOWN = "written freely, and shown at the next session's start"  # text, not code


@dataclass(frozen=True)
class Entry:
    """One registered path, relative to a project folder (any folder of the workspace: the
    project may be a subfolder of where eukhe runs next), `/`-separated; a folder's ends
    in `/` and names everything under it."""

    path: str
    loader: Loader
    guard: Guard

    @property
    def top(self) -> str:
        """The name at the head of the path: what the protection watches at any depth."""
        return self.path.split("/", 1)[0]

    @property
    def folder(self) -> bool:
        return self.path.endswith("/")


ENTRIES: tuple[Entry, ...] = (
    Entry(".eukhe/settings.json", Loader.SETTINGS, Guard.NEVER),
    Entry(".eukhe/agents/", Loader.AGENTS, Guard.NEVER),
    Entry(".eukhe/skills/", Loader.SKILLS, Guard.NEVER),
    Entry(".eukhe/prompts/", Loader.PROMPTS, Guard.NEVER),
    Entry(".mcp.json", Loader.MCP, Guard.NEVER),
    Entry(".claude/settings.json", Loader.HOOKS, Guard.PERSON),
    Entry(".claude/settings.local.json", Loader.HOOKS, Guard.PERSON),
    Entry(".claude/hooks/", Loader.HOOK_SCRIPTS, Guard.PERSON),
    Entry(".claude/agents/", Loader.AGENTS, Guard.PERSON),
    Entry(".claude/commands/", Loader.COMMANDS, Guard.PERSON),
    Entry(".claude/skills/", Loader.SKILLS, Guard.PERSON),
    Entry(".git/", Loader.GIT, Guard.PERSON),
    Entry(".husky/", Loader.GIT_HOOKS, Guard.PERSON),
    Entry("AGENTS.md", Loader.INSTRUCTIONS, Guard.SHOWN),
    Entry("CLAUDE.md", Loader.INSTRUCTIONS, Guard.SHOWN),
)
"""Every path eukhe or git reads in a project as configuration or code. A name at the head
of a PERSON or NEVER entry is protected whole, at any depth: what lies beside a registered
file in `.claude/` (a hook's script, an output style) is Claude Code's too, and a folder
renamed into place must not carry a planted file past its name."""


def _strictest(guards: Iterable[Guard]) -> Guard:
    order = (Guard.NEVER, Guard.PERSON, Guard.SHOWN)
    got = set(guards)
    return next(g for g in order if g in got)


# ---------------------------------------------------------------- folding

IGNORED = frozenset([0x200C, 0x200D, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF])
"""Code points HFS+ leaves out of a name when it compares two (as git's `is_hfs_dotgit` lists them)."""


def fold(name: str) -> str:
    """A name as a filesystem that folds would take it: case folded (Unicode's full folding,
    as ext4's casefold and APFS take it: `K` for `k`, `ſ` for `s`), compatibility forms and
    normalization undone (NFKC: APFS compares normalized names; a fullwidth `．ｇｉｔ` is taken
    as `.git` for good measure), the code points HFS+ ignores left out, and trailing dots and
    spaces dropped (NTFS drops them)."""
    if name.isascii():
        return name.lower().rstrip(" .") or name
    kept = "".join(ch for ch in name if ord(ch) not in IGNORED)
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", kept).casefold())
    return folded.rstrip(" .") or folded


NAMES: dict[str, Guard] = {
    fold(top): _strictest(e.guard for e in ENTRIES if e.top == top)
    for top in dict.fromkeys(e.top for e in ENTRIES if e.guard is not Guard.SHOWN)
}
"""The protected names, folded, each with the strictest guard of its entries: computed from
`ENTRIES`, never written twice."""

SHOWN: frozenset[str] = frozenset(fold(e.top) for e in ENTRIES if e.guard is Guard.SHOWN)
"""The names whose writes are shown at the next session's start (the instruction files)."""

INSTRUCTIONS: tuple[str, ...] = tuple(e.path for e in ENTRIES if e.loader is Loader.INSTRUCTIONS)
"""The instruction files' names, in the order a folder's are looked for."""


def guard_of(name: str) -> Guard | None:
    """The guard of a protected name (one part of a path), folded; None: not protected."""
    return NAMES.get(fold(name))


def shown(name: str) -> bool:
    """Whether a name is an instruction file's (its writes are shown, not asked)."""
    return fold(name) in SHOWN


def entry(rel: str) -> Entry | None:
    """The entry that names `rel` (a `/`-separated path relative to a project folder):
    a registered file itself, or a path under a registered folder, compared folded."""
    parts = [fold(p) for p in rel.strip("/").split("/") if p and p != "."]
    for e in ENTRIES:
        want = [fold(p) for p in e.path.strip("/").split("/")]
        if parts[: len(want)] == want and (len(parts) == len(want) or e.folder):
            return e
    return None


def at(project: str, path: str) -> str:
    """A registered path's place in the folder `project` (what every loader opens): raises
    KeyError for a path the registry does not name, so a loader cannot read one unnamed."""
    got = next((e for e in ENTRIES if e.path.rstrip("/") == path.rstrip("/")), None)
    if got is None:
        raise KeyError(f"{path} is not a registered configuration path (rules.registry.ENTRIES)")
    return posixpath.join(project, got.path.rstrip("/"))


# ---------------------------------------------------------------- what the settings and git name

HUSKY_RUNNER = "_"
"""husky keeps its runner in `.husky/_` (what core.hooksPath names) and runs the hooks a
person writes in the folder above it."""


def hooks_folders(hooks: str, workspace: str) -> tuple[str, ...]:
    """The folders that git runs hooks from, given the hooks path git gives (absolute,
    normalized; "" none), protected when they lie inside the workspace: the folder itself,
    and husky's own folder above its runner."""
    if not hooks.startswith("/") or not _inside(hooks, workspace):
        return ()
    out = [hooks]
    if posixpath.basename(hooks) == HUSKY_RUNNER and _inside(posixpath.dirname(hooks), workspace):
        out.append(posixpath.dirname(hooks))
    return tuple(out)


def named_folders(paths: Iterable[str], workspace: str) -> tuple[str, ...]:
    """The folders and files the settings name for eukhe to load (`skills.paths`,
    `prompts.paths`: absolute, normalized) that lie inside the workspace: protected as the
    fixed entries are."""
    return tuple(dict.fromkeys(p for p in paths if p.startswith("/") and _inside(p, workspace)))


def _inside(path: str, root: str) -> bool:
    return path != root and path.startswith(root.rstrip("/") + "/")
