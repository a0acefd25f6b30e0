"""How a turn reaches the chat: the few things a run asks of its memory (the
settled view, the log, zoom and date), whether the chat lives in this process
(`Local`) or in the home's owner, its only writer (`eukhe.client.remote_chat`).

Every method is a coroutine: through the owner each one is a request with its
reply deadline (H6.1).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from eukhe.events import ShowLine
from eukhe.memory.chat import Chat, Settled, Waiting
from eukhe.memory.log import Entry


class Memory(Protocol):
    async def unbuilt(self) -> int:
        """The view's lines still unbuilt: a turn that starts now waits on the compactor."""
        ...

    async def settled(
        self,
        settle_ms: int,
        show: ShowLine | None = None,
        cancel: asyncio.Event | None = None,
        waiting: Waiting | None = None,
        pinned: int = 0,
    ) -> Settled:
        """The view once its lines are built, or `settle_ms` from now, or at `cancel` (H2).
        `show`: the wait's lines; `waiting`: its progress lines with their fields, instead;
        `pinned`: the bytes the turn puts beside the view (`rules.pinned`), which it fits with."""
        ...

    async def log(self, entries: Sequence[Entry]) -> int:
        """Append (idempotent by key); how many messages the entries are in the log."""
        ...

    async def zoom(self, id: int, n: int) -> str | None:
        """Line id+n opened (message id whole for n = 1); None: no line of the chat."""
        ...

    async def total(self) -> int:
        """The messages logged so far."""
        ...

    async def date(self, id: int) -> str | None:
        """When message `id` was logged; None: no such message."""
        ...


@dataclass
class Local:
    """The chat of this process (a test's, or a process with no owner)."""

    chat: Chat

    async def unbuilt(self) -> int:
        return self.chat.unbuilt()

    async def settled(
        self,
        settle_ms: int,
        show: ShowLine | None = None,
        cancel: asyncio.Event | None = None,
        waiting: Waiting | None = None,
        pinned: int = 0,
    ) -> Settled:
        deadline = self.chat.clock.now() + settle_ms / 1000
        return await self.chat.settled(deadline, show, cancel, waiting, pinned)

    async def log(self, entries: Sequence[Entry]) -> int:
        return len(self.chat.log(entries))

    async def zoom(self, id: int, n: int) -> str | None:
        return self.chat.zoom(id, n)

    async def total(self) -> int:
        return self.chat.queue.total

    async def date(self, id: int) -> str | None:
        m = self.chat.store.message(id)
        return None if m is None else m.date


async def settle(
    memory: Memory,
    settle_ms: int,
    show: Callable[..., None],
    cancel: asyncio.Event | None = None,
    pinned: int = 0,
) -> Settled:
    """A turn's settle wait (`Memory.settled`), shown as the events of its run (`show`:
    kind, text, data, as `eukhe.events` has them): each progress line as a "memory"
    event with the wait's fields, `{"wait": "memory", "pending": N, "deadline": epoch
    seconds}` (the deadline made here, from the seconds left as the chat counts them on
    its own clock), then "waited" once the wait ends, however it ends; the line that says
    how it ended, a plain "memory" line. A view that needs no wait shows nothing. `pinned`:
    the bytes the turn puts beside the view."""
    shown = False

    def waiting(line: str, pending: int, seconds: float) -> None:
        nonlocal shown
        shown = True
        deadline = round(time.time() + max(seconds, 0.0), 3)
        show("memory", line, {"wait": "memory", "pending": pending, "deadline": deadline})

    try:
        return await memory.settled(settle_ms, lambda line: show("memory", line), cancel, waiting, pinned)
    finally:
        if shown:
            show("waited", "", {"wait": "memory"})
