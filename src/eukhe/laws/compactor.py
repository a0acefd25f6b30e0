"""The laws of H1 (a compactor call always ends with a line that fits) and the
settle laws of H2.2 over the model `rules.compactor`, and its breaks.

The walk is one node's life: a call is open (`line_open` on the node's input);
replies come (`line_step`); when the call has ended its outcome is committed
(`SAVE`: the line saved, or the failure taken; `pend_after`), and while the
node is pending the next call opens; a disk failure or a waiting turn's stop
may end any call (`DISK`, `STOP`: counted nothing, the call opens again).
The node's view line is one line of the settle measure; `extra` checks the
settle laws again over views of up to `LINES` lines, every line's state and
every outcome on any line in any order.

How they are checked. The state is one call and its node as numbers, flags and
the call's end, so every law is proven by CrossHair: step laws over every valid
state and input, invariants inductively (they hold at the start and every step
keeps them). History laws (the ghost counts what the node's life did) are
checked exhaustively and sampled, as are the views of several lines.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import compactor
from eukhe.rules.compactor import WIDEST, Act, After, Cfg, End, Kind, Line, Outcome, Pend, Reply
from eukhe.rules.states import Choice, replace


@dataclass(frozen=True)
class Model:
    """The functions of the H1 model the laws call; a break swaps one."""

    line_open: Callable[[Cfg, int], Line]
    line_step: Callable[[Cfg, Line, Reply], Line]
    outcome: Callable[[Line], Outcome | None]
    pend_start: Callable[[Cfg], Pend]
    pend_after: Callable[[Cfg, Pend, Outcome], After]
    measure: Callable[[Sequence[Pend]], int]


MODEL = Model(
    line_open=compactor.line_open,
    line_step=compactor.line_step,
    outcome=compactor.outcome,
    pend_start=compactor.pend_start,
    pend_after=compactor.pend_after,
    measure=compactor.measure,
)


def cached(m: Model) -> Model:
    return replace(m, line_step=functools.lru_cache(maxsize=1 << 16)(m.line_step))


@dataclass(frozen=True)
class WCfg(Cfg):
    """The limits, and the size of the node's input."""

    input: int


@dataclass(frozen=True)
class Call:
    """One call (the fields of `Line`) and its node (the fields of `Pend`)."""

    input: int
    calls: int
    best: int
    best_call: int
    chosen: int
    size: int
    end: End
    made: bool
    left: int


class Ev(Choice):
    TEXT = "text"  # a reply of `size` bytes
    EMPTY = "empty"  # an empty or thinking-only reply
    ERROR = "error"  # a provider error, or the call past its deadline
    SAVE = "save"  # the ended call's outcome is committed
    DISK = "disk"  # a disk failure (input read, line or cut save)
    STOP = "stop"  # a waiting turn stops the call


@dataclass(frozen=True)
class In:
    kind: Ev
    size: int = 0


REPLIES = (Ev.TEXT, Ev.EMPTY, Ev.ERROR)


def line_of(s: Call) -> Line:
    return Line(s.input, s.calls, s.best, s.best_call, s.chosen, s.size, s.end)


def pend_of(s: Call) -> Pend:
    return Pend(s.made, s.left)


def join(line: Line, p: Pend) -> Call:
    return Call(
        line.input, line.calls, line.best, line.best_call, line.chosen, line.size, line.end, p.made, p.left
    )


def reply_of(x: In) -> Reply:
    if x.kind is Ev.TEXT:
        return Reply(Kind.TEXT, x.size)
    return compactor.EMPTY if x.kind is Ev.EMPTY else compactor.ERROR


def committed(m: Model, s: Call, x: In) -> Outcome | None:
    """The outcome this input commits on the node (None: none)."""
    if s.made or x.kind in REPLIES:
        return None
    if x.kind is Ev.SAVE:
        return m.outcome(line_of(s))
    return Outcome.DISK if x.kind is Ev.DISK else Outcome.STOPPED


