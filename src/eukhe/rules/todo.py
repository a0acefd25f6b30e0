"""The task list a session keeps (`todo`): items, each a text and a state (pending, in
progress, done), which the model replaces whole, as Claude Code's TodoWrite does.

A call's arguments are checked here (`parse`): `{"items": [{"text": ..., "state": ...}]}`,
at most MAX_ITEMS items, each text 1 to ITEM_BYTES bytes (UTF-8) once its ends are
stripped. What breaks a bound is said with the bound and the way out; a call that is
refused changes nothing. The list a run holds at any moment is the one its last accepted
call wrote, or, before any, the one the run started with (`current`): so it is derived
from what the run's transcript recorded, and a replay after a crash holds it again.

Pure: standard library only, frozen data, total functions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from eukhe.rules.states import Choice

MAX_ITEMS = 50
"""Items a list may have at most."""

ITEM_BYTES = 300
"""UTF-8 bytes an item's text may have at most."""


class State(Choice):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    DONE = "done"


_STATES = {s.value: s for s in State}

SHOWN = {State.PENDING: "pending", State.IN_PROGRESS: "in progress", State.DONE: "done"}
"""A state as the model and a person read it."""


@dataclass(frozen=True)
class Task:
    text: str
    state: State = State.PENDING


Tasks = tuple[Task, ...]


@dataclass(frozen=True)
class Parsed:
    """A call's list (None: refused), and why it was refused ("" when it was not)."""

    tasks: Tasks | None
    error: str = ""


def _bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def parse(args: object) -> Parsed:
    """The list a `todo` call writes, or why the call is refused: any value gets an answer."""
    if not isinstance(args, Mapping):
        return Parsed(None, 'the arguments must be an object {"items": [...]}')
    items = args.get("items")
    if not isinstance(items, list | tuple):
        return Parsed(
            None, 'items must be an array of {"text", "state"} objects (an empty one clears the list)'
        )
    if len(items) > MAX_ITEMS:
        return Parsed(
            None,
            f"items has {len(items)} entries; a list holds at most {MAX_ITEMS}: merge small steps, "
            "or drop the done ones",
        )
    out: list[Task] = []
    for k, item in enumerate(items, 1):
        if not isinstance(item, Mapping):
            return Parsed(None, f'item {k} must be an object {{"text", "state"}}')
        text, state = item.get("text"), item.get("state", State.PENDING.value)
        if not isinstance(text, str) or not text.strip():
            return Parsed(None, f"item {k} has no text: give each item a short text")
        text = text.strip()
        if _bytes(text) > ITEM_BYTES:
            return Parsed(
                None,
                f"item {k}'s text is {_bytes(text)} bytes; an item has at most {ITEM_BYTES}: say it shorter",
            )
        if not isinstance(state, str) or state not in _STATES:
            return Parsed(None, f"item {k}'s state is {state!r}; it is one of pending, in_progress, done")
        out.append(Task(text, _STATES[state]))
    return Parsed(tuple(out))


def current(start: Tasks, writes: Sequence[object]) -> Tasks:
    """The list after a run's `todo` calls, in order, from the list it started with: each
    accepted call's replaces it whole; a call refused (a value `parse` refuses, or None: a
    call that did not run, or whose result was an error) changes nothing."""
    tasks = start
    for w in writes:
        got = parse(w) if w is not None else Parsed(None)
        if got.tasks is not None:
            tasks = got.tasks
    return tasks


def json_of(tasks: Tasks) -> list[dict[str, str]]:
    """The list as JSON (an event's `items`, a run spec's `tasks`)."""
    return [{"text": t.text, "state": t.state.value} for t in tasks]


def of_json(value: object) -> Tasks:
    """A list as JSON gave it back (a stored spec); one that does not hold is no list."""
    got = parse({"items": value}) if isinstance(value, list) else Parsed(None)
    return got.tasks if got.tasks is not None else ()


def lines(tasks: Tasks) -> list[str]:
    """One line an item: its state, then its text."""
    return [f"- [{SHOWN[t.state]}] {t.text}" for t in tasks]


def summary(tasks: Tasks) -> str:
    """The list in a few words: how many are done, and the one in progress."""
    if not tasks:
        return "the task list is empty"
    done = sum(t.state is State.DONE for t in tasks)
    now = next((t.text for t in tasks if t.state is State.IN_PROGRESS), "")
    return f"{done} of {len(tasks)} done" + (f"; in progress: {now}" if now else "")
