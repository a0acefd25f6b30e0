"""The laws of the pins (`rules.pinned`, `rules.todo`): every view a compaction builds
holds the session's task list and the person's last request, and with them still fits
its budget as H1's lines let the chat fit, whatever came before: messages and built
lines, `todo` calls accepted or refused, runs with a prompt or without, compactions one
after another in a run.

The walk is a session: its chat (messages logged, lines built, the view fitted after
each as the live chat does), and its runs. A run starts from the list its session ended
the last run with (`current` over that run's calls) and takes its prompt as the request
(`asked`); its `todo` calls are kept as its transcript keeps them, each with the number
of compactions before it; a compaction reads the run's calls (`read`: the whole
transcript's), fits the view with the pins (`fit`) and renders it with them (`attach`).
The ghost is what a person would say is true: the list of the last call accepted, in any
run, and the last prompt the person sent.

How they are checked. The state holds a view, sets of nodes and texts, which the
prover's cases do not range over: every law is checked exhaustively within the printed
bounds, then sampled over long sessions with larger budgets.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import pinned, todo, view
from eukhe.rules.compactor import NODE, cut, nbytes
from eukhe.rules.pinned import REQUEST, REQUEST_HEAD, Pins
from eukhe.rules.queue import Node, children
from eukhe.rules.states import Choice, replace
from eukhe.rules.todo import State, Task, Tasks

Write = tuple[int, object]
"""A run's `todo` call as its transcript keeps it: the compactions before it, and its
arguments (None: a call that did not run, or failed)."""


def _all_writes(writes: Sequence[Write], compactions: int) -> list[object]:
    """What a compaction reads of the run's calls: every one of its transcript (the loop
    hands the compaction the run's whole transcript, not its context)."""
    return [w for _, w in writes]


@dataclass(frozen=True)
class Model:
    """The functions of the pins' model the laws call; a break swaps one."""

    current: Callable[[Tasks, Sequence[object]], Tasks]
    asked: Callable[[str, str | None], str]
    read: Callable[[Sequence[Write], int], list[object]]
    fit: Callable[[view.View, Mapping[Node, int], Collection[Node], int, Pins], view.View]
    attach: Callable[[str, Pins], str]


MODEL = Model(
    current=todo.current, asked=pinned.asked, read=_all_writes, fit=pinned.fit, attach=pinned.attach
)


LINE = 40
"""Bytes of every built line in the walk (a message's own bytes may pass NODE)."""
SMALL, BIG = 24, NODE + 88
"""A short message, and one its line shows cut."""


@dataclass(frozen=True)
class PCfg:
    """The view's budget; messages at most; calls and compactions a run makes at most."""

    budget: int
    messages: int
    writes: int
    compactions: int
    sizes: tuple[int, ...] = (BIG,)  # the bytes a message may have


@dataclass(frozen=True)
class S:
    """The session: its chat (view, built lines, every node's bytes), its run (the list it
    started with, its calls, its compactions so far), the request held, and the text the
    compaction of the step that made this state built ("": the step made none)."""

    view: view.View
    built: frozenset[Node]
    sizes: tuple[tuple[Node, int], ...]
    start: Tasks
    writes: tuple[tuple[int, int], ...]  # each call: the compactions before it, which of WRITES
    compactions: int
    request: str
    shown: str


ORIGIN = Node(0, 0)


class Ev(Choice):
    ADD = "add"  # a message logged (`size` bytes)
    BUILD = "build"  # a line built (`node`)
    WRITE = "write"  # a todo call (`call`: which of WRITES)
    ASK = "ask"  # a new run (`prompt`: the person's, or None: a follow-up)
    COMPACT = "compact"


@dataclass(frozen=True)
class In:
    kind: Ev
    size: int = 0
    node: Node = ORIGIN
    call: int = 0
    prompt: str | None = None


L1: Tasks = (Task("read the code", State.IN_PROGRESS), Task("write the tool"))
L2: Tasks = (Task("read the code", State.DONE), Task("test it", State.IN_PROGRESS))
WRITES: tuple[object, ...] = (
    {"items": todo.json_of(L1)},
    {"items": todo.json_of(L2)},
    {"items": [{"text": "", "state": "pending"}]},  # refused: an item with no text
    None,  # a call that did not run (denied), or whose result was an error
)
PROMPTS: tuple[str | None, ...] = ("fix the bug in a.py", "add a test for b.py", None)


def _texts(s: S) -> dict[Node, str]:
    return {n: "x" * k for n, k in s.sizes}


def _buildable(s: S) -> list[Node]:
    """Unbuilt nodes whose children are built (level 0: any unbuilt message), lowest level
    first, oldest first: the walk builds the first (the order of lines does not change what
    a view pins, and `tests/rules/test_view.py` walks every order of the fit itself)."""
    total = s.view.total
    out = []
    for level in range(total.bit_length()):
        for i in range(total >> level):
            n = Node(level, i)
            if n not in s.built and (level == 0 or set(children(n)) <= s.built):
                out.append(n)
    return out


