"""The polls of eukhe's background waits that no user sets, in one place a test can
shorten.

Each is how often a process looks at the store or the owner for something another
process does: a child's report placed, a run ended elsewhere, the writer's lock freed.
None of them bounds a wait (each wait has its own deadline or cancel); they only set
how soon a change is seen. A test that waits for such a change would otherwise wait
out a real second or ten for nothing.

A test process, and the eukhe processes it starts, read them from `EUKHE_TEST_TIMING`
(a JSON object of field names and seconds). A settings key never sets them: a
repository's settings must not turn a poll into a busy loop. A value may only be
shorter than its default, and at least `SHORTEST`."""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass

VARIABLE = "EUKHE_TEST_TIMING"
SHORTEST = 0.01
"""Seconds: no poll is ever shorter, whatever a test asks."""


@dataclass(frozen=True)
class Timing:
    report_poll: float = 1.0
    """A child's report waiting to be placed: the first pause between two looks at its fate."""
    report_poll_max: float = 10.0
    """The longest of those pauses: they double while nothing changes."""
    children_poll: float = 1.0
    """A child that has answered: the first pause between two looks for its own children's reports."""
    children_poll_max: float = 2.0
    """The longest of those: below ABORT_GRACE, so an aborted child ends within its grace."""
    child_poll: float = 0.5
    """A session's run that has ended: between two looks for its children's reports."""
    idle_poll: float = 1.0
    """Between two looks at the store for the end of a run executed elsewhere."""
    elect_poll: float = 1.0
    """Between two tries for the chat writer's lock (and the writer's look that it still holds it)."""
    drain_poll: float = 0.5
    """Between two looks of the writer at the inbox; and of a reader at the store, while
    its turn waits for the view."""
    turn_poll: float = 0.5
    """Between two looks at a lease holder from before this owner: is its process gone?"""
    agent_child_poll: float = 1.0
    """The interactive agent: between two looks at the session's subagents while some work."""


DEFAULT = Timing()


def timing() -> Timing:
    """This process's polls: the defaults, or a test's shorter ones (`VARIABLE`).
    Raises ValueError, naming the field, for a value that is not a number of seconds."""
    text = os.environ.get(VARIABLE, "")
    if not text:
        return DEFAULT
    try:
        asked = json.loads(text)
    except ValueError as e:
        raise ValueError(f"{VARIABLE} is not JSON: {e}") from None
    if not isinstance(asked, dict):
        raise ValueError(f"{VARIABLE} is not a JSON object of seconds")
    known = {f.name for f in dataclasses.fields(Timing)}
    values: dict[str, float] = {}
    for name, seconds in asked.items():
        if name not in known:
            raise ValueError(
                f"{VARIABLE}: no poll is called {name!r}; the polls are {', '.join(sorted(known))}"
            )
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds != seconds:
            raise ValueError(f"{VARIABLE}: {name} is not a number of seconds: {seconds!r}")
        values[name] = min(max(float(seconds), SHORTEST), getattr(DEFAULT, name))
    return dataclasses.replace(DEFAULT, **values)