def walk_next(m: Model, cfg: WCfg, s: Call, x: In) -> Call:
    """The node after one input; a built node never changes."""
    if s.made:
        return s
    if x.kind in REPLIES:
        if s.end is not End.LIVE:
            return s
        return join(m.line_step(cfg, line_of(s), reply_of(x)), pend_of(s))
    o = committed(m, s, x)
    if o is None:
        return s
    p = m.pend_after(cfg, pend_of(s), o).pend
    if p.made:
        return join(line_of(s), p)
    return join(m.line_open(cfg, s.input), p)


def walk_start(m: Model, cfg: WCfg) -> Call:
    return join(m.line_open(cfg, cfg.input), m.pend_start(cfg))


def valid(cfg: WCfg, s: Call) -> bool:
    line = line_of(s)
    return (
        compactor.line_valid(cfg, line)
        & compactor.pend_valid(cfg, pend_of(s))
        & ((not s.made) | (s.end is not End.LIVE))
        & ((s.input >= 0) | ((s.end is End.FAILED) & (s.calls == 0)))
    )


def cfg_valid(cfg: WCfg) -> bool:
    return compactor.cfg_valid(cfg)


def _sizes(cfg: WCfg, s: Call) -> list[int]:
    n = cfg.node
    xs = {-1, 0, 1, n, n + 1, n + 2, n + 3}
    if s.best_call >= 1:
        xs |= {s.best, s.best - 1}
    return sorted(xs)


def inputs(cfg: WCfg, s: Call) -> list[In]:
    """Replies of every size that matters (around NODE, and the best so far and one
    less) while a call is live; the commit once it ended; disk failures and stops."""
    if s.made:
        return []
    if s.end is End.LIVE:
        xs = [In(Ev.TEXT, k) for k in _sizes(cfg, s)] + [In(Ev.EMPTY), In(Ev.ERROR)]
    else:
        xs = [In(Ev.SAVE)]
    return [*xs, In(Ev.DISK), In(Ev.STOP)]


# ---------------------------------------------------------------- history


@dataclass(frozen=True)
class Ghost:
    """What the node's life did: the shortest over-long reply of the current call and the
    call that gave it (0, 0: none); failed calls committed; a saved line committed;
    counted outcomes while pending."""

    shortest: int
    shortest_call: int
    failed: int
    saved: bool
    hits: int


def ghost_start(cfg: WCfg) -> Ghost:
    return Ghost(0, 0, 0, False, 0)


def _ghost(m: Model, cfg: WCfg, g: Ghost, s: Call, x: In) -> Ghost:
    if s.made:
        return g
    if x.kind in REPLIES:
        over = s.end is End.LIVE and x.kind is Ev.TEXT and x.size > cfg.node
        if over and (g.shortest_call == 0 or x.size < g.shortest):
            return replace(g, shortest=x.size, shortest_call=s.calls)
        return g
    o = committed(m, s, x)
    if o is None:
        return g
    fresh = replace(g, shortest=0, shortest_call=0)
    if not compactor.counted(o):
        return fresh
    return replace(
        fresh,
        failed=g.failed + (1 if o is Outcome.FAILED else 0),
        saved=g.saved or o is Outcome.BUILT,
        hits=g.hits + 1,
    )


def ghost_next(m: Model, cfg: WCfg, g: Ghost, s: Call, x: In, t: Call) -> Ghost:
    return _ghost(m, cfg, g, s, x)


# ---------------------------------------------------------------- laws: one call (H1.1-H1.4)


def _stepped(m: Model, cfg: WCfg, s: Call, x: In) -> Line:
    return m.line_step(cfg, line_of(s), reply_of(x))


def line_calls_at_most_tries(m: Model, cfg: WCfg, s: Call) -> bool:
    """Invariant: a call makes at most `tries` model calls."""
    return s.calls <= cfg.tries


