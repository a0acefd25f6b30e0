"""The session the interactive agent drives: its runs one after the other, what the
user types while one works (steers and follow-ups, queued in the store so that a
closed terminal loses none), Ctrl-C, and its subagents.

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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eukhe.ai.image import ImageError
from eukhe.ai.listed import LOOK_BESIDE
from eukhe.display.view import Line, Queued, View
from eukhe.events import Event, event, outcome_text, seen_by
from eukhe.ids import is_root, new_session, valid_session
from eukhe.process_exit import leave
from eukhe.rules import todo
from eukhe.run.mentions import Attached
from eukhe.run.outcome import Ending, RunOutcome
from eukhe.run.spec import SessionSetup, setup
from eukhe.settings import SettingsError, home, loaded
from eukhe.skills import SkillError
from eukhe.timing import timing
from eukhe.ui import PROMPT
from eukhe.ui.approvals import Approvals

if TYPE_CHECKING:
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
class Session:
    view: View
    options: Options
    post: Callable[[Callable[[], None]], None]  # run on the app's loop, from any thread
    cwd: Path = field(default_factory=Path.cwd)
    id: str = ""
    made: SessionSetup | None = None  # once booted
    durable: SessionRuntime | None = None  # the store and the runtime, once open
    failed: str = ""  # why the session cannot run (settings, model, store), once booting failed
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Future[None] | None = None  # the run at work, its follow-ups included
    begun: asyncio.Event = field(default_factory=asyncio.Event)  # `task` has started its first run
    children: asyncio.Future[None] | None = None
    looked: asyncio.Future[None] | None = None  # the look at the server's models (`_look`)
    restore: Callable[[str], None] = lambda text: None  # puts text back into the prompt
    known: list[str] = field(default_factory=list)  # the home's sessions, for /session's completion
    reopened: bool = False  # its transcript shown (a session opened again)
    fresh: str = ""  # -c found no session in this folder: said once it opens
    approvals: Approvals = field(init=False)  # the person who answers its runs' permission asks
    unlisted: Callable[[], str | None] = lambda: None  # whether the server lists the model (`ai.listed`)
    aborting: bool = False  # Ctrl-C was pressed and the run at work has not ended yet
    held: list[str] = field(default_factory=list)  # typed since that Ctrl-C: the next run's prompt
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
        if not self.working and await self._waiting():  # messages a closed terminal left queued
            self._go(None)
        self._watch_children()

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
        if live:
            self.say(f"run {live[-1]} is in flight; its end shows here")
            self.begun = asyncio.Event()
            self.task = asyncio.ensure_future(self._runs(None, follow=live[-1]))

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
        self.current = run
        self.begun.set()
        self.view.started(run, prompt)

    def ended(self, run: str | None, outcome: RunOutcome) -> None:
        out = outcome.json()
        self.view.add(event("outcome", outcome_text(out), run, out))

    def add(self, e: Event) -> None:
        self.view.add(e)

    # ---------------------------------------------------------------- what the user types

    @property
    def working(self) -> bool:
        return self.task is not None and not self.task.done()

    def ask(self, text: str) -> None:
        """The user's message at an idle prompt: the session's next run."""
        self._go(text)

    async def steer(self, text: str, after: bool = False) -> None:
        """A message typed while the run works: a steer (it enters at the next round end)
        or, `after`, a follow-up (the next run's prompt). Queued in the store once the run
        has started (typed before the store opened, say): after its prompt, never before."""
        await self.ready.wait()
        if self.failed:
            return
        if self.task is not None and not self.task.done():
            await _either(self.begun, self.task)  # or it ended with none started: the next run takes it
        try:
            rid = await asyncio.to_thread(self.opened.queue, self.id, text, after)
        except Exception as e:
            self.say(f"not queued ({e}); it is back in the prompt")
            self.restore(text)
            return
        self.view.queue(Queued(rid, "follow-up" if after else "steer", text))

    def hold(self, text: str) -> None:
        """A message typed after Ctrl-C, before the run it aborts has ended: not a steer of
        that run (whose steers come back to the prompt), but the prompt of the next one."""
        self.held.append(text)
        self.view.note = "sent once the aborted run has ended"

    def abort(self) -> None:
        """Ctrl-C while the run works: it ends aborted within its grace (one still waiting
        for the store to open never starts)."""
        if self.durable is not None:
            self.aborting = True
            self.durable.process.interrupt()
        elif self.task is not None:
            self.task.cancel()
            self.say("aborted before it started: the store was still opening")

    # ---------------------------------------------------------------- the runs

    def _go(self, prompt: str | None) -> None:
        self.begun = asyncio.Event()  # a new one: a steer still waiting for the last task waits for that
        self.task = asyncio.ensure_future(self._runs(prompt))

    async def _runs(self, prompt: str | None, follow: str | None = None) -> None:
        """The run of `prompt` (or the run `follow`, in flight already), then one for what
        waits for the session (steers no round end took, follow-ups, children's reports),
        until nothing waits or one is aborted."""
        await self.ready.wait()
        if self.failed:
            self.say(f"the session cannot run: {self.failed}")
            return
        try:
            await self._go_on(prompt, follow)
        finally:
            self.aborting = False
            for text in self.held:  # never sent (a run that could not start): back in the prompt
                self.restore(text)
            self.held.clear()

    async def _go_on(self, prompt: str | None, follow: str | None) -> None:
        while True:
            try:
                out = await self._run(prompt, follow)
                follow = None
            except Exception as e:  # a run that could not start: said with its cause
                self.say(f"the run did not start: {type(e).__name__}: {e}")
                return
            aborted = out.outcome is Ending.ABORTED
            if aborted:
                await self._withdraw()
            self.aborting = False
            if self.held:  # typed since a Ctrl-C: the next run, whatever the last one's end
                prompt = "\n\n".join(self.held)
                self.held.clear()
                self.view.lines.append(Line(f"{PROMPT}{prompt}", "bold"))
                continue
            if aborted:
                return
            if not await self._waiting():
                self._watch_children()
                return
            prompt = None

    async def _run(self, prompt: str | None, follow: str | None = None) -> RunOutcome:
        assert self.made is not None
        loop = asyncio.get_running_loop()
        attached: Attached | None = None
        if prompt is not None:
            typed = prompt
            try:
                prompt = self.made.expand(prompt)
                attached = await asyncio.to_thread(self.made.attach, prompt, typed)  # @path, images
            except (SkillError, ImageError) as e:
                self.say(str(e))
                return RunOutcome(Ending.FAILED, message=str(e))
            for line in attached.said:
                self.say(line)
            prompt = attached.prompt
        self.opened.process.stop = (loop, asyncio.Event())
        changed = await asyncio.to_thread(self.made.instructions_changed)  # a new run's turn: read again
        if changed is not None:
            self.made = dataclasses.replace(self.made, instructions=changed.instructions)
            self.say(changed.said)
        if follow is not None:  # a run in flight already: shown as started here
            self.started(follow, prompt)
        spec = self.made.spec(prompt, attached)
        if prompt is not None and not self.began:  # its SessionStart hooks fire with it
            self.began = True
            spec = dataclasses.replace(spec, session_start="resume" if self.options.session else "startup")
        try:  # a new run shows as started through `started`, once the runtime has its id
            out = await self.opened.runtime.run(spec, self.id, follow)
        finally:
            self.view.ended()
        self.ended(self.current, out)
        return out

    async def _waiting(self) -> int:
        """Messages waiting for the session's next run (steers, follow-ups, reports)."""
        try:
            return await asyncio.to_thread(self.opened.queued, self.id)
        except Exception as e:
            self.say(f"the session's waiting messages could not be read: {e}")
            return 0

    async def _withdraw(self) -> None:
        """After Ctrl-C, the messages typed meanwhile go back to the prompt, not to a run."""
        for q in list(self.view.queued):
            with contextlib.suppress(Exception):
                if await asyncio.to_thread(self.opened.withdraw, q.id):
                    self.view.unqueue([q.id])
                    self.restore(q.text)

    # ---------------------------------------------------------------- subagents

    def _watch_children(self) -> None:
        if self.children is None or self.children.done():
            self.children = asyncio.ensure_future(self._children())

    async def _children(self) -> None:
        """While the session's subagents work: their lines, and when the prompt is idle
        and a report waits, the session's next run with it."""
        while True:
            try:
                live = await self.opened.live_children(self.id)
                found = await self.opened.sessions.subagents() if live else []
            except Exception as e:
                self.say(f"the session's subagents could not be read: {e}")
                return
            self.view.children = [k for k in found if k.get("session") == self.id]
            if not self.working and await self._waiting():
                self._go(None)
            if not live:
                return
            await asyncio.sleep(timing().agent_child_poll)

    # ---------------------------------------------------------------- closing

    async def close(self) -> None:
        """Leave: a run at work is left to the owner (it finishes it), and the children's
        reports stay owed to the session's next run."""
        await self.ready.wait()
        if self.working or self.failed or self.durable is None:
            leave(0)  # the owner takes up a run left in flight once this process is gone
        durable = self.opened
        if self.began and self.current is not None:  # its SessionEnd hooks, each bounded
            with contextlib.suppress(Exception):
                await durable.runtime.session_end(self.cwd, self.id, self.current, "prompt_input_exit")
        with contextlib.suppress(Exception):
            if await durable.live_children(self.id):
                await asyncio.to_thread(durable.close_parent, self.id)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.to_thread(durable.close), timeout=5)


async def _either(event: asyncio.Event, task: asyncio.Future[None]) -> None:
    """Until `event` is set or `task` has ended."""

    async def is_set() -> None:
        await event.wait()

    waiting = asyncio.ensure_future(is_set())
    try:
        await asyncio.wait({waiting, task}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiting.cancel()


def _notices(cwd: Path) -> tuple[str, ...]:
    try:
        return loaded(cwd).notices
    except SettingsError:
        return ()
