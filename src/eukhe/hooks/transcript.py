"""A session's transcript in Claude Code's format, for the hooks that read it
(`transcript_path`): `<home>/transcripts/<session>.jsonl`, private, one JSON object a line,
as Claude Code writes `~/.claude/projects/<project>/<session>.jsonl` and as eukhe's own
import of Claude Code's sessions reads it (`memory.imports._claude`):

- a user's words: `{"type": "user", "message": {"role": "user", "content": TEXT}}`;
- an answer, or a round's calls: `{"type": "assistant", "message": {"id", "type":
  "message", "role": "assistant", "model", "content": [{"type": "text", "text"},
  {"type": "tool_use", "id", "name", "input"}, ...]}}`, a call's name and input as its hooks
  get them (`Bash`, `file_path`, ...); a reply that failed is marked `isApiErrorMessage`;
- a call's result: `{"type": "user", "message": {"role": "user", "content":
  [{"type": "tool_result", "tool_use_id", "content", "is_error"}]}}`;

each with `uuid`, `parentUuid` (the line before it: one chain through the session),
`sessionId`, `cwd`, `timestamp`, `isSidechain` (a subagent's own transcript: true), and
eukhe's `eukheRun` and `eukheIndex`, which name the run that wrote it and its place.

Written as the run logs each message (`run.loop`), so it is whole when any hook fires (a
Stop hook reads the answer in it). Append-only, one `write` a line, its cost each message's
own: a run opened again after a crash (its loop makes its messages again, in the same order)
reads the file's last line once, and writes only what comes after the last it wrote. Every
line is redacted with the run's secrets."""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from eukhe.ai.request import Message
from eukhe.errors import EukheError
from eukhe.fdwrite import write_all
from eukhe.home import private_dir, private_open
from eukhe.hooks import payload
from eukhe.json_types import JsonObject
from eukhe.rules import hook as rule
from eukhe.settings.secrets import NO_SECRETS, Redaction

__all__ = ["FOLDER", "Transcript", "path_of", "record"]

FOLDER = "transcripts"
"""The home's folder of sessions' transcripts."""

TAIL = 1 << 16
"""The bytes read at a time from the file's end to find its last line."""

_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,100}")
_NAMESPACE = uuid.UUID("6b1f3c1e-5d0e-4f55-9a55-6575686865a1")  # eukhe's: a run's lines, the same on a replay


def path_of(home: Path, session: str) -> Path:
    """Where a session's transcript is: its id as the file's name when it is one, else its
    digest (an id is never a path)."""
    name = session if _SAFE.fullmatch(session) else hashlib.sha256(session.encode()).hexdigest()[:32]
    return home / FOLDER / f"{name}.jsonl"


def _stamp(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(at * 1000) % 1000:03d}Z"


def record(m: Message, cwd: Path, model: str) -> JsonObject | None:
    """One message as Claude Code's record holds it (without the line's own fields: `uuid`,
    `parentUuid`, ...); None: a message no transcript holds (a system prompt)."""
    if m.role == "user":
        return {"type": "user", "message": {"role": "user", "content": m.content}}
    if m.role == "tool":
        block: JsonObject = {
            "type": "tool_result",
            "tool_use_id": m.call_id or "",
            "content": m.content,
            "is_error": m.is_error,
        }
        return {"type": "user", "message": {"role": "user", "content": [block]}}
    if m.role != "assistant":
        return None
    blocks: list[JsonObject] = [{"type": "text", "text": m.content}] if m.content else []
    for c in m.calls:
        given = payload.tool_input(c.name, c.arguments or {}, cwd) if c.arguments is not None else {}
        blocks.append({"type": "tool_use", "id": c.id, "name": rule.claude_name(c.name), "input": given})
    message: JsonObject = {
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": list(blocks),
        "stop_reason": "tool_use" if m.calls else "end_turn",
    }
    out: JsonObject = {"type": "assistant", "message": message}
    if m.is_error:  # a reply that failed: no answer (Claude Code's mark of an API error)
        out["isApiErrorMessage"] = True
    return out


@dataclass
class Transcript:
    """The transcript one run writes into its session's file (`path_of`): `sidechain`, a
    subagent's. `append` writes a message's line; a file that cannot be written is said once
    (`failed`), and the run goes on without it."""

    path: Path
    session: str
    run: str
    cwd: Path
    model: str = ""
    sidechain: bool = False
    redact: Redaction = NO_SECRETS
    clock: Callable[[], float] = time.time
    failed: str | None = None  # why the file could not be written: nothing more is tried
    _n: int = 0  # the run's messages met so far (this process's count: a replay counts the same)
    _written: int | None = None  # how many of them the file holds (None: not read yet)
    _parent: str | None = None

    def append(self, m: Message) -> str | None:
        """The message's line, written unless a process before this one wrote it (a replay):
        None, or why the file could not be written (said once: the caller shows it)."""
        if self.failed is not None:
            return None
        n, self._n = self._n, self._n + 1
        got = record(m, self.cwd, self.model)
        if got is None:
            return None
        try:
            if self._written is None:
                self._read_tail()
            assert self._written is not None
            if n < self._written:  # written before the crash, in the same place
                return None
            line_id = str(uuid.uuid5(_NAMESPACE, f"{self.run}:{n}"))
            if got["type"] == "assistant" and isinstance(got["message"], dict):
                got["message"]["id"] = f"msg_{line_id.replace('-', '')[:24]}"
            line: JsonObject = {
                "parentUuid": self._parent,
                "isSidechain": self.sidechain,
                "userType": "external",
                "cwd": str(self.cwd),
                "sessionId": self.session,
                "version": "eukhe",
                **got,
                "uuid": line_id,
                "timestamp": _stamp(self.clock()),
                "eukheRun": self.run,
                "eukheIndex": n,
            }
            self._write(json.dumps(self.redact.deep(line), ensure_ascii=False, separators=(",", ":")) + "\n")
            self._parent = line_id
            self._written = n + 1
        except (OSError, EukheError) as e:
            self.failed = f"the session's transcript {self.path} cannot be written: {e}"
            return self.failed
        return None

    def _write(self, text: str) -> None:
        data = text.encode("utf-8")
        fd = private_open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            write_all(fd, data)
        finally:
            os.close(fd)

    def _read_tail(self) -> None:
        """The file's last line: the chain goes on from it, and, when this run wrote it (a run
        opened again after a crash), the run's lines up to it are there already. A last line
        cut by a crash is ended, and taken as no one's."""
        private_dir(self.path.parent)
        fd = private_open(self.path, os.O_RDWR | os.O_APPEND)
        try:
            size = os.fstat(fd).st_size
            end, tail = size, b""
            while end > 0 and tail.count(b"\n") < 2:  # the last line whole, and what ends the one before
                start = max(0, end - TAIL)
                tail = os.pread(fd, end - start, start) + tail
                end = start
            if tail and not tail.endswith(b"\n"):  # cut by a crash mid-line: ended, and read as nothing
                os.write(fd, b"\n")
                tail = b""
        finally:
            os.close(fd)
        self._written = 0
        last = tail.rstrip(b"\n").rpartition(b"\n")[2]
        try:
            obj = json.loads(last) if last else None
        except ValueError:
            obj = None
        if not isinstance(obj, dict):
            return
        self._parent = obj["uuid"] if isinstance(obj.get("uuid"), str) else None
        index = obj.get("eukheIndex")
        if obj.get("eukheRun") == self.run and isinstance(index, int):
            self._written = index + 1