def line_stops_when_not_shorter(m: Model, cfg: WCfg, s: Call, x: In) -> bool:
    """A follow-up not shorter than the best over-long reply ends the tries at once with
    that reply (cut to NODE): after the first follow-up, 2 calls."""
    if not (s.end is End.LIVE and x.kind is Ev.TEXT and s.best_call >= 1 and x.size > cfg.node):
        return True
    if x.size < s.best:
        return True
    t = _stepped(m, cfg, s, x)
    return (t.end is End.BEST) & (t.chosen == s.best_call) & (t.size == s.best) & (t.calls == s.calls)


def line_stops_when_not_shorter_history(m: Model, cfg: WCfg, g: Ghost, s: Call, x: In, t: Call) -> bool:
    """A call that ends on its best reply ends on the shortest over-long reply it read
    (the first among equals)."""
    if not (s.end is End.LIVE and t.end is End.BEST and not s.made):
        return True
    h = _ghost(m, cfg, g, s, x)
    return (t.size == h.shortest) & (t.chosen == h.shortest_call)


def line_fits(m: Model, cfg: WCfg, s: Call) -> bool:
    """Invariant: an ended call with a non-empty input and NODE ≥ WIDEST bytes has a line
    of 1 to NODE bytes, or it failed."""
    if s.end is End.LIVE or s.end is End.FAILED or s.input < 1 or cfg.node < WIDEST:
        return True
    low, high = compactor.line_bytes(cfg, line_of(s))
    return (low >= 1) & (high <= cfg.node) & (low <= high)


def line_takes_first_fit(m: Model, cfg: WCfg, s: Call, x: In) -> bool:
    """A reply of 1 to NODE bytes is the line; an ended call never changes (so the line
    is the first reply that fits)."""
    if s.end is not End.LIVE:
        return _stepped(m, cfg, s, x) == line_of(s)
    if not (x.kind is Ev.TEXT and 1 <= x.size <= cfg.node):
        return True
    t = _stepped(m, cfg, s, x)
    return (t.end is End.FIT) & (t.chosen == s.calls) & (t.size == x.size) & (t.calls == s.calls)


def line_empty_is_a_try(m: Model, cfg: WCfg, s: Call, x: In) -> bool:
    """An empty (or thinking-only) reply ends the tries with the input cut to NODE: the
    call it answered was a try, and it is no failure."""
    if not (s.end is End.LIVE and (x.kind is Ev.EMPTY or (x.kind is Ev.TEXT and x.size == 0))):
        return True
    t = _stepped(m, cfg, s, x)
    return (t.end is End.INPUT) & (t.size == s.input) & (t.calls == s.calls) & (m.outcome(t) is Outcome.BUILT)


def line_error_fails(m: Model, cfg: WCfg, s: Call, x: In) -> bool:
    """A provider error (or a call past CALL_DEADLINE) fails the call, and the failure counts."""
    if not (s.end is End.LIVE and x.kind is Ev.ERROR):
        return True
    t = _stepped(m, cfg, s, x)
    return (t.end is End.FAILED) & (m.outcome(t) is Outcome.FAILED)


# ---------------------------------------------------------------- laws: the node (H1.5)


def fail_cap_builds(m: Model, cfg: WCfg, s: Call, x: In) -> bool:
    """With n failures left a failed call leaves n - 1, and the one with none left builds
    the node from its input cut; disk failures and stops leave the node as it is, a
    saved line builds it."""
    o = committed(m, s, x)
    if o is None:
        return True
    a = m.pend_after(cfg, pend_of(s), o)
    if o is Outcome.FAILED:
        if s.left <= 0:
            return a.pend.made & (a.act is Act.CUT)
        return (a.pend == Pend(False, s.left - 1)) & (a.act is Act.RETRY)
    if o is Outcome.BUILT:
        return a.pend.made & (a.act is Act.DONE)
    return a.pend == pend_of(s)


