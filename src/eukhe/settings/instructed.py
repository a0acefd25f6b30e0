"""The instruction files runs changed (`rules.instructed`), kept in the home
(`instructions.json`) by project (its real path): each file's path, the run and its
session, when, and the digest the run left it with.

Written like the approvals (`settings.locked`): read, changed and written under the
file's lock, so two runs ending at once both count; atomically; readable by the user only.
No tool of a model reaches the home (`rules.confine`: eukhe's home is denied whatever the
mode), so a model cannot clear its own record. A file that cannot be read is an
InstructedError naming it and why; the caller says it, and goes on.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from eukhe.errors import Code
from eukhe.home import HomeError
from eukhe.rules.instructed import Change
from eukhe.settings.load import SettingsError
from eukhe.settings.locked import by_project, locked, write

RECORD = "instructions.json"
"""The record's file in the home."""


class InstructedError(SettingsError):
    """The record of changed instruction files cannot be read or written: names the file
    and why."""

    code = Code.SETTINGS


def record_path(home: Path) -> Path:
    return home / RECORD


def project_key(project: Path) -> str:
    """A project as the record keys it: its real path."""
    return os.path.realpath(project)


def _all(home: Path) -> dict[str, list[Change]]:
    """Every project's records as the file has them ({} when there is none)."""
    what, fix = (
        "the record of changed instruction files",
        "remove the file (what it said of them is then lost)",
    )
    return by_project(record_path(home), what, fix, Change.of, InstructedError)


def changes(home: Path, project: Path) -> tuple[Change, ...]:
    """The project's records, by path."""
    return tuple(_all(home).get(project_key(project), []))


def change(
    home: Path, project: Path, how: Callable[[tuple[Change, ...]], tuple[Change, ...]]
) -> tuple[Change, ...]:
    """The project's records made `how` makes them from those kept now (read under the
    lock, so a change another process made meanwhile is kept too); the records after. A
    change that changes nothing writes nothing."""
    path = record_path(home)
    key = project_key(project)
    try:
        with locked(path):
            everything = _all(home)
            kept = tuple(everything.get(key, []))
            after = how(kept)
            if after == kept:
                return kept
            if after:
                everything[key] = list(after)
            else:
                everything.pop(key, None)
            body = {"projects": {k: [c.json() for c in v] for k, v in everything.items()}}
            write(path, json.dumps(body, indent=1) + "\n")
            return after
    except HomeError as e:
        raise InstructedError(f"the record of changed instruction files {path}: cannot write it: {e}") from e
