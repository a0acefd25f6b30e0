"""Stream 100,000 chunks from the faux server through each adapter and through a
bare SDK loop that does nothing else; print the adapter's cost as a ratio.

    .venv/bin/python bench/stream.py [--chunks N] [--rounds R]

Target: the adapter costs at most 25% over the bare loop (ratio <= 1.25).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable

import anthropic
import openai

from eukhe.ai import Message, Request
from eukhe.ai.faux import FauxServer
from eukhe.ai.faux.script import parse

REQUEST = Request("faux", (Message("user", "go"),))


async def adapter(make: Callable[[str], object], url: str) -> int:
    p = make(url)
    n = 0
    async for _ in p.stream(REQUEST):  # type: ignore[attr-defined]
        n += 1
    await p.close()  # type: ignore[attr-defined]
    return n


async def bare_chat(url: str) -> int:
    client = openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0)
    n = 0
    stream = await client.chat.completions.create(
        model="faux", messages=[{"role": "user", "content": "go"}], stream=True
    )
    async for _ in stream:
        n += 1
    await client.close()
    return n


async def bare_responses(url: str) -> int:
    client = openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0)
    n = 0
    stream = await client.responses.create(model="faux", input="go", stream=True)
    async for _ in stream:
        n += 1
    await client.close()
    return n


async def bare_anthropic(url: str) -> int:
    client = anthropic.AsyncAnthropic(base_url=url.removesuffix("/v1"), api_key="x", max_retries=0)
    n = 0
    stream = await client.messages.create(
        model="faux", max_tokens=10, messages=[{"role": "user", "content": "go"}], stream=True
    )
    async for _ in stream:
        n += 1
    await client.close()
    return n


def timed(run: Callable[[str], Awaitable[int]], url: str) -> float:
    t0 = time.perf_counter()
    asyncio.run(run(url))
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="every path once, small: the bench still runs")
    a = ap.parse_args()
    if a.smoke:
        a.chunks, a.rounds = 1000, 1
    from eukhe.ai.openai_chat import OpenAIChat

    cases: list[tuple[str, Callable[[str], Awaitable[int]], Callable[[str], Awaitable[int]]]] = [
        ("openai-chat", lambda u: adapter(lambda url: OpenAIChat("faux", base_url=url), u), bare_chat),
    ]
    try:
        from eukhe.ai.openai_responses import OpenAIResponses

        cases.append(
            (
                "openai-responses",
                lambda u: adapter(lambda url: OpenAIResponses("faux", base_url=url), u),
                bare_responses,
            )
        )
    except ImportError:
        pass
    try:
        from eukhe.ai.anthropic import AnthropicMessages

        cases.append(
            (
                "anthropic",
                lambda u: adapter(lambda url: AnthropicMessages("faux", base_url=url.removesuffix("/v1")), u),
                bare_anthropic,
            )
        )
    except ImportError:
        pass
    text = "x" * a.chunks
    script = parse({"replies": [{"text": text, "chunks": a.chunks}], "then": "last"})
    head = f"{'adapter':18} {'bare s':>8} {'adapter s':>10} {'ratio':>6}"
    print(f"{head}   ({a.chunks} chunks, best of {a.rounds})")
    worst = 0.0
    with FauxServer(script) as server:
        for name, through, bare in cases:
            b = min(timed(bare, server.url) for _ in range(a.rounds))
            t = min(timed(through, server.url) for _ in range(a.rounds))
            worst = max(worst, t / b)
            print(f"{name:18} {b:8.2f} {t:10.2f} {t / b:6.2f}")
    print(f"worst ratio {worst:.2f} (target <= 1.25): {'ok' if worst <= 1.25 else 'OVER'}")


if __name__ == "__main__":
    main()