def fail_cap_builds_history(m: Model, cfg: WCfg, g: Ghost, s: Call, x: In, t: Call) -> bool:
    """From a fresh node: built exactly once FAILURES calls failed, whatever came between
    (disk failures, stops), or once a line was saved."""
    h = _ghost(m, cfg, g, s, x)
    return t.made == ((h.failed >= cfg.failures) or h.saved)


# ---------------------------------------------------------------- laws: settling (H2.2)


def _measure(m: Model, s: Call) -> int:
    return m.measure((pend_of(s),))


def _hit(m: Model, s: Call, x: In) -> int:
    o = committed(m, s, x)
    return 1 if o is not None and compactor.counted(o) else 0


def settle_falls(m: Model, cfg: WCfg, s: Call, x: In) -> bool:
    """A counted outcome (a saved line, a failed call) on a pending line lowers the measure."""
    if not _hit(m, s, x):
        return True
    return _measure(m, walk_next(m, cfg, s, x)) < _measure(m, s)


def settle_bounded(m: Model, cfg: WCfg, s: Call, x: In) -> bool:
    """No input raises the measure, and a counted hit lowers it by one at least: so
    counted hits + the measure left never pass the start measure."""
    return _measure(m, walk_next(m, cfg, s, x)) + _hit(m, s, x) <= _measure(m, s)


def settle_bounded_history(m: Model, cfg: WCfg, g: Ghost, s: Call, x: In, t: Call) -> bool:
    h = _ghost(m, cfg, g, s, x)
    return h.hits + _measure(m, t) <= m.measure((m.pend_start(cfg),))


def settle_reached(m: Model, cfg: WCfg, s: Call) -> bool:
    """Invariant: the measure is never negative, and 0 only for a built line (with
    `settle_bounded`: measure-many counted hits build it)."""
    n = _measure(m, s)
    return (n >= 0) & ((n == 0) == s.made)


def settle_reached_history(m: Model, cfg: WCfg, g: Ghost, s: Call, x: In, t: Call) -> bool:
    h = _ghost(m, cfg, g, s, x)
    return h.hits < m.measure((m.pend_start(cfg),)) or t.made


def settle_start(m: Model, cfg: WCfg, s: Call) -> bool:
    """Invariant: a line owes at most FAILURES (a fresh one exactly: see `extra`)."""
    return _measure(m, s) <= cfg.failures * (0 if s.made else 1)


# Views of several lines: every view of up to LINES lines, each line built or owing
# any failures left, and every outcome on any line, in any order, to the end.

LINES = 3
"""View lines at most in the exhaustive check of the settle laws over views."""


def _pends(cfg: Cfg) -> list[Pend]:
    return [compactor.MADE, *(Pend(False, n) for n in range(cfg.failures))]


@functools.lru_cache(maxsize=256)
def _views(m: Model, failures: int) -> dict[str, str | None]:
    """The first counterexample, per settle law, over every view of up to LINES lines."""
    cfg = Cfg(compactor.TRIES, compactor.NODE, failures)
    found: dict[str, str | None] = {k: None for k in ("falls", "bounded", "reached", "start")}

    def note(law: str, why: str) -> None:
        if found[law] is None:
            found[law] = why

    for k in range(LINES + 1):
        fresh = (m.pend_start(cfg),) * k
        if m.measure(fresh) != failures * k:
            note(
                "start",
                f"failures={failures}: {k} fresh lines measure {m.measure(fresh)}, not {failures * k}",
            )
        for v0 in itertools.product(_pends(cfg), repeat=k):
            start = m.measure(v0)
            seen = {(v0, 0)}
            frontier = [(v0, 0)]
            while frontier:
                nxt = []
                for v, hits in frontier:
                    if hits >= start and not all(p.made for p in v):
                        note("reached", f"failures={failures}: from {v0} after {hits} counted hits {v}")
                    for line, o in itertools.product(range(k), Outcome):
                        hit = (not v[line].made) and compactor.counted(o)
                        w = (*v[:line], m.pend_after(cfg, v[line], o).pend, *v[line + 1 :])
                        h = hits + (1 if hit else 0)
                        if hit and m.measure(w) >= m.measure(v):
                            note("falls", f"failures={failures}: {o.name} on line {line} of {v} gives {w}")
                        if h + m.measure(w) > start:
                            note("bounded", f"failures={failures}: from {v0}, {h} hits and {w} left")
                        if (w, h) not in seen and h <= start + 1:
                            seen.add((w, h))
                            nxt.append((w, h))
                frontier = nxt
    return found


