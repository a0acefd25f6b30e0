"""The same 50-round scripted task (one tool call a round, then the answer) against
the faux server, through eukhe, the OpenAI Agents SDK and pydantic-ai; prints each
one's harness overhead per round and the ratios.

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python bench/round.py [--rounds N] [--repeat R]

Overhead = wall time of the harness minus the wall time of a bare SDK loop that
makes the same requests (same wire mode) and runs the same tool, with the least
client work the SDK allows (the body passed raw, as `extra_body`): what is left
is the harness's own work per round. Target: eukhe's overhead is at most half that
of the faster of the two others.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import openai

from eukhe.ai.faux import FauxServer, parse
from eukhe.ai.openai_chat import OpenAIChat
from eukhe.ai.reply import ToolCall
from eukhe.ai.request import Tool
from eukhe.run.loop import RunLoop, Settings

PROMPT = "Read every file, one a round, then say done."
SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def script(rounds: int) -> Any:
    calls = [{"calls": [{"name": "read", "arguments": {"path": f"f{i}.txt"}}]} for i in range(rounds)]
    return {"replies": [*calls, "done"], "then": "error"}


def read(path: str) -> str:
    """The tool: instant, so tool time is nothing."""
    return f"contents of {path}"


async def bare(url: str, rounds: int, stream: bool) -> None:
    """The floor: the same requests and tool runs with no harness at all."""
    client = openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0)
    tools = [{"type": "function", "function": {"name": "read", "description": "read", "parameters": SCHEMA}}]
    messages: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}]
    for _ in range(rounds + 1):
        if stream:
            calls: dict[int, dict[str, str]] = {}
            async for chunk in await client.chat.completions.create(
                model="faux", messages=[], stream=True, extra_body={"messages": messages, "tools": tools}
            ):
                for tc in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
                    c = calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                    c["id"] = tc.id or c["id"]
                    if tc.function is not None:
                        c["name"] += tc.function.name or ""
                        c["arguments"] += tc.function.arguments or ""
            found = list(calls.values())
        else:
            r = await client.chat.completions.create(
                model="faux", messages=[], extra_body={"messages": messages, "tools": tools}
            )
            found = [
                {"id": t.id, "name": t.function.name, "arguments": t.function.arguments}  # type: ignore[union-attr]
                for t in r.choices[0].message.tool_calls or []
            ]
        if not found:
            break
        messages.append(
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["name"], "arguments": c["arguments"]},
                    }
                    for c in found
                ],
            }
        )
        for c in found:
            messages.append(
                {"role": "tool", "tool_call_id": c["id"], "content": read(**json.loads(c["arguments"]))}
            )
    await client.close()


async def through_eukhe(url: str, rounds: int) -> None:
    async def run_tool(c: ToolCall) -> tuple[str, bool]:
        return read(**(c.arguments or {})), False

    p = OpenAIChat("faux", base_url=url)
    g = RunLoop(p, "faux", (Tool("read", "read", SCHEMA),), run_tool, Settings(max_tool_rounds=rounds + 5))
    out = await g.run(PROMPT)
    await p.close()
    assert out.outcome == "answered" and out.rounds == rounds, out.json()


async def through_agents(url: str, rounds: int) -> None:
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled

    set_tracing_disabled(True)
    client = openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0)
    agent = Agent(
        name="bench",
        instructions="",
        tools=[function_tool(read)],
        model=OpenAIChatCompletionsModel(model="faux", openai_client=client),
    )
    result = await Runner.run(agent, PROMPT, max_turns=rounds + 5)
    assert result.final_output == "done"
    await client.close()


async def through_pydantic_ai(url: str, rounds: int) -> None:
    from pydantic_ai import Agent, UsageLimits
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    model = OpenAIChatModel("faux", provider=OpenAIProvider(base_url=url, api_key="x"))
    agent = Agent(model, tools=[read])
    result = await agent.run(PROMPT, usage_limits=UsageLimits(request_limit=rounds + 5))
    assert result.output == "done"


def once(rounds: int, run: Callable[[str, int], Awaitable[None]]) -> float:
    with FauxServer(parse(script(rounds))) as server:
        t0 = time.perf_counter()
        asyncio.run(run(server.url, rounds))
        return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--smoke", action="store_true", help="every path once, small: the bench still runs")
    a = ap.parse_args()
    if a.smoke:
        a.rounds, a.repeat = 2, 1
    harnesses: list[tuple[str, Callable[[str, int], Awaitable[None]], bool]] = [
        ("eukhe", through_eukhe, True),
        ("openai-agents", through_agents, False),
        ("pydantic-ai", through_pydantic_ai, False),
    ]
    # each repeat runs every harness right after its floor (same wire mode), so drift
    # on the machine hits both; the median of the differences is the overhead
    diffs: dict[str, list[float]] = {name: [] for name, _, _ in harnesses}
    walls: dict[str, list[float]] = {name: [] for name, _, _ in harnesses}
    for _ in range(a.repeat):
        for name, run, stream in harnesses:
            floor = once(a.rounds, lambda u, n, st=stream: bare(u, n, st))
            wall = once(a.rounds, run)
            walls[name].append(wall)
            diffs[name].append(wall - floor)
    head = f"{'harness':14} {'wall s':>8} {'overhead ms/round':>18}"
    print(f"{head}   ({a.rounds} rounds, median of {a.repeat})")
    per = {}
    for name, _, _ in harnesses:
        per[name] = max(statistics.median(diffs[name]), 0.0) / a.rounds * 1000
        print(f"{name:14} {statistics.median(walls[name]):8.3f} {per[name]:18.3f}")
    peer = min(per["openai-agents"], per["pydantic-ai"])
    ratio = per["eukhe"] / peer if peer > 0 else float("inf")
    print(f"eukhe / faster peer: {ratio:.2f} (target <= 0.5): {'ok' if ratio <= 0.5 else 'OVER'}")
    if a.smoke:  # a smoke run's figures mean nothing: the last real ones stay
        return
    Path("bench/round.last.json").write_text(
        json.dumps({"overhead_ms_per_round": per, "ratio": ratio}) + "\n"
    )


if __name__ == "__main__":
    main()
