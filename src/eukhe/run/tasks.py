"""A run's task list (`rules.todo`) as its transcript holds it: its `todo` calls, each one's
arguments when its result was no error (`writes`), from which `rules.todo.current` makes
the list the run holds now. Nothing else keeps it: a run replayed after a crash records the
same calls and results, so it holds the same list, and the session's next run starts from
the list its last run ended with (`Sessions.pins`). The list shows as the run's `todo`
event (`shown`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from eukhe.ai.request import Message
from eukhe.json_types import JsonMapping
from eukhe.rules import todo
from eukhe.rules.pinned import Pins
from eukhe.rules.todo import Tasks
from eukhe.run.spec import RunSpec
from eukhe.settings.secrets import Redaction
from eukhe.tools.todo import TODO


def writes(transcript: Sequence[Message]) -> list[object]:
    """The run's `todo` calls in order: each one's arguments when its result was no error,
    else None (refused, denied, never run)."""
    out: list[object] = []
    waiting: dict[str, tuple[int, object]] = {}  # the last reply's todo calls by id: place, arguments
    for m in transcript:
        if m.role == "assistant" and not m.is_error:
            waiting = {}
            for c in m.calls:
                if c.name == TODO.name:
                    waiting[c.id] = (len(out), c.arguments)
                    out.append(None)
        elif m.role == "tool" and m.call_id in waiting and not m.is_error:
            at, args = waiting[m.call_id]
            out[at] = args
    return out


def pins(spec: RunSpec, transcript: Sequence[Message]) -> Pins:
    """What a compaction of the run pins: the list it holds now (the one it started with,
    then its `todo` calls: its whole transcript, not its context, which a compaction empties)
    and the person's last request."""
    return Pins(todo.current(spec.tasks, writes(transcript)), spec.last_request())


def shown(show: Callable[[str, str, JsonMapping], None], redact: Redaction) -> Callable[[Tasks], None]:
    """Where a run's accepted list goes (`tools.Context.todo`): its `todo` event, the list as
    its `items`, redacted as every event of a run is."""

    def todo_event(tasks: Tasks) -> None:
        show("todo", redact(todo.summary(tasks)), redact.deep({"items": todo.json_of(tasks)}))

    return todo_event
