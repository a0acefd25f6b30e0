"""One controller per provider for the whole process, shared by every run, the
compactor and subagents; limits from settings.json."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Protocol, TypeVar

from eukhe.admission._controller import Controller, OnQueued, Slot, Statistics
from eukhe.admission._errors import Preempted
from eukhe.admission._limits import limits_from
from eukhe.json_types import JsonMapping

T = TypeVar("T")


class Slots(Protocol):
    """Where a process's model requests take their slots: its own `Registry`, or the home's
    owner's controllers through `client.admission.RemoteRegistry` (each slot an async
    context, held for the request)."""

    def configure(self, settings: JsonMapping) -> None: ...

    def slot(
        self,
        provider: str,
        *,
        interactive: bool,
        deadline: float | None = None,
        on_queued: OnQueued | None = None,
    ) -> AbstractAsyncContextManager[object]: ...


class Registry:
    """Controllers by provider name, made on first use with the provider's limits
    from the settings it was given (`configure`)."""

    def __init__(self, settings: JsonMapping | None = None) -> None:
        self._settings: JsonMapping = dict(settings or {})
        self._controllers: dict[str, Controller] = {}

    def configure(self, settings: JsonMapping) -> None:
        """New settings. Every provider's limits are read first (a malformed one raises
        `SettingsError` and changes nothing); then each controller takes its new
        limits: a lowered limit drains, a raised one grants waiters at once."""
        new = {name: limits_from(settings, name) for name in self._controllers}
        self._settings = dict(settings)
        for name, lim in new.items():
            self._controllers[name].set_limits(lim.concurrency, lim.queue_limit)

    def controller(self, provider: str) -> Controller:
        c = self._controllers.get(provider)
        if c is None:
            lim = limits_from(self._settings, provider)
            c = self._controllers[provider] = Controller(provider, lim.concurrency, lim.queue_limit)
        return c

    def slot(
        self,
        provider: str,
        *,
        interactive: bool,
        deadline: float | None = None,
        on_queued: OnQueued | None = None,
    ) -> Slot:
        """`async with registry.slot("vllm", interactive=True) as slot:` holds a slot of
        the provider for the block (see `Slot`); `on_queued` is told its wait, if it waits."""
        return self.controller(provider).slot(interactive=interactive, deadline=deadline, on_queued=on_queued)

    def statistics(self, provider: str) -> Statistics:
        return self.controller(provider).statistics()

    def providers(self) -> tuple[str, ...]:
        """The providers that have a controller so far."""
        return tuple(self._controllers)


async def run_in_slot(
    body: Callable[[object], Awaitable[T]],
    provider: str,
    *,
    interactive: bool,
    deadline: float,
    registry: Slots,
    on_queued: OnQueued | None = None,
) -> T:
    """`await body(slot)` holding a slot of the provider, and its result.

    When the slot is preempted (a background request, by a session request), the
    body has been cancelled; it runs again from the start with a new slot, asked
    for within the same `deadline` (absolute, in the event loop's clock). The
    deadline bounds every wait for a slot (`SlotTimeout`) and the asking again: a
    preemption after it raises `Preempted`. It does not bound the body, which has
    deadlines of its own. `QueueFull` and the body's own errors propagate; so does
    a cancel of the caller. `on_queued` is told each wait for a slot (`Slot`).
    """
    loop = asyncio.get_running_loop()
    while True:
        try:
            slot = registry.slot(provider, interactive=interactive, deadline=deadline, on_queued=on_queued)
            async with slot as s:
                return await body(s)
        except Preempted:
            if loop.time() >= deadline:
                raise