def _views_extra(law: str) -> Callable[[Model, WCfg], str | None]:
    def extra(m: Model, cfg: WCfg) -> str | None:
        return _views(m, cfg.failures).get(law) if cfg.failures <= 3 else None

    return extra


def _live(s: dict[str, Enum], x: dict[str, Enum]) -> bool:
    return s["end"] is End.LIVE


def _reply(*kinds: Ev) -> Callable[[dict[str, Enum], dict[str, Enum]], bool]:
    return lambda s, x: s["end"] is End.LIVE and x["kind"] in kinds


def _commits(s: dict[str, Enum], x: dict[str, Enum]) -> bool:
    return x["kind"] in (Ev.DISK, Ev.STOP) or (x["kind"] is Ev.SAVE and s["end"] is not End.LIVE)


LAWS = (
    Law(
        "line_calls_at_most_tries",
        "H1.1",
        "≤ tries calls.",
        node=line_calls_at_most_tries,
    ),
    Law(
        "line_stops_when_not_shorter",
        "H1.2",
        "Follow-up not shorter than an over-long reply: ends after 2 calls, that reply cut to NODE.",
        edge=line_stops_when_not_shorter,
        history=line_stops_when_not_shorter_history,
        scope=_reply(Ev.TEXT),
    ),
    Law(
        "line_fits",
        "H1.3",
        "Non-empty input, NODE ≥ 4 (widest character): 1 to NODE bytes, or call failed.",
        node=line_fits,
    ),
    Law(
        "line_takes_first_fit",
        "H1.3",
        "Line = first read reply that fits.",
        edge=line_takes_first_fit,
        scope=lambda s, x: x["kind"] in REPLIES and (s["end"] is not End.LIVE or x["kind"] is Ev.TEXT),
    ),
    Law(
        "line_empty_is_a_try",
        "H1.4",
        "Empty/thinking-only reply ends with input cut to NODE.",
        edge=line_empty_is_a_try,
        scope=_reply(Ev.EMPTY, Ev.TEXT),
    ),
    Law(
        "line_error_fails",
        "H1.5",
        "Provider error fails the call.",
        edge=line_error_fails,
        scope=_reply(Ev.ERROR),
    ),
    Law(
        "fail_cap_builds",
        "H1.5",
        "n failures left: built once n+1 calls failed, whatever between (disk errors, stops, saved line).",
        edge=fail_cap_builds,
        history=fail_cap_builds_history,
        scope=_commits,
    ),
    Law(
        "settle_falls",
        "H2.2",
        "Each counted outcome on a pending line lowers the measure.",
        edge=settle_falls,
        scope=lambda s, x: x["kind"] is Ev.SAVE and s["end"] is not End.LIVE,
        extra=_views_extra("falls"),
    ),
    Law(
        "settle_bounded",
        "H2.2",
        "Any outcomes, any order: counted hits on pending lines + measure left ≤ start measure.",
        edge=settle_bounded,
        history=settle_bounded_history,
        extra=_views_extra("bounded"),
    ),
    Law(
        "settle_reached",
        "H2.2",
        "Measure-many counted hits: every view line built.",
        node=settle_reached,
        history=settle_reached_history,
        extra=_views_extra("reached"),
    ),
    Law(
        "settle_start",
        "H2.2",
        "Wait start measure = FAILURES × unbuilt view lines.",
        node=settle_start,
        extra=_views_extra("start"),
    ),
)


