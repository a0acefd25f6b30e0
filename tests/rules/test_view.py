"""The view of the chat: its parts tile the chat, it fits whenever the built lines allow,
views only coarsen (so consecutive views share every part before the first merge),
and unbuilt lines keep it bounded (each shows at most NODE bytes)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from eukhe.rules import compactor, queue
from eukhe.rules import view as v
from eukhe.rules.compactor import NODE, nbytes
from eukhe.rules.queue import Node
from eukhe.rules.view import View


def n(l: int, i: int) -> Node:  # noqa: E741
    return Node(l, i)


@dataclass
class Chat:
    """A chat as the runtime keeps it: its view, the built lines and every size."""

    budget: int
    view: View = v.EMPTY
    built: set[Node] = field(default_factory=set)
    sizes: dict[Node, int] = field(default_factory=dict)

    def add(self, size: int) -> None:
        self.sizes[Node(0, self.view.total)] = size
        self.view = v.fit(v.add(self.view, self.sizes), self.sizes, self.built, self.budget)

    def build(self, node: Node, size: int) -> None:
        self.built.add(node)
        old, self.sizes[node] = self.sizes.get(node, 0), size
        self.view = v.resize(self.view, node, old, size)
        self.view = v.fit(self.view, self.sizes, self.built, self.budget)

    def buildable(self) -> list[Node]:
        """Unbuilt nodes whose children are built (level 0: any unbuilt message)."""
        out = []
        total = self.view.total
        for level in range(total.bit_length() + 1):
            for i in range(total >> level):
                node = Node(level, i)
                if node not in self.built and (level == 0 or set(queue.children(node)) <= self.built):
                    out.append(node)
        return out


EVENTS = st.lists(
    st.tuples(st.booleans(), st.integers(0, 10**6), st.integers(0, 2 * NODE)), min_size=1, max_size=120
)


def play(budget: int, events: list[tuple[bool, int, int]], check: object = None) -> list[View]:
    """Messages come and lines get built, in any order; the view after each event."""
    chat = Chat(budget)
    views = [chat.view]
    for is_add, pick, size in events:
        nodes = chat.buildable()
        if is_add or not nodes:
            chat.add(size * 4)  # a message's input may be far over NODE
        else:
            chat.build(nodes[pick % len(nodes)], min(size, NODE))
        views.append(chat.view)
        if callable(check):
            check(chat)
    return views


def covers(new: View, old: View) -> bool:
    """Every part of `old` lies inside exactly one part of `new` (new only coarsens)."""
    at = 0
    for part in old.parts:
        while at < len(new.parts) and new.parts[at].end <= part.start:
            at += 1
        if at == len(new.parts):
            return False
        whole = new.parts[at]
        if not (whole.l >= part.l and whole.start <= part.start and part.end <= whole.end):
            return False
    return True


def scanned_most_due(w: View, built: set[Node]) -> int:
    """The most due pair by the definition, every part looked at: the oracle of the index."""
    best = -1
    for at in range(len(w.parts) - 1):
        if v.mergeable(w, at, built) and (best < 0 or v.more_due(w.total, w.parts[at], w.parts[best])):
            best = at
    return best


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 6000), EVENTS)
def test_the_view_tiles_the_chat_and_fits_whenever_the_built_lines_allow(
    budget: int, events: list[tuple[bool, int, int]]
) -> None:
    def check(chat: Chat) -> None:
        w = chat.view
        assert v.tiles(w) and w.total == sum(1 for k in chat.sizes if k.l == 0)
        assert v.view_bytes(w, chat.sizes) <= budget or v.most_due(w, chat.built) == -1
        assert all(p in chat.built for p in w.parts if p.l >= 1)  # unbuilt lines are level 0
        assert w.size == v.view_bytes(w, chat.sizes) and w.pairs == v.of(w.parts, chat.sizes).pairs
        assert v.most_due(w, chat.built) == scanned_most_due(w, chat.built)
        assert set(v.unbuilt(w, chat.built)) == queue.unbuilt_view_lines(
            queue.Queue(w.total, frozenset(chat.built), (), frozenset(), frozenset(), 0), w.total
        )

    play(budget, events, check)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 6000), EVENTS)
def test_views_only_coarsen_so_consecutive_views_share_every_part_before_the_first_merge(
    budget: int, events: list[tuple[bool, int, int]]
) -> None:
    """Between two consecutive views, the later one has every part of the earlier one
    inside one of its own parts (a merged part is never split); so the parts before the
    first one merged are the same, and a new message's part is last or merged into it."""
    views = play(budget, events)
    for before, after in itertools.pairwise(views):
        assert covers(after, before)
        same = 0
        while same < min(len(before.parts), len(after.parts)) and before.parts[same] == after.parts[same]:
            same += 1
        if same < len(before.parts):  # the first part that differs was merged into a bigger one
            old, new = before.parts[same], after.parts[same]
            assert new.start == old.start and new.l > old.l
        else:  # nothing merged: the view is the same, or the new message's part is added
            assert after.parts[same:] in ((), (Node(0, before.total),))
        assert after.total in (before.total, before.total + 1)
    for earlier, later in zip(views, views[5:], strict=False):
        assert covers(later, earlier)


