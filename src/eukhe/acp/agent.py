"""`eukhe acp`: eukhe as an Agent Client Protocol agent, for an editor (Zed, JetBrains' IDEs,
Neovim). Each editor session is one of eukhe's durable sessions, and each `session/prompt`
one run through the same runtime as the other faces (`run.runtime.Runtime`).

What it may do is the session loop's rule (`rules.drive`, its face `drive.EDITOR`) and the
setup's bound (`rules.acp`): a prompt is answered exactly once (when its run
ends; while the session's subagents work, once they are done, after the session's next runs
their reports start; after `session/cancel`, `cancelled`, by the run's abort grace at the
latest), every permission request ends once (the editor's choice, its deadline, the cancel,
the turn's answer), and `session/new` and `session/load` answer within `SETUP_MS` or fail
with their cause.

Runs execute on DBOS's loop, in another thread: what they show (`RunSink`) and what they ask
(`Asker`) come here through `loop.call_soon_threadsafe` and `run_coroutine_threadsafe`,
and every session update is sent from this loop, in order."""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import dataclasses
import sys
from collections.abc import Awaitable, Callable, Collection, Sequence
from pathlib import Path
from typing import TypeVar

from acp.helpers import ContentBlock, update_available_commands
from acp.schema import (
    AcpMcpServer,
    AgentCapabilities,
    AllowedOutcome,
    AuthenticateResponse,
    AuthMethodAgent,
    ClientCapabilities,
    HttpMcpServer,
    ImageContentBlock,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    McpServerStdio,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
    SseMcpServer,
    ToolCallUpdate,
)
from dbos import DBOS

from acp import PROTOCOL_VERSION, Client, RequestError
from eukhe import __version__, waits
from eukhe.acp.editor_session import EditorSession
from eukhe.acp.updates import Update, call_id, commands, line, of_event, plan, replayed
from eukhe.ai.image import ImageError
from eukhe.ai.models import ModelError
from eukhe.events import Event, event, seen_by
from eukhe.ids import is_root, new_session, valid_session
from eukhe.json_types import JsonObject
from eukhe.rules import acp as setup_rule
from eukhe.rules import drive as rule
from eukhe.rules import todo
from eukhe.rules.permission import Answer
from eukhe.rules.wait import End
from eukhe.run import instructed
from eukhe.run.drive import Answer as Answered
from eukhe.run.drive import Request, SessionDriver
from eukhe.run.home_store import STEER
from eukhe.run.outcome import RunOutcome
from eukhe.run.permit import Asked
from eukhe.run.session_service import Sessions
from eukhe.run.spec import NoModel, setup
from eukhe.run.store_access import StoreError
from eukhe.runtime import Runtime, open_runtime
from eukhe.settings import SettingsError, home, loaded
from eukhe.settings.permissions import in_force
from eukhe.skills import SkillError
from eukhe.timing import timing

T = TypeVar("T")

McpServer = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio
"""An editor's MCP server, as `session/new` names it."""

