"""The events of a session, one schema for every view of it: the interactive agent
draws them, `eukhe run --events` prints them one JSON object a line, and `eukhe
run` prints them as lines (`cli/printer.py`). The schema is `SCHEMA`, documented
in docs/events.md; a change that breaks a reader takes a new version.

An event is what a run (or the process around it) shows: a `type` (the kinds of
`TYPES`), its `text` as a person reads it, the run it belongs to, and fields of
its own. A wait that has an exit carries it: `wait` names what it waits for and
`deadline` when it ends by itself (epoch seconds; none for a wait that only an
event or a cancel ends, such as the root-turn lease); the `waited` event ends it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Protocol

from eukhe.humanize import counted, dollars, tokens
from eukhe.ids import is_root, name_of
from eukhe.json_types import JsonMapping, JsonObject
from eukhe.terminal import json_text

SCHEMA = "eukhe.events/2"


ShowLine = Callable[[str], None]
"""Where a line of progress goes, as a person reads it (the chat's waits, the owner's host)."""


class ShowEvent(Protocol):
    """Where a run's events go: its kind (of `TYPES`), its text, its fields."""

    def __call__(self, kind: str, text: str, data: JsonMapping | None = None) -> None: ...


VERSION = 2

TYPES = {
    # the run's own
    "run": "a run starts: its session, prompt and caps",
    "text": "a piece of the model's answer, as it streams",
    "calls": "the model made tool calls",
    "tool": "a tool call starts running",
    "result": "a tool call's result",
    "denied": "the permission rule denied a tool call: its tool, arguments, cause and rule; it did not run",
    "mode": "plan mode on or off: at the run's start, by a person's mode change, or by an approved plan",
    "note": "a harness note: the reply is retried with it",
    "retry": "a transient failure: the request is retried after a wait",
    "cut": "the answer hit the output limit",
    "compact": "the run's context moves into the chat memory",
    "budget": "the run's counts against its caps",
    "usage": "the run's tokens and cost so far, and the context's fill, after each reply",
    "poll": "a deferred job is polled",
    "stream": "a request's reply streams: quiet for `idle` seconds is a stall",
    "steer": "a user's message to a run at work: queued, placed, or the next run's prompt",
    "todo": "the run's task list, as its todo call replaced it: its items and their states",
    "outcome": "how the run ended",
    # waits and what the process around the runs says
    "memory": "the chat memory: the turn's wait for its view, and how it ended",
    "lease": "the root-turn lease: whose turn this one waits for",
    "ask": "a tool call waits for a person's answer (permission): the call, why it asks, its deadline",
    "slot": "a provider slot: the request's place in its queue",
    "waited": "a wait ended",
    "notice": "the auxiliary model could not be used (H7.2)",
    "interrupted": "a tool call a crash interrupted (H7.4)",
    "diagnostic": "a skill or prompt template that did not load (H7.3)",
    "checkpoint": "the run's files could not be recorded before it changed them: why",
    "effort": "the reasoning effort set is not one the model's API takes: it is not sent",
    "sandbox": "the sandbox cannot run here: bash commands and Python cells are refused, and why",
    "mcp": "an MCP server ready, restarting after a death, or failed with its cause; a call's progress",
    "mcp_state": "an MCP server's routine state change: starting, closing, closed",
    "child": "a subagent: started, ended, its report",
    "hook": "the user's hooks of an event: started, ended with their verdict, a failure with its cause",
    "say": "the process: runs resumed, runs left, the session",
    "response": "`eukhe run --control`: the answer to a request, its success or why not",
}
"""Every type of event, and what it reports."""

QUIET = frozenset({"run", "budget", "result", "poll", "stream", "waited", "mcp_state", "usage"})
"""Types a printer of lines skips: the interactive view shows them in its status line, or
opens them on demand; the event stream has them all."""


SETTLE_WAY_OUT = (
    "memory: the turn waited for the chat's summary lines, which the compactor builds on the "
    "session's model; a smaller auxiliaryModel builds them sooner, and memory.settleTimeoutMs "
    "sets how long a turn waits"
)
"""Said once (a process, a session), after a settle wait that ran out: why the turn waited,
and the way out."""


@dataclass(frozen=True)
class Event:
    type: str
    text: str = ""
    run: str | None = None
    data: JsonMapping = field(default_factory=dict)
    at: float = 0.0

    @property
    def wait(self) -> str | None:
        """What the event says its run waits for now (None: no wait starts here)."""
        w = self.data.get("wait")
        return str(w) if w and self.type != "waited" else None

    def json(self) -> JsonObject:
        return {
            "v": VERSION,
            "type": self.type,
            "run": self.run,
            "text": self.text,
            **self.data,
            "at": self.at,
        }

    def line(self) -> str:
        return json_text(json.dumps(self.json(), ensure_ascii=False, default=str))


def event(type_: str, text: str = "", run: str | None = None, data: JsonMapping | None = None) -> Event:
    return Event(type_, text, run, dict(data or {}), round(time.time(), 3))


def tally(out: JsonMapping) -> str:
    """A run's counts in words: its model calls, then those that were not a plain answer
    (tool rounds, notes, retries) and the calls denied, each only when there was one:
    `1 model call`, `3 model calls: 2 tool rounds, 1 retry`. An outcome an earlier eukhe
    recorded has no count of calls: its tool rounds stand for them."""
    extra = [
        counted(n, noun, plural)
        for n, noun, plural in (
            (int(out.get("rounds") or 0), "tool round", None),
            (int(out.get("notes") or 0), "note", None),
            (int(out.get("retries") or 0), "retry", "retries"),
            (len(out.get("denials") or []), "denial", None),
        )
        if n
    ]
    if out.get("calls") is None:
        return ", ".join(extra) or "no tool round"
    return counted(int(out["calls"]), "model call") + (": " + ", ".join(extra) if extra else "")


def used_line(out: JsonMapping) -> str:
    """An outcome's tokens and cost in a few words (`usage` in the outcome): `1.2k in (800
    cached) · 340 out · $0.0021`; "" when it used none (an outcome an earlier eukhe recorded)."""
    u = out.get("usage")
    if not isinstance(u, Mapping) or not (u.get("input") or u.get("output")):
        return ""
    cached = f" ({tokens(int(u.get('cached') or 0))} cached)" if u.get("cached") else ""
    reasoning = f" ({tokens(int(u.get('reasoning') or 0))} reasoning)" if u.get("reasoning") else ""
    parts = [
        f"{tokens(int(u.get('input') or 0))} in{cached}",
        f"{tokens(int(u.get('output') or 0))} out{reasoning}",
    ]
    cost = u.get("cost")
    if isinstance(cost, int | float):
        parts.append(dollars(float(cost)))
    return " · ".join(parts)


def outcome_text(out: JsonMapping) -> str:
    """How a run ended, in a few words: its outcome, and the error's kind and message."""
    error = out.get("error") or {}
    why = f" ({error.get('kind')}): {error.get('message')}" if error.get("message") else ""
    return f"{out.get('outcome')}{why}"


def seen_by(session: str | None, e: Event) -> Event | None:
    """A run's event as the session's view shows it: its own runs as they are; its
    subagents' under their names (`[c1.1] ...`), without their streamed text (their
    answer is their report); a run taken up from a dead process under its id, without
    its text; None for what the view does not show."""
    run = e.run or ""
    if session is not None and run.startswith(f"{session}/"):
        if is_root(run):
            return e
        return None if e.type == "text" else replace(e, text=f"[{name_of(run)}] {e.text}")
    return None if e.type == "text" else replace(e, text=f"[{run}] {e.text}")
