"""H1's regressions, by their spec names: compactor calls over the faux server on
loopback with the real OpenAI SDK, deadlines on a clock the test moves."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from eukhe.admission import Registry
from eukhe.ai.faux import FauxServer, parse
from eukhe.ai.openai_chat import OpenAIChat
from eukhe.memory import prompts
from eukhe.memory.compactor import Built, Call, asker, build_call, build_node
from eukhe.rules import compactor as rule
from eukhe.rules.compactor import NODE
from eukhe.waits import ManualClock

ERROR = {"error": {"status": 500, "body": {"error": {"message": "boom"}}}}
INPUT = "talk: " + "the build passed after the cache was cleared; " * 40  # over NODE: needs the model


def one_call(
    script: Any, input_text: str = INPUT, clock: ManualClock | None = None
) -> tuple[Call, FauxServer]:
    async def go(url: str) -> Call:
        p = OpenAIChat("faux", base_url=url, timeout=30)
        try:
            work = build_call(
                asker(p, Registry()),
                "faux",
                "<chat>\n</chat>",
                prompts.compress_step(input_text),
                input_text,
                clock,
            )
            if clock is None:
                return await work
            task = asyncio.ensure_future(work)
            while not task.done():  # move the clock on while the call waits
                await asyncio.sleep(0.05)
                clock.advance(60)
            return task.result()
        finally:
            await p.close()

    with FauxServer(parse(script)) as server:
        return asyncio.run(go(server.url)), server


def test_failed_replies_fail_and_empty_ones_give_the_input_cut() -> None:
    failed, _ = one_call([ERROR])
    assert failed.line.end is rule.End.FAILED and failed.text is None
    assert "HTTP 500" in failed.cause
    for empty in ("", "   \n", {"thinking": "Let me think about this message for a while."}):
        call, server = one_call([empty, "never read"])
        assert call.line.end is rule.End.INPUT and len(server.seen) == 1  # a try, which ends the tries
        assert call.text == rule.cut(INPUT, NODE) and 1 <= rule.nbytes(call.text) <= NODE


def test_a_reply_the_repetition_guard_cuts_is_a_failed_call() -> None:
    """A compactor reply that repeats one line until the guard cuts it is a failed call
    (counted, H1.5), never a line made of the repeats."""
    call, server = one_call([{"repeat": {"line": "- r/Bitcoin", "times": 200}}, "never read"])
    assert call.line.end is rule.End.FAILED and call.text is None and len(server.seen) == 1
    assert "r/Bitcoin" in call.cause


def test_over_long_lines_get_the_cut_and_the_shortest_cut_wins() -> None:
    long = ["a" * 900, "b" * 700, "c" * 800]  # the third is not shorter than the best: the tries stop
    call, server = one_call([*long, "d" * 10])
    assert call.line.end is rule.End.BEST and len(server.seen) == 3
    assert call.text == "b" * NODE
    follow_up = server.seen[1].body["messages"]
    assert follow_up[-2] == {"role": "assistant", "content": "a" * 900}
    assert follow_up[-1]["content"].startswith(f"That line has 900 bytes, over the limit of {NODE}.")
    # a multi-byte character split at the limit is cut before it
    wide = "é" * 400  # 800 bytes
    call, _ = one_call([wide, wide + "é"])
    assert call.text == "é" * (NODE // 2) and rule.nbytes(call.text) == NODE
    # the first reply that fits wins, whatever came before
    call, server = one_call(["x" * 600, "  A line that fits.  "])
    assert call.line.end is rule.End.FIT and call.text == "A line that fits." and len(server.seen) == 2


def test_a_model_call_past_its_deadline_fails() -> None:
    """A model that never answers: the call fails at CALL_DEADLINE on the test's clock."""
    clock = ManualClock()
    call, server = one_call([{"text": "late", "stallAfter": 0, "stall": 3600}], clock=clock)
    assert call.line.end is rule.End.FAILED and call.text is None
    assert call.cause == "the model call passed its deadline of 600 s"
    assert clock.now() >= rule.CALL_DEADLINE / 1000 and len(server.seen) == 1


