"""A person's "always for this project" answers, kept in the home (`approvals.json`) by
project (its real path), read back as allow rules of `Source.APPROVED`.

They are the user's own answers: only the ask's answer adds one (`rules.permission.
granted`), and no tool of the model may write the file (`tools.protected.HOME_FILES`).
Each rule is kept as the model granted it, a tool and an absolute pattern, never
re-read through Claude Code's syntax, so a path stays the path it was. Written like the
trust records (`settings.locked`): read, changed and written under the file's lock, so two
terminals answering at once both count; atomically; readable by the user only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from eukhe.errors import Code
from eukhe.home import HomeError
from eukhe.rules.permission import Kind, Rule, Source
from eukhe.settings.load import SettingsError
from eukhe.settings.locked import by_project, locked, write

APPROVALS = "approvals.json"
"""The approvals' file in the home."""


class ApprovalsError(SettingsError):
    """The approvals cannot be read or written: names the file and why (a SettingsError, so
    every command that reads the settings says it as it says theirs)."""

    code = Code.PERMISSION


def approvals_path(home: Path) -> Path:
    return home / APPROVALS


def _project(project: Path) -> str:
    return os.path.realpath(project)


def _all(home: Path) -> dict[str, list[dict[str, str | None]]]:
    """Every project's approvals as the file has them ({} when there is none)."""
    fix = "remove the file and answer the asks again"
    return by_project(approvals_path(home), "approvals", fix, _entry, ApprovalsError)


def _entry(r: object) -> dict[str, str | None]:
    """One kept rule, checked: a tool name and a pattern (a string, or null)."""
    if not isinstance(r, dict) or not isinstance(r.get("tool"), str) or not r["tool"]:
        raise TypeError(f"expected {{'tool': NAME, 'pattern': TEXT or null}}, found {r!r:.80}")
    pattern = r.get("pattern")
    if pattern is not None and not isinstance(pattern, str):
        raise TypeError(f"expected a pattern that is text or null, found {pattern!r:.80}")
    return {"tool": r["tool"], "pattern": pattern}


def approvals(home: Path, project: Path) -> tuple[Rule, ...]:
    """The project's approvals as allow rules, oldest first."""
    kept = _all(home).get(_project(project), [])
    return tuple(Rule(Kind.ALLOW, str(r["tool"]), r["pattern"], Source.APPROVED) for r in kept)


def approve(home: Path, project: Path, rules: Iterable[Rule]) -> tuple[Rule, ...]:
    """Keep allow `rules` (what a person's "always for this project" granted) for the
    project; the project's approvals after. A rule kept already is kept once."""
    given = tuple(rules)
    path = approvals_path(home)
    if any(r.kind is not Kind.ALLOW for r in given):  # an answer only ever allows
        raise ApprovalsError(f"approvals {path}: only allow rules are kept, not {given!r:.200}")
    add = [{"tool": r.tool, "pattern": r.pattern} for r in given]
    try:
        with locked(path):  # what another process kept meanwhile is read, and kept too
            everything = _all(home)
            mine = everything.setdefault(_project(project), [])
            for r in add:
                if r not in mine:
                    mine.append(r)
            write(path, json.dumps({"projects": everything}, indent=1) + "\n")
    except HomeError as e:
        raise ApprovalsError(f"approvals {path}: cannot write them: {e}") from e
    return approvals(home, project)
