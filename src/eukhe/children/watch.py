"""A child's task at run time: the parent's watch of the child, then the report
phase, each step asked of `rules.child` (the task's state IS the model's `Task`).

Everything it does goes through a `Port`: the clock and the pauses, the polls, the
child's stop, the parent's inbox. The durable port (`run.children`) makes each of
them a recorded step of a DBOS workflow, so a restart replays the same task to the
same state; tests give a port on a clock they control.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from eukhe.children import texts
from eukhe.rules import child
from eukhe.rules.child import Abort, Fate, Move, Phase, Poll, Reading, Task, Verdict, W, WCfg
from eukhe.store.reports import submission
from eukhe.timing import timing


@dataclass(frozen=True)
class Seen:
    """One poll's reading, its token, and the child's last text or error (an ended run)."""

    reading: Reading
    token: int = 0
    detail: str = ""


class Port(Protocol):
    async def now(self) -> float:
        """Seconds, on the task's clock."""
        ...

    async def pause(self, seconds: float) -> Abort | None:
        """Wait `seconds`; an abort the parent asks for ends the wait early, and is returned."""
        ...

    async def read(self) -> Seen: ...

    async def stop(self) -> None:
        """Abort the child's run and stop its worker (its kernel and jobs end with it)."""
        ...

    async def fate(self, rid: str) -> Fate: ...

    async def is_open(self) -> bool: ...

    async def submit(self, rid: str, text: str) -> Fate: ...

    def show(self, text: str) -> None: ...

    async def publish(self, state: dict[str, object]) -> None:
        """Where `eukhe status` reads the watch from."""
        ...

    async def changes(self) -> str:
        """The child's worktree ended, once (`children.worktree.end_worktree`, a recorded step): what
        it left, as its report tells it ("": it had none, or nothing was kept)."""
        ...


@dataclass
class Watcher:
    cfg: WCfg
    port: Port
    child_id: str
    name: str
    task: Task
    on_step: Callable[[Task], None] = lambda t: None  # tests see every state the task takes

    def _go(self, t: Task) -> None:
        self.task = t
        self.on_step(t)

    async def run(self) -> Task:
        detail = await self._watch()
        # whatever way it ended, its worktree ends now, once: told in its report, or else shown
        changes = await self.port.changes()
        if self.task.phase is Phase.REPORT:
            await self._report(detail, changes)
        elif changes:
            self.port.show(f"child {self.name}: {changes}")
        return self.task

    async def _watch(self) -> str:
        last = await self.port.now()
        while self.task.phase is Phase.WATCH:
            asked = await self.port.pause(child.pause(self.cfg, self.task.w) / 1000)
            if asked is not None:
                self._go(child.aborted(self.task, asked))
                if self.task.phase is not Phase.WATCH:
                    await self.port.stop()
                    done = {Abort.CANCEL: "cancelled", Abort.DELETE: "deleted"}.get(asked, asked.value)
                    self.port.show(f"child {self.name}: {done} by its parent")
                continue
            seen = await self.port.read()
            now = await self.port.now()
            delay = max(now - last, 0.0)
            last = now
            before = self.task.w
            t, verdict = child.watched(self.cfg, self.task, Poll(seen.reading, seen.token, int(delay * 1000)))
            self._go(t)
            if verdict is Verdict.WATCH:
                await self.port.publish(self._state())
                continue
            if verdict in child.STOPS:
                await self.port.stop()
            said = {
                Verdict.STALLED: texts.stalled(self._quiet(before) + delay),
                Verdict.UNREACHABLE: texts.unreachable(self.cfg.polls),
                Verdict.GONE: texts.gone(),
            }
            self.port.show(f"child {self.name} ended: {verdict.value}")
            return said.get(verdict, seen.detail)
        return ""

    def _quiet(self, w: W) -> float:
        """Seconds without progress, as the clock has them: what it has counted off."""
        return (self.cfg.stall - w.left) / 1000

    def _state(self) -> dict[str, object]:
        w = self.task.w
        return {
            "child": self.child_id,
            "name": self.name,
            "phase": self.task.phase.value,
            "token": w.token,
            "leftMs": w.left,
            "failedPolls": self.cfg.polls - w.tries,
            "quietSeconds": round(self._quiet(w), 1),
        }

    async def _report(self, detail: str, changes: str) -> None:
        await self.port.publish({**self._state(), "owe": self.task.owe.value})
        polls = timing()
        wait = polls.report_poll
        while self.task.phase is Phase.REPORT:
            fate = (
                Fate.NONE
                if self.task.sub < 0
                else await self.port.fate(submission(self.child_id, self.task.sub))
            )
            t, mv = child.carry(self.task, fate, await self.port.is_open())
            self._go(t)
            if mv is Move.SUBMIT:
                text = texts.report(t.owe, self.name, detail, changes, t.sub)
                await self.port.submit(submission(self.child_id, t.sub), text)
                wait = polls.report_poll
            elif mv is Move.WAIT:
                asked = await self.port.pause(wait)
                wait = min(wait * 2, polls.report_poll_max)
                if asked is not None:  # the report goes on as it was
                    self._go(child.aborted(self.task, asked))
            else:
                self.port.show(f"child {self.name}: its report was delivered")