def walk_start(m: Model, cfg: PCfg) -> S:
    return S(view.EMPTY, frozenset(), (), (), (), 0, "", "")


def walk_next(m: Model, cfg: PCfg, s: S, x: In) -> S:
    sizes = dict(s.sizes)
    s = replace(s, shown="")  # the text of the compaction this step makes, if it makes one
    if x.kind is Ev.ADD:
        sizes[Node(0, s.view.total)] = x.size
        v = view.fit(view.add(s.view, sizes), sizes, s.built, cfg.budget)
        return replace(s, view=v, sizes=tuple(sorted(sizes.items())))
    if x.kind is Ev.BUILD:
        old, sizes[x.node] = sizes.get(x.node, 0), LINE
        built = s.built | {x.node}
        v = view.fit(view.resize(s.view, x.node, old, LINE), sizes, built, cfg.budget)
        return replace(s, view=v, built=built, sizes=tuple(sorted(sizes.items())))
    if x.kind is Ev.WRITE:
        return replace(s, writes=(*s.writes, (s.compactions, x.call)))
    if x.kind is Ev.ASK:  # the run before ends; the session's next one starts
        start = m.current(s.start, [WRITES[i] for _, i in s.writes])
        return S(s.view, s.built, s.sizes, start, (), 0, m.asked(s.request, x.prompt), "")
    calls = [(k, WRITES[i]) for k, i in s.writes]
    p = Pins(m.current(s.start, m.read(calls, s.compactions)), s.request)
    v = m.fit(s.view, sizes, s.built, cfg.budget, p)
    shown = m.attach(view.render(v.parts, _texts(s)), p)
    return replace(s, view=v, compactions=s.compactions + 1, shown=shown)


def inputs(cfg: PCfg, s: S) -> list[In]:
    xs: list[In] = []
    if s.view.total < cfg.messages:
        xs += [In(Ev.ADD, size=k) for k in cfg.sizes]
    xs += [In(Ev.BUILD, node=n) for n in _buildable(s)[:1]]
    if len(s.writes) < cfg.writes:
        xs += [In(Ev.WRITE, call=i) for i in range(len(WRITES))]
    if s.writes or s.compactions or not s.request:  # a run that did nothing ends like none at all
        xs += [In(Ev.ASK, prompt=p) for p in PROMPTS]
    if s.compactions < cfg.compactions:
        xs.append(In(Ev.COMPACT))
    return xs


# ---------------------------------------------------------------- the ghost: what is true


@dataclass(frozen=True)
class Ghost:
    """The list of the last `todo` call accepted, in any run; the last prompt the person sent."""

    tasks: Tasks
    request: str


def ghost_start(cfg: PCfg) -> Ghost:
    return Ghost((), "")


def ghost_next(m: Model, cfg: PCfg, g: Ghost, s: S, x: In, t: S) -> Ghost:
    if x.kind is Ev.WRITE and WRITES[x.call] is not None:
        got = todo.parse(WRITES[x.call]).tasks
        return g if got is None else replace(g, tasks=got)
    if x.kind is Ev.ASK and x.prompt is not None:
        return replace(g, request=x.prompt)
    return g


# ---------------------------------------------------------------- laws


def _pinned(text: str) -> str:
    """What a compaction's text holds after its chat."""
    return text.rpartition(view.CLOSE)[2]


def pinned_list_in_view(m: Model, cfg: PCfg, g: Ghost, s: S, x: In, t: S) -> bool:
    """Every view a compaction builds lists the session's task list, exactly: the items of
    the last call accepted, in order, and no other."""
    if x.kind is not Ev.COMPACT:
        return True
    listed = [ln for ln in _pinned(t.shown).splitlines() if ln.startswith("- [")]
    return listed == todo.lines(g.tasks)


def pinned_request_in_view(m: Model, cfg: PCfg, g: Ghost, s: S, x: In, t: S) -> bool:
    """Every view a compaction builds holds the person's last request (its first REQUEST
    bytes), and no request when the person has sent none."""
    if x.kind is not Ev.COMPACT:
        return True
    after = _pinned(t.shown)
    head = f"<request>\n{REQUEST_HEAD}\n"
    if not g.request:
        return head not in after
    at = after.find(head)
    return at >= 0 and after[at + len(head) :].startswith(cut(g.request, REQUEST) + "\n")


def pinned_view_fits(m: Model, cfg: PCfg, g: Ghost, s: S, x: In, t: S) -> bool:
    """The view a compaction builds, its pins with it, is within the budget, or its chat
    has no pair left to merge (H1's lines: each fits NODE)."""
    if x.kind is not Ev.COMPACT:
        return True
    return nbytes(t.shown) <= cfg.budget or view.most_due(t.view, t.built) == -1


