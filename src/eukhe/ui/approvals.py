"""The person who answers the permission rule's asks in the interactive agent (the
gate's `Asker`): each question above the prompt, one at a time, answered by a key.

Runs execute on DBOS's event loop, in another thread than the app's. The asker is
called there: it hands its question to the app's loop (`post`) with a
`concurrent.futures.Future`, which a key press on the app's loop resolves (that future is
thread-safe); `asyncio.wrap_future` brings the answer back to the run's loop. When the
gate's race ends the ask first (its deadline, the run's abort), it cancels the asker's
coroutine, and the question leaves the screen the way it came, through `post`."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import difflib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from eukhe.display.lines import printable
from eukhe.display.view import Line, View
from eukhe.rules.permission import Answer

if TYPE_CHECKING:  # the harness loads with the store, behind the prompt
    from eukhe.run.permit import Asked

KEYS = "y once · a always, this session · p always, this project · n no, with a reason · Esc no"
REASON = "the reason the model gets (Enter sends it; Esc: no without one)"

SHOWN = 10
"""Lines of a call the question holds; a longer call is printed whole above it first."""

WIDE = 160
"""Characters of a line the question holds (the same rule: longer, and it is printed whole)."""


@dataclass(eq=False)
class Pending:
    """One ask waiting for its answer; `answer` is resolved on the app's loop, read on the run's."""

    asked: Asked
    answer: concurrent.futures.Future[tuple[Answer, str]] = field(default_factory=concurrent.futures.Future)


@dataclass
class Approvals:
    """The asks of this process's runs, the first on screen. Every method but `__call__`
    runs on the app's loop."""

    post: Callable[[Callable[[], None]], None]  # run on the app's loop, from any thread
    view: View
    waiting: list[Pending] = field(default_factory=list)  # the first is on screen
    reasoning: bool = False  # n was pressed: the reason line takes the keys
    changed: Callable[[], None] = lambda: None  # the app's redraw (and its focus)

    async def ask(self, asked: Asked) -> tuple[Answer, str]:
        """The person's answer to `asked` (called on the run's loop)."""
        p = Pending(asked)
        self.post(lambda: self._arrive(p))
        try:
            return await asyncio.wrap_future(p.answer)
        finally:  # answered, or the deadline or the abort won the gate's race: off the screen
            with contextlib.suppress(RuntimeError):  # the app's loop has closed: no screen is left
                self.post(lambda: self._leave(p))

    @property
    def current(self) -> Pending | None:
        return self.waiting[0] if self.waiting else None

    def answer(self, answer: Answer, reason: str = "") -> None:
        """The key the person pressed, for the ask on screen."""
        p = self.current
        if p is None:
            return
        with contextlib.suppress(concurrent.futures.InvalidStateError):  # the gate ended it just now
            p.answer.set_result((answer, reason))
        self._leave(p)

    def reason(self) -> None:
        """n: the reason line opens; Enter sends what it holds as the no's reason."""
        if self.current is not None:
            self.reasoning = True
            self.changed()

    def _arrive(self, p: Pending) -> None:
        self.waiting.append(p)
        if len(self.waiting) == 1:
            self._shown(p)
        self.changed()

    def _leave(self, p: Pending) -> None:
        if p not in self.waiting:
            return
        first = self.waiting[0] is p
        self.waiting.remove(p)
        if first:
            self.reasoning = False
            if self.waiting:
                self._shown(self.waiting[0])
        self.changed()

    def _shown(self, p: Pending) -> None:
        """A call too long for the question is printed whole above the prompt first."""
        body = shown(p.asked)
        if len(body) > SHOWN or any(len(ln) > WIDE for ln in body):
            self.view.lines.append(Line(f"? {p.asked.tool} asks to run, whole:", "yellow"))
            self.view.lines.extend(Line(f"  {ln}", _RICH.get(_style(ln), "")) for ln in body)

    def lines(self) -> list[tuple[str, str]]:
        """The question on screen as (style, line): the tool and why it asks, the call
        (cut to fit), and its keys, or the reason's prompt."""
        p = self.current
        if p is None:
            return []
        more = f" · {len(self.waiting) - 1} more waiting" if len(self.waiting) > 1 else ""
        out = [("class:ask", printable(f"? {p.asked.tool} asks: {p.asked.why}{more}"))]
        body = shown(p.asked)
        cut = body[:SHOWN]
        for ln in cut:
            text = ln if len(ln) <= WIDE else ln[: WIDE - 1] + "…"
            out.append((f"class:ask.{_style(ln) or 'call'}", printable(f"  {text}")))
        if len(body) > SHOWN or any(len(ln) > WIDE for ln in cut):
            out.append(("class:ask", f"  … {len(body)} lines: the whole call is printed above"))
        out.append(("class:ask.keys", REASON if self.reasoning else KEYS))
        return out


def shown(asked: Asked) -> list[str]:
    """The call as a person reads it before answering: an edit as the diff of its text,
    anything else as the gate gives it (the command, the file and its content)."""
    diff = _edit_diff(asked)
    return diff if diff is not None else (asked.text.splitlines() or [""])


def _edit_diff(asked: Asked) -> list[str] | None:
    if not asked.tool.endswith("edit"):
        return None
    try:
        args = json.loads(asked.arguments)
    except ValueError:
        return None
    if not isinstance(args, dict):
        return None
    path, old, new = args.get("path"), args.get("old_text"), args.get("new_text")
    if not (isinstance(path, str) and isinstance(old, str) and isinstance(new, str)):
        return None
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=2)
    return [f"edit {path}:", *(ln for ln in lines if not ln.startswith(("---", "+++")))]


_RICH = {"add": "green", "del": "red"}  # the scrollback's styles (rich's names)


def _style(line: str) -> str:
    return "add" if line.startswith("+") else "del" if line.startswith("-") else ""
