"""The idle clock and the repetition guard over a provider's events."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from eukhe.ai import Done, Event, FailureKind, Reply, TextDelta
from eukhe.ai.guard import guard, repeated


class Source:
    """A scripted event stream: text pieces with pauses, then Done (unless `hang`)."""

    def __init__(self, pieces: list[tuple[float, str]], hang: bool = False) -> None:
        self.pieces, self.hang, self.closed = pieces, hang, False

    async def events(self) -> AsyncIterator[Event]:
        try:
            for pause, text in self.pieces:
                await asyncio.sleep(pause)
                yield TextDelta(text)
            if self.hang:
                await asyncio.sleep(3600)
            yield Done(Reply(text=("".join(t for _, t in self.pieces),)))
        finally:
            self.closed = True


def collect(source: Source, idle: float) -> list[Event]:
    async def go() -> list[Event]:
        return [e async for e in guard(source.events(), "faux", idle=idle)]

    return asyncio.run(go())


def test_a_stream_that_goes_silent_ends_as_a_stall_and_is_closed() -> None:
    src = Source([(0, "a"), (0, "b")], hang=True)
    events = collect(src, idle=0.2)
    done = events[-1]
    assert isinstance(done, Done) and done.reply.failure is not None
    f = done.reply.failure
    assert f.kind is FailureKind.STALL and not f.retryable and f.waited is not None and f.waited >= 0.2
    assert f.message == "faux: the stream produced no output for 0.2 s"  # its idle deadline, not "0 s"
    assert src.closed and sum(isinstance(e, Done) for e in events) == 1


def test_a_slow_but_steady_stream_is_no_stall() -> None:
    events = collect(Source([(0.05, "x")] * 10), idle=0.3)
    assert isinstance(events[-1], Done) and events[-1].reply.failure is None


def test_an_event_later_than_the_idle_deadline_is_a_stall() -> None:
    events = collect(Source([(0.5, "late")]), idle=0.3)
    assert isinstance(events[-1], Done) and events[-1].reply.failure is not None


def test_a_line_repeated_over_and_over_is_cut_with_the_line_and_cycle() -> None:
    src = Source([(0, "Subreddits:\n")] + [(0, "- r/Bitcoin\n")] * 200)
    events = collect(src, idle=1)
    f = events[-1].reply.failure if isinstance(events[-1], Done) else None
    assert f is not None and f.kind is FailureKind.REPEATING and f.line == "- r/Bitcoin" and f.cycle == 1
    assert sum(isinstance(e, TextDelta) for e in events) < 30 and src.closed


def test_cycles_of_several_lines_and_varied_text() -> None:
    assert repeated(["a", "b", "c"] * 6) == ("c", 3)
    assert repeated([f"line {i}" for i in range(100)]) is None
    assert repeated(["x"] * 15) is None and repeated(["x"] * 16) == ("x", 1)
