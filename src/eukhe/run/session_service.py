"""The home's sessions as both faces read and change them (`Sessions`): the runs a
transcript shows (a fork's parent's first, a rewind's ended runs left out), the
transcript itself, forks, numbered runs, rewinds, and the chat to read. The command line
reads through a DBOS client (no run is started, recovered or picked up), the interactive
agent through the DBOS it launched: the same reads, written once."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeAlias

from dbos import DBOS, WorkflowStatus

from eukhe.ai.request import Message
from eukhe.json_types import JsonObject
from eukhe.memory.chat import Chat
from eukhe.memory.tables import ChatStore
from eukhe.rules import pinned, todo
from eukhe.rules.pinned import Pins
from eukhe.run import rewind as lineage
from eukhe.run import tasks
from eukhe.run.spec import RunSpec
from eukhe.store import session_runs
from eukhe.store.lineage import Lineage, LineageError, Lineages, forked_from, shown_runs
from eukhe.store.session_runs import Workflows

__all__ = ["Sessions", "ShownRun", "Transcript"]


@dataclass
class ShownRun:
    """A run of a transcript: its id, how it ended, and its messages (failed ones too)."""

    run: str
    outcome: str
    messages: list[Message]


@dataclass
class Transcript:
    """What a session shows: its runs, and a line for each of its rewinds."""

    runs: list[ShownRun] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """As lines: each rewind, then each run's head, the user's words, the calls made and
        the replies (a failed one marked)."""
        out = [f"── {note}" for note in self.notes]
        for r in self.runs:
            out.append(f"── run {r.run} ({r.outcome})")
            for m in r.messages:
                if m.role == "user":
                    out.append(f"› {m.content}")
                elif m.role == "assistant" and m.calls:
                    out.append("→ calls: " + ", ".join(c.name for c in m.calls))
                elif m.role == "assistant":
                    out.append(("(failed) " if m.is_error else "") + m.content)
        return out


RunStatus: TypeAlias = WorkflowStatus
"""A run as the store records it (its id, status, input and output): what `runs` gives."""


class Sessions:
    """The session service over the store at `url`: `db` reads the runs (DBOS, in a process
    that launched it; else a `DBOSClient`, which `close` leaves to its opener)."""

    def __init__(self, url: str, home: Path, db: Workflows) -> None:
        self.url, self.home, self.db = url, home, db

    @classmethod
    def launched(cls, url: str, home: Path) -> Sessions:
        """The service in a process that launched DBOS on the store at `url` (a face's runtime)."""
        return cls(url, home, DBOS)

    async def rows(self) -> list[session_runs.Row]:
        """Every session: id, started, runs, last prompt, outcome."""
        return await session_runs.rows(self.db)

    async def subagents(self) -> list[JsonObject]:
        """The subagents whose task has not ended."""
        return await session_runs.subagents(self.db)

    async def runs(self, session: str) -> list[WorkflowStatus]:
        """A session's own runs (DBOS workflow statuses), in order."""
        return await session_runs.runs(session, self.db)

    @staticmethod
    def in_flight(runs: list[WorkflowStatus]) -> list[str]:
        """The ids of those of `runs` that have not ended."""
        return [w.workflow_id for w in runs if w.status not in session_runs.ENDED]

    async def latest_in(self, cwd: Path) -> str | None:
        """This folder's latest session (`eukhe -c`), or None."""
        return await session_runs.latest_in(str(cwd), self.db)

    async def numbered(self, session: str) -> list[tuple[int, bool, str]]:
        """The session's own runs: each one's number, whether it is in flight, and its prompt."""
        return [
            (
                int(str(w.workflow_id).rpartition("/")[2]),
                w.status in session_runs.IN_FLIGHT,
                session_runs.prompt_of(w),
            )
            for w in await self.runs(session)
        ]

    async def shown(self, session: str) -> tuple[list[WorkflowStatus], list[str]]:
        """The runs the session's transcript shows (a fork's parent's first), and its rewinds' lines."""
        lines = await asyncio.to_thread(Lineages, self.url)  # the store's reads off the loop

        async def rows(s: str) -> Lineage:
            return await asyncio.to_thread(lines.of, s)

        try:
            got, notes = await shown_runs(session, self.runs, rows)
        finally:
            lines.close()
        return [x.run for x in got], notes

    async def transcript(self, session: str) -> Transcript:
        """The session's transcript: its shown runs with their messages, and its rewinds."""
        runs, notes = await self.shown(session)
        shown = [
            ShownRun(w.workflow_id, session_runs.outcome_of(w), await session_runs.shown(w, self.db))
            for w in runs
        ]
        return Transcript(shown, notes)

    async def last_input(self, session: str) -> JsonObject | None:
        """The input the session's last shown run started with (`eukhe run --session`: its
        model, base URL and API), or None."""
        return session_runs.last_input((await self.shown(session))[0])

    async def pins(self, session: str) -> Pins:
        """The session's task list and the person's last request as its last shown run left
        them (a fork's: its parent's up to its point; a rewind's ended runs left out): the
        list that run started with and its `todo` calls (`run.tasks`), the request its spec
        held. A session with no run holds neither."""
        runs, _ = await self.shown(session)
        if not runs:
            return Pins()
        w = runs[-1]
        given = session_runs.last_input([w]) or {}
        prompt = given.get("prompt")
        request = pinned.asked(str(given.get("request") or ""), None if prompt is None else str(prompt))
        made = tasks.writes(await session_runs.transcript(w.workflow_id, self.db))
        return Pins(todo.current(todo.of_json(given.get("tasks")), made), request)

    async def last_spec(self, session: str) -> RunSpec | None:
        """The spec the session's last run started with (its model, base URL and API; a fork
        with no run of its own: its parent's), or None: no run, or none whose spec this eukhe reads."""
        for given in session_runs.inputs((await self.shown(session))[0]):
            with contextlib.suppress(KeyError, TypeError, ValueError):
                return RunSpec.of(given)
        return None

    async def fork(self, session: str, at: int | None) -> tuple[str, int]:
        """A new session whose transcript begins with `session`'s runs 1..`at` (its last when
        None): its id and the run it starts after. No run, or no run `at`: `LineageError`."""
        upto = forked_from(session, at, await self.runs(session))
        if upto == 0:
            raise LineageError(f"session {session} has no run yet: there is nothing to fork")
        return await asyncio.to_thread(lineage.fork, self.url, session, upto), upto

    async def rewind_conversation(self, session: str, first: int, last: int) -> str:
        """End the session's runs first..last in its transcript (`run.rewind`): what was done."""
        return await lineage.rewind_conversation(self.url, self.home, session, first, last)

    def chat(self, budget: int) -> tuple[ChatStore, Chat]:
        """The chat as the store has it now, to read (the owner writes it; no compactor);
        close the store after."""
        store = ChatStore(self.url)
        return store, Chat(store, budget=budget)
