"""The laws of H5.2 over the work ledger (`rules.progress`) watched by `rules.child.look`,
and its breaks: only new work moves a child's token, so a loop is a stall."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import child, progress
from eukhe.rules.child import Look, Poll, Reading, Verdict, W, WCfg
from eukhe.rules.progress import Act, Kind, Ledger


@dataclass(frozen=True)
class Model:
    work: Callable[[Ledger, Act], Ledger]
    token: Callable[[Ledger, int, int], int]
    look: Callable[[WCfg, W, Poll], Look]
    rising: Callable[[float | None, float], bool] = progress.rising


MODEL = Model(work=progress.work, token=progress.token, look=child.look)


@dataclass(frozen=True)
class PCfg:
    """The watch's limits, and the keys acts are drawn from."""

    stall: int
    keys: int

    @property
    def w(self) -> WCfg:
        return WCfg(self.stall, child.CHILD_POLL_FAILURES)


@dataclass(frozen=True)
class Child:
    """A child's ledger, and its parent's watch of it (verdict WATCH: still watched)."""

    ledger: Ledger
    w: W
    verdict: Verdict


@dataclass(frozen=True)
class In:
    """An act of the child, or (act None) a poll `delay` ms after the last."""

    act: Act | None = None
    delay: int = 0


def start(m: Model, cfg: PCfg) -> Child:
    return Child(Ledger(), child.full(cfg.w), Verdict.WATCH)


def _token(m: Model, s: Child) -> int:
    return m.token(s.ledger, 0, 0)


def nxt(m: Model, cfg: PCfg, s: Child, x: In) -> Child:
    if x.act is not None:
        return Child(m.work(s.ledger, x.act), s.w, s.verdict)
    if s.verdict is not Verdict.WATCH:
        return s
    seen = m.look(cfg.w, s.w, Poll(Reading.TOKEN, _token(m, s), x.delay))
    return Child(s.ledger, seen.w, seen.verdict)


def cfg_valid(cfg: PCfg) -> bool:
    return (cfg.stall > 0) & (cfg.keys > 0)


def valid(cfg: PCfg, s: Child) -> bool:
    return progress.ledger_valid(s.ledger) & child.w_valid(cfg.w, s.w)