def node(
    script: Any,
    read: Callable[[], Awaitable[tuple[str, str, str]]] | None = None,
    save: Callable[[str], Awaitable[str]] | None = None,
) -> tuple[Built, FauxServer, ManualClock]:
    clock = ManualClock()

    async def reader() -> tuple[str, str, str]:
        return "<chat>\n</chat>", prompts.compress_step(INPUT), INPUT

    async def saver(text: str) -> str:
        return text

    async def go(url: str) -> Built:
        p = OpenAIChat("faux", base_url=url, timeout=30)
        try:
            work = build_node(asker(p, Registry()), "faux", read or reader, save or saver, clock)
            task = asyncio.ensure_future(work)
            while not task.done():
                await asyncio.sleep(0.02)
                clock.advance(rule.RETRY / 1000)
            return task.result()
        finally:
            await p.close()

    with FauxServer(parse(script)) as server:
        return asyncio.run(go(server.url)), server, clock


def test_a_node_that_keeps_failing_is_built_from_its_input() -> None:
    built, server, _ = node({"replies": [ERROR], "then": "last"})
    assert built.cut and built.failures == rule.FAILURES and len(server.seen) == rule.FAILURES
    assert built.text == rule.cut(INPUT, NODE)
    assert all("HTTP 500" in c for c in built.causes)


def test_an_empty_reply_still_gives_a_line_that_fits() -> None:
    built, server, _ = node([{"thinking": "only thinking"}])
    assert not built.cut and built.failures == 0 and len(server.seen) == 1
    assert built.text == rule.cut(INPUT, NODE) and 1 <= rule.nbytes(built.text) <= NODE


def test_the_failure_cap_reads_nothing() -> None:
    """The input can no longer be read by the last failure (the log moved): the node is
    built all the same, from the failed call's input; a read that fails before counts
    no failure."""
    reads: list[int] = []

    async def read() -> tuple[str, str, str]:
        reads.append(1)
        if len(reads) == 2:
            raise OSError("the log moved")  # a disk failure: counts nothing
        if len(reads) > rule.FAILURES + 1:
            raise AssertionError("read after the last failure")
        return "<chat>\n</chat>", prompts.compress_step(INPUT), INPUT

    built, server, _ = node({"replies": [ERROR], "then": "last"}, read=read)
    assert built.cut and built.text == rule.cut(INPUT, NODE)
    assert len(reads) == rule.FAILURES + 1 and len(server.seen) == rule.FAILURES


def test_a_save_that_fails_counts_no_failure() -> None:
    saves: list[str] = []
    calls = {"n": 0}

    async def flaky(text: str) -> str:
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError("disk full")
        saves.append(text)
        return text

    built, server, _ = node({"replies": ["A short line."], "then": "last"}, save=flaky)
    assert built.text == "A short line." and built.failures == 0 and saves == ["A short line."]
    assert len(server.seen) == 2  # the call made again after the save failed


HOSTILE = {
    "empty": [""],
    "thinking only": [{"thinking": "Let me think. " * 200}],
    "10 KB": ["x" * 10_000],
    "a multi-byte character split at the boundary": ["é" * 300 + "漢字" * 200],
    "errors": [ERROR],
    "never answering": [{"text": "late", "stallAfter": 0, "stall": 3600}],
    "a repeated line": [{"repeat": {"line": "- r/Bitcoin", "times": 300}}],
    "only whitespace and newlines": ["\n\n   \r\n\t"],
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_compactor_replies_give_a_line_that_fits_or_take_the_fail_cap_path(name: str) -> None:
    built, _, _ = node({"replies": HOSTILE[name], "then": "last"})
    assert 1 <= rule.nbytes(built.text) <= NODE, (name, built)
    assert built.text.encode("utf-8").decode("utf-8") == built.text  # whole characters
    if built.cut:  # the fail-cap path: FAILURES failed calls, then the input cut
        assert built.failures == rule.FAILURES and built.text == rule.cut(INPUT, NODE)
