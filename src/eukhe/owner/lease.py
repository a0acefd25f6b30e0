"""A root turn's hold of the lease through the owner (H6.2): `async with
turn(client, ...)`. The wait has no deadline (it waits for another window's
turn); it shows for whose turn it waits, and the run's cancel ends it, leaving
nothing at the owner. Leaving the block hands the lease on."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from eukhe import waits
from eukhe.owner.admission import RemoteRegistry
from eukhe.owner.client import Client
from eukhe.owner.protocol import Kind
from eukhe.rules.wait import End

_IDS = itertools.count(1)


class LeaseStopped(Exception):
    """The wait for the lease ended by the run's cancel."""


def waiting_line(holder: dict[str, Any], now: float | None = None) -> str:
    """What a turn that waits for the lease shows: whose turn, since when, the way out."""
    since = holder.get("since")
    ago = f" for {max(0, round((now or time.time()) - since))} s" if isinstance(since, int | float) else ""
    who = f"session {holder.get('session') or '?'}, run {holder.get('run') or '?'}"
    return (
        f"waiting for the root-turn lease: {who} holds it{ago}; "
        "Ctrl-C ends this wait, `eukhe abort RUN` ends that run"
    )


@contextlib.asynccontextmanager
async def turn(
    client: Client,
    session: str,
    run: str,
    cancel: asyncio.Event | None = None,
    show: Callable[[str], None] = lambda line: None,
) -> AsyncIterator[int]:
    """Hold the lease for the block; its key. Raises `LeaseStopped` when the cancel
    comes first, `OwnerError` when the owner is gone."""
    lid = next(_IDS)
    client.on_event(f"lease:{lid}", lambda msg: show(waiting_line(dict(msg.get("holder") or {}))))
    _, fut = client.ask(Kind.LEASE, lease=lid, session=session, run=run)
    try:
        raced = await waits.race(fut, None, cancel)
    except BaseException:
        client.tell(Kind.UNLEASE, lease=lid)
        raise
    finally:
        client.on_event(f"lease:{lid}", None)
    if raced.end is not End.EVENT:
        client.tell(Kind.UNLEASE, lease=lid)
        raise LeaseStopped("the wait for the root-turn lease was cancelled")
    key = int(raced.result()["key"])  # an owner that refused or went: its OwnerError
    try:
        yield key
    finally:
        client.tell(Kind.UNLEASE, lease=lid)


@contextlib.asynccontextmanager
async def held(
    registry: RemoteRegistry,
    session: str,
    run: str,
    cancel: asyncio.Event | None = None,
    show: Callable[[str], None] = lambda line: None,
) -> AsyncIterator[int]:
    """The lease over the registry's connection to the owner (made on first use)."""
    async with turn(await registry.client(), session, run, cancel, show) as key:
        yield key
