"""H2.1: the compactor queue, and a waiting turn's need-first order.

The chat's tree has a node (l, i) for every level l and index i whose messages
[i·2^l, (i+1)·2^l) all exist: level 0 summarizes one message, a node above
merges its two children. The queue decides which nodes' compactor calls run;
the runtime makes the calls (`rules.compactor`) and reports how they end.

A node is built, running (a call is out, under its call number), cooling (its
last call failed, or a disk failure stopped it: busy until RETRY passes), or
idle. Busy = running or cooling; at most `jobs` nodes are busy, and the room
is `jobs` less the busy nodes.

Outside a wait the queue starts, within the room, first the level-0 node of
the first message whose line is unbuilt (messages are compressed in order: a
summary's context is the lines before it), then the ready merges (both
children built, not built itself, idle) whose messages all lie below that
first message, by level, then index.

A turn that waits (`wait`) names the view lines it needs: the unbuilt lines
of its view. An unbuilt view line is always a level-0 node (the view merges
two parts only into a built line), so `wait` keeps the level-0 nodes of the
names that exist and are unbuilt, and drops the rest. While some needed line
is unbuilt the queue waits with the turn (H2.1):

- the wait's start stops every busy node that is not needed: each running
  call is aborted (`Step.stopped`; the node is idle again, no failure is
  counted, and its result, should one come, is ignored by its call number),
  and a cooling one's delay is dropped. So no merge holds a one-request
  provider while the turn waits;
- a needed line's call is never stopped;
- only needed lines start, every idle one while there is room, in message
  order (the in-order rule gives way: a later line's context then shows an
  earlier unbuilt line as its input cut, as the deadline view does). Ready
  merges wait.

The wait ends when its last needed line is built, or when the runtime ends it
(`unwait`: the settle deadline, H2.3; the runtime calls it when the last
waiter leaves, as all waiters wait for the current view).

Every operation ends with the pump: the queue starts its candidates at once,
each with a new call number (`Step.started`), so a free slot and a startable
node are never left apart (law `need_progress`).

Representation: the built nodes as `Built`, a set indexed by level (the prefix
of each level's indexes that are all built, and the few built past it: lines
are built in message order, so that is all but a handful); the other sets are
small, and the running jobs a tuple in node order. An operation then costs
time in the levels and the busy nodes, not in the chat's length: the chat's
runtime calls it at every compactor event of a chat that never ends.

Pure: standard library only, frozen data, total functions. A malformed input
(a node that does not exist or is not running, a stale call number) gets the
outcome IGNORED and changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

from eukhe.rules.states import Choice, replace

JOBS = 8
"""Compactor calls running at once (busy nodes at most)."""
SETTLE_TIMEOUT = 20_000
"""Milliseconds a turn waits for its view at most (`memory.settleTimeoutMs`, H2.3)."""


def settle_timeout(ms: int) -> int:
    """The wait's deadline from `memory.settleTimeoutMs`: 0 (unset) or less means the default."""
    return SETTLE_TIMEOUT if ms <= 0 else ms


class Node(NamedTuple):
    """Tree node (l, i): messages [i·2^l, (i+1)·2^l), named `id+n` with id = i·2^l, n = 2^l."""

    l: int  # noqa: E741 (the spec's name)
    i: int

    @property
    def start(self) -> int:
        return self.i << self.l

    @property
    def n(self) -> int:
        return 1 << self.l

    @property
    def end(self) -> int:
        return (self.i + 1) << self.l


def exists(total: int, n: Node) -> bool:
    """Whether node n's messages all exist among `total` messages."""
    return n.l >= 0 and n.i >= 0 and n.l <= total.bit_length() and n.end <= total


def children(n: Node) -> tuple[Node, Node]:
    return (Node(n.l - 1, 2 * n.i), Node(n.l - 1, 2 * n.i + 1))


