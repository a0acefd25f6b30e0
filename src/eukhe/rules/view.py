"""The view of the chat: the lines every root turn starts from.

The view is a row of parts, tree nodes (l, i) of `rules.queue`, oldest first,
tiling the chat's messages [0, T). A new message enters as its own level-0
part (`add`). Once the view is over its budget, `fit` merges the most due
adjacent sibling pair, (l, 2j) and (l, 2j + 1), into their parent (l + 1, j),
if the parent's line is built, again and again until the view is down to its
refit mark (REFIT: 7/8 of the budget) or no such pair is left. A pair is due
by age over size: due = age / 2^(l + 2), with age = T less the pair's first
message, compared exactly (cross-multiplied integers). Among equally due pairs
the oldest (leftmost) is merged first.

The refit mark is ours, not the original's: merging only back to the budget
merges a pair or two at every turn, anywhere in the view, so a turn kept about
half of the view before it as its prefix. Merging down to the mark leaves room
for many turns that merge nothing, whose views keep all of the one before as
their prefix, which the provider's prompt cache rewards (bench/memory.py).

Cost. A view carries its index: the starts of the sibling pairs it holds, a
sorted row per level, and its byte count. The most due pair is then the
leftmost pair with a built parent of some level (within a level the leftmost
is the oldest, so the most due), compared across the levels: O(levels) when
the compactor keeps up, rather than a scan of every part.

A merged part is never split again, so views only coarsen: every part of a
view lies inside one part of every later view, and between two views the
parts before the first merge are the same (the request prefix stays
cacheable). Only built lines are merged into, so an unbuilt view line is
always a level-0 part: the lines a waiting turn needs (`unbuilt`).

Bytes. A part shows one line `{id}+{n}|{text}` and a newline, where id = i·2^l
and n = 2^l; the text is the part's line cut to NODE bytes with newlines shown
as spaces. A built line fits in NODE bytes (H1); an unbuilt line shows its
input cut to NODE bytes (H2.3). `size` counts a part as its prefix, its
newline and min(its text's bytes, NODE); `view_bytes` adds `<chat>` and
`</chat>`: never less than what `render` makes of the same texts (a cut can
only shorten, and so can a newline pair shown as one space), and equal when
no cut falls inside a character and no text holds a carriage return.

Inputs come as plain data: `sizes` maps a node to the UTF-8 bytes of its text
(the built line; for an unbuilt level-0 part, the message as its line's input)
and `built` is the set of built nodes. A node missing from `sizes` counts 0
bytes. Every function is a pure function of them. A view's byte count is
`view_bytes` under the sizes its parts had when they entered; when a part's
size changes (an unbuilt level-0 line gets built), `resize` says so.

Pure: standard library only, frozen data, total functions.
"""

from __future__ import annotations

import itertools
from bisect import bisect_left, insort
from collections.abc import Collection, Mapping, Sequence
from typing import NamedTuple

from eukhe.rules.compactor import NODE, cut
from eukhe.rules.queue import Node, parent

VIEW = 128_000
"""Budget of the rendered view, in UTF-8 bytes."""

REFIT = 8
"""Once over its budget, the view merges down to (REFIT - 1) / REFIT of it."""

OPEN = "<chat>\n"
CLOSE = "</chat>"


class View(NamedTuple):  # a tuple: made at every add and merge, so made cheaply
    """The parts, oldest first, tiling [0, total); `pairs[l]`: the starts of the
    adjacent sibling pairs of level l, ascending; `size`: the view's bytes."""

    parts: tuple[Node, ...] = ()
    pairs: tuple[tuple[int, ...], ...] = ()
    size: int = len(OPEN) + len(CLOSE)

    @property
    def total(self) -> int:
        return self.parts[-1].end if self.parts else 0


EMPTY = View()


def label(n: Node) -> str:
    """`id+n|`: the prefix of a part's line."""
    return f"{n.start}+{n.n}|"


def part_bytes(n: Node, s: int) -> int:
    """Bytes a part whose text has `s` bytes takes in the rendered view, at most:
    prefix (`label`'s, counted without making it), text cut to NODE, newline."""
    l, i = n  # noqa: E741
    text = s if 0 < s < NODE else (NODE if s >= NODE else 0)
    return len(str(i << l)) + len(str(1 << l)) + 3 + text


