"""The compactor with a real model (SmolLM2-135M on llama.cpp): whatever it writes, every
line it builds fits (1 to NODE bytes), or the call fails with its cause."""

from __future__ import annotations

import asyncio

import pytest

from eukhe.admission import Registry
from eukhe.ai.openai_chat import OpenAIChat
from eukhe.memory import prompts
from eukhe.memory.compactor import asker, build_call
from eukhe.rules import compactor as rule
from eukhe.rules.compactor import NODE
from tests.llama.server import LlamaServer

# every test of the real model on one worker of make test's two: one server of each kind a run
pytestmark = pytest.mark.xdist_group("llama")

MESSAGES = [
    "user: " + "Please refactor the deploy script so that it reads the region from config/deploy.toml. " * 8,
]
"""One message to compress (and one merge below): each call takes the real model up to TRIES
replies of LINE_TOKENS on 2 cores, so one of each kind is what the suite's time affords."""


def test_every_line_the_real_model_builds_fits(llama: LlamaServer) -> None:
    async def go() -> list[rule.End]:
        p = OpenAIChat("llamacpp", base_url=llama.base_url, timeout=120)
        ends = []
        try:
            ask = asker(p, Registry())
            for text in MESSAGES:
                call = await build_call(
                    ask, llama.model, "<chat>\n</chat>", prompts.compress_step(text), text
                )
                assert call.line.end is not rule.End.LIVE
                if call.text is None:
                    assert call.line.end is rule.End.FAILED and call.cause
                    print("failed:", call.cause)
                else:
                    assert 1 <= rule.nbytes(call.text) <= NODE, call.text
                ends.append(call.line.end)
            left = prompts.SCALE
            right = "user: ship it on Friday; talk: the release notes are drafted; echo: tag v1.2.0 pushed"
            merged = await build_call(
                ask, llama.model, "<chat>\n</chat>", prompts.merge_step(left, right), f"{left}\n{right}"
            )
            assert merged.text is None or 1 <= rule.nbytes(merged.text) <= NODE
            ends.append(merged.line.end)
        finally:
            await p.close()
        return ends

    ends = asyncio.run(go())
    print("the real model's lines ended:", [e.value for e in ends])  # for the record (-s)
    assert len(ends) == len(MESSAGES) + 1
