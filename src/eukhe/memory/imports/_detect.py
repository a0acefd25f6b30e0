"""Which format a file is in, by its content (never by its name): the first
records that only one format writes decide.

- eukhe: a JSON document `{"session": …, "runs": [...]}` (one line, or
  pretty-printed over many).
- Codex: a line `{"type": "session_meta" | "response_item" | "event_msg" |
  "turn_context" | "compacted", "payload": {...}}`; or an old rollout's first
  line `{"id", "timestamp", "instructions" | "git"}` with no `type`, or its
  `{"record_type": …}` lines.
- pi: a header `{"type": "session", "id", "cwd" | "version"}`, or an entry
  `{"type": "message", "message": {"role": …}}` (no `uuid`, no `sessionId`).
- Claude Code: a line whose `type` is one of Claude Code's record types and
  that has a `uuid`, `sessionId`, `leafUuid` or `messageId`.
"""

from __future__ import annotations

import json
from typing import IO

from eukhe.json_types import JsonObject
from eukhe.memory.imports import _claude, _codex, _eukhe
from eukhe.memory.imports._lines import MAX_LINE_BYTES, parse
from eukhe.memory.imports._types import CLAUDE, CODEX, EUKHE, PI, Format

LOOK = 50
"""Lines (not blank) read to decide a file's format."""

NOT_ONE = "not a session file of eukhe, Claude Code, Codex or pi"


def detect(f: IO[bytes], size: int) -> tuple[Format | None, str]:
    """The file's format, or None and why it is none of them. Leaves `f` wherever."""
    first: tuple[int, str] | None = None  # the first line's fault
    seen = 0
    number = 0
    lead = 0  # the first line not blank
    while seen < LOOK:
        raw = f.readline(MAX_LINE_BYTES + 1)
        if not raw:
            break
        number += 1
        if not raw.endswith(b"\n") and len(raw) > MAX_LINE_BYTES:
            while (chunk := f.readline(1 << 16)) and not chunk.endswith(b"\n"):
                pass
            fault = f"is longer than {MAX_LINE_BYTES >> 20} MiB"
            seen += 1
            lead = lead or number
            first = first or (number, fault)
            continue
        raw = raw.removeprefix(b"\xef\xbb\xbf") if number == 1 else raw
        if not raw.strip():
            continue
        seen += 1
        lead = lead or number
        problem, value = parse(raw.rstrip(b"\r\n"))
        if problem is None:
            found = classify(value)
            if found is not None:
                return found, ""
            first = first or (number, "is JSON but not a session record")
        else:
            first = first or (number, _fault(problem))
    if seen == 0:
        return None, f"{NOT_ONE} (the file is empty)" if size == 0 else f"{NOT_ONE} (it has only blank lines)"
    assert first is not None
    whole = None
    if first[1] != "is JSON but not a session record" and first[0] == lead:  # line 1 may open a document
        whole = _whole(f, size)
    if whole == "export":
        return EUKHE, ""
    if whole == "json":
        return None, f"{NOT_ONE} (it is one JSON document, but not an eukhe session export)"
    line, fault = first
    if fault == "is JSON but not a session record" and seen > 1:
        return None, f"{NOT_ONE} (none of its first {seen} lines is a session record)"
    return None, f"{NOT_ONE} (line {line} {fault})"


def classify(d: JsonObject) -> Format | None:
    """The format one record belongs to, or None when it does not tell."""
    if _eukhe.is_export(d):
        return EUKHE
    kind = d.get("type")
    has_payload = isinstance(d.get("payload"), dict)
    if kind in _codex.TYPES and has_payload:
        return CODEX
    claude_ids = any(k in d for k in ("uuid", "sessionId", "leafUuid", "messageId"))
    if kind in _claude.TYPES and claude_ids and not has_payload:
        return CLAUDE
    if kind == "session" and isinstance(d.get("id"), str) and ("cwd" in d or "version" in d):
        return PI
    message = d.get("message")
    if kind == "message" and isinstance(message, dict) and "role" in message and not claude_ids:
        return PI
    if kind is None:
        if "record_type" in d:
            return CODEX
        if isinstance(d.get("id"), str) and "timestamp" in d and ("instructions" in d or "git" in d):
            return CODEX
    return None


def _fault(problem: str) -> str:
    """A line's fault as the end of "line N …"."""
    if problem.startswith("not JSON"):
        return "is not JSON"
    if problem.startswith("binary"):
        return "is binary data, not JSON"
    if problem.startswith("bytes that are not UTF-8"):
        return "is not UTF-8 text"
    if problem.startswith("JSON nested"):
        return "is JSON nested too deeply to read"
    return "is " + problem  # e.g. "is an array, not a JSON object"


def _whole(f: IO[bytes], size: int) -> str | None:
    """`export` when the whole file is one JSON document that eukhe exported
    (pretty-printed, or one line too long to read as a line), `json` when it is
    another JSON object over several lines, else None."""
    if size > _eukhe.MAX_BYTES:
        return None
    f.seek(0)
    head = f.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head.startswith(b"{"):
        return None
    f.seek(0)
    try:
        doc = json.loads(f.read(_eukhe.MAX_BYTES + 1).decode("utf-8-sig"))
    except (ValueError, RecursionError):
        return None
    return "export" if _eukhe.is_export(doc) else "json"
