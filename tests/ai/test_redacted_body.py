"""The provider's request is the wire's last line of defence (issue 40, item 5): every
adapter, made by `provider_for` with the run's redaction, sends no secret value in any
spelling, wherever in the body it was put (the system prompt, the user's prompt, an
assistant's call's raw arguments, where JSON escapes it, a tool's result, a tool's
description), and the request it was given is left as it was."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from eukhe.ai import Message, Request, Tool, ToolCall
from eukhe.ai.faux import FauxServer, parse
from eukhe.ai.models import APIS, Route, provider_for
from eukhe.settings.secrets import REDACTED, Redaction

SECRET = 'sk-"live"\\key-é-0123456789'
"""JSON spells it otherwise: its quotes and backslash escaped, its `é` as \\u00e9 or not."""

RAW = json.dumps({"command": f"echo {SECRET}"})

REQUEST = Request(
    "faux-model",
    (
        Message("user", f"use {SECRET} please"),
        Message("assistant", "", (ToolCall("c1", "bash", RAW, {"command": f"echo {SECRET}"}),)),
        Message("tool", f"{SECRET}\n", call_id="c1"),
        Message("user", "and again"),
    ),
    (Tool("bash", f"run a command; the key is {SECRET}", {"type": "object", "properties": {}}),),
    system=f"AGENTS.md says the key is {SECRET}",
)


def spellings(value: str) -> set[str]:
    return {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}


def sent(api: str, redact: Redaction, deferred: bool = False) -> list[Any]:
    """The bodies the faux server got for REQUEST through `api`'s adapter."""

    async def go(url: str) -> None:
        base = url.removesuffix("/v1") if api == "anthropic" else url
        p = provider_for(Route("faux", "faux-model", api, base, "k-0123"), timeout=20, redact=redact)
        try:
            if deferred:
                await p.start(REQUEST)
            else:
                [_ async for _ in p.stream(REQUEST)]
        finally:
            await p.close()

    with FauxServer(parse(["done"])) as server:
        asyncio.run(go(server.url))
        return [s.body for s in server.seen]


@pytest.mark.parametrize("api", APIS)
def test_no_secret_value_leaves_in_a_body(api: str) -> None:
    before = repr(REQUEST)
    [body] = sent(api, Redaction((SECRET,)))
    text = json.dumps(body) + json.dumps(body, ensure_ascii=False)
    assert not [s for s in spellings(SECRET) if s in text], text
    assert text.count(REDACTED) == 2 * 5, text  # the system, the prompt, the call, its result, the tool
    assert repr(REQUEST) == before  # the run's request itself is untouched


@pytest.mark.parametrize("api", APIS)
def test_without_a_redaction_the_body_goes_as_it_is(api: str) -> None:
    [body] = sent(api, Redaction())
    assert SECRET in json.dumps(body, ensure_ascii=False) or json.dumps(SECRET)[1:-1] in json.dumps(body)


def test_a_deferred_requests_body_is_redacted_too() -> None:
    [body] = sent("openai-responses", Redaction((SECRET,)), deferred=True)
    text = json.dumps(body) + json.dumps(body, ensure_ascii=False)
    assert not [s for s in spellings(SECRET) if s in text] and REDACTED in text, text
