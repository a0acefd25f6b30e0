"""The view of the chat: the lines every root turn starts from.

The view is a row of parts, tree nodes (l, i) of `rules.queue`, oldest first,
tiling the chat's messages [0, T). A new message enters as its own level-0
part (`add`). While the view is over its budget, `fit` merges the most due
adjacent sibling pair, (l, 2j) and (l, 2j + 1), into their parent (l + 1, j),
if the parent's line is built; it stops when the view fits or no such pair is
left. A pair is due by age over size: due = age / 2^(l + 2), with age = T less
the pair's first message, compared exactly (cross-multiplied integers). Among
equally due pairs the oldest (leftmost) is merged first.

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
bytes. Every function is a pure function of them.

Pure: standard library only, frozen data, total functions.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from eukhe.rules.compactor import NODE, cut
from eukhe.rules.queue import Node, parent

VIEW = 128_000
"""Budget of the rendered view, in UTF-8 bytes."""

OPEN = "<chat>\n"
CLOSE = "</chat>"


@dataclass(frozen=True)
class View:
    """The parts, oldest first, tiling [0, total)."""

    parts: tuple[Node, ...] = ()

    @property
    def total(self) -> int:
        return self.parts[-1].end if self.parts else 0


EMPTY = View()


def label(n: Node) -> str:
    """`id+n|`: the prefix of a part's line."""
    return f"{n.start}+{n.n}|"


def size(n: Node, sizes: Mapping[Node, int]) -> int:
    """Bytes the part takes in the rendered view, at most: prefix, text cut to NODE, newline."""
    s = sizes.get(n, 0)
    text = s if 0 < s < NODE else (NODE if s >= NODE else 0)
    return len(label(n)) + text + 1


def view_bytes(v: View, sizes: Mapping[Node, int]) -> int:
    """Bytes of the rendered view, at most (see the module's docstring)."""
    return len(OPEN) + sum(size(n, sizes) for n in v.parts) + len(CLOSE)


def add(v: View) -> View:
    """A new message enters as its own level-0 part."""
    return View((*v.parts, Node(0, v.total)))


def more_due(total: int, a: Node, b: Node) -> bool:
    """Whether the pair starting at part a is more due than the pair starting at b:
    (T - a.start) / 2^(a.l + 2) > (T - b.start) / 2^(b.l + 2), exactly."""
    return (total - a.start) << b.l > (total - b.start) << a.l


def mergeable(v: View, at: int, built: Collection[Node]) -> bool:
    """Whether parts at and at + 1 are siblings whose parent's line is built."""
    if not 0 <= at < len(v.parts) - 1:
        return False
    a, b = v.parts[at], v.parts[at + 1]
    return a.l == b.l and a.i % 2 == 0 and b.i == a.i + 1 and parent(a) in built


def most_due(v: View, built: Collection[Node]) -> int:
    """The position of the most due mergeable pair (the oldest among equals), or -1."""
    best = -1
    for at in range(len(v.parts) - 1):
        if mergeable(v, at, built) and (best < 0 or more_due(v.total, v.parts[at], v.parts[best])):
            best = at
    return best


def merge(v: View, at: int) -> View:
    """The view with the pair at `at` merged into its parent (unchanged if no pair is there)."""
    if not 0 <= at < len(v.parts) - 1:
        return v
    return View((*v.parts[:at], parent(v.parts[at]), *v.parts[at + 2 :]))


def fit(v: View, sizes: Mapping[Node, int], built: Collection[Node], budget: int) -> View:
    """Merge the most due pair with a built parent while the view is over `budget` bytes."""
    have = view_bytes(v, sizes)
    while have > budget:
        at = most_due(v, built)
        if at < 0:
            break
        a, b = v.parts[at], v.parts[at + 1]
        have += size(parent(a), sizes) - size(a, sizes) - size(b, sizes)
        v = merge(v, at)
    return v


def fold(total: int, sizes: Mapping[Node, int], built: Collection[Node], budget: int) -> View:
    """The view of `total` messages made as the live chat makes it: `add` then `fit` for
    every message in order (the view a reload gives when the lines were built as now)."""
    v = EMPTY
    for _ in range(total if total > 0 else 0):
        v = fit(add(v), sizes, built, budget)
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
