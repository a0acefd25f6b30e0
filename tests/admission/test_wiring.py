"""Every model request of the generation loop holds a slot of its provider (H3): on
a one-slot provider a session turn cuts a background run's stream, is answered at
once, and the background run asks again and is answered after it."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from eukhe.admission import Registry
from eukhe.ai.faux import FauxServer, parse
from eukhe.ai.openai_chat import OpenAIChat
from eukhe.run.loop import RunLoop, Settings
from eukhe.run.outcome import RunOutcome


async def no_tool(call: object) -> tuple[str, bool]:
    return "unused", True


def test_a_session_turn_cuts_background_work_on_a_one_slot_provider_and_both_answer() -> None:
    script = [
        {"when": "summarize", "text": "slow summary " * 40, "chunks": 40, "delay": 0.25},
        {"when": "question", "text": "the answer"},
        {"when": "summarize", "text": "the summary"},
    ]
    registry = Registry({"providers": {"faux": {"concurrency": 1}}})
    ended: dict[str, float] = {}

    async def one(url: str, prompt: str, interactive: bool) -> RunOutcome:
        p = OpenAIChat("faux", base_url=url, timeout=30)
        g = RunLoop(p, "m", (), no_tool, interactive=interactive, admission=registry)
        try:
            out = await g.run(prompt)
        finally:
            await p.close()
        ended[prompt] = time.monotonic()
        return out

    async def main(url: str) -> tuple[RunOutcome, RunOutcome, float]:
        background = asyncio.ensure_future(one(url, "summarize", False))
        while not server.seen:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.3)  # the background stream is under way
        asked = time.monotonic()
        turn = await asyncio.wait_for(one(url, "question", True), 10)
        return turn, await asyncio.wait_for(background, 30), ended["question"] - asked

    with FauxServer(parse(script)) as server:
        turn, background, took = asyncio.run(main(server.url))
        seen = list(server.seen)
    assert turn.outcome == "answered" and turn.answer == "the answer"
    assert took < 2.0  # it did not wait out the 10 s background stream
    assert background.outcome == "answered" and background.answer == "the summary"
    assert ended["question"] < ended["summarize"]
    assert seen[0].hung_up  # the background stream was cut
    assert [s.body["messages"][-1]["content"] for s in seen] == ["summarize", "question", "summarize"]


def test_the_idle_clock_starts_once_the_slot_is_held() -> None:
    """H6.3: a turn that waits for a one-slot provider longer than its idle deadline
    does not stall: its stream, and the clock with it, begins with the slot."""
    # the first holds the slot 3.6 s, over twice the idle deadline; its own chunks come every
    # 0.1 s, a fifteenth of it (a loaded make test stalled the first's stream past a 0.5 s
    # deadline, at chunks of a fifth, and once at a third)
    script = [
        {"when": "first", "text": "first " * 36, "chunks": 36, "delay": 0.1},
        {"when": "second", "text": "second"},
    ]
    registry = Registry({"providers": {"faux": {"concurrency": 1}}})
    settings = Settings(stream_idle_timeout_ms=1500)

    async def one(url: str, prompt: str) -> RunOutcome:
        p = OpenAIChat("faux", base_url=url, timeout=30)
        try:
            return await RunLoop(p, "m", (), no_tool, settings, admission=registry).run(prompt)
        finally:
            await p.close()

    async def main(url: str) -> list[RunOutcome]:
        first = asyncio.ensure_future(one(url, "first"))
        while not server.seen:
            await asyncio.sleep(0.01)
        return [await asyncio.wait_for(one(url, "second"), 20), await asyncio.wait_for(first, 20)]

    with FauxServer(parse(script)) as server:
        second, first = asyncio.run(main(server.url))
    assert first.outcome == second.outcome == "answered"
    assert (second.answer, second.notes, len(server.seen)) == ("second", 0, 2)


def test_a_session_request_that_waits_for_a_slot_shows_its_place_and_the_end_of_its_wait() -> None:
    """On a one-slot provider whose slot another session's request holds, the run shows
    where its request waits and behind what ("slot", a wait with its fields), then
    "waited" once the slot is its own, before its answer streams. A request that takes
    its slot at once shows no wait at all."""
    registry = Registry({"providers": {"faux": {"concurrency": 1}}})
    shown: list[tuple[str, str, dict[str, object]]] = []

    def show(kind: str, text: str, data: Any = None) -> None:
        shown.append((kind, text, dict(data or {})))

    async def main(url: str) -> tuple[RunOutcome, RunOutcome]:
        p = OpenAIChat("faux", base_url=url, timeout=30)
        g = RunLoop(p, "m", (), no_tool, admission=registry, show=show)
        try:
            async with registry.slot("faux", interactive=True):  # another session's request
                waiting = asyncio.ensure_future(g.run("question"))
                for _ in range(500):
                    if any(kind == "slot" for kind, _, _ in shown):
                        break
                    await asyncio.sleep(0.01)
                assert not server.seen and not waiting.done()
            first = await asyncio.wait_for(waiting, 10)
            at_once = len(shown)
            second = await asyncio.wait_for(g.run("again"), 10)
        finally:
            await p.close()
        assert not [e for e in shown[at_once:] if slot_wait(e)]  # no wait: nothing shown
        return first, second

    script = [{"when": "question", "text": "the answer"}, {"when": "again", "text": "once more"}]
    with FauxServer(parse(script)) as server:
        first, second = asyncio.run(main(server.url))
    assert first.answer == "the answer" and second.answer == "once more"
    waits = [e for e in shown if slot_wait(e) or e[0] == "text"]
    ahead = "1 session request holds its slot"
    assert waits[:3] == [
        (
            "slot",
            f"waiting for a slot of provider faux: 1st in the session queue; {ahead}",
            {"wait": "slot", "provider": "faux", "class": "interactive", "place": 1, "ahead": ahead},
        ),
        ("waited", "", {"wait": "slot"}),
        ("text", "the answer", {}),
    ]


def slot_wait(e: tuple[str, str, dict[str, Any]]) -> bool:
    """An event of a wait for a slot: its place, or its end."""
    return e[0] == "slot" or (e[0] == "waited" and e[2].get("wait") == "slot")
