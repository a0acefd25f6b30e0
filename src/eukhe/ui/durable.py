"""The interactive session's durable half: the store, the runtime and the runs.
`Session` loads this module in its boot thread, the one import of the agent made
inside a function: DBOS and SQLAlchemy take a second on a slow machine, and the
prompt comes first. Everything the session and its commands ask of the store goes
through `SessionRuntime`."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

from dbos import DBOS

from eukhe.ai.request import Message
from eukhe.client.client import ask_once
from eukhe.client.protocol import RequestKind
from eukhe.json_types import JsonObject
from eukhe.memory.chat import Chat
from eukhe.memory.tables import ChatStore
from eukhe.rules.child import Fate
from eukhe.run import driver
from eukhe.run import rewind as lineage
from eukhe.run.context import ProcessContext, Show
from eukhe.run.permit import Asker
from eukhe.run.spec import RunSpec
from eukhe.runtime import Runtime, open_runtime
from eukhe.settings import memory_settings
from eukhe.store import sessions
from eukhe.store.durable import Store
from eukhe.store.lineage import LineageError, Lineages, forked_from, shown_runs
from eukhe.store.reports import FOLLOWUP, STEER


class SessionRuntime:
    """One session's runtime (its store and its `ProcessContext`), and the reads and runs a
    session makes through it."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    @classmethod
    def open(cls, home: Path, settings: JsonObject, show: Show, asker: Asker) -> SessionRuntime:
        return cls(open_runtime(home, settings, show, asker=asker))

    @property
    def store(self) -> Store:
        return self.runtime.store

    @property
    def process(self) -> ProcessContext:
        return self.runtime.process

    async def taken_up(self, home: Path) -> list[str]:
        """The runs a dead process left go to the owner, which finishes them: what it said."""
        got = await ask_once(home, RequestKind.RECOVER, spawn=True, runs=await driver.cut_off())
        return [str(line) for line in got.get("said") or []]

    async def runs(self, session: str) -> list[Any]:
        """A session's runs (DBOS workflow statuses), in order."""
        return await sessions.runs(session, DBOS)

    @staticmethod
    def in_flight(runs: list[Any]) -> list[str]:
        return [w.workflow_id for w in runs if w.status not in sessions.ENDED]

    async def _shown(self, session: str) -> tuple[list[Any], list[str]]:
        """The runs the session's transcript shows (a fork's parent's first), and its rewinds' lines."""
        url = self.process.chat_url
        if url is None:
            return await sessions.runs(session, DBOS), []
        lines = await asyncio.to_thread(Lineages, url)  # the store's reads off the loop
        try:
            got, notes = await shown_runs(
                session, lambda s: sessions.runs(s, DBOS), lambda s: asyncio.to_thread(lines.of, s)
            )
        finally:
            lines.close()
        return [x.run for x in got], notes

    def last_spec(self, session: str) -> RunSpec | None:
        """The spec the session's last run started with (its model, base URL and API; a fork
        with no run of its own: its parent's), or None: no run, or none whose spec this eukhe reads."""
        for given in sessions.inputs(asyncio.run(self._shown(session))[0]):
            with contextlib.suppress(KeyError, TypeError, ValueError):
                return RunSpec.of(given)
        return None

    def latest_in(self, cwd: Path) -> str | None:
        """This folder's latest session (`eukhe -c`), or None."""
        return asyncio.run(sessions.latest_in(str(cwd), DBOS))

    async def rows(self) -> list[sessions.Row]:
        return await sessions.rows(DBOS)

    async def transcript(self, session: str) -> list[str]:
        """A session's runs as lines: each run's head, the user's words, the calls made,
        the replies (a failed one marked)."""
        runs, notes = await self._shown(session)
        out = [f"── {note}" for note in notes]
        for w in runs:
            out.append(f"── run {w.workflow_id} ({sessions.outcome_of(w)})")
            messages: list[Message] = await sessions.shown(w, DBOS)
            for m in messages:
                if m.role == "user":
                    out.append(f"› {m.content}")
                elif m.role == "assistant" and m.calls:
                    out.append("→ calls: " + ", ".join(c.name for c in m.calls))
                elif m.role == "assistant":
                    out.append(("(failed) " if m.is_error else "") + m.content)
        return out

    async def fork(self, session: str, at: int | None) -> tuple[str, int]:
        """A new session from this one's runs 1..`at` (its last): its id and that run."""
        runs = await sessions.runs(session, DBOS)
        upto = forked_from(session, at, runs)
        if upto == 0:
            raise LineageError(f"session {session} has no run yet: there is nothing to fork")
        return await asyncio.to_thread(lineage.fork, self._url(), session, upto), upto

    async def numbered(self, session: str) -> list[tuple[int, bool, str]]:
        """The session's own runs: each one's number, whether it is in flight, and its prompt."""
        return [
            (int(w.workflow_id.rpartition("/")[2]), w.status in sessions.IN_FLIGHT, sessions.prompt_of(w))
            for w in await sessions.runs(session, DBOS)
        ]

    async def rewind_conversation(self, home: Path, session: str, first: int, last: int) -> str:
        return await lineage.rewind_conversation(self._url(), home, session, first, last)

    def _url(self) -> str:
        url = self.process.chat_url
        if url is None:
            raise LineageError("this session has no store")
        return url

    async def start(self, spec: RunSpec, session: str) -> str:
        return await driver.start(spec, session)

    async def result(self, run: str) -> JsonObject:
        return await driver.result(run)

    async def live_children(self, session: str) -> list[str]:
        return await driver.live_children(session)

    async def subagents(self) -> list[JsonObject]:
        return await sessions.subagents(DBOS)

    def queue(self, session: str, text: str, after: bool) -> str:
        """A message typed while a run works, queued in the store: a steer, or, `after`,
        a follow-up. Its id."""
        return str(self.process.reports().say(session, FOLLOWUP if after else STEER, text))

    def queued(self, session: str) -> int:
        return int(self.process.reports().queued(session))

    def withdraw(self, message: str) -> bool:
        """Whether the queued message went back (no run took it yet)."""
        return bool(self.process.reports().withdraw(message) is Fate.WITHDRAWN)

    def close_parent(self, session: str) -> None:
        self.process.reports().close_parent(session)

    def chat(self, settings: JsonObject) -> tuple[ChatStore, Chat]:
        """The chat as the store has it now, to read (the owner writes it); close the
        store after."""
        store = ChatStore(self.store.url)
        return store, Chat(store, budget=memory_settings(settings).view_bytes)

    def close(self) -> None:
        self.runtime.close()
