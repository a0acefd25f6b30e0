"""eukhe's own files, which `write` and `edit` refuse to change: the home's `settings.json`, its trust
records (`trust.json`), the user's approvals (`approvals.json`) and its store (`eukhe.sqlite` and its
`-wal`, `-shm` and `-journal` files), and any `.eukhe/settings.json` (the project's, at the working
directory or a folder above it up to the repository's root, or anywhere else). With them the model
could grant itself rights, trust its own project, approve its own calls, or rewrite its own history.

A path is checked on every step of its way: as named (its folders resolved), each symlink it leads
through, and where it lands; so a link, a `..` or a linked folder reaches no protected file, nor does
the file a protected name itself links to.

`bash` is not yet covered: a command can still write these files. The sandbox issue closes that, by
running bash where they are read-only.
"""

from __future__ import annotations

import os
from pathlib import Path

from eukhe.settings.approvals import APPROVALS
from eukhe.settings.trust import RECORDS

__all__ = ["protected"]

SETTINGS = "eukhe's own settings file: the model may not change its own rights; edit it yourself"
TRUST = "eukhe's trust records: the model may not grant itself trust; change them yourself with `eukhe trust`"
APPROVED = (
    "eukhe's record of your approvals: the model may not approve its own calls; only your answers to its "
    "asks add to it"
)
STORE = "a file of eukhe's store: the model may not rewrite eukhe's own records; only eukhe writes it"

HOME_FILES = {
    "settings.json": SETTINGS,
    RECORDS: TRUST,
    APPROVALS: APPROVED,
    "eukhe.sqlite": STORE,  # store.urls.database_url's default
    "eukhe.sqlite-wal": STORE,
    "eukhe.sqlite-shm": STORE,
    "eukhe.sqlite-journal": STORE,
}
"""The home's protected files by name, and why each is."""

MAX_LINKS = 40
"""Symlinks followed on one path at most, as the kernel follows (a loop ends here)."""


def _real(p: Path) -> Path:
    return Path(os.path.realpath(p))


def _way(path: Path) -> list[Path]:
    """Every place a write to the absolute `path` passes: the path as named with its folders resolved,
    each symlink it leads through (its folders resolved too), and where it lands."""
    way = []
    p = _real(path.parent) / path.name
    for _ in range(MAX_LINKS):
        way.append(p)
        try:
            link = os.readlink(p)
        except OSError:  # not a symlink, or nothing there: the way ends here
            break
        nxt = p.parent / link  # an absolute link replaces the folder
        p = _real(nxt.parent) / nxt.name
    way.append(_real(path))
    return way


def _project(cwd: Path) -> list[Path]:
    """The working directory and the folders above it up to the repository's root (the first folder
    with a `.git`), or up to / outside a repository; as named and as resolved."""
    folders: list[Path] = []
    for start in (Path(os.path.abspath(cwd)), _real(cwd)):
        for d in (start, *start.parents):
            folders.append(d)
            if (d / ".git").exists():
                break
    return folders


def protected(path: Path, cwd: Path, home: Path) -> str | None:
    """Why the absolute `path` is one of eukhe's own files that no tool may write, or None.
    `cwd` is the tool's working directory (the project), `home` the eukhe home in effect."""
    way = _way(path)
    if any(p.name == "settings.json" and p.parent.name == ".eukhe" for p in way):
        return SETTINGS
    # each protected file by its name, and by what it leads to when it is itself a symlink
    places: dict[Path, str] = {}
    real_home = _real(home)
    for name, why in HOME_FILES.items():
        places[real_home / name] = why
        places[_real(real_home / name)] = why
    for d in _project(cwd):
        places[_real(d / ".eukhe" / "settings.json")] = SETTINGS
    return next((places[p] for p in way if p in places), None)
