"""The chat memory's costs, against the targets of its issue.

    .venv/bin/python bench/memory.py [--sizes 10000,100000,1000000] [--turns 1000]

- append-and-fit: one message into the view (rules.view `add` then `fit`, every
  line built, as when the compactor keeps up), the µs a message over the last
  10,000 of each size (the median of its runs of 1,000; target ≤ 20 µs at 1e6),
  and the same per message from the start (growth: no worse than O(log n) a
  message); and against the same rule found by scanning every part (the
  baseline, in the same run, so the machine's speed leaves their ratio alone);
- the queue: a message's ADD and the BUILT of each call it starts (rules.queue),
  µs a message at each size, for a chat whose lines are all built;
- the store: appending a run's messages (8 a transaction) to the chat's table,
  against a bare INSERT of the same rows into a table of the same shape, on the
  same SQLite file (target ≤ 2×);
- render: the view's text at the largest size (target ≤ 50 ms);
- prefix: over `turns` consecutive turns (a turn adds 4 messages), the median
  share of each view's bytes that the next view keeps as its prefix (≥ 90%);
- resident memory at the largest size (the process's peak RSS).

Lines are synthetic: a message's line is 60 to 200 bytes; a merge joins its two
children when they fit NODE together, else it is 300 to NODE bytes.
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import tempfile
import time
from pathlib import Path

from eukhe.rules import view as v
from eukhe.rules.compactor import NODE
from eukhe.rules.queue import Node, parent


def line_size(n: Node, rng: random.Random, sizes: dict[Node, int]) -> int:
    """A message's line 60 to 200 bytes; a merge joins its children when they fit NODE
    together (a newline between), else the model writes 300 to NODE bytes."""
    if n.l == 0:
        return rng.randint(60, 200)
    joined = sizes[Node(n.l - 1, 2 * n.i)] + 1 + sizes[Node(n.l - 1, 2 * n.i + 1)]
    return joined if joined <= NODE else rng.randint(300, NODE)


class Tree:
    """Sizes and built lines of a chat whose compactor keeps up: a node is built as soon
    as its messages all exist."""

    def __init__(self, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.sizes: dict[Node, int] = {}
        self.built: set[Node] = set()

    def message(self, i: int) -> None:
        n = Node(0, i)
        while True:
            self.sizes[n] = line_size(n, self.rng, self.sizes)
            self.built.add(n)
            if n.i % 2 == 0:
                break
            n = parent(n)


def append_and_fit(sizes: list[int], budget: int) -> dict[int, tuple[float, float]]:
    """µs a message over the last 10,000 appends of each size (the median of its ten
    runs of 1,000, so a burst of another process's load on the machine does not count),
    and from the start: the view's `add` and `fit` only (the synthetic tree's own
    bookkeeping is not timed)."""
    tree = Tree()
    view = v.EMPTY
    out: dict[int, tuple[float, float]] = {}
    spent = chunk = 0.0
    chunks: list[float] = []
    clock = time.perf_counter
    for total in range(1, max(sizes) + 1):
        tree.message(total - 1)
        began = clock()
        view = v.fit(v.add(view, tree.sizes), tree.sizes, tree.built, budget)
        took = clock() - began
        spent += took
        chunk += took
        if total % 1_000 == 0:
            chunks = [*chunks[-9:], chunk]
            chunk = 0.0
        if total in sizes:
            out[total] = (statistics.median(chunks) / 1_000 * 1e6, spent / total * 1e6)
    append_and_fit.view = view  # type: ignore[attr-defined]
    append_and_fit.tree = tree  # type: ignore[attr-defined]
    return out


def scan_fit(view: v.View, sizes: dict[Node, int], built: set[Node], budget: int) -> v.View:
    """The baseline: the same rule, found by looking at every part for the most due pair
    (with the bytes counted once a call), as the definition reads and this code did."""
    have = v.view_bytes(view, sizes)
    if have <= budget:
        return view
    while have > v.mark(budget):
        best = -1
        for at in range(len(view.parts) - 1):
            if v.mergeable(view, at, built) and (
                best < 0 or v.more_due(view.total, view.parts[at], view.parts[best])
            ):
                best = at
        if best < 0:
            break
        a, b = view.parts[best], view.parts[best + 1]
        have += v.size(parent(a), sizes) - v.size(a, sizes) - v.size(b, sizes)
        view = v.merge(view, best, sizes)
    return view


def against_the_scan(total: int, budget: int) -> tuple[float, float]:
    """µs a message at `total` messages, ours and the scan's, over the same 1,000
    messages in the same run (so the machine's speed cancels out of their ratio)."""
    tree = Tree()
    view = v.EMPTY
    for i in range(total):
        tree.message(i)
        view = v.fit(v.add(view, tree.sizes), tree.sizes, tree.built, budget)
    for i in range(total, total + 1_000):
        tree.message(i)
    out = []
    for fit in (v.fit, scan_fit):
        w = view
        began = time.perf_counter()
        for _ in range(1_000):
            w = fit(v.add(w, tree.sizes), tree.sizes, tree.built, budget)  # type: ignore[operator]
        out.append((time.perf_counter() - began) / 1_000 * 1e6)
    return out[0], out[1]


def queue_cost(sizes: list[int], per: int = 2_000) -> dict[int, float]:
    """µs a message through rules.queue (its ADD, and the BUILT of every call that
    starts) for a chat of each size whose lines are all built, as the live chat steps it."""
    from eukhe.rules import queue as q

    out: dict[int, float] = {}
    for total in sizes:
        built = []
        for m in range(total):
            n = Node(0, m)
            built.append(n)
            while n.i % 2 == 1:
                n = parent(n)
                built.append(n)
        s = q.Queue(total, q.Built.of(built))
        began = time.perf_counter()
        for _ in range(per):
            st = q.step(q.LIMITS, s, q.ADD)
            s = st.queue
            todo = list(st.started)
            while todo:
                job = todo.pop(0)
                st = q.step(q.LIMITS, s, q.built_op(job.node, job.call))
                s = st.queue
                todo += st.started
        out[total] = (time.perf_counter() - began) / per * 1e6
    return out


def store_ratio(rows: int = 4_000, batch: int = 8) -> tuple[float, float]:
    """µs a message through the chat store's append, and through a bare INSERT."""
    import sqlalchemy as sa

    from eukhe.memory.log import Entry, EntryKind
    from eukhe.memory.tables import ChatStore

    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'eukhe.sqlite'}"
        store = ChatStore(url)
        text = "a tool result of moderate length; " * 6
        began = time.perf_counter()
        for k in range(0, rows, batch):
            store.append(
                [Entry(f"run/{k + j}", EntryKind.ECHO, text, "2026-12-01T00:00:00Z") for j in range(batch)]
            )
        ours = (time.perf_counter() - began) / rows * 1e6
        store.close()
        engine = sa.create_engine(url)
        with engine.begin() as c:
            c.execute(
                sa.text(
                    "CREATE TABLE bare (id INTEGER PRIMARY KEY, key TEXT UNIQUE, kind TEXT, "
                    "text TEXT, size INTEGER, date TEXT)"
                )
            )
        insert = sa.text("INSERT INTO bare VALUES (:id, :key, :kind, :text, :size, :date)")
        began = time.perf_counter()
        for k in range(0, rows, batch):
            with engine.begin() as c:
                c.execute(
                    insert,
                    [
                        {
                            "id": k + j,
                            "key": f"run/{k + j}",
                            "kind": "echo",
                            "text": text,
                            "size": len(text),
                            "date": "2026-12-01T00:00:00Z",
                        }
                        for j in range(batch)
                    ],
                )
        bare = (time.perf_counter() - began) / rows * 1e6
        engine.dispose()
    return ours, bare