@given(st.integers(0, 300), st.integers(0, 10**6))
def test_unbuilt_lines_keep_the_view_bounded(total: int, size: int) -> None:
    """With no line built, each part shows at most NODE bytes of its message, whatever
    the message's size, so the view grows by a bounded amount a message."""
    sizes = {Node(0, m): size for m in range(total)}
    w = v.fold(total, sizes, set(), 0)
    assert w.parts == tuple(Node(0, m) for m in range(total))
    per_part = max((len(v.label(p)) + NODE + 1 for p in w.parts), default=0)
    assert v.view_bytes(w, sizes) <= len(v.OPEN) + len(v.CLOSE) + total * per_part


@given(
    st.lists(st.text(max_size=800), max_size=12),
    st.lists(
        st.text(alphabet=st.characters(codec="ascii", exclude_characters="\r"), max_size=800), max_size=12
    ),
)
def test_the_rendered_view_never_exceeds_its_byte_count(texts: list[str], plain: list[str]) -> None:
    """`view_bytes` bounds what `render` makes of the same texts; it is exact for texts
    without a carriage return whose cuts fall between characters (ASCII)."""
    for lines, exact in ((texts, False), (plain, True)):
        parts = tuple(Node(0, m) for m in range(len(lines)))
        shown = dict(zip(parts, lines, strict=True))
        sizes = {p: nbytes(t) for p, t in shown.items()}
        w = v.of(parts, sizes)
        out = v.render(w.parts, shown)
        assert out.startswith("<chat>\n") and out.endswith("</chat>")
        assert (nbytes(out) == v.view_bytes(w, sizes)) if exact else (nbytes(out) <= v.view_bytes(w, sizes))
        body = out[len(v.OPEN) : -len(v.CLOSE)].split("\n")[:-1]
        assert len(body) == len(lines)
        for p, line in zip(w.parts, body, strict=True):
            assert line.startswith(v.label(p)) and nbytes(line) <= len(v.label(p)) + NODE


def test_render_shows_ids_counts_and_newlines_as_spaces() -> None:
    parts = (n(1, 0), n(0, 2), n(0, 3))
    out = v.render(parts, {n(1, 0): "user: a\r\nb", n(0, 2): "talk: c\rd\ne", n(0, 3): "x" * 600})
    assert out == f"<chat>\n0+2|user: a b\n2+1|talk: c d e\n3+1|{'x' * NODE}\n</chat>"
    assert v.render((n(0, 0),), {}) == "<chat>\n0+1|\n</chat>"
    assert v.render((), {}) == "<chat>\n</chat>"


def test_the_most_due_pair_weighs_age_against_level() -> None:
    """due = age / 2^(l + 2): age 6 at level 0 (6/4) beats age 8 at level 1 (8/8); a tie
    merges the older pair."""
    assert v.more_due(8, n(0, 2), n(1, 0)) and not v.more_due(8, n(1, 0), n(0, 2))
    assert not v.more_due(8, n(1, 0), n(0, 4)) and not v.more_due(8, n(0, 4), n(1, 0))  # 8/8 = 4/4
    w = v.of((n(1, 0), n(1, 1), n(0, 4), n(0, 5), n(0, 6), n(0, 7)), {})
    built = {n(2, 0), n(1, 2), n(1, 3)}
    assert v.most_due(w, built) == 0  # ages 8/8, 4/4, 2/4: the older of the tie
    assert v.most_due(w, {n(1, 2), n(1, 3)}) == 2
    assert v.merge(w, 0, {}).parts[0] == n(2, 0) and v.merge(w, 9, {}) == w


def test_fit_merges_only_while_over_budget_and_only_into_built_lines() -> None:
    sizes = {n(0, m): 100 for m in range(4)} | {n(1, 0): 50, n(1, 1): 50, n(2, 0): 10}
    built = set(sizes)
    w = v.fold(4, sizes, built, 10**9)
    assert w.parts == tuple(n(0, m) for m in range(4))
    small = v.fit(w, sizes, built, 0)
    assert small.parts == (n(2, 0),)
    assert v.fit(w, sizes, {n(0, m) for m in range(4)}, 0) == w  # no parent built: nothing merges
    assert v.settled(small, built) and not v.settled(w, set())
    assert compactor.NODE == NODE == 512 and v.VIEW == 128_000


def test_a_view_over_its_budget_merges_down_to_the_refit_mark() -> None:
    """Over the budget, merges go on to 7/8 of it, so the turns after merge nothing and
    keep the whole view before them as their prefix."""
    sizes = {n(0, m): 100 for m in range(64)}
    built: set[Node] = set(sizes)
    for level in range(1, 7):
        for i in range(64 >> level):
            sizes[n(level, i)] = 100
            built.add(n(level, i))
    w = v.fold(40, sizes, built, 10**9)
    budget = v.view_bytes(w, sizes) - 1
    fitted = v.fit(w, sizes, built, budget)
    assert v.view_bytes(fitted, sizes) <= v.mark(budget) < budget
    assert v.fit(fitted, sizes, built, budget) == fitted  # under the budget: nothing merges
    grown = v.add(fitted, sizes)
    assert grown.size <= budget and v.fit(grown, sizes, built, budget) == grown