CHOICES = (
    PermissionOption(option_id="once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="session", name="Always, this session", kind="allow_always"),
    PermissionOption(option_id="project", name="Always, in this project", kind="allow_always"),
    PermissionOption(option_id="no", name="Deny", kind="reject_once"),
)
"""eukhe's answers to an ask (`rules.permission.Answer`), as the editor offers them."""

MODES = {
    "read-only": "Read only: no tool writes, and bash runs in a read-only sandbox",
    "workspace-write": "Workspace: tools write in the project, bash in a sandbox that writes only there",
    "plan": "Plan: nothing writes or runs; the model's plan is asked of you, and your yes leaves plan mode",
}
"""The modes an editor may pick (`session/set_mode`): a sandbox mode, or plan mode over the
sandbox's; `danger-full-access` is the settings' or the command line's alone."""

ANSWERS = {"once": Answer.ONCE, "session": Answer.SESSION, "project": Answer.PROJECT, "no": Answer.NO}

INVALID_REQUEST, INVALID_PARAMS, FAILED = -32600, -32602, -32603

AUTH_METHOD = AuthMethodAgent(
    id="eukhe-settings",
    name="Model provider key in eukhe's settings",
    description=(
        "eukhe signs in to nothing: it sends your model provider's API key, read from the environment "
        "variable its settings name (providers.<name>.apiKeyEnv in $EUKHE_HOME/settings.json, "
        "~/.eukhe/settings.json by default; OPENAI_API_KEY, ANTHROPIC_API_KEY, ... unless set). Set the "
        "key there or in the editor's environment for eukhe; this method asks for nothing more."
    ),
)
"""The one way eukhe is authenticated, as `initialize` offers it (the ACP registry's check wants at
least one method of type `agent`, which a method with no `type` is): the provider key its settings
name. `authenticate` with it answers at once; a run without the key fails naming the variable."""
"""JSON-RPC's error codes; the message of each error eukhe answers is its cause, in words."""

RESPONSES = {
    rule.Reason.END_TURN: "end_turn",
    rule.Reason.MAX_TOKENS: "max_tokens",
    rule.Reason.MAX_TURN_REQUESTS: "max_turn_requests",
    rule.Reason.CANCELLED: "cancelled",
}


def _servers_of(given: Sequence[McpServer] | None) -> JsonObject:
    """An editor's MCP servers in `mcpServers`' shape (`mcp.config`): stdio and HTTP ones;
    another kind is kept by name, for the run to say it is not started."""
    out: JsonObject = {}
    for m in given or ():
        if isinstance(m, McpServerStdio):
            out[m.name] = {
                "command": m.command,
                "args": list(m.args),
                "env": {e.name: e.value for e in m.env},
            }
        elif isinstance(m, HttpMcpServer):
            out[m.name] = {"type": "http", "url": m.url, "headers": {h.name: h.value for h in m.headers}}
        else:
            out[m.name] = {"type": m.type}
    return out


def _pictures_of(blocks: Sequence[ContentBlock]) -> list[tuple[str, bytes]]:
    """A prompt's images, each named and decoded; one that is no base64 is an ImageError."""
    out: list[tuple[str, bytes]] = []
    for i, b in enumerate(blocks):
        if isinstance(b, ImageContentBlock):
            name = b.uri or f"image {i + 1} of the prompt"
            try:
                out.append((name, base64.b64decode(b.data, validate=True)))
            except (binascii.Error, ValueError) as e:
                raise ImageError(f"{name}: its data is no base64 ({e})") from e
    return out


def _text_of(
    blocks: Sequence[ContentBlock], kinds: Collection[str] = ("text", "resource_link", "resource")
) -> str:
    """A prompt's content as eukhe's prompt: its text, and each resource's text after it,
    named by its URI; of the blocks of `kinds` only (the person typed the `text` ones, the
    editor added the others: their mentions attach only inside the project)."""
    parts: list[str] = []
    for b in blocks:
        kind = getattr(b, "type", "")
        if kind not in kinds:
            continue
        if kind == "text":
            parts.append(str(b.text))
        elif kind == "resource_link":
            parts.append(f"[{b.name}]({b.uri})")
        elif kind == "resource":
            r = b.resource
            text = getattr(r, "text", None)
            parts.append(
                f"<resource uri={r.uri!r}>\n{text}\n</resource>" if text is not None else f"({r.uri})"
            )
    return "\n\n".join(p for p in parts if p)


class Editor:
    """The agent an editor talks to: its sessions, the runtime (opened with the first
    session), and the connection (`on_connect`)."""

    def __init__(self, clock: waits.Clock | None = None) -> None:
        self.clock = clock or waits.LoopClock()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.conn: Client | None = None  # the SDK's connection to the editor
        self.sessions: dict[str, EditorSession] = {}
        self.runtime: Runtime | None = None
        self.said: asyncio.Queue[tuple[str, Update]] = asyncio.Queue()  # updates, sent in order
        self.sender: asyncio.Task[None] | None = None

    def ms(self) -> int:
        return int(self.clock.now() * 1000)

    @property
    def client(self) -> Client:
        if self.conn is None:
            raise ConnectionError("no editor is connected")
        return self.conn

    # ---------------------------------------------------------------- the protocol's requests

    def on_connect(self, conn: Client) -> None:
        self.conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: object,
    ) -> InitializeResponse:
        self.loop = asyncio.get_running_loop()
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
            ),
            agent_info=Implementation(name="eukhe", title="eukhe", version=__version__),
            auth_methods=[AUTH_METHOD],
        )

    async def new_session(
        self, cwd: str, mcp_servers: list[McpServer] | None = None, **kwargs: object
    ) -> NewSessionResponse:
        s = await self._bounded("session/new", self._open(cwd, new_session(), resumed=False, mcp=mcp_servers))
        return NewSessionResponse(session_id=s.id, modes=self._modes(s))

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[McpServer] | None = None, **kwargs: object
    ) -> LoadSessionResponse:
        if not valid_session(session_id):
            raise RequestError(INVALID_PARAMS, f"session id {session_id!r} is not one of eukhe's")

        async def load() -> EditorSession:
            s = await self._open(cwd, session_id, resumed=True, mcp=mcp_servers)
            assert self.runtime is not None
            stored = Sessions(self.runtime.store.url, self.runtime.home, DBOS)
            found = await stored.transcript(session_id)
            if not found.runs:
                raise RequestError(INVALID_PARAMS, f"no eukhe session {session_id!r} has run in this home")
            for r in found.runs:
                for u in replayed(r.messages):
                    self.said.put_nowait((s.id, u))
            listed = (await stored.pins(session_id)).tasks
            if listed:  # its task list, as the plan
                self.said.put_nowait((s.id, plan(todo.json_of(listed))))
            return s

        s = await self._bounded("session/load", load())
        await self._flushed()
        return LoadSessionResponse(modes=self._modes(s))

    async def prompt(self, prompt: list[ContentBlock], session_id: str, **kwargs: object) -> PromptResponse:
        """A turn: its run, answered once; while the session's subagents work, the runs their
        reports start too, the turn answered once they are done. A prompt while a turn is at
        work (or held) is a steer: it reaches the run at its next round's end, and is answered
        with that turn; one the turn ended before taking is the session's next run, answered
        when that run ends."""
        s = self._session(session_id)
        assert self.runtime is not None
        text = _text_of(prompt)
        if not text.strip():
            raise RequestError(INVALID_PARAMS, "the prompt has no text")
        if not s.driver.work.idle():  # a steer of the work at hand, answered with the work that takes it
            return await self._answered(s, await s.driver.submit(Request(text=text, sender=STEER)))
        try:  # an editor's resources are not typed: their mentions attach inside the project only
            typed, given = _text_of(prompt, ("text",)), _text_of(prompt, ("resource_link", "resource"))
            attached = s.made.attach(s.made.expand(text), typed, pictures=_pictures_of(prompt), given=given)
        except (SkillError, ImageError) as e:
            raise RequestError(INVALID_PARAMS, str(e)) from e
        for said in attached.said:  # the person sees what was attached, and why not
            self._say(s, line("mention", said))
        spec = s.made.spec(attached.prompt, attached)
        s.driver.spec = s.made.spec(None)  # what waits for the session runs as it is set up now
        request = Request(dataclasses.replace(spec, session_start=s.start_source()))
        return await self._answered(s, await s.driver.submit(request))

    async def _answered(self, s: EditorSession, answer: asyncio.Future[Answered]) -> PromptResponse:
        """The answer of the work that took the prompt, after every update of it."""
        got = await answer
        await self._flushed()
        return _response(got.reason, got.outcome)

    async def cancel(self, session_id: str, **kwargs: object) -> None:
        s = self.sessions.get(session_id)
        if s is not None:
            s.driver.cancel()

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: object
    ) -> SetSessionModeResponse:
        """The sandbox its next runs take, or plan mode (the run at work's too, from its next
        call): one of `MODES` (full access is never a click away)."""
        s = self._session(session_id)
        if mode_id not in MODES:
            raise RequestError(INVALID_PARAMS, f"mode {mode_id!r}: eukhe's modes here are {', '.join(MODES)}")
        plan = mode_id == "plan"
        s.made = dataclasses.replace(s.made, permission_mode="plan" if plan else "default")
        if not plan:
            s.made = dataclasses.replace(s.made, sandbox=mode_id)
        if self.runtime is not None:
            self.runtime.process.plan_mode(s.id, plan)
        return SetSessionModeResponse()

    async def authenticate(self, method_id: str, **kwargs: object) -> AuthenticateResponse:
        """`AUTH_METHOD` needs nothing from the editor: the key is in the settings' environment."""
        if method_id != AUTH_METHOD.id:
            raise RequestError(INVALID_PARAMS, f"no auth method {method_id!r}; eukhe's is {AUTH_METHOD.id!r}")
        return AuthenticateResponse()

    # ---------------------------------------------------------------- asks

    async def ask(self, q: Asked) -> tuple[Answer, str]:
        """A permission request to the editor, in the session whose run asks; the gate's race
        ends it at its deadline or the run's abort (this coroutine is cancelled then)."""
        s = self.sessions.get(q.run.partition("/")[0])
        if s is None or not s.driver.work.began:
            return Answer.NO, "no editor session holds this run"
        aid, ended = s.driver.ask(q.timeout)
        if ended:
            work = s.driver.work
            if work.answered is not None and work.cancelled_at is None:  # a subagent that outlived it
                # (a run that failed or hit its cap does not wait for its subagents)
                return (
                    Answer.NO,
                    "the editor's turn has been answered: nobody is there to ask until its next prompt",
                )
            return Answer.NO, "the turn was cancelled"
        call = ToolCallUpdate(
            tool_call_id=call_id(q.run, q.call), title=f"{q.tool}: {q.text[:200]}", status="pending"
        )
        try:
            got = await self.client.request_permission(session_id=s.id, tool_call=call, options=list(CHOICES))
        except (ConnectionError, RequestError) as e:
            return Answer.NO, f"the editor did not answer the permission request: {e}"
        if not s.driver.chosen(aid):
            return Answer.NO, "the editor answered after the request had ended"
        outcome = got.outcome
        if isinstance(outcome, AllowedOutcome) and outcome.option_id in ANSWERS:
            answer = ANSWERS[outcome.option_id]
            return answer, "the editor's user said no" if answer is Answer.NO else ""
        return Answer.NO, "the editor cancelled the permission request"

    # ---------------------------------------------------------------- what runs show

    def event(self, e: Event) -> None:
        """A run's event (on this loop): its session's updates, queued in order."""
        s = self.sessions.get((e.run or "").partition("/")[0])
        if s is None:
            return
        seen = seen_by(s.id, e)
        if seen is None:
            return
        if seen.type == "mode" and is_root(e.run or ""):  # a plan approved: its next runs too
            s.made = dataclasses.replace(
                s.made, permission_mode="plan" if seen.data.get("plan") else "default"
            )
        for u in of_event(seen, str(s.cwd)):
            self._say(s, u)

    def _say(self, s: EditorSession, update: Update) -> None:
        """An update of `s`, sent in order; held until the editor has the session's id (a new
        session's updates come after `session/new`'s answer, which names it)."""
        if s.known:
            self.said.put_nowait((s.id, update))
        else:
            s.held.append(update)

    def sent(self, message: JsonObject) -> None:
        """A message is out (the transport's word): an answer that names a new session lets its
        held updates go."""
        result = message.get("result")
        named = result.get("sessionId") if isinstance(result, dict) else None
        s = self.sessions.get(named) if isinstance(named, str) else None
        if s is not None and not s.known:
            s.known = True
            for u in s.held:
                self.said.put_nowait((s.id, u))
            s.held.clear()

    async def send(self) -> None:
        """The updates, one at a time, in order; an editor that went away loses the rest."""
        while True:
            session, update = await self.said.get()
            try:
                with contextlib.suppress(ConnectionError, RequestError):
                    await self.client.session_update(session_id=session, update=update)
            finally:
                self.said.task_done()

    async def _flushed(self) -> None:
        """The updates queued so far are out, before an answer that follows them; an editor that
        has stopped reading is waited for `SETUP_MS` at most (its answer then goes as it can)."""
        if self.sender is None:
            self.sender = asyncio.ensure_future(self.send())
        await waits.race(self.said.join(), self.clock.now() + setup_rule.SETUP_MS / 1000, None, self.clock)

    # ---------------------------------------------------------------- opening

    async def _bounded(self, what: str, work: Awaitable[T]) -> T:
        """`work` as the model bounds a setup request: its result, or a failure at `SETUP_MS`."""
        began = setup_rule.Setup(self.ms())
        raced = await waits.race(work, (began.started + setup_rule.SETUP_MS) / 1000, None, self.clock)
        s, _ = setup_rule.setup_step(began, raced.end is End.EVENT, self.ms())
        if s.failed:
            waited = f"{setup_rule.SETUP_MS // 1000} s (opening the store and the model)"
            raise RequestError(FAILED, f"{what} did not answer within {waited}")
        return raced.result()

    async def _open(
        self, cwd: str, session: str, resumed: bool, mcp: Sequence[McpServer] | None
    ) -> EditorSession:
        self.loop = asyncio.get_running_loop()  # an editor may skip initialize: its runs reach this loop
        where = Path(cwd)
        if not where.is_absolute() or not where.is_dir():
            raise RequestError(INVALID_PARAMS, f"cwd {cwd!r}: not an absolute path to a folder")
        try:
            made = await asyncio.to_thread(
                setup, where, steers=True
            )  # a prompt while a turn works is a steer
            if self.runtime is None:
                self.runtime = await asyncio.to_thread(self._runtime)
        except (SettingsError, ModelError, NoModel, StoreError) as e:
            raise RequestError(FAILED, str(e)) from e
        if self.sender is None:
            self.sender = asyncio.ensure_future(self.send())
        poll = int(timing().child_poll * 1000)
        work = rule.idle(rule.EDITOR, poll)
        driver = SessionDriver(self.runtime, session, where, work, made.spec(None), clock=self.clock)
        s = EditorSession(session, where, made, driver, resumed=resumed, known=resumed)
        self.sessions[session] = s
        assert self.runtime is not None
        self.runtime.process.editors[session] = _servers_of(mcp)  # its runs start them (never stored)
        self._say(s, update_available_commands(commands(made)))
        # each instruction file a run's model changed, said before the session's first run: it loads
        found = await asyncio.to_thread(instructed.at_start, where, False)
        for said in (*found.lines, *((found.problem,) if found.problem else ())):
            for u in of_event(event("notice", said), cwd):
                self._say(s, u)
        return s

    def _modes(self, s: EditorSession) -> SessionModeState:
        try:
            current = "plan" if s.made.planning else in_force(s.cwd).mode.value
        except SettingsError:
            current = "workspace-write"
        offered = [SessionMode(id=k, name=k, description=v) for k, v in MODES.items()]
        return SessionModeState(current_mode_id=current, available_modes=offered)

    def _runtime(self) -> Runtime:
        assert self.loop is not None
        sink = Sink(self.loop, self)
        return open_runtime(home(), loaded(Path.cwd()).values, sink, asker=Asker(self.loop, self.ask))

    def _session(self, session_id: str) -> EditorSession:
        s = self.sessions.get(session_id)
        if s is None:
            raise RequestError(
                INVALID_PARAMS, f"no session {session_id!r}: session/new or session/load first"
            )
        return s

    async def closed(self) -> None:
        """The editor closed the connection: each session's loop says what becomes of its
        run (left in flight, to the home's owner); one with no run at work ends, its
        SessionEnd hooks each bounded."""
        for s in self.sessions.values():
            await s.driver.closed()


