"""YAML frontmatter: a first line `---`, YAML, a line `---`, then the body; read as Claude Code
reads it, so that a file it accepts loads here with the same values.

Claude Code parses frontmatter with a YAML 1.2 parser, and when that fails it quotes every
top-level `key: value` line whose plain value holds a character YAML takes for syntax (`: `,
`#`, `[`, `]`, `{`, `}`, `*`, `&`, `!`, `|`, `>`, `%`, `@`, a backtick) and parses once more.
Before the first parse it quotes a value holding a comment's `#` (at its start or after a
blank), so that `#` stays in the value. This is what lets the agent files of its own plugins
load: a one-line `description:` full of `Context: …`, `user: "…"` and `<example>` tags is
invalid YAML that the second parse reads as one string.

eukhe reads PyYAML, a YAML 1.1 parser, the same way (`parse`):

- scalars are resolved by YAML 1.2's core schema (`_Loader`): `yes`, `no`, `on`, `off`,
  `12:30` and `2024-01-01` are text, as Claude Code reads them, not booleans, a number in
  base 60 or a date;
- a tab where YAML 1.2 takes it as a blank (after `key:`, around a flow list's items, at a
  line's end, before a comment) is read as a space (PyYAML refuses every tab outside quotes
  and block scalars); a tab inside a plain value stays in the value;
- the two passes above, line for line as Claude Code's.

What neither parse reads is refused with the first parse's line and column (those of the text
as it was written: quoting adds no line), as before."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import yaml

from eukhe.rules.skill_load import Front, kind_of

FRONT_LIMIT = 64 * 1024
"""Characters the frontmatter may span, its closing line included."""

_CLOSE = re.compile(r"^---[ \t]*\r?$", re.MULTILINE)
_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BASE):  # type: ignore[misc,valid-type]
    """A safe loader (no objects are built) whose plain scalars resolve by YAML 1.2's core
    schema, as Claude Code's parser resolves them."""


_Loader.yaml_implicit_resolvers = {}
_CORE: tuple[tuple[str, str, str], ...] = (
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", "~nN"),
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
)
for _tag, _pattern, _first in _CORE:
    _Loader.add_implicit_resolver(_tag, re.compile(_pattern), list(_first))


def _int(loader: yaml.SafeLoader, node: yaml.Node) -> int:
    text = str(loader.construct_scalar(node))  # type: ignore[arg-type]
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)  # `012` is twelve in YAML 1.2, not ten


def _float(loader: yaml.SafeLoader, node: yaml.Node) -> float:
    text = str(loader.construct_scalar(node)).lower()  # type: ignore[arg-type]
    if text.endswith(".inf"):
        return float("-inf") if text.startswith("-") else float("inf")
    if text == ".nan":
        return float("nan")
    return float(text)


_Loader.add_constructor("tag:yaml.org,2002:int", _int)
_Loader.add_constructor("tag:yaml.org,2002:float", _float)


@dataclass(frozen=True)
class Parsed:
    """The frontmatter (none, a mapping, or invalid with why) and the body after it."""

    front: Front
    meta: Mapping[object, object] | None
    body: str
    detail: str = ""


