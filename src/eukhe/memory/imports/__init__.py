"""Imports of other agents' sessions: what `eukhe chat import PATH...` takes from
each file, read only, to log in the chat.

From a session of eukhe (`eukhe session show --json`), Claude Code
(`~/.claude/projects/*/*.jsonl`), Codex (`~/.codex/sessions/**/rollout-*.jsonl`)
or pi (`~/.pi/agent/sessions/*/*.jsonl`), the format told by the file's content
(`_detect`), it takes the user's words and the agent's final replies, in order:
a final reply is the last text the agent wrote before the user's next words.
Each format's module says which records those are and what it skips (subagent
sidechains, tool calls and results, thinking, summaries, meta records).

- `read_session(path)`: a `FileReport`, never an exception for a bad file: its
  `items` (`Item`: kind `user` or `talk`, text, a stable key, the source's
  date), its `diagnostics` (a line that is not JSON, cut short, not UTF-8, over
  MAX_LINE_BYTES, of an unknown type; each with the path and line number, the
  rest of the file read as usual), and its `summary` line. A file that cannot
  be read, or is not a session of these formats, is `refused`, with one
  diagnostic saying why.
- `formats`: the formats, as `Format(name, label)`.

Keys are stable across imports of the same file, so importing it twice logs
nothing twice (the chat's append is idempotent by key).
"""

from __future__ import annotations

import json
import os
import stat
from typing import IO

from eukhe.filekind import kind
from eukhe.memory.imports import _claude, _codex, _detect, _eukhe, _pi
from eukhe.memory.imports._common import Diagnostics, Taken
from eukhe.memory.imports._lines import MAX_LINE_BYTES, where
from eukhe.memory.imports._types import EUKHE, FORMATS, Diagnostic, FileReport, Format, Item

formats = FORMATS

__all__ = [
    "MAX_LINE_BYTES",
    "Diagnostic",
    "FileReport",
    "Format",
    "Item",
    "formats",
    "read_session",
]


def read_session(path: str | os.PathLike[str], format: str | None = None) -> FileReport:
    """What one session file holds worth logging. `format` (a `Format.name`) skips
    detection; None tells it by the content."""
    shown = os.fspath(path)
    diags = Diagnostics(shown)
    forced: Format | None = None
    if format is not None:
        forced = next((f for f in FORMATS if f.name == format), None)
        if forced is None:
            names = ", ".join(f.name for f in FORMATS)
            return _refused(shown, f"no session format {format!r} (the formats: {names})")
    # Opened without waiting (a FIFO would wait for a writer), then judged by what was opened.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        return _refused(shown, f"cannot read it: {_cause(e)}")
    try:
        info = os.fstat(fd)
    except OSError as e:
        os.close(fd)
        return _refused(shown, f"cannot read it: {_cause(e)}")
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        if stat.S_ISDIR(info.st_mode):
            return _refused(shown, "cannot read it: it is a directory")
        return _refused(shown, f"cannot read it: it is {kind(info.st_mode)}, not a regular file")
    f = os.fdopen(fd, "rb")
    with f:
        try:
            return _read(f, shown, info.st_size, forced, diags, os.path.realpath(path))
        except OSError as e:
            return _refused(shown, f"cannot read it: {_cause(e)}")
        except Exception as e:  # a fault of this reader, not the file's: still no exception
            return _refused(shown, f"could not be read: {type(e).__name__}: {e}")


def _read(
    f: IO[bytes], shown: str, size: int, forced: Format | None, diags: Diagnostics, ident: str
) -> FileReport:
    if forced is None:
        found, why = _detect.detect(f, size)
        if found is None:
            return _refused(shown, why)
    else:
        found = forced
    f.seek(0)
    if found is EUKHE:
        return _read_export(f, shown, size, diags, ident)
    reader = {"claude-code": _claude.read, "codex": _codex.read, "pi": _pi.read}[found.name]
    taken = reader(f, ident, diags)
    return _report(shown, found, taken, diags)


def _read_export(f: IO[bytes], shown: str, size: int, diags: Diagnostics, ident: str) -> FileReport:
    if size > _eukhe.MAX_BYTES:
        return _refused(shown, f"an eukhe export larger than {_eukhe.MAX_BYTES >> 20} MiB is not read")
    try:
        doc = json.loads(f.read(_eukhe.MAX_BYTES + 1).decode("utf-8-sig"))
    except UnicodeDecodeError as e:
        return _refused(shown, f"not an eukhe session export (not UTF-8 text at byte {e.start + 1})")
    except json.JSONDecodeError as e:
        at = where(e, f"line {e.lineno} column {e.colno}")
        return _refused(shown, f"not an eukhe session export (not JSON: {at})")
    except (ValueError, RecursionError) as e:
        return _refused(shown, f"not an eukhe session export (JSON that cannot be read: {e})")
    if not _eukhe.is_export(doc):
        return _refused(shown, 'not an eukhe session export (no "session" and "runs" list)')
    return _report(shown, EUKHE, _eukhe.read(doc, ident, diags), diags)


def _report(shown: str, fmt: Format, taken: Taken, diags: Diagnostics) -> FileReport:
    return FileReport(
        shown, fmt, taken.session, taken.items, diags.all(), notes=taken.notes, faults=len(diags)
    )


def _refused(shown: str, why: str) -> FileReport:
    return FileReport(shown, None, diagnostics=(Diagnostic(shown, why),), refused=True)


def _cause(e: OSError) -> str:
    if isinstance(e, FileNotFoundError):
        return "no such file"
    if isinstance(e, PermissionError):
        return "permission denied"
    if isinstance(e, IsADirectoryError):
        return "it is a directory"
    if isinstance(e, NotADirectoryError):
        return "a part of its path is not a directory"
    return e.strerror.lower() if e.strerror else str(e)
