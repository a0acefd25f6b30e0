"""The faux model's script: per request, one reply, read from JSON.

Bad scripts get a clear error naming the reply and the field (`ScriptError`);
nothing is guessed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from eukhe.errors import Code, EukheError
from eukhe.json_types import JsonMapping, JsonValue

STOPS = ("stop", "length", "toolUse")


class ScriptError(EukheError, ValueError):
    """A script that cannot be played: says where and why."""

    code = Code.PROVIDER


@dataclass(frozen=True)
class Call:
    name: str
    arguments: str  # the raw argument text, as the model would stream it
    id: str = ""


@dataclass(frozen=True)
class Turn:
    """One scripted reply. See docs/faux.md for each field."""

    text: str = ""
    thinking: str = ""
    calls: tuple[Call, ...] = ()
    stop: str = ""  # "" = the natural one: toolUse with calls, else stop
    chunks: int = 1  # pieces each text, thinking and argument text is split into
    delay: float = 0.0  # seconds between chunks
    error_status: int = 0
    error_body: JsonValue = None
    retry_after: float | None = None
    stall_after: int | None = None  # go silent after this many chunks
    stall: float = 3600.0  # for this long
    stall_until: str | None = None  # or until this file exists (a test's gate), whichever comes first
    drop_after: int | None = None  # drop the connection after this many chunks
    deferred_polls: int = 0  # background job: polls answered "in progress" first
    poll_errors: int = 0  # background job: polls answered HTTP 503 before any other
    when: str | None = None  # only for a request whose last user message holds this text
    results: int | None = None  # only for a request with this many tool results; never used up
    error_after: int | None = None  # an error event inside the stream after this many events
    error_type: str = "overloaded_error"
    error_message: str = "Overloaded"
    usage: tuple[int, int, int] = (10, 10, 0)  # input (cached ones included), output, cached

    @property
    def stop_reason(self) -> str:
        return self.stop or ("toolUse" if self.calls else "stop")


@dataclass
class Script:
    turns: list[Turn]
    then: str = "last"  # after the script: "last" repeats the last reply, "error" answers 500
    window: int | None = None  # a request body over this many bytes gets the wire's context-overflow error
    used: list[bool] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.used = [False] * len(self.turns)

    def next(self, last_user: str, results: int = 0) -> Turn:
        """The first unused reply whose `when` and `results` fit this request (a reply
        with `results` is never used up: a resent request gets it again)."""
        for i, turn in enumerate(self.turns):
            if turn.results is not None:
                if turn.results == results and (turn.when is None or turn.when in last_user):
                    return turn
                continue
            if not self.used[i] and (turn.when is None or turn.when in last_user):
                self.used[i] = True
                return turn
        if self.then == "last" and self.turns:
            return self.turns[-1]
        return Turn(error_status=500, error_body={"error": {"message": "the faux script has no reply left"}})


def load(path: str | Path) -> Script:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise ScriptError(f"faux script {p}: cannot read it: {e.strerror}") from e
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ScriptError(f"faux script {p}, line {e.lineno} column {e.colno}: not JSON: {e.msg}") from e
    return parse(data, str(p))


def parse(data: JsonValue, where: str = "faux script") -> Script:
    if isinstance(data, list):
        data = {"replies": data}
    if not isinstance(data, Mapping) or not isinstance(data.get("replies"), list):
        raise ScriptError(f"{where}: expected an object with a list 'replies' (or a list of replies)")
    then = data.get("then", "last")
    if then not in ("last", "error"):
        raise ScriptError(f"{where}: then={then!r}: must be 'last' or 'error'")
    window = data.get("window")
    if window is not None and (not isinstance(window, int) or isinstance(window, bool) or window < 1):
        raise ScriptError(f"{where}: window={window!r}: must be a whole number of bytes >= 1")
    turns = [_turn(r, f"{where}: reply {i + 1}") for i, r in enumerate(data["replies"])]
    return Script(turns, then, window=window)


_KEYS = {
    "text",
    "thinking",
    "calls",
    "stop",
    "chunks",
    "delay",
    "error",
    "stallAfter",
    "stall",
    "stallUntil",
    "dropAfter",
    "repeat",
    "deferred",
    "when",
    "results",
    "usage",
    "streamError",
}


def _turn(r: JsonValue, where: str) -> Turn:
    if isinstance(r, str):
        return Turn(text=r)
    if not isinstance(r, Mapping):
        raise ScriptError(f"{where}: expected an object or a string, got {type(r).__name__}")
    unknown = sorted(set(r) - _KEYS)
    if unknown:
        raise ScriptError(
            f"{where}: unknown field {unknown[0]!r}; the fields are: {', '.join(sorted(_KEYS))}"
        )
    text = _str(r, "text", where)
    if "repeat" in r:
        rep = r["repeat"]
        if not isinstance(rep, Mapping) or not isinstance(rep.get("line"), str):
            raise ScriptError(f'{where}: repeat: expected {{"line": str, "times": int}}')
        text += (rep["line"] + "\n") * _int(rep, "times", where + ": repeat", 100)
    stop = _str(r, "stop", where)
    if stop and stop not in STOPS:
        raise ScriptError(f"{where}: stop={stop!r}: must be one of {', '.join(STOPS)}")
    calls = []
    for j, c in enumerate(r.get("calls") or []):
        w = f"{where}: call {j + 1}"
        if not isinstance(c, Mapping) or not isinstance(c.get("name"), str):
            raise ScriptError(f'{w}: expected {{"name": str, "arguments": object or str}}')
        args = c.get("arguments", {})
        raw = args if isinstance(args, str) else json.dumps(args)
        calls.append(Call(c["name"], raw, str(c.get("id") or "")))
    status, body, wait = 0, None, None
    if "error" in r:
        e = r["error"]
        if not isinstance(e, Mapping):
            raise ScriptError(f'{where}: error: expected {{"status": int, "body": any, "retryAfter": s}}')
        status = _int(e, "status", where + ": error", 500)
        body = e.get("body", {"error": {"message": f"faux error {status}"}})
        wait = e.get("retryAfter")
    deferred = r.get("deferred")
    polls = poll_errors = 0
    if isinstance(deferred, Mapping):
        polls = _int(deferred, "polls", where + ": deferred", 1)
        poll_errors = _int(deferred, "pollErrors", where + ": deferred", 0)
    usage = r.get("usage", [10, 10])
    if (
        not isinstance(usage, list)
        or len(usage) not in (2, 3)
        or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in usage)
        or (len(usage) == 3 and usage[2] > usage[0])
    ):
        want = "[input, output] or [input, output, cached] whole numbers, cached at most input"
        raise ScriptError(f"{where}: usage: expected {want}")
    se = r.get("streamError")
    if se is not None and not isinstance(se, Mapping):
        raise ScriptError(f'{where}: streamError: expected {{"after": int, "type": str, "message": str}}')
    return Turn(
        error_after=_int(se, "after", where + ": streamError", 0) if se is not None else None,
        error_type=str((se or {}).get("type", "overloaded_error")),
        error_message=str((se or {}).get("message", "Overloaded")),
        text=text,
        thinking=_str(r, "thinking", where),
        calls=tuple(calls),
        stop=stop,
        chunks=max(_int(r, "chunks", where, 1), 1),
        delay=float(r.get("delay", 0.0)),
        error_status=status,
        error_body=body,
        retry_after=float(wait) if wait is not None else None,
        stall_after=_opt_int(r, "stallAfter", where),
        stall=float(r.get("stall", 3600.0)),
        stall_until=_opt_str(r, "stallUntil", where),
        drop_after=_opt_int(r, "dropAfter", where),
        deferred_polls=polls,
        poll_errors=poll_errors,
        when=r.get("when"),
        results=_opt_int(r, "results", where),
        usage=(usage[0], usage[1], usage[2] if len(usage) == 3 else 0),
    )


def _str(r: JsonMapping, key: str, where: str) -> str:
    v = r.get(key, "")
    if not isinstance(v, str):
        raise ScriptError(f"{where}: {key}: expected a string, got {type(v).__name__}")
    return v


def _int(r: JsonMapping, key: str, where: str, default: int) -> int:
    v = r.get(key, default)
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise ScriptError(f"{where}: {key}={v!r}: expected a whole number >= 0")
    return v


def _opt_int(r: JsonMapping, key: str, where: str) -> int | None:
    return _int(r, key, where, 0) if key in r else None


def _opt_str(r: JsonMapping, key: str, where: str) -> str | None:
    return _str(r, key, where) if key in r else None


def pieces(text: str, n: int) -> list[str]:
    """The text in n pieces (fewer when it is shorter), joined back exactly."""
    if not text:
        return []
    n = max(1, min(n, len(text)))
    size = -(-len(text) // n)
    return [text[i : i + size] for i in range(0, len(text), size)]
