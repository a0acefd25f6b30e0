"""What the interactive agent shows, as state, with no terminal: it takes the events
of the session and gives the lines for the scrollback (in order, once), the streamed
text not yet a whole line, and the status line: what the run waits for now and its
exit (a deadline counted down, or the key that ends it), and its budgets against
their caps. The app draws it; tests read it.

Every line comes from an event (`lines.marked`, as `eukhe run` prints it), so the
view shows what the event stream reports, no more and no less."""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from eukhe.display.lines import marked, printable
from eukhe.events import QUIET, SETTLE_WAY_OUT, Event, tally, used_line
from eukhe.humanize import counted, seconds, tokens
from eukhe.ids import is_root, name_of
from eukhe.json_types import JsonMapping, JsonObject, JsonValue

PARTIAL = 4_000
"""Characters of streamed text the live area holds before they go to the scrollback unended."""


@dataclass(frozen=True)
class Line:
    text: str
    style: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", printable(self.text))


@dataclass
class Queued:
    """A message the user typed while the run worked: a steer or a follow-up."""

    id: str
    kind: str  # "steer" or "follow-up"
    text: str


@dataclass
class View:
    clock: Callable[[], float] = time.time
    lines: list[Line] = field(default_factory=list)  # for the scrollback, not yet taken
    partial: str = ""  # streamed text since its last newline
    run: str | None = None  # the session's run at work (None: the prompt is idle)
    waits: dict[str, Event] = field(default_factory=dict)  # what the run waits for now, by what
    budget: JsonMapping = field(default_factory=dict)  # {"used": {...}, "caps": {...}}
    queued: list[Queued] = field(default_factory=list)
    children: list[JsonObject] = field(default_factory=list)  # the session's subagents, as polled
    results: list[Event] = field(default_factory=list)  # tool results, openable by number (1 first)
    tools: dict[str, int] = field(default_factory=dict)  # tool call id -> its number
    heard: float = 0.0  # when the run's stream last gave an event
    note: str = ""  # a line under the prompt: the last command's answer, a hint
    usage: JsonMapping = field(default_factory=dict)  # the root run's tokens so far ("usage" event)
    spent: dict[str, float] = field(default_factory=dict)  # the session's: every root outcome's usage summed
    runs_counted: int = 0  # the root outcomes `spent` sums
    plan: bool = False  # plan mode is on (the session's, as its root runs say it: "mode")
    todo: list[JsonObject] = field(default_factory=list)  # the task list, as its last "todo" event has it
    _budget_of: str | None = None  # the run whose budgets `budget` holds
    _mcp_said: set[str] = field(default_factory=set)  # each run starts its servers: each line once
    _settle_said: bool = False  # why a settle wait ran out and the way out: said once a session

    # ---------------------------------------------------------------- events

    def add(self, e: Event) -> None:
        """One event of the session."""
        if e.type == "text":
            self._text(e.text)
            return
        root = e.run is None or is_root(e.run)
        if root:
            self._wait(e)
        elif e.data.get("wait") == "ask":  # a subagent's ask waits for the person too: its countdown shows
            self._wait(e, f"ask {e.run}")
        if e.type == "mode" and root:
            self.plan = bool(e.data.get("plan"))
        if e.type == "budget" and root:
            self.budget, self._budget_of = e.data, e.run
        if e.type == "usage" and root:
            self.usage = e.data
        if e.type == "outcome" and root:
            self._spend(e.data.get("usage"))
        if e.type == "run" and root:  # nothing spent yet
            caps = dict(e.data.get("caps") or {})
            self.budget, self._budget_of = {"used": dict.fromkeys(caps, 0), "caps": caps}, e.run
        if e.type == "todo" and root:
            self.todo = [dict(i) for i in e.data.get("items") or [] if isinstance(i, Mapping)]
        if e.type == "steer":
            self.queued = [q for q in self.queued if q.id != e.data.get("id")]
        if e.type == "tool":
            self.tools[str(e.data.get("id"))] = len(self.tools) + 1
        line = self.line(e)
        if e.type in ("mcp", "effort") and line is not None:
            line = None if e.text in self._mcp_said else line
            self._mcp_said.add(e.text)
        if line is not None:
            self._flush()
            self.lines.append(line)
            if e.type == "memory" and e.wait is None and not self._settle_said:  # a settle wait ran out
                self._settle_said = True
                self.lines.append(Line(SETTLE_WAY_OUT, "dim"))
        if e.type == "result":
            self.results.append(e)

    def line(self, e: Event) -> Line | None:
        """The scrollback line of an event (None: it shows only in the status line)."""
        if e.type == "tool":
            n = self.tools.get(str(e.data.get("id")), 0)
            return Line(*marked("tool", f"[{n}] {e.text}"))
        if e.type == "result":
            n = self.tools.get(str(e.data.get("id")), 0)
            first = next((ln for ln in e.text.splitlines() if ln.strip()), "")
            size = int(e.data.get("chars") or len(e.text))
            what = "error" if e.data.get("error") else "ok"
            text, style = marked("result", f"[{n}] {what}, {size} chars: {first[:160]}")
            return Line(text, "red" if e.data.get("error") else style)
        if e.type == "outcome":
            return Line(self.outcome_line(e.data), _OUTCOME_STYLE.get(str(e.data.get("outcome")), ""))
        if e.type in QUIET or not e.text or (e.type in _WAIT_LINES and e.wait is not None):
            return None
        return Line(*marked(e.type, e.text))

    @staticmethod
    def outcome_line(out: JsonMapping) -> str:
        error = out.get("error") or {}
        head = {"answered": "✓ answered", "failed": "✗ failed", "aborted": "■ aborted"}.get(
            str(out.get("outcome")), str(out.get("outcome"))
        )
        why = f" ({error.get('kind')}): {error.get('message')}" if error.get("message") else ""
        if out.get("outcome") == "aborted" and error.get("message"):
            why = f": {error.get('message')}"
        if out.get("outcome") == "answered":
            return f"{head} in {tally(out)}"
        return f"{head}{why} · after {tally(out)}"

    def _spend(self, used: JsonValue) -> None:
        """A root run's usage into the session's sums; cost only where the run had a price."""
        self.runs_counted += 1
        if not isinstance(used, Mapping):
            return
        for k in ("input", "output", "cached", "reasoning", "cost"):
            v = used.get(k)
            if isinstance(v, int | float) and not isinstance(v, bool):
                self.spent[k] = self.spent.get(k, 0) + v

    def spent_line(self) -> str:
        """The session's tokens and cost so far, for the idle status line ("" before any)."""
        return used_line({"usage": self.spent})

    def usage_lines(self) -> list[str]:
        """`/usage`: the run at work (or the last), the session's sums, the context's fill."""
        run = used_line({"usage": self.usage}) or "no tokens yet"
        session = used_line({"usage": self.spent}) or "no tokens yet"
        out = [f"this run: {run}", f"this session: {session}, over {counted(self.runs_counted, 'run')}"]
        window, context = int(self.usage.get("window") or 0), int(self.usage.get("context") or 0)
        if context:
            of = f" of {tokens(window)} ({100 * context // window}%)" if window else " (contextWindow unset)"
            out.append(f"context: {tokens(context)} tokens{of}")
        if "cost" not in self.spent:
            out.append("no cost shown: set models.<provider/model>.price in settings.json")
        return out

    def _text(self, text: str) -> None:
        self.heard = self.clock()
        self.partial += text
        if "\n" in self.partial:
            *whole, self.partial = self.partial.split("\n")
            self.lines.extend(Line(w) for w in whole)
        while len(self.partial) > PARTIAL:  # a model that never ends its line: it goes up in pieces
            self.lines.append(Line(self.partial[:PARTIAL]))
            self.partial = self.partial[PARTIAL:]

    def _flush(self) -> None:
        """Streamed text that a line follows ends its own line first."""
        if self.partial:
            self.lines.append(Line(self.partial))
            self.partial = ""

    def _wait(self, e: Event, key: str | None = None) -> None:
        if e.type == "waited":
            self.waits.pop(key or str(e.data.get("wait")), None)
            return
        if e.wait is not None:
            key = key or e.wait
            self.waits.pop(key, None)  # the newest wait shows first
            self.waits[key] = e
            if e.wait == "stream":
                self.heard = self.clock()
        if e.type == "outcome":
            self.waits.clear()

    def take(self) -> list[Line]:
        """The lines for the scrollback since the last take."""
        out, self.lines = self.lines, []
        return out

    # ---------------------------------------------------------------- the session's own

    def started(self, run: str, prompt: str | None) -> None:
        """The session's run `run` is at work. Its first events may have come already
        (the run starts on the runs' loop before the app hears its id): a wait it
        said, such as for the root-turn lease, stays, and so do its budgets."""
        self._flush()
        self.waits = {k: e for k, e in self.waits.items() if e.run == run}
        self.budget = self.budget if self._budget_of == run else {}
        self.run, self.heard = run, self.clock()

    def ended(self) -> None:
        self._flush()
        self.run, self.waits, self.note = None, {}, ""

    def queue(self, q: Queued) -> None:
        self.queued.append(q)

    def unqueue(self, ids: Sequence[str]) -> list[Queued]:
        """The queued messages with these ids, taken off the queue."""
        gone = [q for q in self.queued if q.id in ids]
        self.queued = [q for q in self.queued if q.id not in ids]
        return gone

    # ---------------------------------------------------------------- the status line

    def status(self) -> str:
        """The run's state, what it waits for now and its exit, and its budgets."""
        if self.run is None:
            return "ready"
        now = self.clock()
        parts = [f"working · run {self.run.rpartition('/')[2].lstrip('0')}"]
        wait = next(reversed(self.waits.values()), None)
        if wait is not None:
            parts.append(self.wait_text(wait, now))
        used, caps = self.budget.get("used") or {}, self.budget.get("caps") or {}
        if caps:
            parts.append(" ".join(f"{k} {used.get(k, 0)}/{caps[k]}" for k in ("rounds", "notes", "retries")))
        window, context = int(self.usage.get("window") or 0), int(self.usage.get("context") or 0)
        if window and context:
            parts.append(f"ctx {100 * context // window}%")
        return " · ".join(parts) + " · Ctrl-C aborts" + self.mode_text()

    def mode_text(self) -> str:
        """Plan mode on the status line, when it is on (as Claude Code shows it)."""
        return " · ⏸ plan mode" if self.plan else ""

    def wait_text(self, e: Event, now: float) -> str:
        """A wait as the status line says it, with its exit."""
        what, d = e.wait, e.data
        left = _left(d.get("deadline"), now)
        if what == "stream":
            idle = float(d.get("idle") or 0)
            quiet = max(0.0, now - self.heard)
            return f"model streaming: quiet {quiet:.0f} s; a stall at {seconds(idle)}"
        if what == "retry":
            return f"retry in {left}"
        if what == "poll":
            return f"deferred job: next poll in {_left(d.get('next'), now)}, deadline in {left}"
        if what == "memory":
            pending = d.get("pending")
            lines = counted(pending, "line") if isinstance(pending, int) else "? lines"
            return f"memory: {lines} pending, {left} to the deadline"
        if what == "lease":
            holder = d.get("holder") or {}
            return (
                f"waiting for the root-turn lease: session {holder.get('session', '?')}, "
                f"run {holder.get('run', '?')} holds it"
            )
        if what == "slot":
            return e.text or f"waiting for a slot of {d.get('provider', 'the provider')}"
        if what == "hook":  # the user's hooks of an event: killed by then at the latest
            return f"{e.text}: running, ended in {left} at the latest"
        if what == "ask":
            who = "" if e.run is None or is_root(e.run) else f"{name_of(e.run)}: "
            return f"{who}{d.get('tool') or 'a tool'} waits for your answer: denied in {left} without one"
        return e.text or str(what)

    def todo_lines(self, width: int = 80) -> list[str]:
        """The task list above the prompt: a row an item, its state as a mark, its text on
        one line within `width` columns (the model writes the text: its line breaks and its
        length would otherwise let 10 items fill the screen and push the prompt off it); a
        long list shows its first TODO_SHOWN - 1 items and how many more."""
        out = [_one_row(f"{_TODO_MARKS.get(str(i.get('state')), '?')} {i.get('text', '')}", width)
               for i in self.todo]  # fmt: skip
        if len(out) > TODO_SHOWN:
            out = [*out[: TODO_SHOWN - 1], f"  … and {len(out) - TODO_SHOWN + 1} more"]
        return out

    def children_lines(self) -> list[str]:
        """A line a subagent: its name, state and progress clock."""
        out = []
        for k in self.children:
            w = k.get("watch") or {}
            if w.get("phase") == "watch":
                left = int(w.get("leftMs") or 0) / 1000
                quiet = float(w.get("quietSeconds") or 0)
                clock = f"working, quiet {quiet:.0f} s, {left:.0f} s before stalled"
            else:
                clock = "starting" if not w else "its report waits to be placed"
            out.append(f"⑂ {k.get('name')} {clock}")
        return out


