"""H7.3: skill and prompt-template loaders report each failing candidate.

A candidate is one skill file (`SKILL.md` in a skill's folder, or an explicit
path) or one prompt template (a `.md` file). The runtime finds it, reads it and
parses its YAML frontmatter; this module checks it: its name, whether it
loads, and every message that says why not. A candidate either loads or is
diagnosed with at least one message, never both (laws `skill_failure_reported`,
`skill_loaded_not_failed`).

Two layers, one rule: `check` decides over the shape of a candidate
(`Candidate`: enums, flags and lengths, what the laws range over), and
`check_file` turns what the runtime read (the folder's name, the read's
outcome, the frontmatter's values) into that shape, asks `check`, and writes
the messages. A template's description (`summary`) is made here too.

Every text a diagnostic carries is written in this module, once.

Pure: standard library only, frozen data, total functions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from eukhe.rules.states import Choice

MAX_NAME = 64
"""Characters a skill's name may have."""
MAX_DESCRIPTION = 1024
"""Characters a skill's description may have."""
SUMMARY = 60
"""Characters of a template's first body line that make its description when its
frontmatter has none."""
SHOWN = 80
"""Characters of a value a message quotes."""


class Kind(Choice):
    SKILL = "skill"
    TEMPLATE = "template"


class Read(Choice):
    """How reading the candidate went."""

    OK = "ok"
    MISSING = "missing"  # an explicit path that does not exist
    NOT_MARKDOWN = "not_markdown"  # an explicit path that is not a .md file
    ENTRY = "entry"  # an entry (folder, link) that cannot be listed or looked at
    FILE = "file"  # a file that cannot be read as UTF-8 text


class Front(Choice):
    """The frontmatter: none, a mapping of keys to values, or not valid YAML (or not a mapping)."""

    NONE = "none"
    MAPPING = "mapping"
    INVALID = "invalid"


class Given(Choice):
    """One frontmatter value: absent, text, or something else (a list, a number, ...)."""

    ABSENT = "absent"
    TEXT = "text"
    OTHER = "other"


class Problem(Choice):
    """Why a candidate does not load, in the order they are reported."""

    MISSING = "missing"
    NOT_MARKDOWN = "not_markdown"
    UNREADABLE_ENTRY = "unreadable_entry"
    UNREADABLE_FILE = "unreadable_file"
    INVALID_YAML = "invalid_yaml"
    NAME_NOT_TEXT = "name_not_text"
    NAME_INVALID = "name_invalid"
    NAME_TOO_LONG = "name_too_long"
    NO_DESCRIPTION = "no_description"
    DESCRIPTION_NOT_TEXT = "description_not_text"
    DESCRIPTION_TOO_LONG = "description_too_long"
    DISABLE_NOT_BOOL = "disable_not_bool"
    COLLISION = "collision"


READ_PROBLEM = {
    Read.MISSING: Problem.MISSING,
    Read.NOT_MARKDOWN: Problem.NOT_MARKDOWN,
    Read.ENTRY: Problem.UNREADABLE_ENTRY,
    Read.FILE: Problem.UNREADABLE_FILE,
}


@dataclass(frozen=True)
class Limits:
    name: int
    description: int


LIMITS = Limits(MAX_NAME, MAX_DESCRIPTION)


@dataclass(frozen=True)
class Candidate:
    """The shape of one candidate, as the check reads it.

    name: the frontmatter's `name`; name_ok: the name used (the frontmatter's when it is
    non-empty text, else the folder's) is lowercase letters and digits in words joined
    by single hyphens; name_length: its characters. description: the frontmatter's
    `description`; description_length: its characters without blanks at the ends.
    disable_ok: `disable-model-invocation` is absent, true or false. taken: a candidate
    loaded earlier has the same name (the first one wins).
    """

    kind: Kind
    read: Read
    front: Front
    name: Given
    name_ok: bool
    name_length: int
    description: Given
    description_length: int
    disable_ok: bool
    taken: bool


@dataclass(frozen=True)
class Verdict:
    """Whether the candidate loads, and every problem found (none when it loads)."""

    loads: bool
    problems: tuple[Problem, ...]