def size(n: Node, sizes: Mapping[Node, int]) -> int:
    """Bytes the part takes in the rendered view, at most (its size from `sizes`)."""
    return part_bytes(n, sizes.get(n, 0))


def view_bytes(v: View, sizes: Mapping[Node, int]) -> int:
    """Bytes of the rendered view, at most (see the module's docstring)."""
    return len(OPEN) + sum(size(n, sizes) for n in v.parts) + len(CLOSE)


def _siblings(a: Node, b: Node) -> bool:
    return a.l == b.l and a.i % 2 == 0 and b.i == a.i + 1


def of(parts: Sequence[Node], sizes: Mapping[Node, int]) -> View:
    """The view of these parts (tiling [0, T) in order), its index and bytes made whole."""
    rows: list[list[int]] = []
    for a, b in itertools.pairwise(parts):
        if _siblings(a, b):
            while len(rows) <= a.l:
                rows.append([])
            rows[a.l].append(a.start)
    pairs = tuple(tuple(row) for row in rows)
    return View(tuple(parts), pairs, len(OPEN) + sum(size(n, sizes) for n in parts) + len(CLOSE))


def _with_pair(pairs: tuple[tuple[int, ...], ...], l: int, start: int) -> tuple[tuple[int, ...], ...]:  # noqa: E741
    rows = list(pairs) + [()] * (l + 1 - len(pairs))
    row = list(rows[l])
    insort(row, start)
    rows[l] = tuple(row)
    return tuple(rows)


def _without_pair(pairs: tuple[tuple[int, ...], ...], l: int, start: int) -> tuple[tuple[int, ...], ...]:  # noqa: E741
    row = pairs[l]
    k = bisect_left(row, start)
    rows = list(pairs)
    rows[l] = row[:k] + row[k + 1 :]
    while rows and not rows[-1]:  # no empty row on top: one index for one view
        rows.pop()
    return tuple(rows)


def add(v: View, sizes: Mapping[Node, int]) -> View:
    """A new message enters as its own level-0 part."""
    n = Node(0, v.total)
    pairs = v.pairs
    if v.parts and _siblings(v.parts[-1], n):
        pairs = _with_pair(pairs, 0, v.parts[-1].start)
    return View((*v.parts, n), pairs, v.size + size(n, sizes))


def resize(v: View, n: Node, old: int, new: int) -> View:
    """The view after node n's text went from `old` to `new` bytes (no change unless n
    is one of its parts)."""
    at = bisect_left(v.parts, n.start, key=_start)
    if at == len(v.parts) or v.parts[at] != n:
        return v
    return View(v.parts, v.pairs, v.size - part_bytes(n, old) + part_bytes(n, new))


def more_due(total: int, a: Node, b: Node) -> bool:
    """Whether the pair starting at part a is more due than the pair starting at b:
    (T - a.start) / 2^(a.l + 2) > (T - b.start) / 2^(b.l + 2), exactly."""
    return (total - a.start) << b.l > (total - b.start) << a.l


def mergeable(v: View, at: int, built: Collection[Node]) -> bool:
    """Whether parts at and at + 1 are siblings whose parent's line is built."""
    if not 0 <= at < len(v.parts) - 1:
        return False
    a, b = v.parts[at], v.parts[at + 1]
    return _siblings(a, b) and parent(a) in built


def _leftmost(v: View, l: int, built: Collection[Node]) -> int:  # noqa: E741
    """The start of level l's leftmost pair whose parent is built, or -1: within a level
    the leftmost is the oldest, so the most due."""
    if l >= len(v.pairs):
        return -1
    for start in v.pairs[l]:
        if (l + 1, start >> (l + 1)) in built:  # the parent, as the plain tuple a Node is
            return start
    return -1


def _pick(total: int, leftmost: Sequence[int]) -> int:
    """The level of the most due of the levels' leftmost pairs (the older among equals),
    or -1: `more_due`, written out over plain integers, as it runs at every merge."""
    best_l, best_start = -1, 0
    for l, start in enumerate(leftmost):  # noqa: E741
        if start < 0:
            continue
        if best_l < 0:
            best_l, best_start = l, start
            continue
        ahead, behind = (total - start) << best_l, (total - best_start) << l
        if ahead > behind or (ahead == behind and start < best_start):
            best_l, best_start = l, start
    return best_l