def _response(reason: rule.Reason | None, out: RunOutcome | None) -> PromptResponse:
    if reason is None or reason is rule.Reason.FAILED:
        message = out.message if out is not None else "the run ended without an outcome"
        kind = out.code if out is not None else "run_error"
        raise RequestError(FAILED, f"the run failed: {message}", {"kind": kind})
    return PromptResponse(stop_reason=RESPONSES[reason])  # type: ignore[arg-type]


class Sink:
    """The runtime's `RunSink` for the editor face: each line hops to the face's loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, editor: Editor) -> None:
        self.loop, self.editor = loop, editor

    def _post(self, work: Callable[[], None]) -> None:
        with contextlib.suppress(RuntimeError):  # the face's loop has closed: nobody is there
            self.loop.call_soon_threadsafe(work)

    def event(self, e: Event) -> None:
        self._post(lambda: self.editor.event(e))

    def say(self, text: str) -> None:
        print(f"eukhe acp: {text}", file=sys.stderr)

    def started(self, run: str, prompt: str | None) -> None:
        return None  # the session's driver holds its run

    def ended(self, run: str | None, outcome: RunOutcome) -> None:
        return None


class Asker:
    """The runtime's `Asker` for the editor face: each ask runs on the face's loop."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, ask: Callable[[Asked], Awaitable[tuple[Answer, str]]]
    ) -> None:
        self.loop, self._ask = loop, ask

    async def ask(self, asked: Asked) -> tuple[Answer, str]:
        fut = asyncio.run_coroutine_threadsafe(_awaited(self._ask(asked)), self.loop)
        return await asyncio.wrap_future(fut)


async def _awaited(work: Awaitable[T]) -> T:
    return await work
