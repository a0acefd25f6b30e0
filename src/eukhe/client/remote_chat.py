"""A turn's memory through the home's owner, which holds the chat (its only writer):
each call is a request with its reply deadline (H6.1): 30 s; the settled view, the
settle deadline plus 30 s; an import, 100 ms an item plus 30 s. A miss is an
`OwnerError` the turn shows. The run's cancel ends a settle wait at once: the owner
is told to end it, and answers with the view as it is.

Every request that may start the compactor's work names the compactor's route
and the view budget of this turn's settings. Every request of the chat is
idempotent (an append by its key): one whose connection closed under it (the
owner died) is asked again, once, of the next owner, which the asking starts.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from eukhe.client.client import Client, OwnerError
from eukhe.client.protocol import MAX_LINE, RequestKind
from eukhe.events import ShowLine
from eukhe.json_types import JsonObject, JsonValue
from eukhe.memory.chat import Settled, Waiting
from eukhe.memory.log import Entry

TRIES = 2
"""Owners a chat request is asked of: the one that died under it, then the next."""

BATCH = MAX_LINE // 8
"""Bytes of text a LOG request carries at most (JSON escapes may grow a text sixfold)."""


def batches(entries: Sequence[Entry]) -> list[list[Entry]]:
    """The entries in order, cut where a request would pass BATCH (one entry a batch
    at least: a log entry is capped far below it)."""
    out: list[list[Entry]] = [[]]
    size = 0
    for e in entries:
        n = len(e.text.encode("utf-8", "surrogatepass")) + len(e.key) + 64
        if out[-1] and size + n > BATCH:
            out.append([])
            size = 0
        out[-1].append(e)
        size += n
    return [b for b in out if b] or [[]]


class Remote:
    def __init__(self, client: Callable[[], Awaitable[Client]], compactor: Any, budget: int) -> None:
        self._client = client
        self._about: JsonObject = {"budget": budget}
        if compactor is not None:  # an `eukhe.ai.models.Route`
            self._about["compactor"] = dataclasses.asdict(compactor)

    async def _ask(
        self, kind: RequestKind, cancel: asyncio.Event | None = None, **fields: JsonValue
    ) -> JsonObject:
        loop = asyncio.get_running_loop()
        settle_end = loop.time() + int(fields.get("settleMs") or 0) / 1000
        for attempt in range(TRIES):
            client = await self._client()
            if attempt and kind is RequestKind.VIEW:  # the next owner's wait ends at the turn's own deadline
                fields["settleMs"] = max(0, int((settle_end - loop.time()) * 1000))

            def stop(rid: int, client: Client = client) -> None:  # a settle wait's cancel: the view as it is
                client.tell(RequestKind.UNVIEW, view=rid)

            try:
                return await client.request(
                    kind, cancel, stop=stop if kind is RequestKind.VIEW else None, **fields
                )
            except OwnerError:
                if not client.closed.is_set() or attempt == TRIES - 1:
                    raise  # a deadline missed, a refusal, or the next owner gone too: the turn shows it
        raise AssertionError("unreachable: the last try raises")

    async def unbuilt(self) -> int:
        return int((await self._ask(RequestKind.MEMORY, **self._about))["unbuilt"])

    async def settled(
        self,
        settle_ms: int,
        show: ShowLine | None = None,
        cancel: asyncio.Event | None = None,
        waiting: Waiting | None = None,
        pinned: int = 0,
    ) -> Settled:
        def progress(msg: JsonObject) -> None:
            """A line of the owner's settle wait: with its fields when it has them."""
            text = str(msg.get("text", ""))
            if waiting is not None and "pending" in msg:
                waiting(text, int(msg["pending"]), float(msg.get("seconds") or 0.0))
            elif show is not None:
                show(text)

        pin = {"pinned": pinned} if pinned else {}  # an owner of an earlier eukhe reads no pins
        got = await self._ask(
            RequestKind.VIEW, cancel, progress=progress, settleMs=settle_ms, **pin, **self._about
        )
        return Settled(str(got["text"]), bool(got["settled"]), int(got["pending"]), float(got["waited"]))

    async def log(self, entries: Sequence[Entry]) -> int:
        """In order, in requests of at most BATCH bytes of text (a line of the wire has
        MAX_LINE at most: a run with many long tool results takes several)."""
        logged = 0
        for batch in batches(entries):
            got = await self._ask(RequestKind.LOG, entries=[e.json() for e in batch], **self._about)
            logged += int(got["logged"])
        return logged

    async def zoom(self, id: int, n: int) -> str | None:
        text = (await self._ask(RequestKind.ZOOM, message=id, n=n))["text"]
        return None if text is None else str(text)

    async def total(self) -> int:
        return int((await self._ask(RequestKind.MEMORY))["total"])

    async def date(self, id: int) -> str | None:
        date = (await self._ask(RequestKind.DATE, message=id))["date"]
        return None if date is None else str(date)
