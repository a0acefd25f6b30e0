"""Threshold and overflow compaction inside a run (H4), driven through the faux
server on loopback with a context window (`window`: a request over it gets the
provider's own overflow error), over the real OpenAI and Anthropic SDKs.

What other agents hit, as tests: an overflow that ends the run on a bad request
(pi #1808), compaction after compaction with no progress (claude-code #24179),
a compaction that ignores Ctrl-C (claude-code #52685), a context that grew after
compacting (codex #40619), and tool calls cut from their results (claude-code #8484).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from eukhe.ai.anthropic import AnthropicMessages
from eukhe.ai.faux import FauxServer, parse
from eukhe.ai.openai_chat import OpenAIChat
from eukhe.ai.request import Message
from eukhe.run import notes
from eukhe.run.loop import ABORT_GRACE, RunLoop, Settings
from eukhe.run.outcome import RunOutcome
from tests.run.test_generation import TOOLS, Runner, read

BIG = "x" * 6_000
WINDOW = 4_000  # bytes of request body: the first request fits, one with BIG does not
VIEW = "base prompt\n\n<chat>\n0+1|u: summarise big.txt\n</chat>"  # a newly pinned view


class Memory:
    """A compaction that records what it was given and pins `views` in turn."""

    def __init__(self, *views: str, fail: Exception | None = None, hang: bool = False) -> None:
        self.views = list(views)
        self.fail = fail
        self.hang = hang
        self.given: list[list[Message]] = []

    async def __call__(self, transcript: Sequence[Message]) -> Mapping[str, str]:
        self.given.append(list(transcript))
        if self.hang:
            await asyncio.Event().wait()
        if self.fail is not None:
            raise self.fail
        return {"system": self.views.pop(0)}


def go(
    script: Any,
    api: str = "chat",
    memory: Memory | None = None,
    settings: Settings | None = None,
    abort_after: float | None = None,
) -> tuple[RunOutcome, FauxServer, list[str], float]:
    shown: list[str] = []

    async def main(url: str) -> tuple[RunOutcome, float]:
        if api == "chat":
            p: Any = OpenAIChat("faux", base_url=url, timeout=20)
        else:
            p = AnthropicMessages("faux", base_url=url.removesuffix("/v1"), api_key="k", timeout=20)
        g = RunLoop(
            p,
            "faux-model",
            TOOLS,
            Runner({"big.txt": BIG}),
            settings or Settings(),
            compact=memory,
            system="base prompt",
            show=lambda kind, text, data=None: shown.append(f"{kind}: {text}"),
        )
        if abort_after is not None:
            asyncio.get_running_loop().call_later(abort_after, g.cancel.set)
        began = time.monotonic()
        try:
            return await g.run("summarise big.txt"), time.monotonic() - began
        finally:
            await p.close()

    with FauxServer(parse(script)) as server:
        out, took = asyncio.run(main(server.url))
    return out, server, shown, took


def messages(body: Any) -> list[dict[str, Any]]:
    return list(body.get("messages") or [])


def system_of(body: Any) -> str:
    if "system" in body:  # Anthropic: blocks or a string
        s = body["system"]
        return s if isinstance(s, str) else "".join(b.get("text", "") for b in s)
    first = messages(body)[:1]
    return str(first[0]["content"]) if first and first[0]["role"] == "system" else ""


def pairs_whole(body: Any) -> bool:
    """Every tool call of the request has its result and every result its call, in
    either wire format."""
    calls, results = [], []
    for m in messages(body):
        calls += [c["id"] for c in m.get("tool_calls") or []]
        if m["role"] == "tool":
            results.append(m["tool_call_id"])
        content = m.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use":
                calls.append(block["id"])
            if block.get("type") == "tool_result":
                results.append(block["tool_use_id"])
    return sorted(calls) == sorted(results)


def posts(server: FauxServer) -> list[Any]:
    return [s.body for s in server.seen if s.method == "POST"]


@pytest.mark.parametrize("api", ["chat", "anthropic"])
def test_an_overflow_compacts_the_run_into_the_memory_and_it_goes_on(api: str) -> None:
    memory = Memory(VIEW)
    out, server, shown, _ = go({"window": WINDOW, "replies": [read("big.txt"), "It is all x."]}, api, memory)
    assert out.outcome == "answered" and out.answer == "It is all x.", out
    sent = posts(server)
    assert len(sent) == 3  # the call, the request that overflowed, the request after compaction
    assert [[m.role for m in t] for t in memory.given] == [["user", "assistant", "tool", "assistant"]]
    assert memory.given[0][-1].is_error  # the overflow's failed message: the chat logs none of it
    after = sent[2]
    assert system_of(after) == VIEW
    assert BIG not in json.dumps(after)  # the context shrank: the result now lives in the chat
    assert len(json.dumps(after)) < len(json.dumps(sent[1])) // 2
    [user] = messages(after)[-1:]
    text = user["content"] if isinstance(user["content"], str) else user["content"][0]["text"]
    assert "moved into the chat" in text and "summarise big.txt" in text
    assert all(pairs_whole(b) for b in sent)
    assert any("context is too long" in s for s in shown)
    assert BIG in [m.content for m in out.transcript]  # the run's transcript keeps everything


def test_an_overflow_with_no_memory_fails_the_run_with_the_providers_words() -> None:
    out, server, _, _ = go({"window": WINDOW, "replies": [read("big.txt"), "never"]})
    assert out.outcome == "failed" and out.code == "model_error", out
    assert "could not be compacted" in (out.message or "")
    assert "context_length_exceeded" in (out.message or "") or "maximum context length" in (out.message or "")
    assert len(posts(server)) == 2  # the overflowing request is never resent as it is


def test_a_context_that_overflows_again_after_compacting_fails_instead_of_compacting_again() -> None:
    memory = Memory("v" * 8_000, "never used")  # a view that cannot fit the window
    out, server, _, _ = go({"window": WINDOW, "replies": [read("big.txt"), "never"]}, memory=memory)
    assert out.outcome == "failed" and out.code == "model_error", out
    assert (out.message or "").startswith("the provider said the context is too long even after this round's")
    assert len(memory.given) == 1  # one compaction in the round, never a second
    assert len(posts(server)) == 3


def test_past_the_threshold_the_run_compacts_before_it_sends() -> None:
    memory = Memory(VIEW)
    settings = Settings(context_window=2_000, max_output_tokens=100)  # BIG alone is ~2 000 tokens
    out, server, shown, _ = go([read("big.txt"), "It is all x."], memory=memory, settings=settings)
    assert out.outcome == "answered", out
    sent = posts(server)
    assert len(sent) == 2 and all(BIG not in json.dumps(b) for b in sent)  # BIG never went out
    assert len(memory.given) == 1 and memory.given[0][-1].content == BIG
    assert any("compaction threshold" in s for s in shown)


def test_the_threshold_never_compacts_without_a_context_window() -> None:
    memory = Memory("unused")
    out, server, _, _ = go([read("big.txt"), "It is all x."], memory=memory)
    assert out.outcome == "answered" and memory.given == []
    assert BIG in json.dumps(posts(server)[1])


def test_a_compaction_that_fails_fails_the_run_with_its_cause() -> None:
    memory = Memory(fail=OSError("disk full"))
    settings = Settings(context_window=2_000, max_output_tokens=100)
    out, server, _, _ = go([read("big.txt"), "never"], memory=memory, settings=settings)
    assert out.outcome == "failed" and out.code == "model_error"
    assert out.message == notes.compaction_failed(False, "OSError: disk full")
    assert len(posts(server)) == 1  # nothing was sent after the failed compaction


def test_ctrl_c_ends_a_compaction_that_never_ends() -> None:
    memory = Memory(hang=True)
    out, _, _, took = go({"window": WINDOW, "replies": [read("big.txt")]}, memory=memory, abort_after=1.0)
    assert out.outcome == "aborted", out
    assert took < 1.0 + ABORT_GRACE + 1.0


def test_a_request_past_the_threshold_with_nothing_to_move_is_sent_as_it_is() -> None:
    """The system prompt alone passes the threshold: there is nothing of the run to move,
    so no compaction runs (none every round), and the request goes out."""
    memory = Memory("unused")
    out, server, _, _ = go(["Hi."], memory=memory, settings=Settings(context_window=1, max_output_tokens=1))
    assert out.outcome == "answered" and memory.given == [] and len(posts(server)) == 1


def test_an_overflow_of_the_request_alone_fails_saying_nothing_can_move() -> None:
    memory = Memory("unused")
    out, server, _, _ = go({"window": 10, "replies": ["never"]}, memory=memory)
    assert out.outcome == "failed" and memory.given == [] and len(posts(server)) == 1
    assert "nothing of this run but its request" in (out.message or "")
