"""What a run loads as code beyond the registry's fixed names (`rules.registry`), found once when
it is put together: the folder git runs hooks from (`core.hooksPath`, as git itself resolves it),
the skills and prompt templates its settings name (`skills`, `prompts`), where a protected
name that is a link leads (`.claude -> config/claude`: writing there by its own name changes
what is loaded), and the files the commands it runs outside any sandbox name: a hook's script
(`python3 tools/lint_hook.py`), an MCP server's (`node server/index.js`), which run as the user
at the next hook or the next run. Each one that lies in the workspace is held as the protected
names are: by the permission gate (`rules.confine.Where.code`) and by the sandbox
(`Sandbox.watched`).

Blocking (git runs, links are read): call it off the event loop."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

from eukhe.json_types import JsonMapping
from eukhe.rules import registry

GIT_TIMEOUT = 5.0
"""Seconds `git rev-parse` may take to say where the hooks are."""
LINKED = ("settings.json", "settings.local.json", "hooks", "agents", "commands", "skills")
"""What a protected folder holds that may be a link of its own (`.claude/settings.json -> ...`)."""


def hooks_path(cwd: Path, env: Mapping[str, str] | None = None) -> str:
    """The folder git runs this repository's hooks from, absolute ("" when git is not here, this
    is no repository, or git did not say within `GIT_TIMEOUT`). Asked of git itself, since only
    git knows how it reads `core.hooksPath` (its includes, its relative paths)."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--git-path", "hooks"],
            cwd=cwd,
            env={**(env or os.environ), "GIT_OPTIONAL_LOCKS": "0"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=GIT_TIMEOUT,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    got = done.stdout.decode("utf-8", "replace").strip()
    return os.path.realpath(os.path.join(cwd, got)) if done.returncode == 0 and got else ""


def _listed(settings: JsonMapping, key: str, project: Path) -> list[str]:
    v = settings.get(key)
    paths = [p for p in v if isinstance(p, str)] if isinstance(v, list) else []
    out = []
    for p in paths:
        full = os.path.expanduser(p)
        out.append(os.path.realpath(full if os.path.isabs(full) else os.path.join(project, full)))
    return out


def _links(folder: str) -> list[str]:
    """Where the protected names in `folder` that are links lead, and the links inside them."""
    out = []
    try:
        names = [n for n in os.listdir(folder) if registry.guard_of(n) is not None]
    except OSError:
        return []
    for name in names:
        path = os.path.join(folder, name)
        if os.path.islink(path):
            out.append(os.path.realpath(path))
        for inner in LINKED:
            p = os.path.join(path, inner)
            if os.path.islink(p):
                out.append(os.path.realpath(p))
    return out


PROJECT_DIR = re.compile(r"\$\{?CLAUDE_PROJECT_DIR\}?")
"""How a Claude Code hook names the project in its command (eukhe sets it as Claude Code does)."""


def _words(command: str) -> list[str]:
    """A command's words, and the words of a word that is a command of its own (`bash -c '...'`)."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:  # an unclosed quote: its words as the shell would not read them, said by spaces
        words = command.split()
    inner = [w for w in words if " " in w.strip()]
    return [*words, *(x for w in inner for x in _words(w))]


def run_files(commands: Iterable[str], cwd: Path) -> list[str]:
    """The files the `commands` eukhe runs outside any sandbox name (hooks, MCP servers): each
    word, or an option's value after `=`, that is a path to a regular file, read from `cwd`
    with `$CLAUDE_PROJECT_DIR`, the process's variables and `~` expanded; real paths."""
    out = []
    for command in commands:
        for word in _words(command):
            for part in (word, word.partition("=")[2]):
                if not part or part.startswith("-"):
                    continue
                p = os.path.expanduser(os.path.expandvars(PROJECT_DIR.sub(lambda _: str(cwd), part)))
                full = os.path.realpath(p if os.path.isabs(p) else os.path.join(cwd, p))
                if os.path.isfile(full):
                    out.append(full)
    return out


def code_paths(
    cwd: Path, settings: JsonMapping, commands: Iterable[str] = (), env: Mapping[str, str] | None = None
) -> tuple[str, ...]:
    """The real paths a run in `cwd` loads as code beyond the registry's names that lie in its
    workspace (`rules.registry.hooks_folders`, `named_folders`), each once: `commands`, what it
    runs outside any sandbox (its hooks' and its MCP servers' commands)."""
    workspace = os.path.realpath(cwd)
    found = [*registry.hooks_folders(hooks_path(cwd, env), workspace)]
    named = [*_listed(settings, "skills", cwd), *_listed(settings, "prompts", cwd), *run_files(commands, cwd)]
    for folder in (Path(workspace), *Path(workspace).parents):
        named += _links(str(folder))
        if os.path.lexists(folder / ".git"):
            break
    found += registry.named_folders(named, workspace)
    return tuple(dict.fromkeys(found))
