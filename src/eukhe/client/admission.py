"""Admission through the owner (H3 across processes): the same `slot(...)` as the
in-process `Registry`, whose controller lives in the owner, shared by every
client of the home.

A slot's wait has no deadline of its own (H3.4): it ends with a grant, the
caller's deadline (background work's `BACKGROUND_SLOT_WAIT`: `SlotTimeout`), the
caller's cancel, or the owner's connection closing (`OwnerUnreachable`, retryable:
the next request reaches a new owner). A preemption comes as an event: the
holding task is cancelled and the block raises `Preempted`, as in-process. So does
a wait, when the owner queues the request: its place and what holds it up, told to
`on_queued` as in-process (a slot taken at once costs nothing more: no event).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

from eukhe import waits
from eukhe.admission import UNLIMITED, AdmissionError, OnQueued, Preempted, Queued, SlotTimeout, limits_from
from eukhe.client.client import Client, OwnerError
from eukhe.client.protocol import RequestKind
from eukhe.errors import Code
from eukhe.json_types import JsonMapping, JsonObject
from eukhe.rules.wait import End
from eukhe.settings import SettingsError


class OwnerUnreachable(AdmissionError):
    """No owner answered for a slot; retryable (the next try starts a new owner)."""

    code = Code.OWNER

    retryable = True


class Aborts(Protocol):
    """Where `eukhe abort RUN` from another process reaches a run of this one: its process's
    run table (`run.handles.RunTable`), known here only as this."""

    def abort(self, run: str) -> bool:
        """The run's cancel; whether it runs here."""
        ...


class RemoteRegistry:
    """Slots of the home's owner, over one client connection made on first use (on
    the loop of the first caller) and made again when the owner is gone. `aborts`: where an
    abort the owner relays goes (None: nowhere, the owner's own recovered runs)."""

    def __init__(
        self,
        home: Path,
        connect: Callable[[], Awaitable[Client]] | None = None,
        aborts: Aborts | None = None,
    ) -> None:
        self.home = home
        self.aborts = aborts
        self._connect = connect or (lambda: Client.connect(home))
        self._client: Client | None = None
        self._settings: JsonMapping | None = None
        self._lock: asyncio.Lock | None = None
        self._ids = itertools.count(1)

    async def client(self) -> Client:
        if self._client is not None and not self._client.closed.is_set():
            return self._client
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._client is None or self._client.closed.is_set():
                client = await self._connect()
                client.on_event("abort", self._aborted)
                if self._settings is not None:
                    await client.request(RequestKind.CONFIGURE, settings=dict(self._settings))
                self._client = client
        return self._client

    def _aborted(self, msg: JsonObject) -> None:
        """`eukhe abort RUN` from another process, relayed by the owner: the run's cancel."""
        if self.aborts is not None:
            self.aborts.abort(str(msg.get("run")))

    def configure(self, settings: JsonMapping) -> None:
        """New limits: sent with the next slot (the owner's controllers take them)."""
        self._settings = dict(settings)
        if self._client is not None and not self._client.closed.is_set():
            self._client.tell(RequestKind.CONFIGURE, settings=dict(settings))

    def limit(self, provider: str) -> int:
        """The provider's concurrency as this client's settings give it (for messages)."""
        try:
            return limits_from(self._settings or {}, provider).concurrency
        except SettingsError:
            return UNLIMITED

    def slot(
        self,
        provider: str,
        *,
        interactive: bool,
        deadline: float | None = None,
        on_queued: OnQueued | None = None,
    ) -> RemoteSlot:
        return RemoteSlot(self, provider, interactive, deadline, next(self._ids), on_queued)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()


class RemoteSlot:
    """`async with registry.slot(...)`: one slot of the owner's controller."""

    def __init__(
        self,
        reg: RemoteRegistry,
        provider: str,
        interactive: bool,
        deadline: float | None,
        sid: int,
        on_queued: OnQueued | None = None,
    ):
        self.reg = reg
        self.provider = provider
        self.interactive = interactive
        self.deadline = deadline
        self.sid = sid
        self.on_queued = on_queued
        self.queued = False
        self.preempted = False
        self._client: Client | None = None
        self._task: asyncio.Task[Any] | None = None
        self._cancelling = 0
        self._cancelled = False

    async def __aenter__(self) -> RemoteSlot:
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("a slot is held by a task")
        cls = "interactive" if self.interactive else "background"
        try:
            client = self._client = await self.reg.client()
        except OwnerError as e:
            raise OwnerUnreachable(f"provider {self.provider!r}: no {cls} slot: {e}", self.provider) from None
        client.on_event(f"slot:{self.sid}", self._event)
        began = asyncio.get_running_loop().time()
        told = {"told": True} if self.on_queued is not None else {}  # else the owner says no wait
        _, fut = client.ask(
            RequestKind.ADMIT, slot=self.sid, provider=self.provider, interactive=self.interactive, **told
        )
        try:
            raced = await waits.race(fut, self.deadline, None, waits.LoopClock())
        except BaseException:  # the caller's cancel: the wait is dropped at the owner too
            self._drop()
            raise
        if raced.end is End.DEADLINE:
            self._drop()
            waited = asyncio.get_running_loop().time() - began
            raise SlotTimeout(self.provider, cls, waited, self.reg.limit(self.provider))
        try:
            reply = raced.result()
        except OwnerError as e:
            self._drop()
            error = str(e)
            if e.refused == "queue_full":
                raise _Refused(error, self.provider) from None
            raise OwnerUnreachable(
                f"provider {self.provider!r}: no {cls} slot: {error}", self.provider
            ) from None
        self.queued = bool(reply.get("queued"))
        self._task = task
        self._cancelling = task.cancelling()
        return self

    def _event(self, msg: JsonObject) -> None:
        if msg.get("event") == "queued":  # the owner queued the request: where, and behind what
            if self.on_queued is not None and self._task is None:
                cls = "interactive" if self.interactive else "background"
                place, ahead = int(msg.get("place") or 1), str(msg.get("ahead") or "")
                self.on_queued(Queued(self.provider, str(msg.get("class") or cls), place, ahead))
            return
        if msg.get("event") != "preempted":
            return  # the owner is gone: the slot it granted is simply over
        self.preempted = True
        task = self._task
        if task is not None and not task.done():
            task.cancel(msg=f"admission: {self.provider}: background slot preempted")
            self._cancelled = True

    def _drop(self) -> None:
        if self._client is not None:
            self._client.on_event(f"slot:{self.sid}", None)
            self._client.tell(RequestKind.RELEASE, slot=self.sid)

    async def __aexit__(
        self, typ: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._drop()
        if self._cancelled and self._task is not None:
            only_ours = self._task.uncancel() <= self._cancelling  # no other cancel is pending
            if only_ours and typ is asyncio.CancelledError:
                raise Preempted(self.provider, self.sid) from exc


class _Refused(AdmissionError):
    """The owner's queue for the class is full; retryable, as in-process."""

    retryable = True