def check(lim: Limits, c: Candidate) -> Verdict:
    """The candidate loads when nothing is wrong with it; else every problem, in order.

    Nothing past a failed read or invalid frontmatter is looked at. A skill needs a
    valid name, a description and a boolean `disable-model-invocation`; a template
    needs only to be read (its name is its file's, its description may come from its
    body). A name
    collision is reported for a candidate that would load otherwise."""
    if c.read is not Read.OK:
        return Verdict(False, (READ_PROBLEM[c.read],))
    if c.front is Front.INVALID:
        return Verdict(False, (Problem.INVALID_YAML,))
    found: list[Problem] = []
    if c.kind is Kind.SKILL:
        named = front_problems(lim, c.name, c.name_ok, c.name_length, c.description, c.description_length)
        found += [Problem(v) for v in named]
        if not c.disable_ok:
            found.append(Problem.DISABLE_NOT_BOOL)
    if (not found) & c.taken:
        found.append(Problem.COLLISION)
    return Verdict(not found, tuple(found))


def front_problems(
    lim: Limits,
    name: Given,
    name_ok: bool,
    name_length: int,
    description: Given,
    description_length: int,
    name_needed: bool = False,
) -> list[str]:
    """What is wrong with a frontmatter's name and description, in order, as the values of
    the problems (a skill's and a defined agent's alike, each its own `Problem`): a name
    that is text, valid and not too long (with `name_needed`, given: no folder names it),
    and a description that is text, given and not too long."""
    found: list[str] = []
    if name is Given.OTHER:
        found.append("name_not_text")
    elif name_needed & ((name is Given.ABSENT) | (name_length <= 0)):
        found.append("no_name")
    else:
        if not name_ok:
            found.append("name_invalid")
        if name_length > lim.name:
            found.append("name_too_long")
    if description is Given.OTHER:
        found.append("description_not_text")
    elif (description is Given.ABSENT) | (description_length <= 0):
        found.append("no_description")
    elif description_length > lim.description:
        found.append("description_too_long")
    return found


@dataclass(frozen=True)
class Tally:
    """The loader so far: candidates met, loaded, diagnosed."""

    candidates: int
    loaded: int
    diagnosed: int


START = Tally(0, 0, 0)


def count(t: Tally, v: Verdict) -> Tally:
    """The tally after one candidate's verdict."""
    return Tally(
        t.candidates + 1,
        t.loaded + (1 if v.loads else 0),
        t.diagnosed + (1 if len(v.problems) > 0 else 0),
    )


def tally_valid(t: Tally) -> bool:
    return (t.candidates >= 0) & (t.loaded >= 0) & (t.diagnosed >= 0)


# ---------------------------------------------------------------- what the runtime read


NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def name_ok(name: str) -> bool:
    """Lowercase letters and digits, in words joined by single hyphens."""
    return NAME.fullmatch(name) is not None


def given(value: object, present: bool) -> Given:
    if not present:
        return Given.ABSENT
    return Given.TEXT if isinstance(value, str) else Given.OTHER


@dataclass(frozen=True)
class File:
    """What the runtime read of one candidate.

    folder: the skill's folder name (its name when the frontmatter has none) or the
    template's file name without `.md`. detail: the read's or the YAML parser's error,
    when there is one. meta: the frontmatter's keys and values (empty unless MAPPING).
    body: the text after the frontmatter (a template's description may come from it).
    """

    kind: Kind
    folder: str
    read: Read
    front: Front
    detail: str = ""
    meta: Mapping[object, object] | None = None
    body: str = ""


@dataclass(frozen=True)
class Checked:
    """The check of one file: its name, whether it loads, its messages (none when it
    loads), the description and flags it loads with, and the model's verdict."""

    name: str
    loads: bool
    messages: tuple[str, ...]
    description: str
    disable_model_invocation: bool
    argument_hint: str
    verdict: Verdict


def _meta(f: File) -> Mapping[object, object]:
    return f.meta if f.front is Front.MAPPING and f.meta is not None else {}


def name_of(f: File) -> str:
    """The frontmatter's name when it is non-empty text (a skill's), else the folder's."""
    meta = _meta(f)
    value = meta.get("name")
    if f.kind is Kind.SKILL and isinstance(value, str) and value:
        return value
    return f.folder


def summary(description: object, body: str) -> str:
    """A template's description: the frontmatter's when it is non-blank text, else the
    first non-blank line of the body, cut at `SUMMARY` characters (no blanks at the ends)."""
    if isinstance(description, str) and description.strip():
        return description.strip()
    for line in body.splitlines():
        if line.strip():
            return line.strip()[:SUMMARY].rstrip()
    return ""


