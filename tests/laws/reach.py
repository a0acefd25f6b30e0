"""Every state a model reaches from its start: the tests that check the laws' exhaustive walks
cover every history of any length within their bounds (the walk runs out of new states before
its depth)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

from eukhe.laws import engine

S = TypeVar("S", bound=Hashable)
X = TypeVar("X")


def reached(start: S, inputs: Callable[[S], Iterable[X]], step: Callable[[S, X], S]) -> tuple[set[S], int]:
    """The states reached from `start`, and the levels of inputs the walk took till no state
    was new; with the cyclic collector off, as the engine's own walks (a third of their CPU)."""
    seen, frontier, level = {start}, [start], 0
    with engine.acyclic():
        while frontier:
            nxt = []
            for s in frontier:
                for x in inputs(s):
                    t = step(s, x)
                    if t not in seen:
                        seen.add(t)
                        nxt.append(t)
            frontier, level = nxt, level + 1
    return seen, level