# ---------------------------------------------------------------- breaks


_real_step = compactor.line_step
_real_after = compactor.pend_after


def _line_break(change: Callable[[Cfg, Line, Reply, Line], Line]) -> Model:
    def step(cfg: Cfg, line: Line, r: Reply) -> Line:
        t = _real_step(cfg, line, r)
        return t if line.end is not End.LIVE else change(cfg, line, r, t)

    return replace(MODEL, line_step=step)


def _pend_break(change: Callable[[Cfg, Pend, Outcome, After], After]) -> Model:
    def after(cfg: Cfg, p: Pend, o: Outcome) -> After:
        a = _real_after(cfg, p, o)
        return a if p.made else change(cfg, p, o, a)

    return replace(MODEL, pend_after=after)


def _try_past_tries(cfg: Cfg, line: Line, r: Reply, t: Line) -> Line:
    """The tries counted with > where >= belongs: one follow-up too many."""
    if t.end is End.BEST and t.chosen == line.calls and line.calls == cfg.tries:
        return replace(line, best=r.size, best_call=line.calls, calls=line.calls + 1)
    return t


def _over_node(cfg: Cfg, line: Line, r: Reply, t: Line) -> Line:
    """A reply one byte over NODE taken as fitting."""
    if r.kind is Kind.TEXT and r.size == cfg.node + 1:
        return replace(line, end=End.FIT, chosen=line.calls, size=r.size)
    return t


def _empty_fails(cfg: Cfg, line: Line, r: Reply, t: Line) -> Line:
    return replace(line, end=End.FAILED) if r.kind is Kind.EMPTY else t


def _error_gives_input(cfg: Cfg, line: Line, r: Reply, t: Line) -> Line:
    """A provider error read as an empty reply: the line is the input cut."""
    return replace(line, end=End.INPUT, size=line.input) if r.kind is Kind.ERROR else t


def _goes_on_when_not_shorter(cfg: Cfg, line: Line, r: Reply, t: Line) -> Line:
    """A follow-up not shorter than the best gets another follow-up (the original's habit)."""
    longer = r.kind is Kind.TEXT and r.size > cfg.node and line.best_call >= 1 and r.size >= line.best
    if longer and line.calls < cfg.tries:
        return replace(line, calls=line.calls + 1)
    return t


def _later_fit_skipped(cfg: Cfg, line: Line, r: Reply, t: Line) -> Line:
    """A reply that fits after an over-long one loses to the best over-long reply."""
    if t.end is End.FIT and line.best_call >= 1:
        return replace(line, end=End.BEST, chosen=line.best_call, size=line.best)
    return t


def _cap_early(cfg: Cfg, p: Pend, o: Outcome, a: After) -> After:
    """The failure cap checked one failure early."""
    if o is Outcome.FAILED and p.left == 1:
        return After(compactor.MADE, Act.CUT)
    return a


def _cap_late_start(cfg: Cfg) -> Pend:
    """A fresh node given FAILURES failures left: built after FAILURES + 1 failures."""
    return Pend(False, cfg.failures)


def _disk_counts(cfg: Cfg, p: Pend, o: Outcome, a: After) -> After:
    """A disk failure counted as a failed call."""
    return _real_after(cfg, p, Outcome.FAILED) if o is Outcome.DISK else a


def _stop_counts(cfg: Cfg, p: Pend, o: Outcome, a: After) -> After:
    """A waiting turn's stop counted as a failed call."""
    return _real_after(cfg, p, Outcome.FAILED) if o is Outcome.STOPPED else a


def _disk_resets(cfg: Cfg, p: Pend, o: Outcome, a: After) -> After:
    """A disk failure that gives the node its failures back."""
    return After(compactor.pend_start(cfg), a.act) if o is Outcome.DISK else a