def parent(n: Node) -> Node:
    return Node(n.l + 1, n.i // 2)


@dataclass(frozen=True)
class Built:
    """A set of nodes, as the built ones are: `prefix[l]` is the count of level l's
    indexes from 0 that are all in it, `extra[l]` its indexes of level l past that.
    Kept whole (no index in `extra[l]` is `prefix[l]`, no empty level on top), so two
    equal sets are equal `Built`s. Compares, joins and differs like a frozenset."""

    prefix: tuple[int, ...] = ()
    extra: tuple[frozenset[int], ...] = ()
    count: int = 0

    @staticmethod
    def of(nodes: Iterable[Node]) -> Built:
        """The set of these nodes (those of a negative level or index left out)."""
        levels: dict[int, set[int]] = {}
        for l, i in nodes:  # noqa: E741
            if l >= 0 and i >= 0:
                levels.setdefault(l, set()).add(i)
        top = max(levels, default=-1)
        prefix, extra, count = [], [], 0
        for l in range(top + 1):  # noqa: E741
            have = levels.get(l, set())
            p = 0
            while p in have:
                p += 1
            prefix.append(p)
            extra.append(frozenset(i for i in have if i > p))
            count += len(have)
        return Built(tuple(prefix), tuple(extra), count)

    def __contains__(self, n: object) -> bool:
        if not isinstance(n, tuple) or len(n) != 2:
            return False
        l, i = n  # noqa: E741
        if not isinstance(l, int) or not isinstance(i, int) or not 0 <= l < len(self.prefix) or i < 0:
            return False
        return i < self.prefix[l] or i in self.extra[l]

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[Node]:
        for l, (p, more) in enumerate(zip(self.prefix, self.extra, strict=True)):  # noqa: E741
            for i in range(p):
                yield Node(l, i)
            for i in sorted(more):
                yield Node(l, i)

    def add(self, n: Node) -> Built:
        """This set with node n in it."""
        if n in self or n.l < 0 or n.i < 0:
            return self
        prefix, extra = list(self.prefix), list(self.extra)
        while len(prefix) <= n.l:
            prefix.append(0)
            extra.append(frozenset())
        p, more = prefix[n.l], set(extra[n.l])
        more.add(n.i)
        while p in more:
            more.discard(p)
            p += 1
        prefix[n.l], extra[n.l] = p, frozenset(more)
        return Built(tuple(prefix), tuple(extra), self.count + 1)

    def level(self, l: int) -> tuple[int, frozenset[int]]:  # noqa: E741
        """Level l's prefix and the indexes past it."""
        if 0 <= l < len(self.prefix):
            return self.prefix[l], self.extra[l]
        return 0, frozenset()

    def __or__(self, other: Iterable[Node]) -> Built:
        b = self
        for n in sorted(other):
            b = b.add(n)
        return b

    def __rsub__(self, other: Iterable[Node]) -> frozenset[Node]:
        return frozenset(n for n in other if n not in self)

    def __rand__(self, other: Iterable[Node]) -> frozenset[Node]:
        return frozenset(n for n in other if n in self)

    __and__ = __rand__

    def __ge__(self, other: Iterable[Node]) -> bool:
        return all(n in self for n in other)

    def __le__(self, other: Iterable[Node]) -> bool:
        return all(n in other for n in self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Built):
            return (self.prefix, self.extra) == (other.prefix, other.extra)
        if isinstance(other, (set, frozenset)):
            return self.count == len(other) and all(n in self for n in other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.prefix, self.extra))


BUILT_NONE = Built()


class Job(NamedTuple):
    """A running call: the node and its call number."""

    node: Node
    call: int


@dataclass(frozen=True)
class Cfg:
    jobs: int


LIMITS = Cfg(jobs=JOBS)


@dataclass(frozen=True)
class Queue:
    """total: messages; built: built nodes; running: running calls in node order;
    cooling: nodes waiting out RETRY; needed: the unbuilt view lines a turn waits for
    (waiting while any); calls: call numbers given so far (the next call gets it)."""

    total: int
    built: Built = field(default_factory=Built)  # given as any set of nodes, kept as Built
    running: tuple[Job, ...] = ()
    cooling: frozenset[Node] = frozenset()
    needed: frozenset[Node] = frozenset()
    calls: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.built, Built):
            object.__setattr__(self, "built", Built.of(self.built))

    @property
    def waiting(self) -> bool:
        return bool(self.needed)

    @property
    def busy(self) -> frozenset[Node]:
        return frozenset(j.node for j in self.running) | self.cooling


EMPTY = Queue(0, BUILT_NONE, (), frozenset(), frozenset(), 0)
"""An empty chat: no message, no node."""


