"""The live chat of a home: its log, the built lines of its tree, its view, and the
compactor's queue and workers (H1, H2).

The queue's state IS `rules.queue`'s, and every operation is its step: a new
message (ADD), a job's end (BUILT, FAILED), a node's RETRY passing, a turn's
wait and its end. The step says which calls to start and which to stop; this
class starts and stops them, and feeds their ends back. The view is
`rules.view`'s: a new message enters with `add`, and `fit` merges after every
change. A node's failures left are `rules.compactor`'s `Pend`.

A job of a node whose input fits NODE needs no model: its input is its line.
Every other job is one compactor call (`memory.compactor.attempt`), a
background request in admission, with CALL_DEADLINE on this chat's clock.

`settled(deadline)` is a turn's wait (H2): the view's unbuilt lines go first,
the calls of every other node stop, and the wait ends when they are built or
at the deadline, whichever comes first; then the view renders, an unbuilt line
showing its input cut to NODE.

One process writes a home's chat: its owner (H6), which the runs of every other
process reach through `eukhe.client.remote_chat`. Two that did would stay
correct, through the store: appends idempotent by key, a line written once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from eukhe.events import ShowLine
from eukhe.humanize import counted
from eukhe.memory import prompts
from eukhe.memory.compactor import Ask, attempt
from eukhe.memory.log import Entry, Message
from eukhe.memory.tables import ChatStore, ChatStoreError, Running, Wait
from eukhe.rules import compactor as line_rule
from eukhe.rules import queue as q
from eukhe.rules import view as v
from eukhe.rules.queue import Node
from eukhe.waits import Clock, LoopClock, race

Waiting = Callable[[str, int, float], None]
"""A line of a turn's wait, once a second, with its fields: the line, the lines it waits
for, and the seconds to its deadline (on the chat's clock: the process that shows it
makes its own deadline of them)."""


@dataclass(frozen=True)
class Settled:
    """A turn's view: its text, whether every line was built, the lines still unbuilt
    (shown as their input cut), and the seconds the turn waited."""

    text: str
    settled: bool
    pending: int
    waited: float


def settle_ended(cancelled: bool, pending: int) -> str:
    """What a turn's wait says when it ends with lines unbuilt: a cancelled wait ends its
    turn too, a deadline lets it go on."""
    if cancelled:
        return f"memory: the wait was cancelled with {counted(pending, 'line')} pending"
    return f"memory: the settle deadline passed; the turn goes on with {counted(pending, 'line')} shown cut"


def _progress(
    show: ShowLine | None, waiting: Waiting | None, line: str, pending: int, seconds: float
) -> None:
    """A line of a turn's wait: to `waiting` with its fields, else to `show`."""
    if waiting is not None:
        waiting(line, pending, seconds)
    elif show is not None:
        show(line)


@dataclass(frozen=True)
class Status:
    messages: int
    built: int
    pending: int
    failed: int  # pending lines with at least one failed call
    view_bytes: int
    budget: int
    running: list[Running]  # the compactor calls running now, in every process of the store
    jobs: int  # this chat's jobs running now (model calls, and lines that need none)
    last_wait: Wait | None  # the last settle wait of a turn, in any process


@dataclass
class _Job:
    task: asyncio.Task[None]
    call: int