def most_due(v: View, built: Collection[Node]) -> int:
    """The position of the most due mergeable pair (the oldest among equals), or -1:
    of each level, its leftmost pair with a built parent; then the most due of those."""
    leftmost = [_leftmost(v, k, built) for k in range(len(v.pairs))]
    best = _pick(v.total, leftmost)
    return -1 if best < 0 else bisect_left(v.parts, leftmost[best], key=_start)


def _start(n: Node) -> int:
    return n.i << n.l


def merge(v: View, at: int, sizes: Mapping[Node, int]) -> View:
    """The view with the pair at `at` merged into its parent (unchanged if no pair is there)."""
    old = v.parts
    if not (0 <= at < len(old) - 1 and _siblings(old[at], old[at + 1])):
        return v
    a, b = old[at], old[at + 1]
    p = Node(a.l + 1, a.i >> 1)
    parts = old[:at] + (p,) + old[at + 2 :]  # noqa: RUF005 (concatenation copies faster)
    pairs = _without_pair(v.pairs, a.l, a.start)
    if at > 0 and _siblings(parts[at - 1], p):
        pairs = _with_pair(pairs, p.l, parts[at - 1].start)
    elif at + 1 < len(parts) and _siblings(p, parts[at + 1]):
        pairs = _with_pair(pairs, p.l, p.start)
    return View(parts, pairs, v.size + size(p, sizes) - size(a, sizes) - size(b, sizes))


def mark(budget: int) -> int:
    """The refit mark: the bytes a view over `budget` merges down to."""
    return budget - budget // REFIT


def fit(v: View, sizes: Mapping[Node, int], built: Collection[Node], budget: int, pinned: int = 0) -> View:
    """Once the view and `pinned` bytes beside it (what a view carries after the chat:
    `rules.pinned`) are over `budget` bytes, merge the most due pair with a built parent
    until both are down to the refit mark or no such pair is left. (`most_due` merge after
    merge; a merge changes only its level's pairs and the next one's, so only their
    leftmost pairs are looked at again.)"""
    if v.size + pinned <= budget:
        return v
    low = mark(budget) - pinned
    total = v.total
    leftmost = [_leftmost(v, k, built) for k in range(len(v.pairs))]
    while v.size > low:
        best = _pick(total, leftmost)
        if best < 0:
            break
        v = merge(v, bisect_left(v.parts, leftmost[best], key=_start), sizes)
        while len(leftmost) < len(v.pairs):
            leftmost.append(-1)
        del leftmost[len(v.pairs) :]
        for l in (best, best + 1):  # noqa: E741
            if l < len(leftmost):
                leftmost[l] = _leftmost(v, l, built)
    return v


def fold(total: int, sizes: Mapping[Node, int], built: Collection[Node], budget: int) -> View:
    """The view of `total` messages made as the live chat makes it: `add` then `fit` for
    every message in order (the view a reload gives when the lines were built as now)."""
    v = EMPTY
    for _ in range(total if total > 0 else 0):
        v = fit(add(v, sizes), sizes, built, budget)
    return v


def unbuilt(v: View, built: Collection[Node]) -> tuple[Node, ...]:
    """The view's lines that are not built yet (level-0 parts), oldest first."""
    return tuple(n for n in v.parts if n not in built)


def settled(v: View, built: Collection[Node]) -> bool:
    return all(n in built for n in v.parts)


def tiles(v: View) -> bool:
    """Whether the parts are tree nodes tiling [0, total) in order."""
    at = 0
    for n in v.parts:
        if n.l < 0 or n.i < 0 or n.start != at:
            return False
        at = n.end
    return True


def flatten(text: str) -> str:
    """Newlines (\\r\\n, \\n, \\r) as single spaces."""
    return text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")


def render_line(n: Node, text: str) -> str:
    """One part: `id+n|` and its text cut to NODE bytes, newlines as spaces."""
    return label(n) + flatten(cut(text, NODE))


def render(parts: Sequence[Node], texts: Mapping[Node, str]) -> str:
    """The agent's view: `<chat>`, one line a part, `</chat>`. texts: each part's line, or
    for an unbuilt part its input (shown cut to NODE bytes); a missing text shows empty."""
    return OPEN + "".join(render_line(n, texts.get(n, "")) + "\n" for n in parts) + CLOSE
