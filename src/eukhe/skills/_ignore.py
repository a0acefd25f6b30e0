"""Ignore files (`.gitignore`, `.ignore`, `.fdignore`) in the folders a loader walks.

Each folder's rules apply to the paths under it; a deeper folder's rules, and
within a folder `.ignore` over `.gitignore` and `.fdignore` over both, decide
last. An ignore file that cannot be read, and each line of one that is not a
glob, is a diagnostic; the other lines still apply. A line is not a glob when
pathspec refuses it, or when git would find it malformed and match nothing with
it (a character class never closed, or one naming no POSIX class), which
pathspec takes silently.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import pathspec

from eukhe.ownfiles import Bound
from eukhe.rules import skill_load
from eukhe.skills._files import LIMIT, read_text
from eukhe.skills._types import Diagnostic

NAMES = (".gitignore", ".ignore", ".fdignore")
"""Ignore files, the last deciding over the earlier ones."""
POSIX_CLASSES = frozenset(
    {
        "alnum",
        "alpha",
        "blank",
        "cntrl",
        "digit",
        "graph",
        "lower",
        "print",
        "punct",
        "space",
        "upper",
        "xdigit",
    }
)
"""The names of `[:name:]` that git's wildmatch knows."""


@dataclass(frozen=True)
class Rules:
    """The rules of one ignore file, for the paths under `base` (relative to the walk's root)."""

    base: str
    spec: pathspec.GitIgnoreSpec


def _compile(lines: Sequence[str]) -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines(lines)


def read_rules(folder: str, base: str, bound: Bound) -> tuple[list[Rules], list[Diagnostic]]:
    """The rules of the ignore files in `folder` (whose path from the root is `base`), each
    read within `bound`, the folder the walk belongs to."""
    rules: list[Rules] = []
    found: list[Diagnostic] = []
    for name in NAMES:
        path = os.path.join(folder, name)
        if not os.path.lexists(path):
            continue
        got = read_text(path, bound)
        if got.text is None:
            found.append(Diagnostic(path, skill_load.unreadable_ignore_file(got.detail)))
            continue
        if got.cut:
            found.append(Diagnostic(path, skill_load.unreadable_ignore_file(f"larger than {LIMIT} bytes")))
            continue
        good: list[str] = []
        for n, line in enumerate(got.text.splitlines(), 1):
            why = flaw(line)
            if why is not None:
                found.append(Diagnostic(path, skill_load.non_glob_rule(n, line, why)))
                continue
            good.append(line)
        try:
            rules.append(Rules(base, _compile(good)))
        except Exception as e:  # each line compiled alone; together they should too
            found.append(Diagnostic(path, skill_load.unreadable_ignore_file(_why(e))))
    return rules, found


def flaw(line: str) -> str | None:
    """Why one line of an ignore file is not a glob, or None when it is one (or a
    comment, or blank): its first malformed character class, else what pathspec
    says when it refuses the line."""
    rule = "" if line.startswith("#") else line[1:] if line.startswith("!") else line
    i = 0
    while i < len(rule):
        if rule[i] == "\\":  # escapes the next character (pathspec refuses a trailing one)
            i += 2
        elif rule[i] == "[":
            i, why = _class_end(rule, i)
            if why:
                return why
        else:
            i += 1
    try:
        _compile([line])
    except Exception as e:  # pathspec on hostile text: any failure means not a glob
        return _why(e)
    return None


def _class_end(rule: str, start: int) -> tuple[int, str]:
    """Where the character class opened at `rule[start]` ends (one past its `]`), and
    why it is malformed ("" when it is not), read as git's wildmatch reads it: a
    leading `!` or `^` negates, a `]` first is a member, `\\` escapes the next
    character, `a-z` is a range, `[:name:]` a POSIX class (or, lacking its `:]`, a
    plain `[`)."""
    j = start + 1
    if j < len(rule) and rule[j] in "!^":
        j += 1
    first, prev = True, False  # prev: a member just read that a `-` would make a range's start
    while j < len(rule):
        c = rule[j]
        if c == "]" and not first:
            return j + 1, ""
        first = False
        if c == "\\":
            j, prev = j + 2, True
        elif c == "-" and prev and j + 1 < len(rule) and rule[j + 1] != "]":
            j += 3 if rule[j + 1] == "\\" else 2  # the range's end, escaped or not
            prev = False
        elif c == "[" and rule.startswith(":", j + 1):
            close = rule.find("]", j + 2)
            if close < 0:
                break
            if close < j + 3 or rule[close - 1] != ":":  # no `:]`: the `[` is a member
                j, prev = j + 1, True
                continue
            name = rule[j + 2 : close - 1]
            if name not in POSIX_CLASSES:
                return close + 1, skill_load.unknown_class(name)
            j, prev = close + 1, False
        else:
            j, prev = j + 1, True
    return len(rule), skill_load.unclosed_class()


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