@dataclass
class Chat:
    store: ChatStore
    ask: Ask | None = None  # the compactor's model requests (None: no model: free lines only)
    model: str = ""
    clock: Clock = field(default_factory=LoopClock)
    budget: int = v.VIEW
    cfg: q.Cfg = q.LIMITS

    def __post_init__(self) -> None:
        self._kinds: list[str] = []
        self._sizes: dict[Node, int] = {}  # a node's line bytes, or an unbuilt message's input bytes
        self._lines: dict[Node, str] = {}
        self._pend: dict[Node, line_rule.Pend] = {}
        self._jobs: dict[Node, _Job] = {}
        self._timers: set[asyncio.Task[None]] = set()
        self._changed = asyncio.Event()
        self._waiters = 0
        self._pumped = False  # the loaded queue has started its work (on the loop, at first use)
        self._asks = False  # once its messages pass half of NODE bytes together (`may_ask`)
        self.queue = q.EMPTY
        self.view = v.EMPTY
        self._load()

    # ---------------------------------------------------------------- loading

    def _load(self) -> None:
        metas = list(self.store.metas())
        total = len(metas)
        for m, (kind, size) in enumerate(metas):
            self._kinds.append(kind.value)
            self._sizes[Node(0, m)] = len(kind.value) + 2 + size
        for l, i, text, size in self.store.sized_lines():  # noqa: E741
            if l >= 0 and i >= 0 and (i + 1) << l <= total:  # a node of these messages
                n = Node(l, i)
                self._lines[n] = text
                self._sizes[n] = size
        self.queue = q.Queue(total, q.Built.of(self._lines))
        self.view = self._saved(total) or v.fold(total, self._sizes, self._lines.keys(), self.budget)

    def _saved(self, total: int) -> v.View | None:
        """The view last pinned (by any process), grown by the messages logged since: the
        turns of a new process then keep the prefix the last one sent. A saved view that
        does not tile a prefix of the log, or merges into a line not built, is not used."""
        with contextlib.suppress(ChatStoreError):
            got = self.store.saved_view()
            if got is None or not 0 <= got[0] <= total:
                return None
            upto, parts = got[0], [Node(l, i) for l, i in got[1]]  # noqa: E741
            view = v.of(parts, self._sizes)
            if view.total != upto or not v.tiles(view) or any(p.l and p not in self._lines for p in parts):
                return None
            for _ in range(upto, total):
                view = v.fit(v.add(view, self._sizes), self._sizes, self._lines.keys(), self.budget)
            return v.fit(view, self._sizes, self._lines.keys(), self.budget)
        return None

    # ---------------------------------------------------------------- the log

    def log(self, entries: Sequence[Entry]) -> list[Message]:
        """Append to the log (idempotent by key) and let the new messages in: each one
        enters the queue and the view."""
        self._pump()
        before = self.queue.total
        messages = self.store.append(entries)
        fresh = sorted({m.id: m for m in messages if m.id >= before}.values(), key=lambda m: m.id)
        for m in fresh:  # a key logged before (in this call too) gives its first message: not new
            if m.id < self.queue.total:
                continue
            if m.id > self.queue.total:  # another writer appended meanwhile: take its messages too
                self._catch_up(m.id)
            self._kinds.append(m.kind.value)
            self._sizes[Node(0, m.id)] = len(m.kind.value) + 2 + m.size
            self._apply(q.ADD)
            self.view = v.add(self.view, self._sizes)
        self._fit()
        return messages

    def may_ask(self) -> bool:
        """Whether a line of this chat may need the model soon: its messages hold more than
        half of NODE bytes together. Until then every node's input (a message, or two lines
        no longer than their messages, a newline between) fits NODE and is its own line: no
        model is asked (each message is at least 3 bytes, so the newlines add at most a third)."""
        if not self._asks:
            logged = sum(size for n, size in self._sizes.items() if n.l == 0)
            self._asks = logged > line_rule.NODE // 2
        return self._asks

    def _catch_up(self, upto: int) -> None:
        for m in self.store.messages(self.queue.total, upto):
            self._kinds.append(m.kind.value)
            self._sizes[Node(0, m.id)] = len(m.kind.value) + 2 + m.size
            self._apply(q.ADD)
            self.view = v.add(self.view, self._sizes)

    # ---------------------------------------------------------------- the queue

    def _apply(self, op: q.Op) -> q.Step:
        step = q.step(self.cfg, self.queue, op)
        self.queue = step.queue
        for job in step.stopped:
            running = self._jobs.pop(job.node, None)
            if running is not None and running.call == job.call:
                running.task.cancel()  # a stop is no failure: the node is requeued
        for job in step.started:
            self._start(job)
        return step

    def _pump(self) -> None:
        """A loaded chat's queue starts the work it has (merges of lines other processes
        built, lines they left unbuilt) at its first use on the loop: loading makes the
        model's state, but only an operation starts its calls."""
        if not self._pumped:
            self._pumped = True
            if self._waiters == 0:
                self._apply(q.UNWAIT)

    def _start(self, job: q.Job) -> None:
        task = asyncio.get_running_loop().create_task(self._job(job))
        self._jobs[job.node] = _Job(task, job.call)

    async def _job(self, job: q.Job) -> None:
        node = job.node
        try:
            text = self._input(node)
            free = line_rule.free_line(line_rule.LIMITS, text)
            if free is not None:
                self._built(job, self.store.save_line(node.l, node.i, free))
                return
            if self.ask is None:  # no model: the line waits (the settle deadline shows it cut)
                self._ended(job, q.failed_op(node, job.call))
                return
            pend = self._pend.get(node) or line_rule.pend_start(line_rule.LIMITS)

            async def read() -> tuple[str, str, str]:
                source = self._input(node)
                return self.context(node), self._step_text(node, source), source

            async def save(line: str) -> str:
                return self.store.save_line(node.l, node.i, line)

            self._activity(self.store.call_started, node.l, node.i)
            try:
                a = await attempt(self.ask, self.model, read, save, pend, self.clock)
            finally:
                self._activity(self.store.call_ended, node.l, node.i)
            self._pend[node] = a.pend
            if a.built is not None:
                self._built(job, a.built)
            else:
                self._ended(job, q.failed_op(node, job.call))
        except asyncio.CancelledError:
            raise
        except Exception:  # the store failed under the job: a disk failure, retried after RETRY
            self._ended(job, q.failed_op(node, job.call))

    def _built(self, job: q.Job, text: str) -> None:
        self._lines[job.node] = text
        old, self._sizes[job.node] = self._sizes.get(job.node, 0), line_rule.nbytes(text)
        self.view = v.resize(self.view, job.node, old, self._sizes[job.node])
        self._pend.pop(job.node, None)
        self._ended(job, q.built_op(job.node, job.call))
        self._fit()

    def _ended(self, job: q.Job, op: q.Op) -> None:
        current = self._jobs.get(job.node)
        if current is not None and current.call == job.call:
            del self._jobs[job.node]
        self._apply(op)
        if op.kind is q.Kind.FAILED:
            timer = asyncio.get_running_loop().create_task(self._retry(job.node))
            self._timers.add(timer)
            timer.add_done_callback(self._timers.discard)
        self._changed.set()

    async def _retry(self, node: Node) -> None:
        await self.clock.sleep_until(self.clock.now() + line_rule.RETRY / 1000)
        self._apply(q.retry_op(node))

    def _fit(self) -> None:
        self.view = v.fit(self.view, self._sizes, self._lines.keys(), self.budget)

    def rebudget(self, budget: int) -> None:
        """A new view budget (a client's `memory.viewBytes`): the view fits it from now
        on. Merged parts never split, so a larger one only merges less from now on."""
        if budget != self.budget:
            self.budget = budget
            self._fit()

    # ---------------------------------------------------------------- texts

    def _input(self, node: Node) -> str:
        """A node's input: its message labelled with its kind, or its children's lines."""
        if node.l == 0:
            m = self.store.message(node.i)
            if m is None:
                raise LookupError(f"message {node.i} is not in the log")
            return line_rule.labelled(m.kind.value, m.text)
        left, right = q.children(node)
        return line_rule.joined(self._lines[left], self._lines[right])

    def _step_text(self, node: Node, source: str) -> str:
        if node.l == 0:
            return prompts.compress_step(source)
        left, right = q.children(node)
        return prompts.merge_step(self._lines[left], self._lines[right])

    def context(self, node: Node) -> str:
        """The compactor's context for a node: the view's lines before it."""
        end = node.start if node.l == 0 else node.end
        parts = [p for p in self.view.parts if p.start < end and p.end <= end]
        return v.render(parts, self._texts(parts))

    def _texts(self, parts: Sequence[Node]) -> dict[Node, str]:
        texts: dict[Node, str] = {}
        for p in parts:
            if p in self._lines:
                texts[p] = self._lines[p]
            else:  # an unbuilt line (a level-0 part) shows its input cut
                m = self.store.message(p.i)
                texts[p] = line_rule.labelled(m.kind.value, m.text) if m is not None else ""
        return texts

    def is_built(self, node: Node) -> bool:
        return node in self._lines

    def render(self) -> str:
        return v.render(self.view.parts, self._texts(self.view.parts))

    def zoom(self, id: int, n: int) -> str | None:
        """`zoom(id, n)`: line id+n opened into the two below it, or message id whole
        for n = 1; None when id+n names no line of this chat."""
        total = self.queue.total
        if n < 1 or n & (n - 1) or id % n or id < 0 or id + n > total:
            return None
        if n == 1:
            m = self.store.message(id)
            return None if m is None else line_rule.labelled(m.kind.value, m.text)
        node = Node(n.bit_length() - 1, id // n)
        kids = q.children(node)
        return "\n".join(v.render_line(k, self._texts([k])[k]) for k in kids)

    # ---------------------------------------------------------------- a turn's wait

    def pin(self, pinned: int) -> None:
        """The view fitted with `pinned` bytes beside it (`rules.pinned`: what the turn's
        view carries after the chat), so the two together fit the budget."""
        self.view = v.fit(self.view, self._sizes, self._lines.keys(), self.budget, pinned)

    async def settled(
        self,
        deadline: float,
        show: ShowLine | None = None,
        cancel: asyncio.Event | None = None,
        waiting: Waiting | None = None,
        pinned: int = 0,
    ) -> Settled:
        """The view once every unbuilt line of it is built, or at `deadline` (on this chat's
        clock), or at `cancel`: never an error. `show` gets the wait's progress, once a
        second, and how it ended; `waiting`, when given, gets the progress instead, with
        its fields. `pinned`: the bytes the turn puts beside the view, which the view and
        its merges leave room for."""
        self._pump()
        self.pin(pinned)
        began = self.clock.now()
        needed = v.unbuilt(self.view, self._lines.keys())
        if needed:
            self._waiters += 1
            self._apply(q.wait_op(needed))
            try:
                while (left := v.unbuilt(self.view, self._lines.keys())) and self.clock.now() < deadline:
                    if cancel is not None and cancel.is_set():
                        break
                    seconds = deadline - self.clock.now()
                    line = f"memory: {counted(len(left), 'line')} pending, {seconds:.0f} s to the deadline"
                    _progress(show, waiting, line, len(left), seconds)
                    self._changed.clear()
                    tick = min(deadline, self.clock.now() + 1.0)
                    await race(self._changed.wait(), tick, cancel, self.clock)
            finally:
                self._waiters -= 1
                if self._waiters == 0:
                    self._apply(q.UNWAIT)
        await self._merged(deadline, show, cancel, waiting, pinned)
        pending = len(v.unbuilt(self.view, self._lines.keys()))
        waited = self.clock.now() - began
        cancelled = cancel is not None and cancel.is_set()
        if needed and pending and show is not None:
            show(settle_ended(cancelled, pending))
        if needed:
            ended = "settled" if not pending else ("cancelled" if cancelled else "deadline")
            self._activity(self.store.waited, waited, pending, ended)
        self._activity(self.store.save_view, self.view.total, [tuple(p) for p in self.view.parts])
        return Settled(self.render(), pending == 0, pending, waited)

    async def _merged(
        self,
        deadline: float,
        show: ShowLine | None,
        cancel: asyncio.Event | None,
        waiting: Waiting | None = None,
        pinned: int = 0,
    ) -> None:
        """Every line of the view is built and still it is over its budget (with the
        `pinned` bytes beside it): the merges that fit it are under way (a merge waits while
        a turn waits for lines, and starts when it ends), so wait for them too, within the
        same deadline. Not when no job runs: then nothing would come. The lines it waits
        for: the merges running."""
        while True:
            self.pin(pinned)  # the lines built meanwhile let it merge further
            if not (
                self.view.size + pinned > self.budget
                and self._jobs
                and not v.unbuilt(self.view, self._lines.keys())
                and self.clock.now() < deadline
                and not (cancel is not None and cancel.is_set())
            ):
                return
            seconds = deadline - self.clock.now()
            line = (
                f"memory: the view is {self.view.size} of {self.budget} bytes; waiting for its merges, "
                f"{seconds:.0f} s to the deadline"
            )
            _progress(show, waiting, line, len(self._jobs), seconds)
            self._changed.clear()
            await race(self._changed.wait(), min(deadline, self.clock.now() + 1.0), cancel, self.clock)

    # ---------------------------------------------------------------- the rest

    def _activity(self, record: Callable[..., None], *args: object) -> None:
        """What the chat is doing, for `eukhe chat status` in any process: a store that
        cannot take it loses only that record, never the work."""
        with contextlib.suppress(ChatStoreError):
            record(*args)

    def unbuilt(self) -> int:
        """The view's lines still unbuilt: a turn that starts now waits on the compactor."""
        return len(v.unbuilt(self.view, self._lines.keys()))

    def status(self) -> Status:
        total = self.queue.total
        nodes = sum(1 for l in range(total.bit_length() + 1) for _ in range(total >> l))  # noqa: E741
        failed = sum(
            1 for n, p in self._pend.items() if n not in self._lines and p.left < line_rule.FAILURES - 1
        )
        return Status(
            messages=total,
            built=len(self._lines),
            pending=nodes - len(self._lines),
            failed=failed,
            view_bytes=v.view_bytes(self.view, self._sizes),
            budget=self.budget,
            running=self.store.running(),
            jobs=len(self._jobs),
            last_wait=self.store.last_wait(),
        )

    async def close(self) -> None:
        """Stop every job and timer (a stopped job is no failure: it runs again later)."""
        tasks = [j.task for j in self._jobs.values()] + list(self._timers)
        for t in tasks:
            t.cancel()
        if tasks:
            with contextlib.suppress(BaseException):
                await asyncio.wait(tasks, timeout=3.0)
        self._jobs.clear()
