"""Guards over any provider's event stream: the idle clock and the repetition guard.

The idle clock (`retry.provider.streamIdleTimeoutMs`, H4.5): no event within the
deadline ends the stream as a stall, with the deadline as the seconds waited. It starts when the
request holds its admission slot, never while it waits for one (H6.3): the
caller makes the stream once the slot is held.

The repetition guard: a reply that writes the same line (or the same few lines)
over and over is cut early, with the repeated line and the cycle's length, so
the harness can write its note.

Either cut closes the provider's stream (and so its connection) before the one
`Done` is yielded. A cancel of the caller is never turned into a reply.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from eukhe.ai.reply import Done, Event, Failure, FailureKind, Reply, Stop, TextDelta
from eukhe.humanize import seconds

DEFAULT_IDLE_S = 120.0
"""`retry.provider.streamIdleTimeoutMs` when unset."""
MAX_CYCLE = 8
"""Longest cycle of lines the guard looks for."""
REPEATS = 16
"""Lines a cycle must fill, repeated, before the stream is cut (at least 3 cycles)."""


@dataclass
class Lines:
    """Completed lines of the text so far, and the repetition they end in."""

    lines: list[str] = field(default_factory=list)
    partial: str = ""

    def add(self, text: str) -> tuple[str, int] | None:
        """Take a text delta; the repeated (line, cycle) once the text ends in one."""
        parts = (self.partial + text).split("\n")
        self.partial = parts.pop()
        found = None
        for line in parts:
            if line.strip():
                self.lines.append(line.strip())
                found = found or repeated(self.lines)
        return found


def repeated(lines: list[str]) -> tuple[str, int] | None:
    """The shortest cycle of up to MAX_CYCLE lines that the last lines repeat, filling
    at least REPEATS lines and three cycles: (its last line, its length)."""
    for cycle in range(1, MAX_CYCLE + 1):
        need = max(REPEATS, 3 * cycle)
        if len(lines) < need:
            return None
        tail = lines[-need:]
        if all(tail[i] == tail[i - cycle] for i in range(cycle, need)):
            return tail[-1], cycle
    return None


async def guard(
    events: AsyncIterator[Event],
    provider: str,
    idle: float = DEFAULT_IDLE_S,
) -> AsyncIterator[Event]:
    """The provider's events, cut at a stall or a repetition; exactly one `Done`.
    The idle clock runs from the first wait for an event: a caller that waits for an
    admission slot makes the stream once the slot is held (H6.3)."""
    lines = Lines()
    it = aiter(events)
    try:
        while True:
            try:
                async with asyncio.timeout(idle):  # no task per event: the deadline rides this await
                    event = await anext(it)
            except TimeoutError:
                raise _Stalled from None
            if isinstance(event, Done):
                yield event
                return
            if isinstance(event, TextDelta):
                hit = lines.add(event.text)
                if hit is not None:
                    line, cycle = hit
                    what = f"the reply repeated the line {line!r} (a cycle of {cycle} lines) until it was cut"
                    yield _cut(
                        Failure(FailureKind.REPEATING, False, f"{provider}: {what}", line=line, cycle=cycle)
                    )
                    return
            yield event
    except _Stalled:
        # the silence as the rule counts it: its deadline, which it reached (what a busy loop adds
        # to the measure is the machine's, and would make the same stall read differently)
        what = f"the stream produced no output for {seconds(idle)}"
        yield _cut(Failure(FailureKind.STALL, False, f"{provider}: {what}", waited=idle))
    except StopAsyncIteration:
        failure = Failure(FailureKind.MALFORMED, False, f"{provider}: the stream ended without a reply")
        yield _cut(failure)
    finally:
        close = getattr(it, "aclose", None)
        if close is not None:
            await close()


class _Stalled(Exception):
    """The stream was silent for its idle deadline."""


def _cut(failure: Failure) -> Done:
    return Done(Reply(stop=Stop.ERROR, failure=failure))
