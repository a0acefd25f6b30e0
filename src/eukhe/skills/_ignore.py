"""Ignore files (`.gitignore`, `.ignore`, `.fdignore`) in the folders a loader walks.

Each folder's rules apply to the paths under it; a deeper folder's rules, and
within a folder `.ignore` over `.gitignore` and `.fdignore` over both, decide
last. An ignore file that cannot be read, and each line of one that is not a
glob, is a diagnostic; the other lines still apply.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import pathspec

from eukhe.rules import skill_load
from eukhe.skills._files import LIMIT, read_text
from eukhe.skills._types import Diagnostic

NAMES = (".gitignore", ".ignore", ".fdignore")
"""Ignore files, the last deciding over the earlier ones."""


@dataclass(frozen=True)
class Rules:
    """The rules of one ignore file, for the paths under `base` (relative to the walk's root)."""

    base: str
    spec: pathspec.PathSpec


def _compile(lines: Sequence[str]) -> pathspec.PathSpec:
    return pathspec.GitIgnoreSpec.from_lines(lines)


def read_rules(folder: str, base: str) -> tuple[list[Rules], list[Diagnostic]]:
    """The rules of the ignore files in `folder` (whose path from the root is `base`)."""
    rules: list[Rules] = []
    found: list[Diagnostic] = []
    for name in NAMES:
        path = os.path.join(folder, name)
        if not os.path.lexists(path):
            continue
        got = read_text(path)
        if got.text is None:
            found.append(Diagnostic(path, skill_load.unreadable_ignore_file(got.detail)))
            continue
        if got.cut:
            found.append(Diagnostic(path, skill_load.unreadable_ignore_file(f"larger than {LIMIT} bytes")))
            continue
        good: list[str] = []
        for n, line in enumerate(got.text.splitlines(), 1):
            try:
                _compile([line])
            except Exception as e:  # pathspec on hostile text: any failure means not a glob
                found.append(Diagnostic(path, skill_load.non_glob_rule(n, line, _why(e))))
                continue
            good.append(line)
        try:
            rules.append(Rules(base, _compile(good)))
        except Exception as e:  # each line compiled alone; together they should too
            found.append(Diagnostic(path, skill_load.unreadable_ignore_file(_why(e))))
    return rules, found


def _why(e: Exception) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) <= 200 else text[:199] + "…"


def ignored(chain: Sequence[Rules], rel: str, is_dir: bool) -> bool:
    """Whether the rules on the way to `rel` (a path from the root, `/`-separated) ignore it."""
    verdict: bool | None = None
    for r in chain:
        if r.base and not rel.startswith(r.base + "/"):
            continue
        sub = rel[len(r.base) + 1 :] if r.base else rel
        try:
            hit = r.spec.check_file(sub + ("/" if is_dir else "")).include
        except Exception:  # a path pathspec cannot match is not ignored
            hit = None
        if hit is not None:
            verdict = hit
    return bool(verdict)
