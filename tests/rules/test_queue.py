"""The H2.1 model of the compactor queue."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from eukhe.rules import queue as q
from eukhe.rules.queue import Cfg, Job, Node, Outcome, Queue, Step


def n(l: int, i: int) -> Node:  # noqa: E741
    return Node(l, i)


def run(cfg: Cfg, *ops: q.Op, s: Queue = q.EMPTY) -> tuple[Queue, list[Step]]:
    steps = []
    for op in ops:
        st = q.step(cfg, s, op)
        steps.append(st)
        s = st.queue
    return s, steps


def finish(cfg: Cfg, s: Queue, *nodes: Node) -> Queue:
    """Build these running nodes, in order, by their own call numbers."""
    for node in nodes:
        (job,) = [j for j in s.running if j.node == node]
        s = q.built(cfg, s, node, job.call).queue
    return s


def test_the_constants_have_the_spec_values() -> None:
    assert q.JOBS == 8 and q.LIMITS == Cfg(8)
    assert q.SETTLE_TIMEOUT == 20_000
    assert (q.settle_timeout(0), q.settle_timeout(-5), q.settle_timeout(1500)) == (20_000, 20_000, 1500)


def test_a_node_covers_its_messages() -> None:
    assert (n(2, 3).start, n(2, 3).n, n(2, 3).end) == (12, 4, 16)
    assert q.exists(16, n(2, 3)) and not q.exists(15, n(2, 3)) and not q.exists(10**6, n(10**9, 0))


def test_messages_are_compressed_one_at_a_time_in_order_and_merges_run_alongside() -> None:
    cfg = Cfg(8)
    s, steps = run(cfg, q.ADD, q.ADD, q.ADD)
    assert [j.node for st in steps for j in st.started] == [n(0, 0)]
    s = finish(cfg, s, n(0, 0))
    assert [j.node for j in s.running] == [n(0, 1)]
    s = finish(cfg, s, n(0, 1))
    assert [j.node for j in s.running] == [n(0, 2), n(1, 0)]


def test_merges_wait_for_every_line_before_their_end() -> None:
    cfg = Cfg(8)
    s, _ = run(cfg, q.ADD, q.ADD, q.ADD, q.ADD)
    s = finish(cfg, s, n(0, 0), n(0, 1))
    assert {j.node for j in s.running} == {n(0, 2), n(1, 0)}
    assert q.ready(s, q.first(s)) == [n(1, 0)]


def test_at_most_jobs_nodes_are_busy() -> None:
    cfg = Cfg(2)
    s, _ = run(cfg, *[q.ADD] * 8)
    for m in range(8):
        s = finish(cfg, s, n(0, m))
        assert len(s.busy) <= 2
    assert len(s.running) == 2


def test_a_waiting_turn_stops_a_merge_that_holds_the_slot() -> None:
    """One job slot, a merge running (its model silent), a new message, a waiting turn:
    the merge is stopped (no failure), the turn's line starts, the merge's late result
    is ignored, and the merge starts again once the wait is over."""
    cfg = Cfg(1)
    s, _ = run(cfg, q.ADD, q.ADD)
    s = finish(cfg, s, n(0, 0), n(0, 1))
    (merge,) = s.running
    assert merge.node == n(1, 0)
    s = q.add(cfg, s).queue
    st = q.wait(cfg, s, q.unbuilt_view_lines(s, s.total))
    assert st.stopped == (merge,)
    assert [j.node for j in st.started] == [n(0, 2)]
    s = st.queue
    assert not q.current(s, merge.node, merge.call) and q.current(s, *st.started[0])
    assert q.built(cfg, s, merge.node, merge.call).outcome is Outcome.IGNORED
    st = q.built(cfg, s, n(0, 2), st.started[0].call)
    assert not st.queue.waiting and [j.node for j in st.started] == [n(1, 0)]


def test_a_needed_line_is_never_stopped_and_a_failed_one_starts_again_after_its_retry() -> None:
    cfg = Cfg(2)
    s, _ = run(cfg, q.ADD, q.ADD)
    (first,) = s.running
    st = q.wait(cfg, s, q.unbuilt_view_lines(s, s.total))
    assert st.stopped == () and first in st.queue.running
    # the wait starts the second line beside the first: a free slot never idles
    assert [j.node for j in st.started] == [n(0, 1)]
    s = q.failed(cfg, st.queue, first.node, first.call).queue
    assert first.node in s.cooling and s.waiting
    assert q.failed(cfg, s, first.node, first.call).outcome is Outcome.IGNORED
    st = q.retry(cfg, s, first.node)
    assert [j.node for j in st.started] == [first.node] and st.started[0].call != first.call


def test_a_wait_keeps_only_unbuilt_level_0_lines_that_exist() -> None:
    cfg = Cfg(2)
    s, _ = run(cfg, q.ADD, q.ADD)
    s = finish(cfg, s, n(0, 0))
    st = q.wait(cfg, s, {n(0, 0), n(1, 0), n(0, 7), n(-1, 3)})
    assert st.queue.needed == frozenset() and not st.queue.waiting
    st = q.wait(cfg, s, {n(0, 0), n(0, 1)})
    assert st.queue.needed == {n(0, 1)}


def test_the_wait_ends_with_its_last_line_or_by_unwait() -> None:
    cfg = Cfg(3)
    s, _ = run(cfg, q.ADD, q.ADD)
    s = q.wait(cfg, s, q.unbuilt_view_lines(s, 2)).queue
    assert s.needed == {n(0, 0), n(0, 1)}
    s = finish(cfg, s, n(0, 1))
    assert s.waiting
    assert not q.unwait(cfg, s).queue.waiting
    assert not finish(cfg, s, n(0, 0)).waiting


def test_statistics_are_a_snapshot() -> None:
    cfg = Cfg(8)
    s, _ = run(cfg, q.ADD, q.ADD)
    assert q.statistics(s) == q.Statistics(2, 0, 1, 0, False, 0, 0)


OPS = st.sampled_from(["add", "built", "failed", "retry", "wait", "wait_before", "unwait", "stale"])


@given(st.integers(1, 8), st.lists(st.tuples(OPS, st.integers(0, 50)), max_size=150))
def test_every_queue_reached_is_valid_and_starts_in_order_outside_a_wait(
    jobs: int, ops: list[tuple[str, int]]
) -> None:
    """Outside a wait only the first unbuilt message's line starts at level 0, and a
    merge starts only when every line before its end is built."""
    cfg = Cfg(jobs)
    s = q.EMPTY
    for name, pick in ops:
        if name == "add":
            op = q.ADD
        elif name in ("built", "failed") and s.running:
            j = s.running[pick % len(s.running)]
            op = q.built_op(*j) if name == "built" else q.failed_op(*j)
        elif name == "retry" and s.cooling:
            op = q.retry_op(sorted(s.cooling)[pick % len(s.cooling)])
        elif name == "wait":
            op = q.wait_op(q.unbuilt_view_lines(s, s.total))
        elif name == "wait_before":
            op = q.wait_op(q.unbuilt_view_lines(s, pick % (s.total + 1)))
        elif name == "unwait":
            op = q.UNWAIT
        else:
            op = q.built_op(Node(0, pick), s.calls + pick)
        st = q.step(cfg, s, op)
        t = st.queue
        assert q.valid(cfg, t)
        if not t.waiting:
            f = q.first(t)
            for j in st.started:
                assert (j.node == Node(0, f)) if j.node.l == 0 else j.node.end <= f
        assert all(isinstance(j, Job) and j in t.running for j in st.started)
        s = t


NODES = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 40)).map(lambda t: Node(*t)), max_size=80)


@given(NODES, NODES)
def test_built_is_the_set_of_its_nodes(added: list[Node], probe: list[Node]) -> None:
    """`Built` (each level's prefix and the nodes past it) holds, counts, lists, joins
    and differs exactly as the frozenset of the same nodes; equal sets are equal Builts."""
    b = q.BUILT_NONE
    for node in added:
        b = b.add(node)
    want = frozenset(added)
    assert len(b) == len(want) and frozenset(b) == want and b == want
    assert all((x in b) == (x in want) for x in probe + added)
    assert b == q.Built.of(reversed(added)) and hash(b) == hash(q.Built.of(want))
    assert (
        frozenset(probe) - b == frozenset(probe) - want and (frozenset(probe) & b) == frozenset(probe) & want
    )
    assert (b | probe) == want | frozenset(probe) and (set(probe) <= b) == (set(probe) <= want)
    assert all(p not in more for p, more in zip(b.prefix, b.extra, strict=True))  # kept whole


@given(st.integers(0, 70), NODES, st.integers(0, 70))
def test_ready_merges_are_read_from_the_index_as_the_definition_says(
    total: int, extra: list[Node], below: int
) -> None:
    """The index's ready merges equal the definition over every built node: both children
    built, the merge not, ending at or before `below`, by level then index."""
    built = {Node(0, m) for m in range(total // 2)} | {x for x in extra if q.exists(total, x)}
    s = Queue(total, frozenset(built))
    want = sorted(
        q.parent(x)
        for x in built
        if x.i % 2 == 0
        and Node(x.l, x.i + 1) in built
        and q.parent(x) not in built
        and q.parent(x).end <= below
    )
    assert q.ready(s, below) == want
    assert q.first(s) == next((m for m in range(total) if Node(0, m) not in built), total)
