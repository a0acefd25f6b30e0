"""A root turn's hold of the lease through the owner (H6.2): `async with
root_lease(client, ...)`. The wait has no deadline (it waits for another window's
turn); it shows for whose turn it waits, and the run's cancel ends it, leaving
nothing at the owner. Leaving the block hands the lease on.

Shown as the events of its run (`events`: kind, text, data, as `eukhe.events`
has them), the wait is a "lease" event whose fields name the holder, `{"wait":
"lease", "holder": {"session", "run", "since"}}` (no deadline: only the holder's end
or the cancel ends it), and "waited" once the lease is held or the wait stopped."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from eukhe import waits
from eukhe.client.admission import RemoteRegistry
from eukhe.client.client import Client
from eukhe.client.protocol import RequestKind
from eukhe.errors import Code, EukheError
from eukhe.json_types import JsonObject
from eukhe.rules.wait import End

_IDS = itertools.count(1)


class LeaseStopped(EukheError):
    """The wait for the lease ended by the run's cancel."""

    code = Code.LEASE


def waiting_line(holder: JsonObject, now: float | None = None) -> str:
    """What a turn that waits for the lease shows: whose turn, since when, the way out."""
    since = holder.get("since")
    ago = f" for {max(0, round((now or time.time()) - since))} s" if isinstance(since, int | float) else ""
    who = f"session {holder.get('session') or '?'}, run {holder.get('run') or '?'}"
    return (
        f"waiting for the root-turn lease: {who} holds it{ago}; "
        "Ctrl-C ends this wait, `eukhe abort RUN` ends that run"
    )


@contextlib.asynccontextmanager
async def root_lease(
    client: Client,
    session: str,
    run: str,
    cancel: asyncio.Event | None = None,
    show: Callable[[str], None] = lambda line: None,
    events: Callable[..., None] | None = None,
) -> AsyncIterator[int]:
    """Hold the lease for the block; its key. Raises `LeaseStopped` when the cancel
    comes first, `OwnerError` when the owner is gone. A wait shows its line: to
    `events` as the run's events when given (the module's docstring), else to `show`."""
    lid = next(_IDS)
    shown = False

    def queued(msg: JsonObject) -> None:
        nonlocal shown
        if msg.get("event") != "queued":  # the connection's close ("gone"): the wait fails with it
            return
        holder = dict(msg.get("holder") or {})
        line = waiting_line(holder)
        if events is None:
            show(line)
            return
        shown = True
        about = {k: holder.get(k) for k in ("session", "run", "since")}
        events("lease", line, {"wait": "lease", "holder": about})

    client.on_event(f"lease:{lid}", queued)
    _, fut = client.ask(RequestKind.LEASE, lease=lid, session=session, run=run)
    try:
        raced = await waits.race(fut, None, cancel)
    except BaseException:
        client.tell(RequestKind.UNLEASE, lease=lid)
        raise
    finally:
        client.on_event(f"lease:{lid}", None)
        if shown and events is not None:
            events("waited", "", {"wait": "lease"})
    if raced.end is not End.EVENT:
        client.tell(RequestKind.UNLEASE, lease=lid)
        raise LeaseStopped("the wait for the root-turn lease was cancelled")
    key = int(raced.result()["key"])  # an owner that refused or went: its OwnerError
    try:
        yield key
    finally:
        client.tell(RequestKind.UNLEASE, lease=lid)


@dataclass(frozen=True)
class RootTurnLease:
    """The root-turn lease over `registry`'s connection to the owner (made on first use)."""

    registry: RemoteRegistry

    @contextlib.asynccontextmanager
    async def held(
        self,
        session: str,
        run: str,
        cancel: asyncio.Event | None = None,
        events: Callable[..., None] | None = None,
    ) -> AsyncIterator[int]:
        """Hold it for the block (`root_lease`): its key."""
        async with root_lease(await self.registry.client(), session, run, cancel, events=events) as key:
            yield key
