"""The admission-level twin of the spec's regression
`a_waiting_turn_stops_a_merge_that_holds_the_slot`: a one-slot provider, a
background request streaming slowly from the faux server over loopback, and a
session request that arrives meanwhile. The background stream is cut, the
session request gets the slot at once, and the background request asks again
and finishes afterwards."""

from __future__ import annotations

import asyncio
import time

from eukhe.admission import Registry, Slot, run_in_slot
from eukhe.ai import Done, Message, OpenAIChat, Request, TextDelta
from eukhe.ai.faux import FauxServer, parse
from eukhe.rules import admission as rule
from tests.admission.helpers import run

MERGE_TEXT = "line " * 40


def test_a_waiting_turn_stops_a_merge_that_holds_the_slot() -> None:
    script = parse(
        {
            "replies": [
                {"when": "merge", "text": MERGE_TEXT, "chunks": 40, "delay": 0.05},  # cut by the turn
                {"when": "merge", "text": MERGE_TEXT, "chunks": 40, "delay": 0.005},  # asked again
                {"when": "hello", "text": "Hi there.", "chunks": 3},
            ]
        }
    )
    log: list[str] = []

    async def go(url: str) -> tuple[str, bool, float]:
        reg = Registry({"providers": {"vllm": {"concurrency": 1}}})
        provider = OpenAIChat("vllm", base_url=url, timeout=20)
        loop = asyncio.get_running_loop()
        streaming = asyncio.Event()
        merge_tries: list[int] = []

        async def merge(slot: Slot) -> str:
            merge_tries.append(slot.ticket)
            log.append(f"merge {slot.ticket} holds")
            request = Request("faux", (Message("user", "merge these lines"),))
            async for event in provider.stream(request):
                if isinstance(event, TextDelta) and len(merge_tries) == 1:
                    streaming.set()
                if isinstance(event, Done):
                    log.append(f"merge {slot.ticket} done")
                    return "".join(event.reply.text)
            raise AssertionError("a stream ends with Done")

        try:
            background = asyncio.create_task(
                run_in_slot(merge, "vllm", interactive=False, deadline=loop.time() + 15, registry=reg)
            )
            async with asyncio.timeout(5):
                await streaming.wait()
            asked = time.monotonic()
            async with reg.slot("vllm", interactive=True, deadline=loop.time() + 5) as turn:
                waited = time.monotonic() - asked
                log.append("turn holds")
                stats = reg.statistics("vllm")
                assert (stats.held_interactive, stats.held_background) == (1, 0)
                request = Request("faux", (Message("user", "hello"),))
                reply = [e async for e in provider.stream(request)][-1]
                assert isinstance(reply, Done) and reply.reply.text == ("Hi there.",)
                log.append("turn done")
            text = await background
            assert len(merge_tries) == 2
            stats = reg.statistics("vllm")
            assert stats.next_ticket == 3 and not rule.tickets(reg.controller("vllm").state)
            return text, turn.queued, waited
        finally:
            await provider.close()

    with FauxServer(script) as server:
        text, queued, waited = run(go(server.url))
        deadline = time.monotonic() + 3
        while not server.seen[0].hung_up and time.monotonic() < deadline:
            time.sleep(0.02)  # the server notices the cut on its next write
        seen = server.seen

    assert not queued and waited < 1.5  # the turn took the slot at once, not after the 2 s merge
    assert text == MERGE_TEXT  # the merge finished, whole, afterwards
    assert log == ["merge 0 holds", "turn holds", "turn done", "merge 2 holds", "merge 2 done"]
    assert [s.body["messages"][-1]["content"] for s in seen] == [
        "merge these lines",
        "hello",
        "merge these lines",
    ]
    assert seen[0].hung_up  # the first merge's stream was closed by the client
    assert not seen[2].hung_up