LAWS = (
    Law(
        "pinned_list_in_view",
        "memory",
        "Every view a compaction builds lists the session's task list: the last accepted todo call's.",
        history=pinned_list_in_view,
        prove=False,
    ),
    Law(
        "pinned_request_in_view",
        "memory",
        "Every view a compaction builds holds the person's last request.",
        history=pinned_request_in_view,
        prove=False,
    ),
    Law(
        "pinned_view_fits",
        "H1",
        "A compaction's view with its pins fits the budget, or its chat has no pair left to merge.",
        history=pinned_view_fits,
        prove=False,
    ),
)


# ---------------------------------------------------------------- breaks


def _context_writes(writes: Sequence[Write], compactions: int) -> list[object]:
    """The calls read from the run's context, which each compaction empties: the list a run
    wrote before its first compaction is gone from its second one's view."""
    return [w for k, w in writes if k == compactions]


def _older_request(previous: str, prompt: str | None) -> str:
    """The session's first request kept: a later prompt does not replace it."""
    return previous or (prompt or "")


def _unpinned_fit(
    v: view.View, sizes: Mapping[Node, int], built: Collection[Node], budget: int, p: Pins
) -> view.View:
    """The pins' bytes not counted in the fit: the chat fits the budget alone."""
    return view.fit(v, sizes, built, budget)


def _refused_clears(start: Tasks, writes: Sequence[object]) -> Tasks:
    """A refused call (or one that did not run) clears the list."""
    tasks = start
    for w in writes:
        got = todo.parse(w).tasks if w is not None else None
        tasks = got if got is not None else ()
    return tasks


def _start_lost(start: Tasks, writes: Sequence[object]) -> Tasks:
    """A run with no accepted call of its own loses the list it started with."""
    return todo.current((), writes)


def _stale_items(start: Tasks, writes: Sequence[object]) -> Tasks:
    """A new list merged into the old one, not replacing it: the last task's items leak."""
    tasks = start
    for w in writes:
        got = todo.parse(w).tasks if w is not None else None
        if got is not None:
            tasks = (*got, *(t for t in tasks if t.text not in {n.text for n in got}))
    return tasks


def _followup_forgets(previous: str, prompt: str | None) -> str:
    """A run with no prompt of the person's (a follow-up) pins no request."""
    return "" if prompt is None else prompt


MUTANTS = (
    Mutant(
        "the list read from the run's context: dropped after the second compaction",
        "memory",
        replace(MODEL, read=_context_writes),
    ),
    Mutant("the last request replaced by an older one", "memory", replace(MODEL, asked=_older_request)),
    Mutant("a follow-up run that pins no request", "memory", replace(MODEL, asked=_followup_forgets)),
    Mutant("the pinned bytes not counted in the fit", "H1", replace(MODEL, fit=_unpinned_fit)),
    Mutant("a refused todo call that clears the list", "memory", replace(MODEL, current=_refused_clears)),
    Mutant(
        "a run with no todo call of its own loses its list", "memory", replace(MODEL, current=_start_lost)
    ),
    Mutant(
        "a new list merged into the old one (stale items)", "memory", replace(MODEL, current=_stale_items)
    ),
    Mutant("the pins left out of the view", "memory", replace(MODEL, attach=lambda chat, p: chat)),
)


# ---------------------------------------------------------------- the area


BUDGETS = (300, 700, 1200)
"""The budgets walked exhaustively: below a message and its pins, between, and above."""
MESSAGES = 3
WRITES_A_RUN = 2
COMPACTIONS_A_RUN = 2
DEPTH = 7


def cfgs() -> Iterator[PCfg]:
    for budget in BUDGETS:
        yield PCfg(budget, MESSAGES, WRITES_A_RUN, COMPACTIONS_A_RUN)


def sample_cfg(seed: int) -> PCfg:
    """Budgets 0..6,000 bytes, up to 12 messages, 4 calls and 5 compactions a run."""
    return PCfg(seed % 6001, 1 + (seed // 6001) % 12, 4, 5, (SMALL, BIG))


def cfg_valid(cfg: PCfg) -> bool:
    return cfg.budget >= 0 and cfg.messages >= 0


def valid(cfg: PCfg, s: S) -> bool:
    return view.tiles(s.view)


def proof_cases() -> list[tuple[dict[str, Enum], dict[str, Enum]]]:
    return []


AREA = Area(
    name="pinned",
    model=MODEL,
    cfg_type=PCfg,
    state_type=S,
    input_type=In,
    proof_cases=proof_cases,
    valid=valid,
    cfg_valid=cfg_valid,
    start=walk_start,
    next=walk_next,
    inputs=inputs,
    cfgs=cfgs,
    bounds=(
        f"budgets {', '.join(map(str, BUDGETS))} bytes, {MESSAGES} messages of {BIG} bytes, lines of {LINE}, "
        f"{WRITES_A_RUN} todo calls (two lists, a refused one, one that did not run) and "
        f"{COMPACTIONS_A_RUN} compactions a run, runs with a prompt or none; histories of {DEPTH} events"
    ),
    depth=DEPTH,
    sample_cfg=sample_cfg,
    laws=LAWS,
    mutants=MUTANTS,
    ghost_start=ghost_start,
    ghost_next=ghost_next,
    samples=150,
)
