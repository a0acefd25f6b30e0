"""What every view a compaction builds carries beside the chat: the session's task list
(`rules.todo`) and the person's last request, so a run that compacts, once or many times,
still sees what it is doing and what it was asked (the peers' most common complaint
about compaction is an agent that forgets its task).

The pins follow the rendered chat (`attach`), at the end of the run's system prompt: the
chat's lines stay the request's cacheable prefix. They count in the view's fit (`fit`):
the chat merges until it and the pins together are within the budget, down to the refit
mark, as `rules.view.fit` has it for the chat alone; the request is cut to REQUEST bytes
(the chat holds it whole), and the list is bounded by `rules.todo`'s caps.

The session's state is its list and its request (`Pins`). A run with a prompt of the
person's makes that prompt the request (`asked`); one with none of its own (a follow-up,
whose prompt is its subagents' reports) keeps the one before. At a run's start the request
is the run's own first message, so the start view pins the list alone; every compaction's
view pins both.

Pure: standard library only, frozen data, total functions.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from eukhe.rules import view
from eukhe.rules.compactor import cut, nbytes
from eukhe.rules.queue import Node
from eukhe.rules.todo import Tasks, lines

REQUEST = 16_000
"""Bytes of the person's last request a view pins at most (the chat holds it whole)."""

SEP = "\n\n"
"""Between the rendered chat and the pins."""

TASKS_HEAD = "Your task list, kept across compactions (the todo tool replaces it whole):"
REQUEST_HEAD = "The person's last request, word for word:"


@dataclass(frozen=True)
class Pins:
    """What a view pins: the session's task list, and the person's last request ("": none
    here, as at a run's start, where it is the run's first message)."""

    tasks: Tasks = ()
    request: str = ""


def asked(previous: str, prompt: str | None) -> str:
    """The person's last request once a run starts: its prompt (the person's words); a run
    with none of its own keeps the one before."""
    return previous if prompt is None else prompt


def block(p: Pins) -> str:
    """The pins as the model reads them ("" when there is nothing to pin)."""
    parts = []
    if p.tasks:
        parts.append("\n".join(["<tasks>", TASKS_HEAD, *lines(p.tasks), "</tasks>"]))
    if p.request:
        shown = cut(p.request, REQUEST)
        more = "" if shown == p.request else f"\n(its first {nbytes(shown)} of {nbytes(p.request)} bytes)"
        parts.append(f"<request>\n{REQUEST_HEAD}\n{shown}{more}\n</request>")
    return "\n".join(parts)


def size(p: Pins) -> int:
    """The bytes the pins add to the rendered chat (`attach`)."""
    b = block(p)
    return nbytes(SEP + b) if b else 0


def attach(chat: str, p: Pins) -> str:
    """The rendered chat with the pins after it."""
    b = block(p)
    return chat + SEP + b if b else chat


def unpinned(text: str, p: Pins) -> str:
    """`text` without the pins `attach` put at its end (as it is, when they are not there)."""
    b = block(p)
    return text.removesuffix(SEP + b) if b else text


def fit(v: view.View, sizes: Mapping[Node, int], built: Collection[Node], budget: int, p: Pins) -> view.View:
    """The view fitted with the pins beside it: `rules.view.fit` with their bytes."""
    return view.fit(v, sizes, built, budget, size(p))
