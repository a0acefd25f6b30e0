"""The interactive session's runtime half: the store, the runtime and the runs.
`AgentSession` loads this module in its boot thread, the one import of the agent made
inside a function: DBOS and SQLAlchemy take a second on a slow machine, and the
prompt comes first. Everything the session and its commands ask of the store goes
through `SessionRuntime`: its runs through the runtime (`run.runtime.Runtime`), its
reads through the session service (`run.session_service.Sessions`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from eukhe.json_types import JsonObject
from eukhe.rules import drive
from eukhe.run.context import ProcessContext
from eukhe.run.drive import Request, Runs, SessionDriver
from eukhe.run.home_store import FOLLOWUP, STEER, Chat, ChatStore
from eukhe.run.permit import Asker
from eukhe.run.session_service import RunStatus, Sessions
from eukhe.run.sink import RunSink
from eukhe.run.spec import RunSpec
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

    @staticmethod
    def driver(runs: Runs, session: str, cwd: Path, spec: RunSpec, poll: float) -> SessionDriver:
        """The session's loop (`run.drive`) with the agent's face: its subagents looked at
        every `poll` s while the prompt is idle; SessionEnd's reason, the person's exit."""
        work = drive.idle(drive.AGENT, int(poll * 1000))
        return SessionDriver(runs, session, cwd, work, spec, reason="prompt_input_exit")

    @staticmethod
    def request(spec: RunSpec | None = None, after: bool = False, started: str | None = None) -> Request:
        """A person's request (`spec`'s prompt what they typed; `started`: a run in flight
        already, followed): while a run works, a steer, or, `after`, a follow-up."""
        text = (spec.prompt or "") if spec is not None else ""
        return Request(spec, started, text, FOLLOWUP if after else STEER)

    def chat(self, settings: JsonObject) -> tuple[ChatStore, Chat]:
        """The chat as the store has it now, to read (the owner writes it); close the
        store after."""
        return self.sessions.chat(memory_settings(settings).view_bytes)

    def latest_in(self, cwd: Path) -> str | None:
        """This folder's latest session (`eukhe -c`), or None (from the boot thread)."""
        return asyncio.run(self.sessions.latest_in(cwd))

    def close(self) -> None:
        self.runtime.close()
