"""The session the interactive agent drives, a face over the session loop
(`run.drive.SessionDriver`, its rule `rules.drive` with the `AGENT` face): it hands the loop
what the person types and Ctrl-C, and draws what the loop says. Which text is a run, a
steer, a follow-up or the next request after a Ctrl-C, when what waits runs, when the
subagents are looked at, what goes back to the prompt and when SessionEnd fires: the rule's,
never this module's.

Its runs are the durable runs `eukhe run` makes (DBOS workflows of this process,
slots and the root-turn lease from the home's owner), started and awaited on the
app's loop; their events come from DBOS's loop, through `post`, which hands each to
the app's loop. The store opens in a thread behind the prompt (`boot`): a person can
type at once, and what is sent before the store is open waits for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eukhe.ai.image import ImageError
from eukhe.ai.listed import LOOK_BESIDE
from eukhe.display.view import Line, Queued, View
from eukhe.events import Event, event, outcome_text, seen_by
from eukhe.humanize import counted
from eukhe.ids import is_root, new_session, valid_session
from eukhe.process_exit import leave
from eukhe.rules import drive, todo
from eukhe.run.deadline import Deadline
from eukhe.run.mentions import Attached
from eukhe.run.outcome import RunOutcome
from eukhe.run.spec import RunSpec, SessionSetup, setup
from eukhe.settings import SettingsError, home, loaded
from eukhe.skills import SkillError
from eukhe.timing import timing
from eukhe.ui import PROMPT
from eukhe.ui.approvals import Approvals

if TYPE_CHECKING:  # the store's half (SQLAlchemy, DBOS) loads in the boot thread (`_open`)
    from eukhe.run.context import ProcessContext
    from eukhe.run.drive import Answer, SessionDriver
    from eukhe.ui.session_runtime import SessionRuntime


@dataclass
class Options:
    """What the command line says: the model, its server, the session to open, the
    sandbox mode and the approval policy (over the settings)."""

    model: str | None = None
    base_url: str | None = None
    api: str | None = None
    session: str | None = None
    sandbox: str | None = None
    approval: str | None = None
    effort: str | None = None  # --effort or /effort, over models.<m>.reasoningEffort
    permission_mode: str | None = None  # --permission-mode: plan or default, over the settings
    latest: bool = False  # -c, --continue: open this folder's latest session
    withheld: frozenset[str] = frozenset()  # instruction files the person chose to start without


@dataclass
class AgentSession:
    view: View
    options: Options
    post: Callable[[Callable[[], None]], None]  # run on the app's loop, from any thread
    cwd: Path = field(default_factory=Path.cwd)
    id: str = ""
    made: SessionSetup | None = None  # once booted
    durable: SessionRuntime | None = None  # the store and the runtime, once open
    failed: str = ""  # why the session cannot run (settings, model, store), once booting failed
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    driver: SessionDriver | None = None  # the session's loop, once the store is open
    pending: asyncio.Future[None] | None = None  # a request typed before the store opened, until sent
    tasks: set[asyncio.Task[None]] = field(default_factory=set)  # waits for what the loop gives back
    looked: asyncio.Future[None] | None = None  # the look at the server's models (`_look`)
    restore: Callable[[str], None] = lambda text: None  # puts text back into the prompt
    known: list[str] = field(default_factory=list)  # the home's sessions, for /session's completion
    reopened: bool = False  # its transcript shown (a session opened again)
    fresh: str = ""  # -c found no session in this folder: said once it opens
    approvals: Approvals = field(init=False)  # the person who answers its runs' permission asks
    unlisted: Callable[[], str | None] = lambda: None  # whether the server lists the model (`ai.listed`)
    held: list[str] = field(default_factory=list)  # kept since a Ctrl-C: shown as the next run's prompt
    current: str | None = None  # the run at work, or the last one, once started
    began: bool = False  # a run with a prompt started here: the session's SessionStart hooks fired

    def __post_init__(self) -> None:
        self.approvals = Approvals(self.post, self.view)

    # ---------------------------------------------------------------- opening

    async def boot(self) -> None:
        """Open the store and the session in a thread (imports included), then take up
        what a dead process left through the owner; a failure is shown with its cause
        and the prompt stays (its commands work)."""
        try:
            await asyncio.to_thread(self._open)
            assert self.made is not None
            poll = timing().agent_child_poll
            runs = AgentRuns(self, self.opened.process)
            if self.driver is None:  # a boot again (/model) keeps the session's loop
                self.driver = self.opened.driver(runs, self.id, self.cwd, self.made.spec(None), poll)
        except Exception as e:
            self.failed = str(e) or type(e).__name__
            hint = "; /model provider/model opens it with that model" if self.made is None else ""
            self.say(f"the session cannot run: {self.failed}{hint}")
            for line in _notices(self.cwd):  # what the folder's settings held back may be why
                self.say(line)
            if self.durable is not None and self.options.session is not None:
                await self._reopened()  # its transcript shows, whatever the model
            return
        finally:
            self.ready.set()
        assert self.made is not None
        self.say(f"session {self.id} · model {self.made.model} · {self.cwd}")
        if self.fresh:
            self.say(self.fresh)
        for line in self.made.notices:  # the folder's keys it does not apply: it is not trusted
            self.say(line)
        self.looked = asyncio.ensure_future(self._look())  # said when it comes: nothing waits for it
        for kind, line in self.made.diagnostics():
            self.view.add(event("diagnostic", f"{kind} {line}"))
        await self._taken_up()
        await self.sessions()
        if self.options.session is not None:
            await self._reopened()
        if self.driver is not None:
            self.driver.open()  # what a closed terminal left queued, its subagents: the loop looks

    def switch(self, session: str) -> None:
        """Another session opened here (/session, /fork), with its own loop, watching its own
        subagents; the last one's loop ends here (no work goes on: its runs are the store's)."""
        self.id = session
        old = self.driver
        if old is not None:
            old.close()
            runs = AgentRuns(self, self.opened.process)
            self.driver = self.opened.driver(runs, session, self.cwd, old.spec, timing().agent_child_poll)
            self.driver.open()

    async def _look(self) -> None:
        """The line for a model its local server does not list (it ignores a wrong name)."""
        if unlisted := await asyncio.to_thread(self.unlisted):
            self.say(unlisted)

    def _open(self) -> None:
        # the one import of the agent inside a function: the store's half loads here,
        # in the boot thread, behind the prompt
        from eukhe.ui.session_runtime import SessionRuntime

        o = self.options
        if o.session is not None and not valid_session(o.session):
            raise ValueError(f"session id {o.session!r}: use letters, digits, '-', '_' or '.'")
        if self.durable is None:  # opened once: a boot again (/model) finds it open
            self.durable = SessionRuntime.open(home(), loaded(self.cwd).values, self, self.approvals)
        if o.latest and o.session is None and not self.id:
            o.session = self.durable.latest_in(self.cwd)
            if o.session is None:  # said once the session opens
                self.fresh = "no session has run in this folder yet (-c): this one is new"
        self.id = o.session or self.id or new_session()
        model, base_url, api = o.model, o.base_url, o.api
        ran = (
            asyncio.run(self.durable.sessions.last_spec(self.id))
            if model is None and o.session is not None
            else None
        )
        if ran is not None:  # a session opened again runs where it ran, unless the flags say otherwise
            model = ran.model
            base_url = base_url if base_url is not None else ran.base_url
            api = api if api is not None else ran.api
        self.made = setup(
            self.cwd,
            model,
            base_url,
            api,
            o.sandbox,
            o.approval,
            o.effort,
            o.permission_mode,
            o.withheld,
            steers=True,  # the user may steer its runs
        )
        self.view.plan = self.made.planning  # the status line says plan mode from the start
        self.unlisted = self.made.unlisted(LOOK_BESIDE)  # begun here, said after the session's line

    @property
    def opened(self) -> SessionRuntime:
        """The session's durable half, once the store is open."""
        if self.durable is None:
            raise RuntimeError(f"the store is not open: {self.failed or 'still opening'}")
        return self.durable

    async def _taken_up(self) -> None:
        """The runs a dead process left go to the owner, which finishes them."""
        try:
            said = await self.opened.taken_up()
        except Exception as e:  # the owner is the one to take them up: say so and go on
            self.say(f"the owner could not take up cut-off runs: {e}")
            return
        for line in said:
            self.say(line)

    async def _reopened(self) -> None:
        """A session opened again shows as it is: its transcript, and a run still in
        flight (the owner finishes what a closed terminal left) until it ends."""
        if self.reopened:  # shown once, by a boot that failed, before a boot again
            return
        self.reopened = True
        found = await self.opened.sessions.runs(self.id)
        for line in (await self.opened.sessions.transcript(self.id)).lines():
            self.say(line)
        self.view.todo = todo.json_of((await self.opened.sessions.pins(self.id)).tasks)  # above the prompt
        live = self.opened.in_flight(found)
        if live and self.driver is not None and self.driver.work.idle():  # nothing typed took the session
            self.say(f"run {live[-1]} is in flight; its end shows here")
            await self.driver.submit(self.opened.request(started=live[-1]))

    async def sessions(self) -> list[Any]:
        """The home's sessions (`store.session_runs.Row`), the newest last; `known` keeps their ids."""
        try:
            rows = await self.opened.sessions.rows()
        except Exception as e:
            self.say(f"the sessions could not be read: {e}")
            return []
        self.known = [r.session for r in rows]
        return rows

    # ---------------------------------------------------------------- its runs' sink (`run.sink.RunSink`)

    def event(self, e: Event) -> None:
        """A run's event, from DBOS's loop: only this session's (its runs and children)."""
        if e.run is not None and e.run.startswith(f"{self.id}/"):
            seen = seen_by(self.id, e)
            if seen is not None:
                self.post(lambda: self._seen(seen))

    def _seen(self, e: Event) -> None:
        """An event of the session's, on the app's loop: a root run's plan mode is the next run's."""
        if e.type == "mode" and (e.run is None or is_root(e.run)) and self.made is not None:
            self.made = dataclasses.replace(
                self.made, permission_mode="plan" if e.data.get("plan") else "default"
            )
        self.view.add(e)

    def plan_mode(self) -> None:
        """Shift+Tab: plan mode on or off, for the run at work from its next call (its gate's
        step, through the runtime) and for the session's next runs. Never a wider mode: the
        sandbox mode stays the configured one."""
        if self.made is None:
            self.view.note = "plan mode can change once the session is open"
            return
        on = not self.made.planning
        self.made = dataclasses.replace(self.made, permission_mode="plan" if on else "default")
        self.view.plan = on
        self.view.note = "plan mode on: nothing writes or runs until you approve a plan" if on else ""
        if self.durable is not None:
            self.durable.process.plan_mode(self.id, on)

    def say(self, text: str) -> None:
        """A line of the session's own (on the app's loop, where its runs are awaited)."""
        self.view.add(event("say", text))

    def started(self, run: str, prompt: str | None) -> None:
        if self.held and prompt:  # what was kept since a Ctrl-C: shown as its prompt now
            self.view.lines.append(Line(f"{PROMPT}{prompt}", "bold"))
            self.held.clear()
        self.current = run
        self.view.started(run, prompt)

    def ended(self, run: str | None, outcome: RunOutcome) -> None:
        self.view.ended()
        out = outcome.json()
        self.view.add(event("outcome", outcome_text(out), run, out))

    def add(self, e: Event) -> None:
        self.view.add(e)

    # ---------------------------------------------------------------- what the user types

    @property
    def working(self) -> bool:
        """A work goes on (as the session loop's rule has it), or a request waits for the store."""
        if self.pending is not None and not self.pending.done():
            return True
        return self.driver is not None and not self.driver.work.idle()

    @property
    def aborting(self) -> bool:
        """Ctrl-C was pressed and the work it cancels goes on: what is sent now is kept."""
        return self.working and self.driver is not None and self.driver.work.cancelled_at is not None

    def jobs_text(self) -> str:
        """The session's running background jobs on the status line ("" when none): work that
        goes on, and how to see it."""
        if self.durable is None or not self.id:
            return ""
        n = sum(1 for h in self.durable.process.jobs.of(self.id) if not h.ended())
        return f" · {counted(n, 'background job')} (/jobs)" if n else ""

    @property
    def ran(self) -> bool:
        """A run of the session started here."""
        return self.driver is not None and bool(self.driver.run)

    def ask(self, text: str) -> None:
        """The user's message at an idle prompt: the session's next request."""
        self.pending = asyncio.ensure_future(self._send(text))

    async def steer(self, text: str, after: bool = False) -> None:
        """A message typed while a work goes on: a steer (it enters at the next round end),
        or, `after`, a follow-up; typed after Ctrl-C, the next request. The session loop's
        rule says which; sent after the request typed before it."""
        pending = self.pending
        if pending is not None and not pending.done():
            await asyncio.wait({pending})
        await self._send(text, after)

    def hold(self, text: str) -> None:
        """A message typed after Ctrl-C, before the run it aborts has ended: the rule keeps it
        as the next request."""
        self._keep(self.steer(text))

    def abort(self) -> None:
        """Ctrl-C while a work goes on: the rule cancels it (its run ends aborted within its
        grace); a request still waiting for the store to open never starts."""
        if self.pending is not None and not self.pending.done() and self.driver is None:
            self.pending.cancel()
            self.say("aborted before it started: the store was still opening")
        elif self.driver is not None:
            self.driver.cancel()

    async def _send(self, text: str, after: bool = False) -> None:
        """`text` to the session loop, once the store is open; shown as the rule made it: a
        run, a queued message, or kept past a Ctrl-C."""
        await self.ready.wait()
        if self.failed or self.driver is None:
            self.say(f"the session cannot run: {self.failed or 'it is not open'}")
            return
        assert self.made is not None
        request = self.opened.request(self.made.spec(text), after)
        try:
            answer = await self.driver.submit(request)
        except (SkillError, ImageError) as e:
            self.say(str(e))
            return
        except Exception as e:  # a run that could not start: said with its cause
            self.say(f"the run did not start: {type(e).__name__}: {e}")
            return
        if request.did is drive.Do.HOLD:
            self.held.append(text)
            self.view.note = "sent once the aborted run has ended"
        if request.did is drive.Do.QUEUE:
            if answer.done() and answer.exception() is not None:
                self.say(f"not queued ({answer.exception()}); it is back in the prompt")
                self.restore(text)
                return
            self.view.queue(Queued(request.id, "follow-up" if after else "steer", text))
        if request.did in (drive.Do.QUEUE, drive.Do.HOLD):
            self._keep(self._given_back(request.id, text, answer))

    async def _given_back(self, queued: str, text: str, answer: asyncio.Future[Answer]) -> None:
        """A message the rule gave back (a Ctrl-C's, or one whose run could not start) goes
        back into the prompt."""
        try:
            got = await answer
        except Exception:  # kept past a Ctrl-C, its run could not start
            got = None
        if got is None or got.withdrawn:
            if queued:
                self.view.unqueue([queued])
            if text in self.held:
                self.held.remove(text)
            self.restore(text)

    def _keep(self, work: Coroutine[object, object, None]) -> None:
        task = asyncio.ensure_future(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def spec_of(self, prompt: str | None) -> RunSpec:
        """The spec of the session's next run as the session stands now: its prompt's skills
        expanded and files attached, its instruction files read again, its SessionStart hooks
        with its first prompt."""
        assert self.made is not None
        attached: Attached | None = None
        if prompt is not None:
            typed = prompt
            prompt = self.made.expand(prompt)
            attached = await asyncio.to_thread(self.made.attach, prompt, typed)  # @path, images
            for line in attached.said:
                self.say(line)
            prompt = attached.prompt
        changed = await asyncio.to_thread(self.made.instructions_changed)  # a new run's turn: read again
        if changed is not None:
            self.made = dataclasses.replace(self.made, instructions=changed.instructions)
            self.say(changed.said)
        spec = self.made.spec(prompt, attached)
        if prompt is not None and not self.began:  # its SessionStart hooks fire with it
            self.began = True
            spec = dataclasses.replace(spec, session_start="resume" if self.options.session else "startup")
        return spec

    async def subagents(self, session: str) -> list[str]:
        """The session's subagents at work, their lines drawn."""
        live = await self.opened.live_children(session)
        found = await self.opened.sessions.subagents() if live else []
        self.view.children = [k for k in found if k.get("session") == session]
        return live

    # ---------------------------------------------------------------- closing

    async def close(self) -> None:
        """Leave: the session loop's rule says what its end is (a run at work left to the
        owner, which finishes it; else SessionEnd, the subagents' reports owed to the
        session's next run)."""
        await self.ready.wait()
        if self.pending is not None and not self.pending.done():
            self.pending.cancel()
        if self.failed or self.durable is None or self.driver is None:
            leave(0)
            return
        left = await self.driver.closed()
        if left or not self.driver.work.idle():  # the owner takes up a run left in flight
            leave(0)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.to_thread(self.opened.close), timeout=5)


@dataclass
class AgentRuns:
    """The agent's runs as the session loop asks for them (`run.drive.Runs`): each run's spec
    made from the person's text as the session stands when it starts."""

    session: AgentSession
    process: ProcessContext
    deadline: Deadline | None = None

    async def start(self, spec: RunSpec, session: str) -> str:
        made = await self.session.spec_of(spec.prompt)
        return await self.session.opened.runtime.start(made, session)

    async def result(self, run: str) -> RunOutcome:
        return await self.session.opened.runtime.result(run)

    async def live_children(self, session: str) -> list[str]:
        return await self.session.subagents(session)

    async def session_end(self, cwd: Path, session: str, run: str, reason: str) -> None:
        await self.session.opened.runtime.session_end(cwd, session, run, reason)


def _notices(cwd: Path) -> tuple[str, ...]:
    try:
        return loaded(cwd).notices
    except SettingsError:
        return ()