def shape(lim: Limits, f: File, taken: bool) -> Candidate:
    """The shape `check` reads of what the runtime read."""
    meta = _meta(f)
    name = name_of(f)
    description = meta.get("description")
    d_len = len(description.strip()) if isinstance(description, str) else 0
    disable = meta.get("disable-model-invocation", False)
    return Candidate(
        kind=f.kind,
        read=f.read,
        front=f.front,
        name=given(meta.get("name"), "name" in meta),
        name_ok=name_ok(name),
        name_length=len(name),
        description=given(description, "description" in meta),
        description_length=d_len,
        disable_ok=isinstance(disable, bool),
        taken=taken,
    )


def check_file(f: File, winners: Mapping[str, str], lim: Limits = LIMITS) -> Checked:
    """Check one file; `winners` maps each name loaded so far to the path it came from."""
    name = name_of(f)
    verdict = check(lim, shape(lim, f, name in winners))
    meta = _meta(f)
    messages = tuple(message(p, f, name, winners.get(name, ""), lim) for p in verdict.problems)
    if f.kind is Kind.SKILL:
        d = meta.get("description")
        description = d.strip() if isinstance(d, str) else ""
    else:
        description = summary(meta.get("description"), f.body)
    hint = meta.get("argument-hint")
    return Checked(
        name=name,
        loads=verdict.loads,
        messages=messages,
        description=description if verdict.loads else "",
        disable_model_invocation=meta.get("disable-model-invocation") is True,
        argument_hint=hint.strip() if isinstance(hint, str) else "",
        verdict=verdict,
    )


# ---------------------------------------------------------------- the texts


def quoted(value: str) -> str:
    """A value as a message shows it: quoted, cut at `SHOWN` characters."""
    return repr(value) if len(value) <= SHOWN else repr(value[:SHOWN]) + "…"


def kind_of(value: object) -> str:
    return "nothing" if value is None else type(value).__name__


def message(p: Problem, f: File, name: str, winner: str, lim: Limits = LIMITS) -> str:
    """The text of one problem of the file `f`."""
    meta = _meta(f)
    detail = f": {f.detail}" if f.detail else ""
    if p is Problem.MISSING:
        return "path missing"
    if p is Problem.NOT_MARKDOWN:
        return "path not markdown: expected a .md file"
    if p is Problem.UNREADABLE_ENTRY:
        return "unreadable entry" + detail
    if p is Problem.UNREADABLE_FILE:
        return "unreadable file" + detail
    if p is Problem.INVALID_YAML:
        return "invalid YAML frontmatter" + detail
    if p is Problem.NAME_NOT_TEXT:
        return f"invalid name: expected text, got {kind_of(meta.get('name'))}"
    if p is Problem.NAME_INVALID:
        return f"invalid name {quoted(name)}: use lowercase letters, digits and single hyphens"
    if p is Problem.NAME_TOO_LONG:
        return f"invalid name {quoted(name)}: longer than {lim.name} characters ({len(name)})"
    if p is Problem.NO_DESCRIPTION:
        return "skill without description"
    if p is Problem.DESCRIPTION_NOT_TEXT:
        return f"invalid description: expected text, got {kind_of(meta.get('description'))}"
    if p is Problem.DESCRIPTION_TOO_LONG:
        d = meta.get("description")
        n = len(d.strip()) if isinstance(d, str) else 0
        return f"invalid description: longer than {lim.description} characters ({n})"
    if p is Problem.DISABLE_NOT_BOOL:
        got = kind_of(meta.get("disable-model-invocation"))
        return f"invalid disable-model-invocation: expected true or false, got {got}"
    what = "skill" if f.kind is Kind.SKILL else "template"
    return f"{what} losing a name collision: {quoted(name)} was loaded first from {winner}"


def unreadable_ignore_file(detail: str) -> str:
    """The message of an ignore file (`.gitignore`, `.ignore`, `.fdignore`) that cannot be read."""
    return "unreadable ignore file" + (f": {detail}" if detail else "")


def non_glob_rule(line: int, rule: str, detail: str) -> str:
    """The message of one line of an ignore file that is not a glob."""
    return f"non-glob ignore rule on line {line}: {quoted(rule)}" + (f": {detail}" if detail else "")


def unclosed_class() -> str:
    """The detail of a `non_glob_rule` whose `[` no `]` closes (git's wildmatch then matches nothing)."""
    return f"unclosed character class {quoted('[')}"


def unknown_class(name: str) -> str:
    """The detail of a `non_glob_rule` with `[:name:]` in a class, `name` no POSIX class's."""
    return f"unknown character class {quoted(f'[:{name}:]')}"
