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
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eukhe.events import Event, event, of_session, outcome_text
from eukhe.ui.approvals import Approvals
from eukhe.ui.view import Queued, View

CHILD_POLL = 1.0
"""Seconds between two looks at the session's subagents while some work."""


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


@dataclass
class Session:
    view: View
    options: Options
    post: Callable[[Callable[[], None]], None]  # run on the app's loop, from any thread
    cwd: Path = field(default_factory=Path.cwd)
    id: str = ""
    made: Any = None  # run.spec.Setup once booted
    process: Any = None  # run.context.Live
    store: Any = None
    failed: str = ""  # why the session cannot run (settings, model, store), once booting failed
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[Any] | None = None  # the run at work, its follow-ups included
    children: asyncio.Task[Any] | None = None
    restore: Callable[[str], None] = lambda text: None  # puts text back into the prompt
    known: list[str] = field(default_factory=list)  # the home's sessions, for /session's completion
    approvals: Approvals = field(init=False)  # the person who answers its runs' permission asks

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
            hint = "; /model provider/model opens it with that model" if self.store is None else ""
            self._say(f"the session cannot run: {self.failed}{hint}")
            for line in _notices(self.cwd):  # what the folder's settings held back may be why
                self._say(line)
            return
        finally:
            self.ready.set()
        self._say(f"session {self.id} · model {self.made.model} · {self.cwd}")
        for line in self.made.notices:  # the folder's keys it does not apply: it is not trusted
            self._say(line)
        for kind, line in self.made.diagnostics():
            self.view.add(event("diagnostic", f"{kind} {line}"))
        await self._taken_up()
        await self.sessions()
        if self.options.session is not None:
            await self._reopened()
        if not self.working and await self._waiting():  # messages a closed terminal left queued
            self._go(None)
        self._watch_children()

    def _open(self) -> None:
        from eukhe.run.spec import setup
        from eukhe.runtime import open_runtime
        from eukhe.settings import home
        from eukhe.store import sessions

        o = self.options
        self.made = setup(self.cwd, o.model, o.base_url, o.api, o.sandbox, o.approval)
        self.made.extra = {"steers": True}  # the user may steer its runs
        if self.options.session is not None and not sessions.valid_id(self.options.session):
            raise ValueError(f"session id {self.options.session!r}: use letters, digits, '-', '_' or '.'")
        self.id = self.options.session or sessions.new_id()
        runtime = open_runtime(home(), self.made.settings, self._show, asker=self.approvals)
        self.store, self.process = runtime.store, runtime.process

    async def _taken_up(self) -> None:
        """The runs a dead process left go to the owner, which finishes them."""
        from eukhe.client.client import ask_once
        from eukhe.client.protocol import RequestKind
        from eukhe.run import driver
        from eukhe.settings import home

        try:
            got = await ask_once(home(), RequestKind.RECOVER, spawn=True, runs=await driver.cut_off())
        except Exception as e:  # the owner is the one to take them up: say so and go on
            self._say(f"the owner could not take up cut-off runs: {e}")
            return
        for line in got.get("said") or []:
            self._say(str(line))

    async def _reopened(self) -> None:
        """A session opened again shows as it is: its transcript, and a run still in
        flight (the owner finishes what a closed terminal left) until it ends."""
        from dbos import DBOS

        from eukhe.store import sessions

        found = await sessions.runs(self.id, DBOS)
        for line in await transcript(self.id):
            self._say(line)
        live = [w.workflow_id for w in found if w.status not in sessions.ENDED]
        if live:
            self._say(f"run {live[-1]} is in flight; its end shows here")
            self.task = asyncio.ensure_future(self._runs(None, follow=live[-1]))

    async def sessions(self) -> list[Any]:
        """The home's sessions (`store.sessions.Row`), the newest last; `known` keeps their ids."""
        from dbos import DBOS

        from eukhe.store import sessions

        try:
            rows = await sessions.rows(DBOS)
        except Exception as e:
            self._say(f"the sessions could not be read: {e}")
            return []
        self.known = [r.session for r in rows]
        return rows

    def _show(self, run: str, kind: str, text: str, data: Any = None) -> None:
        """A run's event, from DBOS's loop: only this session's (its runs and children)."""
        if run.startswith(f"{self.id}/"):
            e = of_session(self.id, run, kind, text, data)
            if e is not None:
                self.post(lambda: self.view.add(e))

    def _say(self, text: str) -> None:
        self.view.add(event("say", text))

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
        or, `after`, a follow-up (the next run's prompt). Queued in the store."""
        from eukhe.store.reports import FOLLOWUP, STEER

        await self.ready.wait()
        if self.failed:
            return
        reports = self.process.reports()
        try:
            rid = await asyncio.to_thread(reports.say, self.id, FOLLOWUP if after else STEER, text)
        except Exception as e:
            self._say(f"not queued ({e}); it is back in the prompt")
            self.restore(text)
            return
        self.view.queue(Queued(rid, "follow-up" if after else "steer", text))

    def abort(self) -> None:
        """Ctrl-C while the run works: it ends aborted within its grace (one still waiting
        for the store to open never starts)."""
        if self.process is not None:
            self.process.interrupt()
        elif self.task is not None:
            self.task.cancel()
            self._say("aborted before it started: the store was still opening")

    # ---------------------------------------------------------------- the runs

    def _go(self, prompt: str | None) -> None:
        self.task = asyncio.ensure_future(self._runs(prompt))

    async def _runs(self, prompt: str | None, follow: str | None = None) -> None:
        """The run of `prompt` (or the run `follow`, in flight already), then one for what
        waits for the session (steers no round end took, follow-ups, children's reports),
        until nothing waits or one is aborted."""
        await self.ready.wait()
        if self.failed:
            self._say(f"the session cannot run: {self.failed}")
            return
        while True:
            try:
                out = await self._run(prompt, follow)
                follow = None
            except Exception as e:  # a run that could not start: said with its cause
                self._say(f"the run did not start: {type(e).__name__}: {e}")
                return
            if out.get("outcome") == "aborted":
                await self._withdraw()
                return
            if not await self._waiting():
                self._watch_children()
                return
            prompt = None

    async def _run(self, prompt: str | None, follow: str | None = None) -> dict[str, Any]:
        from eukhe.run import driver
        from eukhe.skills import SkillError

        loop = asyncio.get_running_loop()
        if prompt is not None:
            try:
                prompt = self.made.expand(prompt)
            except SkillError as e:
                self._say(str(e))
                return {"outcome": "failed"}
        self.process.stop = (loop, asyncio.Event())
        rid = follow or await driver.start(self.made.spec(prompt), self.id)
        self.view.started(rid, prompt)
        try:
            out = await driver.result(rid)
        finally:
            self.view.ended()
        self.view.add(event("outcome", outcome_text(out), rid, out))
        return out

    async def _waiting(self) -> int:
        """Messages waiting for the session's next run (steers, follow-ups, reports)."""
        try:
            return int(await asyncio.to_thread(self.process.reports().queued, self.id))
        except Exception as e:
            self._say(f"the session's waiting messages could not be read: {e}")
            return 0

    async def _withdraw(self) -> None:
        """After Ctrl-C, the messages typed meanwhile go back to the prompt, not to a run."""
        from eukhe.rules.child import Fate

        reports = self.process.reports()
        for q in list(self.view.queued):
            with contextlib.suppress(Exception):
                if await asyncio.to_thread(reports.withdraw, q.id) is Fate.WITHDRAWN:
                    self.view.unqueue([q.id])
                    self.restore(q.text)

    # ---------------------------------------------------------------- subagents

    def _watch_children(self) -> None:
        if self.children is None or self.children.done():
            self.children = asyncio.ensure_future(self._children())

    async def _children(self) -> None:
        """While the session's subagents work: their lines, and when the prompt is idle
        and a report waits, the session's next run with it."""
        from dbos import DBOS

        from eukhe.run import driver
        from eukhe.store import sessions

        while True:
            try:
                live = await driver.live_children(self.id)
                found = await sessions.subagents(DBOS) if live else []
            except Exception as e:
                self._say(f"the session's subagents could not be read: {e}")
                return
            self.view.children = [k for k in found if k.get("session") == self.id]
            if not self.working and await self._waiting():
                self._go(None)
            if not live:
                return
            await asyncio.sleep(CHILD_POLL)

    # ---------------------------------------------------------------- closing

    async def close(self) -> None:
        """Leave: a run at work is left to the owner (it finishes it), and the children's
        reports stay owed to the session's next run."""
        await self.ready.wait()
        if self.working or self.failed or self.process is None:
            _leave()
        from eukhe.run import driver

        with contextlib.suppress(Exception):
            if await driver.live_children(self.id):
                await asyncio.to_thread(self.process.reports().close_parent, self.id)
        if self.store is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.to_thread(self.store.close), timeout=5)


def _notices(cwd: Path) -> tuple[str, ...]:
    from eukhe.settings import SettingsError, loaded

    try:
        return loaded(cwd).notices
    except SettingsError:
        return ()


async def transcript(session: str) -> list[str]:
    """A session's runs as lines: each run's head, the user's words, the calls made, the
    replies (a failed one marked)."""
    from dbos import DBOS

    from eukhe.store import sessions

    out = []
    for w in await sessions.runs(session, DBOS):
        out.append(f"── run {w.workflow_id} ({sessions.outcome_of(w)})")
        for m in await sessions.transcript(w.workflow_id, DBOS):
            if m.role == "user":
                out.append(f"› {m.content}")
            elif m.role == "assistant" and m.calls:
                out.append("→ calls: " + ", ".join(c.name for c in m.calls))
            elif m.role == "assistant":
                out.append(("(failed) " if m.is_error else "") + m.content)
    return out


def _leave() -> None:
    """End the process now: DBOS's threads are not waited for (the owner takes up a run
    left in flight once this process is gone)."""
    import sys

    sys.stdout.flush()
    os._exit(0)
