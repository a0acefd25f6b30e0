"""The interactive session's runtime half: the store, the runtime and the runs.
`Session` loads this module in its boot thread, the one import of the agent made
inside a function: DBOS and SQLAlchemy take a second on a slow machine, and the
prompt comes first. Everything the session and its commands ask of the store goes
through `SessionRuntime`: its runs through the runtime (`run.runtime.Runtime`), its
reads through the session service (`run.session_service.Sessions`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from eukhe.json_types import JsonObject
from eukhe.rules.child import Fate
from eukhe.run.context import ProcessContext
from eukhe.run.home_store import FOLLOWUP, STEER, Chat, ChatStore
from eukhe.run.permit import Asker
from eukhe.run.session_service import RunStatus, Sessions
from eukhe.run.sink import RunSink
from eukhe.runtime import Runtime, open_runtime
from eukhe.settings import memory_settings


class SessionRuntime:
    """One session's runtime (its store and its `ProcessContext`) and the session service
    over the DBOS it launched."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.sessions = Sessions.launched(runtime.store.url, runtime.home)

    @classmethod
    def open(cls, home: Path, settings: JsonObject, sink: RunSink, asker: Asker) -> SessionRuntime:
        return cls(open_runtime(home, settings, sink, asker=asker))

    @property
    def process(self) -> ProcessContext:
        return self.runtime.process

    async def taken_up(self) -> list[str]:
        """The runs a dead process left go to the owner, which finishes them: what it said."""
        return (await self.runtime.owner_takes_up())[1]

    @staticmethod
    def in_flight(runs: list[RunStatus]) -> list[str]:
        return Sessions.in_flight(runs)

    async def live_children(self, session: str) -> list[str]:
        return await self.runtime.live_children(session)

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
        return self.sessions.chat(memory_settings(settings).view_bytes)

    def latest_in(self, cwd: Path) -> str | None:
        """This folder's latest session (`eukhe -c`), or None (from the boot thread)."""
        return asyncio.run(self.sessions.latest_in(cwd))

    def close(self) -> None:
        self.runtime.close()
