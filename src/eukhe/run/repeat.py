"""Repeat rows (H4.8 rule 4): the same calls with the same results, round after round.

Rounds in a row come from the request context, so a restart keeps them and a
failed reply (never in the context) never adds one. Same round = same calls and
same results. Same calls = same names and canonical arguments (keys sorted at
every depth, the top-level intent `i` dropped), in any order. Same results =
same content and error flag each. A user message ends the row; a system
message does not.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from eukhe.ai.request import Message
from eukhe.json_types import JsonMapping

INTENT = "i"
"""The top-level intent field some tools take: not part of a call's identity."""


def canonical_arguments(arguments: JsonMapping | None) -> str:
    """The arguments as one JSON text: keys sorted at every depth, intent dropped."""
    args = {k: v for k, v in (arguments or {}).items() if k != INTENT}
    return json.dumps(args, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


@dataclass(frozen=True)
class Round:
    """One tool round as the repeat rule sees it."""

    calls: tuple[tuple[str, str], ...]  # (name, canonical arguments), sorted
    results: tuple[tuple[str, str, str, bool], ...]  # (name, arguments, content, error), sorted


def call_keys(calls: Iterable[Any]) -> tuple[tuple[str, str], ...]:
    """Calls (anything with .name and .arguments) as sorted (name, canonical arguments)."""
    return tuple(sorted((c.name, canonical_arguments(c.arguments)) for c in calls))


def _round(call_msg: Message, results: Sequence[Message]) -> Round:
    by_id = {c.id: c for c in call_msg.calls}
    found = []
    for r in results:
        c = by_id.get(r.call_id or "")
        if c is not None:
            found.append((c.name, canonical_arguments(c.arguments), r.content, r.is_error))
    return Round(call_keys(call_msg.calls), tuple(sorted(found)))


def backwards(context: Sequence[Message]) -> Iterator[Round | None]:
    """The context's tool rounds from the last one back; None for a user message (it
    ends a row). Reading from the end keeps each look at the row as long as the row."""
    results: list[Message] = []
    for m in reversed(context):
        if m.role == "tool":
            results.append(m)
        elif m.role == "assistant" and m.calls:
            yield _round(m, results[::-1])
            results = []
        elif m.role == "user":
            yield None
            results = []
        else:
            results = [] if m.role == "assistant" else results


def rounds(context: Sequence[Message]) -> list[Round | None]:
    """The context's tool rounds in order; None marks a user message."""
    return list(backwards(context))[::-1]


def rounds_in_a_row(context: Sequence[Message]) -> int:
    """Same rounds in a row that end the context: 0 when it ends with no round (or a
    user message after the last round)."""
    it = backwards(context)
    last = next(it, None)
    if last is None:
        return 0
    n = 1
    for r in it:
        if r != last:
            break
        n += 1
    return n


def same_calls(calls: Iterable[Any], context: Sequence[Message]) -> bool:
    """Whether these calls are the last round's calls (and no user message came since)."""
    last = next(backwards(context), None)
    return last is not None and last.calls == call_keys(calls)