def _one_line(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# ---------------------------------------------------------------- Claude Code's two passes

_SIMPLE = re.compile(r"^([a-zA-Z_-]+):[ \t\f\v]+(.+)$")
"""A top-level `key: value` line, as Claude Code's passes match one (not indented, not a list
item)."""
_SPECIAL = re.compile(r"[{}\[\]*&#!|>%@`]|: ")
"""A plain value's characters that YAML takes for syntax (Claude Code's list)."""
_COMMENT = re.compile(r"^#|\s#")


def _quoted(value: str) -> bool:
    return (value.startswith('"') and value.endswith('"')) or (value.startswith("'") and value.endswith("'"))


def _double(key: str, value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'{key}: "{escaped}"'


def _requote(text: str, wants: Callable[[str], bool]) -> str:
    """Every simple `key: value` line whose value is not quoted and `wants` it, double-quoted."""
    out: list[str] = []
    for line in text.split("\n"):
        m = _SIMPLE.match(line)
        if m is not None and not _quoted(m.group(2)) and wants(m.group(2)):
            out.append(_double(m.group(1), m.group(2)))
        else:
            out.append(line)
    return "\n".join(out)


def hash_quoted(text: str) -> str:
    """Claude Code's first pass: a value holding a comment's `#` is quoted, `#` and all."""
    return _requote(text, lambda v: _COMMENT.search(v) is not None)


def problems_quoted(text: str) -> str:
    """Claude Code's second pass: a value holding YAML's syntax characters is quoted."""
    return _requote(text, lambda v: _SPECIAL.search(v) is not None)


# ---------------------------------------------------------------- tabs as YAML 1.2 reads them

_BLOCK = re.compile(r"(?:^\s*-|:)[ ]+[|>][-+0-9]{0,2}$")
"""A line that opens a block scalar: `key: |`, `key: >-`, `- |2`."""


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _blanks(line: str) -> str:
    """One line's tabs outside quotes as spaces (YAML 1.2 takes them as blanks there)."""
    out: list[str] = []
    quote = ""
    prev = ""
    for i, ch in enumerate(line):
        if quote:
            out.append(ch)
            if ch == quote and not (quote == '"' and line[i - 1 : i] == "\\"):
                quote = ""
            continue
        if ch in "\"'" and (not prev.strip() or prev in ":-[{,?"):
            quote = ch
        if ch == "\t":
            ch = " "
        out.append(ch)
        if ch != " ":
            prev = ch
        elif prev and prev in ":-[{,?":
            prev = " "
    return "".join(out)


def _tabbed(line: str) -> str:
    """One line, outside a block scalar, as PyYAML can read it with the value YAML 1.2 gives."""
    if "\t" not in line:
        return line
    m = _SIMPLE.match(line)
    if m is not None:
        key, value = m.group(1), m.group(2).strip(" \t")
        plain = value[:1] not in ('"', "'", "[", "{", "|", ">", "&", "*", "!", "#", "")
        if plain and "\t" in value and _COMMENT.search(value) is None:
            # a tab inside a plain value is the value's: quoted, PyYAML keeps it
            return _double(key, value)
        return f"{key}: {_blanks(value)}"
    return _blanks(line).rstrip(" ")


def tabs_read(text: str) -> str:
    """The frontmatter with each tab YAML 1.2 takes as a blank made a space; block scalars'
    bodies as they are (their tabs are their text's)."""
    out: list[str] = []
    body_of = -1  # the indentation of the line that opened a block scalar; -1: none open
    for line in text.split("\n"):
        if body_of >= 0:
            if not line.strip(" \t\r") or _indent(line) > body_of:
                out.append(line)
                continue
            body_of = -1
        read = _tabbed(line)
        out.append(read)
        head = read.split(" #", 1)[0].rstrip()
        if _BLOCK.search(head):
            body_of = _indent(read)
    return "\n".join(out)


# ---------------------------------------------------------------- parse


def _load(block: str) -> object:
    return yaml.load(block, Loader=_Loader)  # a safe loader: no objects are built


def _failure(e: Exception) -> str:
    if isinstance(e, yaml.MarkedYAMLError):
        mark = e.problem_mark or e.context_mark
        where = f"line {mark.line + 2} column {mark.column + 1}: " if mark is not None else ""
        return where + _one_line(str(e.problem or e.context or e))
    if isinstance(e, RecursionError):
        return "nested too deeply"
    return _one_line(str(e) or type(e).__name__)


def parse(text: str) -> Parsed:
    """Split off and parse the frontmatter as Claude Code does (see the module's docstring);
    never raises (what neither parse reads is `Front.INVALID`, with where and why)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    first, nl, _ = text.partition("\n")
    if first.rstrip() != "---" or not nl:
        return Parsed(Front.NONE, None, text)
    start = len(first) + 1
    end = _CLOSE.search(text, start, start + FRONT_LIMIT)
    if end is None:
        where = "" if len(text) - start <= FRONT_LIMIT else f" within {FRONT_LIMIT} characters"
        return Parsed(Front.INVALID, None, "", f"no closing '---' line{where}")
    block = text[start : end.start()]
    body = text[end.end() + 1 :]
    data: object = None
    try:
        data = _load(tabs_read(hash_quoted(block)))
    except Exception as first_error:  # hostile text: any failure of the parser is invalid YAML
        try:
            data = _load(tabs_read(problems_quoted(block)))
        except Exception:
            return Parsed(Front.INVALID, None, body, _failure(first_error))
    if data is None:
        return Parsed(Front.MAPPING, {}, body)
    if not isinstance(data, Mapping):
        return Parsed(Front.INVALID, None, body, f"expected key: value pairs, got {kind_of(data)}")
    return Parsed(Front.MAPPING, data, body)