def _saved_stays_pending(cfg: Cfg, p: Pend, o: Outcome, a: After) -> After:
    """A saved line that leaves the node pending."""
    return After(p, Act.DONE) if o is Outcome.BUILT else a


def _measure_without_the_last(view: Sequence[Pend]) -> int:
    """Σ n where Σ (n + 1) belongs: the last failure does not lower the measure."""
    return sum(0 if p.made else p.left for p in view)


MUTANTS = (
    Mutant("a try past TRIES", "H1.1", _line_break(_try_past_tries)),
    Mutant("a line over NODE", "H1.3", _line_break(_over_node)),
    Mutant("an empty reply counted as a failure", "H1.4", _line_break(_empty_fails)),
    Mutant("a provider error that does not fail", "H1.5", _line_break(_error_gives_input)),
    Mutant(
        "a follow-up not shorter that does not stop the tries", "H1.2", _line_break(_goes_on_when_not_shorter)
    ),
    Mutant(
        "a fitting follow-up that loses to the best over-long reply", "H1.3", _line_break(_later_fit_skipped)
    ),
    Mutant("a fail cap off by one (early)", "H1.5", _pend_break(_cap_early)),
    Mutant("a fail cap off by one (late)", "H1.5", replace(MODEL, pend_start=_cap_late_start)),
    Mutant("a disk failure counted as a failure", "H1.5", _pend_break(_disk_counts)),
    Mutant("a stop counted as a failure", "H2.1", _pend_break(_stop_counts)),
    Mutant("a disk failure that resets the failures left", "H2.2", _pend_break(_disk_resets)),
    Mutant("a saved line that leaves the node pending", "H2.2", _pend_break(_saved_stays_pending)),
    Mutant(
        "an outcome that does not lower the measure",
        "H2.2",
        replace(MODEL, measure=_measure_without_the_last),
    ),
)


# ---------------------------------------------------------------- the area


def proof_cases() -> list[tuple[dict[str, Enum], dict[str, Enum]]]:
    return [({"end": e}, {"kind": k}) for e in End for k in Ev]


TRIES_UP_TO = 5
FAILURES_UP_TO = 3
NODES = (1, 4)


def cfgs() -> Iterator[WCfg]:
    """The richest limits first (most tries, NODE 4, an over-long input), so a break shows early."""
    for tries, node, failures in itertools.product(
        range(TRIES_UP_TO, -1, -1), sorted(NODES, reverse=True), range(1, FAILURES_UP_TO + 1)
    ):
        for size in (node + 2, 1, 0, -1):
            yield WCfg(tries, node, failures, size)


def sample_cfg(seed: int) -> WCfg:
    """Tries 0..7, NODE 4..600, failures 1..6, inputs up to 2,000 bytes."""
    node = 4 + (seed // 8) % 597
    return WCfg(seed % 8, node, 1 + (seed // 4776) % 6, (seed // 28656) % 2001)


AREA = Area(
    name="compactor",
    model=MODEL,
    cfg_type=WCfg,
    state_type=Call,
    input_type=In,
    proof_cases=proof_cases,
    valid=valid,
    cfg_valid=cfg_valid,
    start=walk_start,
    next=walk_next,
    inputs=inputs,
    cfgs=cfgs,
    bounds=(
        f"tries 0..{TRIES_UP_TO}, NODE {' or '.join(map(str, NODES))}, failures 1..{FAILURES_UP_TO}, "
        "inputs -1, 0, 1, NODE + 2 bytes, replies -1..NODE + 3 bytes and the best ± 0/1; "
        f"views of up to {LINES} lines in every state, every outcome order"
    ),
    depth=16,
    sample_cfg=sample_cfg,
    laws=LAWS,
    mutants=MUTANTS,
    ghost_start=ghost_start,
    ghost_next=ghost_next,
    cached=cached,
)