def render_ms(view: v.View, tree: Tree) -> float:
    texts = {n: "x" * tree.sizes.get(n, 0) for n in view.parts}
    best = float("inf")
    for _ in range(5):
        began = time.perf_counter()
        v.render(view.parts, texts)
        best = min(best, time.perf_counter() - began)
    return best * 1e3


def prefix_share(turns: int, budget: int, per_turn: int = 4) -> float:
    """The median share of a view's bytes the next view keeps as its prefix."""
    tree = Tree(seed=11)
    view = v.EMPTY
    total = 0
    for _ in range(2 * budget // 100):  # a chat long enough that its view is full
        tree.message(total)
        total += 1
        view = v.fit(v.add(view, tree.sizes), tree.sizes, tree.built, budget)
    shares = []
    for _ in range(turns):
        texts = {n: "x" * tree.sizes[n] for n in tree.sizes}
        before = v.render(view.parts, texts)
        for _ in range(per_turn):
            tree.message(total)
            total += 1
            view = v.fit(v.add(view, tree.sizes), tree.sizes, tree.built, budget)
        texts.update({n: "x" * tree.sizes[n] for n in tree.sizes})
        after = v.render(view.parts, texts)
        keep = 0
        for a, b in zip(before, after, strict=False):
            if a != b:
                break
            keep += 1
        shares.append(keep / len(before))
    return statistics.median(shares)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--turns", type=int, default=1000)
    ap.add_argument("--smoke", action="store_true", help="every path once, small: the bench still runs")
    args = ap.parse_args()
    if args.smoke:
        args.sizes, args.turns = "1000,2000", 20
    sizes = sorted(int(s) for s in args.sizes.split(","))
    budget = v.VIEW
    costs = append_and_fit(sizes, budget)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("append-and-fit (rules.view add + fit, every line built), µs a message:")
    for n in sizes:
        last, mean = costs[n]
        print(
            f"  {n:>9,} messages: {last:8.1f} over the last 10,000 (median of 1,000s), "
            f"{mean:8.1f} from the start"
        )
    top = sizes[-1]
    print(
        f"  target ≤ 20 µs at 1e6: {costs[top][0]:.1f} µs at {top:,} ({costs[top][0] / 20:.2f}× the target)"
    )
    growth = costs[sizes[-1]][0] / costs[sizes[0]][0]
    allows = len(str(top)) / len(str(sizes[0]))
    print(f"  growth from {sizes[0]:,} to {top:,}: {growth:.2f}× (O(log n) allows {allows:.2f}×)")
    ours, scan = against_the_scan(sizes[0], budget)
    print(
        f"  against the scan of every part, same run, at {sizes[0]:,}: {ours:.1f} µs and {scan:.1f} µs, "
        f"{scan / ours:.0f}× faster"
    )
    queue = queue_cost(sizes)
    print("the queue (rules.queue ADD and BUILT, every line built), µs a message:")
    for n in sizes:
        print(f"  {n:>9,} messages: {queue[n]:8.1f}")
    print(
        f"  growth from {sizes[0]:,} to {top:,}: {queue[top] / queue[sizes[0]]:.2f}× "
        f"(O(log n) allows {allows:.2f}×)"
    )
    ours, bare = store_ratio()
    print(
        f"store: append {ours:.1f} µs a message against a bare INSERT {bare:.1f} µs: "
        f"{ours / bare:.2f}× (target ≤ 2×)"
    )
    view, tree = append_and_fit.view, append_and_fit.tree  # type: ignore[attr-defined]
    ms = render_ms(view, tree)
    print(f"render at {top:,} messages: {ms:.1f} ms, {len(view.parts)} parts (target ≤ 50 ms)")
    share = prefix_share(args.turns, budget)
    print(f"prefix kept over {args.turns} turns: median {share:.1%} (target ≥ 90%)")
    print(f"resident memory at {top:,} messages: {rss:.0f} MiB (peak)")


if __name__ == "__main__":
    main()
