"""YAML frontmatter: a first line `---`, YAML, a line `---`, then the body."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import yaml

from eukhe.rules.skill_load import Front, kind_of

FRONT_LIMIT = 64 * 1024
"""Characters the frontmatter may span, its closing line included."""

_CLOSE = re.compile(r"^---[ \t]*\r?$", re.MULTILINE)
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


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


def parse(text: str) -> Parsed:
    """Split off and parse the frontmatter; never raises (a failure is `Front.INVALID`)."""
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
    try:
        data = yaml.load(block, Loader=_LOADER)  # a safe loader: no objects are built
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f"line {mark.line + 2} column {mark.column + 1}: " if mark is not None else ""
        return Parsed(Front.INVALID, None, body, where + _one_line(str(e.problem or e.context or e)))
    except RecursionError:
        return Parsed(Front.INVALID, None, body, "nested too deeply")
    except Exception as e:  # hostile text: any other failure of the parser is invalid YAML too
        return Parsed(Front.INVALID, None, body, _one_line(str(e) or type(e).__name__))
    if data is None:
        return Parsed(Front.MAPPING, {}, body)
    if not isinstance(data, Mapping):
        return Parsed(Front.INVALID, None, body, f"expected key: value pairs, got {kind_of(data)}")
    return Parsed(Front.MAPPING, data, body)
