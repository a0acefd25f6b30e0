"""Reasoning effort as each API takes it, seen in the requests the real SDKs send to the faux
server; a name an API cannot take is not sent, and said; the setting, `--effort` and `off`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from eukhe.ai import Message, Request
from eukhe.ai.anthropic import AnthropicMessages
from eukhe.ai.effort import effort_refusal, thinking_budget
from eukhe.ai.faux import FauxServer
from eukhe.ai.faux.script import parse
from eukhe.ai.openai_chat import OpenAIChat
from eukhe.ai.openai_responses import OpenAIResponses
from tests.proc import eukhe

ADAPTERS = {
    "openai-chat": lambda url: OpenAIChat("faux", base_url=url, timeout=20),
    "openai-responses": lambda url: OpenAIResponses("faux", base_url=url, timeout=20),
    "anthropic": lambda url: AnthropicMessages("faux", base_url=url.removesuffix("/v1"), timeout=20),
}


def sent(
    api: str, effort: str | None, max_tokens: int | None = None, temperature: float | None = None
) -> Any:
    """The body the adapter's SDK sent for one request."""
    asked = (Message("user", "go"),)
    request = Request("m", asked, max_tokens=max_tokens, temperature=temperature, effort=effort)

    async def go(url: str) -> None:
        p = ADAPTERS[api](url)
        try:
            [e async for e in p.stream(request)]
        finally:
            await p.close()

    with FauxServer(parse(["ok"])) as server:
        asyncio.run(go(server.url))
        return server.seen[0].body


def test_chat_completions_send_reasoning_effort_as_given() -> None:
    assert sent("openai-chat", "high")["reasoning_effort"] == "high"
    assert sent("openai-chat", "minimal")["reasoning_effort"] == "minimal"  # the provider's own name
    assert "reasoning_effort" not in sent("openai-chat", None)


def test_responses_send_reasoning_effort() -> None:
    assert sent("openai-responses", "low")["reasoning"] == {"effort": "low"}
    assert "reasoning" not in sent("openai-responses", None)


BUDGETS = [("low", 4_000), ("medium", 10_000), ("high", 31_999), ("2048", 2048)]


@pytest.mark.parametrize(("effort", "budget"), BUDGETS)
def test_anthropic_takes_a_thinking_budget_with_room_for_the_answer(effort: str, budget: int) -> None:
    body = sent("anthropic", effort, max_tokens=1000, temperature=0.2)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": budget}
    assert body["max_tokens"] == budget + 4_096  # raised: the thinking counts in the reply's tokens
    assert "temperature" not in body  # with thinking, the API fixes it
    assert thinking_budget(effort) == budget


def test_anthropic_without_an_effort_or_with_one_it_cannot_take_asks_no_thinking() -> None:
    for effort in (None, "minimal", "512"):
        body = sent("anthropic", effort, temperature=0.2)
        assert "thinking" not in body and body["temperature"] == 0.2, effort
    refused = effort_refusal("anthropic", "minimal")
    assert refused is not None and refused.startswith("reasoning effort 'minimal' is not sent: Anthropic")
    assert effort_refusal("anthropic", "high") is None and effort_refusal("openai-chat", "minimal") is None


def test_the_setting_applies_the_flag_wins_and_off_sends_none(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"models": {"vllm/m": {"reasoningEffort": "medium"}}}))
    seen = []
    for flags in ([], ["--effort", "high"], ["--effort", "off"]):
        with FauxServer(parse(["ok"])) as server:
            done = eukhe("run", "--model", "vllm/m", "--base-url", server.url, *flags, "hi", cwd=tmp_path)
            assert done.returncode == 0, done.stderr
            seen.append(server.seen[0].body.get("reasoning_effort"))
    assert seen == ["medium", "high", None]


def test_an_effort_the_api_cannot_take_is_said_and_not_sent(tmp_path: Path) -> None:
    with FauxServer(parse(["ok"])) as server:
        url = server.url.removesuffix("/v1")
        done = eukhe(
            "run", "--model", "anthropic/m", "--base-url", url, "--effort", "minimal", "--events", "hi",
            cwd=tmp_path, extra={"ANTHROPIC_API_KEY": "sk-ant-test"},
        )  # fmt: skip
        body = server.seen[0].body
    assert done.returncode == 0, done.stderr
    said = [json.loads(line) for line in done.stdout.splitlines() if '"effort"' in line]
    assert said and said[0]["text"].startswith("reasoning effort 'minimal' is not sent"), done.stdout
    assert "thinking" not in body