def inputs(cfg: PCfg, s: Child) -> list[In]:
    acts = [In(Act(k, f"k{i}")) for k in Kind for i in range(cfg.keys if k in progress.WORK else 1)]
    return [*acts, *(In(None, d) for d in sorted({1, max(cfg.stall // 2, 1), cfg.stall}))]


# ---------------------------------------------------------------- history


@dataclass(frozen=True)
class Ghost:
    """What the history did, told apart from the model: the work acts seen (a tool
    call or a note, by key), whether one was new since the last poll, and the ms of
    polls since the last poll that saw new work (the first poll always does)."""

    seen: frozenset[tuple[Kind, str]]
    fresh: bool
    quiet: int


def ghost_start(cfg: PCfg) -> Ghost:
    return Ghost(frozenset(), True, 0)


def _new(g: Ghost, a: Act) -> bool:
    return a.kind in (Kind.CALL, Kind.NOTE, Kind.PROGRESS) and (a.kind, a.key) not in g.seen


def ghost_next(m: Model, cfg: PCfg, g: Ghost, s: Child, x: In, t: Child) -> Ghost:
    if x.act is not None:
        new = _new(g, x.act)
        return Ghost(g.seen | ({(x.act.kind, x.act.key)} if new else set()), g.fresh or new, g.quiet)
    if g.fresh:
        return Ghost(g.seen, False, 0)
    return Ghost(g.seen, False, g.quiet + max(x.delay, 0))


# ---------------------------------------------------------------- laws


def child_repeat_is_no_work(m: Model, cfg: PCfg, g: Ghost, s: Child, x: In, t: Child) -> bool:
    """An act that is no new work (a repeat, text, thinking, a retry, an answer) keeps
    the token; a new act moves it."""
    if x.act is None:
        return True
    moved = _token(m, t) != _token(m, s)
    return moved == _new(g, x.act)


def child_loop_is_a_stall(m: Model, cfg: PCfg, g: Ghost, s: Child, x: In, t: Child) -> bool:
    """Polls that find no new work, for as long as the clock, end the watch stalled."""
    if x.act is not None or s.verdict is not Verdict.WATCH or g.fresh:
        return True
    if g.quiet + max(x.delay, 0) >= cfg.stall:
        return t.verdict is Verdict.STALLED
    return t.verdict is Verdict.WATCH


def child_new_work_is_progress(m: Model, cfg: PCfg, g: Ghost, s: Child, x: In, t: Child) -> bool:
    """A poll after a new act fills the clock."""
    if x.act is not None or s.verdict is not Verdict.WATCH or not g.fresh:
        return True
    return (t.verdict is Verdict.WATCH) & (t.w.left == cfg.stall) & (t.w.tries == child.CHILD_POLL_FAILURES)


VALUES = (-1.0, 0.0, 0.5, 1.0, 2.0, float("inf"), float("nan"))
"""Progress values a notification may carry, hostile ones too."""


def child_progress_rises(m: Model, cfg: PCfg) -> str | None:
    """A call's progress is new work exactly when it rises strictly above the call's last
    (its first, if a number, too): a series of notifications counts as many acts as it has
    strict rises, whatever a server sends. None, or the first counterexample."""
    for last in (None, *VALUES):
        for value in VALUES:
            want = value == value and (last is None or value > last)
            if m.rising(last, value) != want:
                return f"rising({last!r}, {value!r}) is {m.rising(last, value)}, not {want}"
    return None


LAWS = (
    Law(
        "child_progress_rises",  # ours (issue 27): H5.2's "progress is new work, not events"
        "H5.2",
        "A call's progress is work only when it rises strictly (H5.2).",
        extra=child_progress_rises,
        prove=False,
    ),
    Law(
        "child_repeat_is_no_work",
        "H5.2",
        "Repeat keeps the token (H5.2).",
        history=child_repeat_is_no_work,
        prove=False,
    ),
    Law(
        "child_loop_is_a_stall",
        "H5.2",
        "All-repeat polls ≥ ms left end the watch (H5.2).",
        history=child_loop_is_a_stall,
        prove=False,
    ),
    Law(
        "child_new_work_is_progress",
        "H5.2",
        "Poll after a new act: full clock (H5.2).",
        history=child_new_work_is_progress,
        prove=False,
    ),
)


# ---------------------------------------------------------------- breaks


def _repeats_count(g: Ledger, a: Act) -> Ledger:
    """Every tool call counted, the same one again too."""
    if a.kind is Kind.CALL:
        return Ledger(g.seen | {(a.kind, a.key)}, g.work + 1)
    return progress.work(g, a)


def _text_counts(g: Ledger, a: Act) -> Ledger:
    """Streamed text counted as work."""
    if a.kind is Kind.TEXT:
        return Ledger(g.seen | {(a.kind, a.key)}, len(g.seen | {(a.kind, a.key)}))
    return progress.work(g, a)


def _notes_ignored(g: Ledger, a: Act) -> Ledger:
    """An accepted progress note that moves nothing."""
    return g if a.kind is Kind.NOTE else progress.work(g, a)


def _retries_count(g: Ledger, a: Act) -> Ledger:
    """A retry counted as new work."""
    if a.kind is Kind.RETRY:
        return Ledger(g.seen | {(a.kind, str(g.work))}, g.work + 1)
    return progress.work(g, a)


def _token_of_calls_only(g: Ledger, children: int, jobs: int) -> int:
    """A token that only counts up to one act (a busy child seen as idle after its first)."""
    return min(g.work, 1)


def _equal_rises(last: float | None, value: float) -> bool:
    """The same progress again counted as work."""
    return last is None or value >= last


MUTANTS = (
    Mutant(
        "a repeated progress value counted as work",
        "H5.2",
        Model(progress.work, progress.token, child.look, _equal_rises),
    ),
    Mutant("a repeated call counted as work", "H5.2", Model(_repeats_count, progress.token, child.look)),
    Mutant("streamed text counted as work", "H5.2", Model(_text_counts, progress.token, child.look)),
    Mutant("a progress note that moves nothing", "H5.2", Model(_notes_ignored, progress.token, child.look)),
    Mutant("a retry counted as work", "H5.2", Model(_retries_count, progress.token, child.look)),
    Mutant("a token blind to new work", "H5.2", Model(progress.work, _token_of_calls_only, child.look)),
)


# ---------------------------------------------------------------- the area


def proof_cases() -> list[tuple[dict[str, Enum], dict[str, Enum]]]:
    return [({}, {})]


def cfgs() -> Iterator[PCfg]:
    for stall, keys in itertools.product((1, 2, 4), (1, 2)):
        yield PCfg(stall, keys)


def sample_cfg(seed: int) -> PCfg:
    return PCfg(1 + seed % 1000, 1 + (seed // 1000) % 4)


AREA = Area(
    name="progress",
    model=MODEL,
    cfg_type=PCfg,
    state_type=Child,
    input_type=In,
    proof_cases=proof_cases,
    valid=valid,
    cfg_valid=cfg_valid,
    start=start,
    next=nxt,
    inputs=inputs,
    cfgs=cfgs,
    bounds="stall 1..4 ms, 1..2 keys an act kind",
    depth=5,
    sample_cfg=sample_cfg,
    laws=LAWS,
    mutants=MUTANTS,
    ghost_start=ghost_start,
    ghost_next=ghost_next,
)
