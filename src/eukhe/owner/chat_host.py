"""The home's chat in its owner: the only writer of its log and lines, and the
home of the compactor's workers (H1, H2, H6). The runs of every process reach it
through `eukhe.client.remote_chat`; it is opened on the first request, on the
owner's loop, from the home's store (`durable.databaseUrl`, else SQLite in the
home).

The compactor asks the route the last turn's request named (the session's model,
or `auxiliaryModel`, chosen by the client as H7.1 says), in background slots of
this owner's own admission registry: a session request of any client preempts
it there (H3).

Owners of several homes that share one Postgres store elect the chat's one
writer (`store.election`): the writer logs, builds lines and saves the view; every
other owner writes nothing of the chat. It hands its clients' messages to the
writer through the store's inbox, which the writer logs every drain poll (`timing`), and
gives its turns the view the writer built, read from the store, once its own
messages are in the log and the view's lines are built (or at the settle
deadline). Each owner tries for the lock every elect poll (`timing`): when the writer dies,
the next try of a survivor wins, and it writes from then on.

An owner that dies loses nothing: the log is in the store, a line is saved once
built, the inbox keeps what the writer has not logged yet, and the next writer's
chat starts the work that is left at its first use.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eukhe import waits
from eukhe.admission import Registry
from eukhe.ai.models import OnFirstRequest, Route
from eukhe.client.protocol import RequestKind
from eukhe.events import ShowLine
from eukhe.humanize import counted
from eukhe.json_types import JsonMapping, JsonObject
from eukhe.memory.access import Local
from eukhe.memory.chat import Chat, Settled, Waiting, settle_ended
from eukhe.memory.compactor import asker
from eukhe.memory.log import Entry
from eukhe.memory.tables import ChatStore
from eukhe.owner.log import logged
from eukhe.rules.view import VIEW
from eukhe.run.secrets import redaction
from eukhe.settings.load import load
from eukhe.settings.secrets import NO_SECRETS
from eukhe.store.election import Election
from eukhe.store.urls import database_url
from eukhe.timing import timing


class ChatHost:
    def __init__(self, home: Path, registry: Registry) -> None:
        self.home = home
        self.registry = registry
        self.memory: Local | None = None  # the chat, while this owner writes it
        self.store: ChatStore | None = None
        self.redact = NO_SECRETS  # the secret values the owner knows, from the store's opening on
        self.election: Election | None = None
        self.budget = VIEW
        self._route: JsonMapping | None = None
        self._providers: dict[tuple[Any, ...], Any] = {}  # a route's provider, made once
        self._watch: asyncio.Task[None] | None = None
        self._asks: tuple[Any, ...] | None = None  # the route the writer's compactor asks

    # ------------------------------------------------------------ opening, and who writes

    def _start(self) -> ChatStore:
        if self.store is None:
            settings = load(self.home)
            url = database_url(self.home, settings)
            # no row of the chat, nor a compaction's request, holds a secret value the owner knows
            self.redact = redaction(settings)
            self.store = ChatStore(url, self.redact)
            self.election = Election(url)
            self.election.attempt()
            if self.election.shared:
                self._watch = asyncio.ensure_future(self._elect())
        return self.store

    @property
    def writes(self) -> bool:
        return self.election is not None and self.election.won

    def _writer(self) -> Local:
        """The chat this owner writes, made at its first need."""
        if self.memory is None:
            self.memory = Local(Chat(self._start(), budget=self.budget))
            self._asks = None
        self._compactor(self.memory)
        return self.memory

    async def _elect(self) -> None:
        """Try for the writer's lock every elect poll (`timing`); while it is held, log what other
        owners handed in; once it is lost, stop writing (the jobs stop, nothing fails)."""
        assert self.election is not None and self.store is not None
        clock = waits.LoopClock()
        was = self.election.won
        while True:
            won = await asyncio.to_thread(self.election.attempt)
            if won and not was:
                self._say("this owner writes the chat now (the writer before it is gone)")
                with contextlib.suppress(Exception):  # its work starts now; a store away: at the next look
                    await self._writer().log([])
            if was and not won:
                self._say(f"this owner no longer writes the chat: {self.election.why or 'the lock was lost'}")
                await self._stop_writing()
            was = won
            end = clock.now() + timing().elect_poll
            while self.election.won and clock.now() < end:
                with contextlib.suppress(Exception):  # a store that is away: tried again at the next look
                    await self._drain()
                await clock.sleep_until(min(end, clock.now() + timing().drain_poll))
            if not self.election.won:
                await clock.sleep_until(end)

    async def _drain(self) -> None:
        """Log what other owners handed in, in order; then out of the inbox (a crash in
        between logs nothing twice: the append is idempotent by key)."""
        assert self.store is not None
        entries = await asyncio.to_thread(self.store.inbox)
        if entries:
            await self._writer().log(entries)
            await asyncio.to_thread(self.store.delivered, [e.key for e in entries])

    async def _stop_writing(self) -> None:
        memory, self.memory = self.memory, None
        if memory is not None:
            await memory.chat.close()

    def _say(self, line: str) -> None:
        logged(line)

    def _compactor(self, memory: Local) -> None:
        """The compactor asks the last route a request named (none yet: lines that need
        no model only); its adapter made ahead once the chat may ask it."""
        route = self._route
        if not route:
            return
        r = Route(**{f.name: route.get(f.name) for f in dataclasses.fields(Route)})  # type: ignore[arg-type]
        key = dataclasses.astuple(r)
        if key not in self._providers:
            self._providers[key] = OnFirstRequest(r, redact=self.redact)
        if memory.chat.may_ask():
            # its SDK imported now, in a thread, while the runs work: not by the first line
            # that needs a model, which a turn may be waiting for; an owner of short chats
            # loads none
            self._providers[key].make()
        if self._asks != key:
            memory.chat.ask = asker(self._providers[key], self.registry)
            memory.chat.model = r.model
            self._asks = key

    # ------------------------------------------------------------ requests

    async def answer(
        self,
        kind: RequestKind,
        req: JsonMapping,
        progress: ShowLine,
        stop: asyncio.Event,
        waiting: Waiting | None = None,
    ) -> JsonObject:
        """The reply to one request of the chat's kinds; a store that cannot be read or
        written raises, with its cause. A settle wait's lines go to `progress`, its
        progress lines with their fields to `waiting` when given."""
        if req.get("budget"):
            self.budget = int(req["budget"])
        if req.get("compactor"):
            self._route = req["compactor"]
        store = self._start()
        if self.writes:
            memory = self._writer()
            memory.chat.rebudget(self.budget)
        elif kind in (RequestKind.ZOOM, RequestKind.DATE, RequestKind.MEMORY):
            memory = Local(Chat(store, budget=self.budget))  # read from the store: writes nothing
        match kind:
            case RequestKind.VIEW:
                pinned = int(req.get("pinned") or 0)  # the bytes the turn puts beside the view
                if self.writes:
                    got = await memory.settled(int(req["settleMs"]), progress, stop, waiting, pinned)
                else:
                    got = await self._read_view(int(req["settleMs"]), progress, stop, waiting, pinned)
                return {
                    "text": got.text,
                    "settled": got.settled,
                    "pending": got.pending,
                    "waited": got.waited,
                }
            case RequestKind.LOG | RequestKind.IMPORT:
                entries = [Entry.of(e) for e in req.get("entries") or []]
                if not self.writes:
                    await asyncio.to_thread(store.send, entries)
                    return {"logged": len(entries), "new": 0, "handed": True}
                before = await memory.total()
                logged = await memory.log(entries)
                self._compactor(memory)  # these messages may be the ones that make it ask
                return {"logged": logged, "new": await memory.total() - before}
            case RequestKind.ZOOM:
                return {"text": await memory.zoom(int(req["message"]), int(req["n"]))}
            case RequestKind.DATE:
                return {"date": await memory.date(int(req["message"]))}
            case RequestKind.MEMORY:
                return {"unbuilt": await memory.unbuilt(), "total": await memory.total()}
            case _:
                raise ValueError(f"{kind.value} is no request of the chat")

    async def _read_view(
        self,
        settle_ms: int,
        progress: ShowLine,
        stop: asyncio.Event,
        waiting: Waiting | None = None,
        pinned: int = 0,
    ) -> Settled:
        """The view of an owner that does not write: read from the store every drain poll (`timing`)
        until the inbox holds nothing more and the view's lines are built, or at the
        settle deadline, or at `stop`; then as it is, fitted with the `pinned` bytes beside it."""
        store = self._start()
        clock = waits.LoopClock()
        began = clock.now()
        deadline = began + settle_ms / 1000
        while True:
            chat = Chat(store, budget=self.budget)
            handed: Sequence[Entry] = await asyncio.to_thread(store.inbox)
            unbuilt = chat.unbuilt()
            if (not handed and not unbuilt) or clock.now() >= deadline or stop.is_set():
                break
            seconds = deadline - clock.now()
            line = (
                f"memory: {counted(len(handed), 'message')} to be logged by the chat's writer, "
                f"{counted(unbuilt, 'line')} pending, "
                f"{seconds:.0f} s to the deadline"
            )
            if waiting is not None:
                waiting(line, unbuilt + len(handed), seconds)
            else:
                progress(line)
            await waits.race(stop.wait(), min(deadline, clock.now() + timing().drain_poll), None, clock)
        pending = unbuilt + len(handed)
        if pending:
            progress(settle_ended(stop.is_set(), unbuilt))
        chat.pin(pinned)
        return Settled(chat.render(), pending == 0, unbuilt, clock.now() - began)

    # ------------------------------------------------------------ the rest

    def status(self) -> JsonObject | None:
        """The chat as the owner holds it, for `eukhe status` (None: not opened yet)."""
        if self.store is None:
            return None
        writes = self.writes
        chat = self.memory.chat if self.memory is not None else None
        try:
            if chat is None:
                chat = Chat(self.store, budget=self.budget)
            st = chat.status()
        except Exception as e:  # the store cannot say: the status says why
            return {"writer": writes, "error": f"{type(e).__name__}: {e}"}
        return {
            "writer": writes,
            "messages": st.messages,
            "built": st.built,
            "pending": st.pending,
            "unbuilt": chat.unbuilt(),
            "jobs": st.jobs,
            "model": chat.model or (self._route or {}).get("model") or "",
        }

    async def close(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(BaseException):
                await self._watch
            self._watch = None
        await self._stop_writing()
        if self.election is not None:
            self.election.close()
            self.election = None
        if self.store is not None:
            self.store.close()
            self.store = None
        for provider in self._providers.values():
            close = getattr(provider, "close", None)
            if close is not None:
                with contextlib.suppress(Exception):  # connections that cannot close: gone with the owner
                    await close()
        self._providers.clear()
