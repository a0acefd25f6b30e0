"""A route's adapter made at its first need, in a thread (`ai.models.OnFirstRequest`): the
SDK's import (0.3 s and more) never holds the loop, and the home's owner makes its
compactor's adapter as soon as a run names the route, not when a line it builds needs a
model while a turn waits for it (issue 56: the fourth run of a fresh home waited for it)."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from pathlib import Path
from typing import Any

import pytest

from eukhe.admission import Registry
from eukhe.ai import models
from eukhe.ai.faux import FauxServer, parse
from eukhe.ai.reply import Done
from eukhe.ai.request import Message, Request
from eukhe.client.protocol import RequestKind
from eukhe.errors import EukheError
from eukhe.json_types import JsonObject, JsonValue
from eukhe.owner.chat_host import ChatHost
from eukhe.rules.compactor import NODE


def _recording(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The threads `provider_for` ran on, the real one called."""
    threads: list[int] = []
    real = models.provider_for

    def made(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.get_ident())
        return real(*args, **kwargs)

    monkeypatch.setattr(models, "provider_for", made)
    return threads


def test_an_adapter_is_made_once_off_the_loop_and_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    threads = _recording(monkeypatch)
    with FauxServer(parse([{"text": "one"}, {"text": "two"}])) as server:
        route = models.Route("faux", "m", "openai-chat", server.url, "k")

        async def main() -> list[tuple[str, ...]]:
            lazy = models.OnFirstRequest(route, timeout=20)
            texts: list[tuple[str, ...]] = []
            for prompt in ("a", "b"):
                events = [e async for e in lazy.stream(Request("m", (Message("user", prompt),)))]
                done = events[-1]
                assert isinstance(done, Done)
                texts.append(done.reply.text)
            await lazy.close()
            assert threading.get_ident() not in threads  # the loop's thread made nothing
            return texts

        assert asyncio.run(main()) == [("one",), ("two",)]  # a reply's texts
    assert len(threads) == 1


def test_an_adapter_that_cannot_be_made_fails_its_request_with_its_cause(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise models.ModelError("providers.faux: the SDK would not load")

    monkeypatch.setattr(models, "provider_for", broken)
    route = models.Route("faux", "m", "openai-chat", "http://127.0.0.1:9", "k")

    async def main() -> None:
        lazy = models.OnFirstRequest(route)
        lazy.make()  # made ahead and failed: nothing raised here, nor logged unretrieved
        with pytest.raises(EukheError, match="the SDK would not load"):
            async for _ in lazy.stream(Request("m", (Message("user", "a"),))):
                pass
        await lazy.close()

    asyncio.run(main())


def test_the_owner_makes_its_compactors_adapter_once_its_chat_may_ask_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before the fix the owner made it at the first line that needed a model, on the
    owner's loop, which then answered no run of the home while the SDK imported (a fresh
    home's fourth run waited for it). Now it is made in a thread as soon as the chat's
    messages pass half of NODE bytes together, and not before (no line can need a model then)."""
    threads = _recording(monkeypatch)
    route = models.Route("faux", "m", "openai-chat", "http://127.0.0.1:9", "k")

    def entries(text: str, n: int) -> list[JsonValue]:
        return [{"kind": "user", "text": text, "key": f"k{n}", "date": "2026-12-06"}]

    async def main() -> None:
        host = ChatHost(tmp_path, Registry())
        quiet, stop = (lambda _line: None), asyncio.Event()
        try:
            req: JsonObject = {"compactor": dataclasses.asdict(route), "entries": entries("short", 0)}
            await host.answer(RequestKind.LOG, req, quiet, stop)
            await asyncio.sleep(0.2)
            assert threads == []  # 5 bytes logged: no line may ask, no SDK loads
            req = {"compactor": dataclasses.asdict(route), "entries": entries("x" * (NODE // 2), 1)}
            await host.answer(RequestKind.LOG, req, quiet, stop)
            for _ in range(500):  # made in a thread: seen within 5 s
                if threads:
                    break
                await asyncio.sleep(0.01)
            assert threads and threads[0] != threading.get_ident()
        finally:
            await host.close()

    asyncio.run(main())
