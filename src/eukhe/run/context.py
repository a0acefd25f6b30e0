"""What a process gives the durable runs it executes (`ProcessContext`), made once at its start.

A DBOS workflow is a module-level function that gets only its spec, so it finds its
process's `ProcessContext` with `process()`."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from eukhe.admission import Registry, Slots
from eukhe.ai.models import OnFirstRequest, Route
from eukhe.children.ledger import Ledger
from eukhe.client.client import Client, OwnerError
from eukhe.client.lease import RootTurnLease
from eukhe.client.protocol import RequestKind
from eukhe.client.remote_chat import Remote
from eukhe.events import event
from eukhe.jobs.holder import Jobs
from eukhe.json_types import JsonMapping
from eukhe.memory.access import Local, Memory
from eukhe.memory.chat import Chat
from eukhe.memory.compactor import asker
from eukhe.memory.tables import ChatStore
from eukhe.run.auxiliary import AuxiliaryRoute
from eukhe.run.handles import RunTable, call_soon
from eukhe.run.permit import Asker
from eukhe.run.sink import RunSink, Silent
from eukhe.settings.load import Taken
from eukhe.settings.secrets import NO_SECRETS, Redaction
from eukhe.store.executor_lease import ExecutorLease
from eukhe.store.hook_answers import HookAnswers
from eukhe.store.images import Images
from eukhe.store.reports import Reports


def _registry() -> Registry:
    return Registry()


@dataclass
class ProcessContext:
    """What this process gives the runs it executes, made once at its start
    (`begin`): where their lines go, the handle of each run (`runs`: its cancel, set from
    any thread, and whether it is its user's own, aborted by Ctrl-C and holding the
    root-turn lease), the chat, and where model requests take their slots. The runs
    it recovered from dead processes are left in flight by Ctrl-C.

    A DBOS workflow is a module-level function that gets only its spec, so it finds
    its process's `ProcessContext` with `process()`: the one object of the process, never
    assigned to piecemeal."""

    sink: RunSink = field(default_factory=Silent)  # where its runs show themselves: its face's
    chat_url: str | None = None  # the store the chat lives in (None: the runs have no chat)
    # where model requests take their slots: the owner's (RemoteRegistry), else this process's own
    admission: Slots = field(default_factory=_registry)
    # the home's owner's connection, when the process has an owner: the chat goes through it
    # (its one writer), and it is told where each run starts and ends
    owner: Callable[[], Awaitable[Client]] | None = None
    # the root-turn lease through the owner, held by the user's own runs (None: a process whose
    # runs hold none: the owner's recovered runs, or a process with no owner)
    lease: RootTurnLease | None = None
    # run -> its handle (`run.handles`): its loop, cancel, gate and servers, whether it is the
    # user's own, its end; every thread reaches a run through it
    runs: RunTable = field(default_factory=RunTable)
    chat: Local | None = None  # this process's own chat, when it has no owner
    routes: dict[str, AuxiliaryRoute] = field(default_factory=dict)  # session -> its route (its notices)
    stop: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None  # set: stop waiting on runs
    children: dict[str, Ledger] = field(default_factory=dict)  # child run -> its ledger, while it runs here
    inbox: Reports | None = None  # the parents' inbox of child reports, made on first use
    pictures: Images | None = None  # the attached images' table, made on first use
    answered: HookAnswers | None = None  # the hooks' answers table, made on first use
    # session -> the MCP servers its editor gave it (`eukhe acp`, `mcpServers`' shape): kept in this
    # process only, never in a run's spec, since their env and headers may hold secrets
    editors: dict[str, JsonMapping] = field(default_factory=dict)
    # session -> the configuration its latest run here took (`settings.load.Taken`): what its
    # subagents and its SessionEnd hooks read, never the disk again in the middle of its work
    configs: dict[str, Taken] = field(default_factory=dict)
    # (Asked) -> Awaitable[(Answer, reason)]: who answers the asks of this process's runs (the
    # interactive agent's person); None: nobody (headless: `eukhe run`, the owner's recovered runs)
    asker: Asker | None = None
    # the secret values this process knows (`run.secrets.redaction`), out of every row its inbox
    # and its own chat write and every request its chat's compactor sends
    redact: Redaction = NO_SECRETS
    # this process's lease on a shared store (None: SQLite, one machine): no step is recorded
    # once it allows none (`run.fence`)
    executor: ExecutorLease | None = None
    # the background jobs its runs started (`jobs.holder`): a session's, across its runs here; a
    # subagent's, until it reports. Each job's keeper ends it when this process dies
    jobs: Jobs = field(default_factory=Jobs)

    def show(self, run: str, kind: str, text: str, data: JsonMapping | None = None) -> None:
        """A line of `run` (`eukhe.events` has the kinds), with the fields of its event when it
        has some (a wait's deadline, a tool result's size), to the sink: its text and fields
        through the process's secrets, whatever part of a run shows it (a notice, a steer, a
        subagent's report, a wait)."""
        self.sink.event(event(kind, self.redact(text), run, self.redact.deep(data)))

    def reports(self) -> Reports:
        """The parents' inbox of child reports, in the runs' store."""
        if self.inbox is None:
            if self.chat_url is None:
                raise RuntimeError("this process has no store for the reports of subagents")
            self.inbox = Reports(self.chat_url, self.redact)
        return self.inbox

    def images(self) -> Images:
        """The table of the images prompts attach, in the runs' store."""
        if self.pictures is None:
            if self.chat_url is None:
                raise RuntimeError("this process has no store for attached images")
            self.pictures = Images(self.chat_url)
        return self.pictures

    def hook_answers(self) -> HookAnswers | None:
        """The table of what the runs' hooks answered, in the runs' store (None: no store)."""
        if self.answered is None and self.chat_url is not None:
            self.answered = HookAnswers(self.chat_url)
        return self.answered

    def memory(self, compactor: Callable[[], Route], budget: int) -> Memory | None:
        """The runs' chat memory (`eukhe.memory.access.Memory`), None when this process
        gives them none: through the owner when the process has one (the chat's only
        writer), else this process's own chat, made on first use on the runs' loop.
        Its compactor asks the route (`eukhe.ai.models.Route`) `compactor()` gives."""
        if self.chat_url is None:
            return None
        if self.owner is not None:
            return Remote(self.owner, compactor(), budget)
        if self.chat is None:
            route = compactor()
            ask = asker(OnFirstRequest(route, redact=self.redact), self.admission)
            self.chat = Local(Chat(ChatStore(self.chat_url, self.redact), ask, route.model, budget=budget))
        return self.chat

    def route(self, session: str, model: str, settings: JsonMapping) -> AuxiliaryRoute:
        """The session's auxiliary route: it keeps the rows the session has shown."""
        if session not in self.routes:
            self.routes[session] = AuxiliaryRoute(model, settings)
        return self.routes[session]

    def abort(self, run: str) -> None:
        """`eukhe abort RUN`, or an editor's cancel: the run's cancel, when it runs here."""
        self.runs.abort(run)

    async def running(self, run: str, session: str, state: str) -> None:
        """Tell the owner a run starts or ends here (its status, and where an abort goes);
        an owner that cannot be reached is no reason to stop a run."""
        if self.owner is not None:
            with contextlib.suppress(OwnerError, OSError):
                (await self.owner()).tell(RequestKind.RUN, run=run, session=session, state=state)

    def plan_mode(self, session: str, on: bool) -> None:
        """A person turns plan mode on or off (the agent's Shift+Tab), from any thread: for each
        run of `session` at work here (its subagents too), from its next call (`Gate.plan`)."""
        for handle in self.runs.handles():
            if handle.run.startswith(f"{session}/"):
                handle.plan(on)

    def interrupt(self) -> None:
        """Ctrl-C: abort the user's own runs, and stop waiting for the rest (left in flight)."""
        for handle in self.runs.handles():
            if handle.own:
                handle.abort()
        if self.stop is not None:
            loop, stop = self.stop
            call_soon(loop, stop.set)


_PROCESS: list[ProcessContext] = []  # the process's one ProcessContext, once `begin` made it


def begin(process: ProcessContext) -> ProcessContext:
    """This process's `ProcessContext`, made at its start; a new one replaces the old (a test
    that opens the store again)."""
    _PROCESS[:] = [process]
    return process


def process() -> ProcessContext:
    """This process's `ProcessContext` (one that shows nothing and has no chat, when the process
    never began one)."""
    if not _PROCESS:
        _PROCESS.append(ProcessContext())
    return _PROCESS[0]