class Kind(Choice):
    ADD = "add"  # a new message enters the chat
    BUILT = "built"  # call `call` of node `node` ended with its line saved
    FAILED = "failed"  # call `call` of node `node` ended without a line: it cools until RETRY
    RETRY = "retry"  # node `node` waited out RETRY
    WAIT = "wait"  # a turn waits for the view lines `needed`
    UNWAIT = "unwait"  # the last waiter left (settled or its deadline passed)


class Op(NamedTuple):
    kind: Kind
    node: Node = Node(0, 0)
    call: int = 0
    needed: frozenset[Node] = frozenset()


ADD = Op(Kind.ADD)
UNWAIT = Op(Kind.UNWAIT)


def built_op(node: Node, call: int) -> Op:
    return Op(Kind.BUILT, node, call)


def failed_op(node: Node, call: int) -> Op:
    return Op(Kind.FAILED, node, call)


def retry_op(node: Node) -> Op:
    return Op(Kind.RETRY, node)


def wait_op(needed: Iterable[Node]) -> Op:
    return Op(Kind.WAIT, needed=frozenset(needed))


class Outcome(Choice):
    APPLIED = "applied"
    IGNORED = "ignored"  # a node that does not exist or is not running, a stale call number


@dataclass(frozen=True)
class Step:
    """The queue after one operation and its pump: the calls to start (started) and
    to abort (stopped), each by node and call number."""

    queue: Queue
    outcome: Outcome
    started: tuple[Job, ...] = ()
    stopped: tuple[Job, ...] = ()


# ---------------------------------------------------------------- reading a queue


def first(q: Queue) -> int:
    """The first message whose line is unbuilt (`total` when none): level 0's prefix."""
    p, _ = q.built.level(0)
    return p if p < q.total else q.total


def idle(q: Queue, n: Node) -> bool:
    """Unbuilt, and neither running nor cooling."""
    return n not in q.built and n not in q.cooling and all(j.node != n for j in q.running)


def current(q: Queue, node: Node, call: int) -> bool:
    """Whether call `call` of `node` is running (not stopped, not ended): the runtime saves
    a call's line only while it is (a stopped call's result is ignored)."""
    return Job(node, call) in q.running


def room(cfg: Cfg, q: Queue) -> int:
    """Nodes that may start now: jobs less the busy nodes (never below 0)."""
    r = cfg.jobs - len(q.running) - len(q.cooling)
    return r if r > 0 else 0