_WAIT_LINES = frozenset({"memory", "slot", "lease"})
"""Types whose waiting events show in the status line, not the scrollback (their other
events, such as how a memory wait ended, are lines)."""

TODO_SHOWN = 10
"""Lines the task list takes above the prompt at most."""

_TODO_MARKS = {"pending": "☐", "in_progress": "◐", "done": "☑"}


def _one_row(text: str, width: int) -> str:
    """`text` as one row of at most `width` columns: its runs of blanks and line breaks one
    space, its control characters as their codes, cut with "…" where it would pass."""
    flat = printable(" ".join(text.split()))
    if sum(map(_columns, flat)) <= width:
        return flat
    out, used = [], 0
    for ch in flat:
        used += _columns(ch)
        if used > max(width - 1, 0):
            break
        out.append(ch)
    return "".join(out) + "…"


def _columns(ch: str) -> int:
    """The columns a terminal gives a character: none for a combining mark, two for a wide one."""
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


_OUTCOME_STYLE = {"answered": "green", "failed": "red", "aborted": "yellow"}


def _left(deadline: JsonValue, now: float) -> str:
    if not isinstance(deadline, int | float):
        return "?"
    s = max(0.0, float(deadline) - now)
    if s >= 120:
        return f"{s / 60:.0f} min"
    return f"{s:.0f} s"