def ready(q: Queue, below: int) -> list[Node]:
    """Merges whose children are built, not built themselves and ending at or before
    `below`, by level, then index. Read from each level's prefix and the few built
    past it, never from every built node: it costs the merges that wait, not the chat."""
    out: list[Node] = []
    b = q.built
    for l in range(len(b.prefix)):  # noqa: E741
        p, more = b.level(l)
        up, _ = b.level(l + 1)
        # parents j whose children are both in the prefix (2j + 1 < p), and not below up
        js = set(range(up, p // 2)) | {i // 2 for i in more if Node(l, i ^ 1) in b}
        for j in sorted(js):
            n = Node(l + 1, j)
            if n.end > below:
                break
            if n not in b and Node(l, 2 * j) in b and Node(l, 2 * j + 1) in b:
                out.append(n)
    return out


def candidates(cfg: Cfg, q: Queue) -> list[Node]:
    """The nodes the pump starts now, in order, within the room."""
    r = room(cfg, q)
    if r == 0:
        return []
    if q.waiting:
        return sorted(n for n in q.needed if idle(q, n))[:r]
    f = first(q)
    out = [Node(0, f)] if f < q.total and idle(q, Node(0, f)) else []
    out += [n for n in ready(q, f) if idle(q, n)]
    return out[:r]


def unbuilt_view_lines(q: Queue, before: int) -> frozenset[Node]:
    """The lines a turn whose view holds messages [0, before) waits for: the level-0
    nodes of its messages that are unbuilt (past level 0's built prefix)."""
    end = before if before < q.total else q.total
    p, _ = q.built.level(0)
    return frozenset(Node(0, m) for m in range(p, end) if Node(0, m) not in q.built)


def valid(cfg: Cfg, q: Queue) -> bool:
    """The queues the operations reach from an empty chat (the model's invariant)."""
    nodes = [j.node for j in q.running]
    calls = [j.call for j in q.running]
    busy = set(nodes) | q.cooling
    return (
        q.total >= 0
        and all(exists(q.total, n) for n in q.built | busy)
        and all(n.l == 0 or set(children(n)) <= q.built for n in q.built)
        and nodes == sorted(set(nodes))
        and len(set(calls)) == len(calls)
        and all(0 <= c < q.calls for c in calls)
        and not (busy & q.built)
        and not (set(nodes) & q.cooling)
        and all(n.l == 0 and exists(q.total, n) and n not in q.built for n in q.needed)
        and len(busy) <= (cfg.jobs if cfg.jobs > 0 else 0)
    )


# ---------------------------------------------------------------- operations


def _pump(cfg: Cfg, q: Queue, outcome: Outcome, stopped: tuple[Job, ...] = ()) -> Step:
    start = candidates(cfg, q)
    jobs = tuple(Job(n, q.calls + k) for k, n in enumerate(start))
    running = tuple(sorted(q.running + jobs))
    return Step(replace(q, running=running, calls=q.calls + len(jobs)), outcome, jobs, stopped)


def _ignored(q: Queue) -> Step:
    return Step(q, Outcome.IGNORED)


def add(cfg: Cfg, q: Queue) -> Step:
    """A new message: its line is unbuilt, and no waiting turn needs it."""
    return _pump(cfg, replace(q, total=q.total + 1), Outcome.APPLIED)


def built(cfg: Cfg, q: Queue, node: Node, call: int) -> Step:
    """Call `call` of `node` saved its line: the node is built (no longer needed)."""
    job = Job(node, call)
    if job not in q.running:
        return _ignored(q)
    running = tuple(j for j in q.running if j != job)
    t = replace(q, running=running, built=q.built | {node}, needed=q.needed - {node})
    return _pump(cfg, t, Outcome.APPLIED)


def failed(cfg: Cfg, q: Queue, node: Node, call: int) -> Step:
    """Call `call` of `node` ended without a line (a failure or a disk failure, or the
    failure cap's cut whose save failed): the node cools until RETRY passes."""
    job = Job(node, call)
    if job not in q.running:
        return _ignored(q)
    running = tuple(j for j in q.running if j != job)
    return _pump(cfg, replace(q, running=running, cooling=q.cooling | {node}), Outcome.APPLIED)


def retry(cfg: Cfg, q: Queue, node: Node) -> Step:
    """`node` waited out RETRY: it may start again."""
    if node not in q.cooling:
        return _ignored(q)
    return _pump(cfg, replace(q, cooling=q.cooling - {node}), Outcome.APPLIED)


def wait(cfg: Cfg, q: Queue, needed: Iterable[Node]) -> Step:
    """A turn waits for these view lines (kept: the unbuilt level-0 nodes that exist).
    Every busy node not needed is stopped; needed calls go on."""
    keep = frozenset(n for n in needed if n.l == 0 and exists(q.total, n) and n not in q.built)
    need = q.needed | keep
    if not need:
        return _pump(cfg, q, Outcome.APPLIED)
    stopped = tuple(j for j in q.running if j.node not in need)
    t = replace(
        q,
        needed=need,
        running=tuple(j for j in q.running if j.node in need),
        cooling=frozenset(n for n in q.cooling if n in need),
    )
    return _pump(cfg, t, Outcome.APPLIED, stopped)


def unwait(cfg: Cfg, q: Queue) -> Step:
    """The wait ends (its deadline passed): ready merges may start again."""
    return _pump(cfg, replace(q, needed=frozenset()), Outcome.APPLIED)


def step(cfg: Cfg, q: Queue, op: Op) -> Step:
    """The queue after one operation, and what the runtime starts and aborts."""
    k = op.kind
    if k is Kind.ADD:
        return add(cfg, q)
    if k is Kind.BUILT:
        return built(cfg, q, op.node, op.call)
    if k is Kind.FAILED:
        return failed(cfg, q, op.node, op.call)
    if k is Kind.RETRY:
        return retry(cfg, q, op.node)
    if k is Kind.WAIT:
        return wait(cfg, q, op.needed)
    return unwait(cfg, q)


@dataclass(frozen=True)
class Statistics:
    """A snapshot of the queue for status lines."""

    messages: int
    built: int
    running: int
    cooling: int
    waiting: bool
    needed: int
    first: int


def statistics(q: Queue) -> Statistics:
    return Statistics(
        q.total, len(q.built), len(q.running), len(q.cooling), q.waiting, len(q.needed), first(q)
    )
