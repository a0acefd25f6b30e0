"""The laws of H5.2 and H5.3 (the watch clock of a child) over `rules.child.look`, and its breaks."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import child
from eukhe.rules.child import Look, Poll, Reading, Verdict, W, WCfg


@dataclass(frozen=True)
class Model:
    look: Callable[[WCfg, W, Poll], Look]


MODEL = Model(look=child.look)


@dataclass(frozen=True)
class Watch:
    """A watch: its clock, and the verdict that ended it (WATCH: it goes on)."""

    left: int
    tries: int
    token: int
    verdict: Verdict


def _w(s: Watch) -> W:
    return W(s.left, s.tries, s.token)


def start(m: Model, cfg: WCfg) -> Watch:
    w = child.full(cfg)
    return Watch(w.left, w.tries, w.token, Verdict.WATCH)


def nxt(m: Model, cfg: WCfg, s: Watch, x: Poll) -> Watch:
    if s.verdict is not Verdict.WATCH:
        return s
    seen = m.look(cfg, _w(s), x)
    return Watch(seen.w.left, seen.w.tries, seen.w.token, seen.verdict)


def valid(cfg: WCfg, s: Watch) -> bool:
    return child.w_valid(cfg, _w(s))


def _quiet(s: Watch, x: Poll) -> bool:
    """A poll that shows no progress: the same token, or no reading."""
    return (x.reading is Reading.FAILED) | ((x.reading is Reading.TOKEN) & (x.token == s.token))


# ---------------------------------------------------------------- laws


def child_stalls_in_time(m: Model, cfg: WCfg, s: Watch, x: Poll) -> bool:
    """A quiet poll whose delay reaches the ms left ends the watch; a shorter one goes
    on with the delay counted off (or ends unreachable, on its last try)."""
    if s.verdict is not Verdict.WATCH or not _quiet(s, x):
        return True
    seen = m.look(cfg, _w(s), x)
    delay = max(x.delay, 0)
    last = (x.reading is Reading.FAILED) & (s.tries <= 1)
    if delay >= s.left:
        return seen.verdict in (Verdict.STALLED, Verdict.UNREACHABLE)
    if last:
        return seen.verdict is Verdict.UNREACHABLE
    return (seen.verdict is Verdict.WATCH) & (seen.w.left == s.left - delay) & (seen.w.token == s.token)


def child_unreachable_in_time(m: Model, cfg: WCfg, s: Watch, x: Poll) -> bool:
    """A failed poll takes one try off; on the last try it ends the watch unreachable.
    A poll that reads the child gives every try back."""
    if s.verdict is not Verdict.WATCH:
        return True
    seen = m.look(cfg, _w(s), x)
    if x.reading is Reading.FAILED:
        if s.tries <= 1:
            return seen.verdict is Verdict.UNREACHABLE
        return (seen.verdict is not Verdict.WATCH) | (seen.w.tries == s.tries - 1)
    if x.reading is Reading.TOKEN:
        return (seen.verdict is not Verdict.UNREACHABLE) & (
            (seen.verdict is not Verdict.WATCH) | (seen.w.tries == cfg.polls)
        )
    return True


def child_unreachable_history(m: Model, cfg: WCfg, g: int, s: Watch, x: Poll, t: Watch) -> bool:
    """Over any history: failed polls in a row never reach `polls` with the watch on."""
    failed = g + 1 if (s.verdict is Verdict.WATCH and x.reading is Reading.FAILED) else 0
    return (failed < cfg.polls) | (t.verdict is not Verdict.WATCH)


def child_clock_bounded(m: Model, cfg: WCfg, s: Watch) -> bool:
    """The clock is never over full, and never empty while it watches."""
    return (0 < s.left <= cfg.stall) & (0 < s.tries <= cfg.polls)


def child_progress_is_not_a_stall(m: Model, cfg: WCfg, s: Watch, x: Poll) -> bool:
    """A new token fills the clock, whatever the delay."""
    if s.verdict is not Verdict.WATCH or x.reading is not Reading.TOKEN or x.token == s.token:
        return True
    seen = m.look(cfg, _w(s), x)
    return (seen.verdict is Verdict.WATCH) & (seen.w == W(cfg.stall, cfg.polls, x.token))


def child_settles_at_once(m: Model, cfg: WCfg, s: Watch, x: Poll) -> bool:
    """An ended run or a gone worker settles the watch at once, with that verdict."""
    if s.verdict is not Verdict.WATCH or x.reading not in child.ENDS:
        return True
    return m.look(cfg, _w(s), x).verdict is child.ENDS[x.reading]


LAWS = (
    Law(
        "child_stalls_in_time",
        "H5.2",
        "Quiet polls (same token or failed) ≥ ms left end the watch (H5.2).",
        edge=child_stalls_in_time,
        scope=lambda s, x: s["verdict"] is Verdict.WATCH and x["reading"] in (Reading.TOKEN, Reading.FAILED),
    ),
    Law(
        "child_unreachable_in_time",
        "H5.3",
        "Failed polls in a row = tries left end the watch (H5.3).",
        edge=child_unreachable_in_time,
        history=child_unreachable_history,
        scope=lambda s, x: s["verdict"] is Verdict.WATCH and x["reading"] in (Reading.TOKEN, Reading.FAILED),
    ),
    Law(
        "child_clock_bounded",
        "H5.2",
        "Clock ≤ full: bounds `subagentStallMs` ms, `CHILD_POLL_FAILURES` polls (H5.2, H5.3).",
        node=child_clock_bounded,
        keep=lambda s, x: s["verdict"] is Verdict.WATCH,
    ),
    Law(
        "child_progress_is_not_a_stall",
        "H5.2",
        "New token: full clock (H5.2).",
        edge=child_progress_is_not_a_stall,
        scope=lambda s, x: s["verdict"] is Verdict.WATCH and x["reading"] is Reading.TOKEN,
    ),
    Law(
        "child_settles_at_once",
        "H5.3",
        "An ended run or a gone worker (`worker-exited`) settles the watch at once (H5.1, H5.3).",
        edge=child_settles_at_once,
        scope=lambda s, x: s["verdict"] is Verdict.WATCH and x["reading"] in child.ENDS,
    ),
)


# ---------------------------------------------------------------- breaks


def _failed_costs_no_time(cfg: WCfg, w: W, p: Poll) -> Look:
    """A failed poll that counts a try but no time."""
    if p.reading is Reading.FAILED:
        return child.look(cfg, w, Poll(p.reading, p.token, 0))
    return child.look(cfg, w, p)


def _never_stalls(cfg: WCfg, w: W, p: Poll) -> Look:
    """The same token again never runs the clock down."""
    if p.reading is Reading.TOKEN and p.token == w.token:
        return Look(Verdict.WATCH, w)
    return child.look(cfg, w, p)


def _early_stall(cfg: WCfg, w: W, p: Poll) -> Look:
    """A quiet poll that stalls at half the clock."""
    seen = child.look(cfg, w, p)
    if seen.verdict is Verdict.WATCH and seen.w.left * 2 <= cfg.stall and p.reading is Reading.TOKEN:
        return Look(Verdict.STALLED, w)
    return seen


def _tries_forgotten(cfg: WCfg, w: W, p: Poll) -> Look:
    """Failed polls that never run out of tries."""
    seen = child.look(cfg, w, p)
    if p.reading is Reading.FAILED and seen.verdict is Verdict.UNREACHABLE:
        return Look(Verdict.WATCH, W(w.left, w.tries, w.token))
    return seen


def _no_refill(cfg: WCfg, w: W, p: Poll) -> Look:
    """A new token that keeps the clock as it was (progress counted as nothing)."""
    if p.reading is Reading.TOKEN and p.token != w.token:
        return child.look(cfg, w, Poll(Reading.TOKEN, w.token, p.delay))
    return child.look(cfg, w, p)


def _over_full(cfg: WCfg, w: W, p: Poll) -> Look:
    """A refill past the full clock."""
    seen = child.look(cfg, w, p)
    if seen.verdict is Verdict.WATCH and seen.w.left == cfg.stall:
        return Look(Verdict.WATCH, W(cfg.stall + 1, seen.w.tries, seen.w.token))
    return seen


def _failure_keeps_tries(cfg: WCfg, w: W, p: Poll) -> Look:
    """A reading that does not give back the tries failed polls took."""
    seen = child.look(cfg, w, p)
    if p.reading is Reading.TOKEN and seen.verdict is Verdict.WATCH:
        return Look(Verdict.WATCH, W(seen.w.left, w.tries, seen.w.token))
    return seen


def _gone_watched(cfg: WCfg, w: W, p: Poll) -> Look:
    """A gone worker watched as a failed poll (it would wait a minute for nothing)."""
    if p.reading is Reading.GONE:
        return child.look(cfg, w, Poll(Reading.FAILED, p.token, p.delay))
    return child.look(cfg, w, p)


MUTANTS = (
    Mutant("a failed poll that costs no time", "H5.2", Model(_failed_costs_no_time)),
    Mutant("a repeat token that never stalls", "H5.2", Model(_never_stalls)),
    Mutant("a stall at half the clock", "H5.2", Model(_early_stall)),
    Mutant("failed polls that never end the watch", "H5.3", Model(_tries_forgotten)),
    Mutant("progress that does not fill the clock", "H5.2", Model(_no_refill)),
    Mutant("a clock filled past full", "H5.2", Model(_over_full)),
    Mutant("a reading that keeps the failed tries", "H5.3", Model(_failure_keeps_tries)),
    Mutant("a gone worker watched on", "H5.3", Model(_gone_watched)),
)


# ---------------------------------------------------------------- the area


def proof_cases() -> list[tuple[dict[str, Enum], dict[str, Enum]]]:
    return [({"verdict": v}, {"reading": r}) for v in Verdict for r in Reading]


def inputs(cfg: WCfg, s: Watch) -> list[Poll]:
    """Every reading, a token the same or new, and delays of 0, 1, half and all the clock."""
    delays = sorted({0, 1, max(cfg.stall // 2, 1), cfg.stall})
    out = [Poll(r, 0, d) for r in Reading if r is not Reading.TOKEN for d in delays]
    out += [Poll(Reading.TOKEN, tok, d) for tok in (s.token, s.token + 1) for d in delays]
    return out


def cfgs() -> Iterator[WCfg]:
    for stall, polls in itertools.product((1, 2, 4, 6), (1, 2, 3, 5)):
        yield WCfg(stall, polls)


def sample_cfg(seed: int) -> WCfg:
    return WCfg(1 + seed % 600_000, 1 + (seed // 7) % 8)


AREA = Area(
    name="child_watch",
    model=MODEL,
    cfg_type=WCfg,
    state_type=Watch,
    input_type=Poll,
    proof_cases=proof_cases,
    valid=valid,
    cfg_valid=child.wcfg_valid,
    start=start,
    next=nxt,
    inputs=inputs,
    cfgs=cfgs,
    bounds="stall 1..6 ms, 1..5 polls",
    depth=6,
    sample_cfg=sample_cfg,
    laws=LAWS,
    mutants=MUTANTS,
    ghost_start=lambda cfg: 0,
    ghost_next=lambda m, cfg, g, s, x, t: (
        g + 1 if (s.verdict is Verdict.WATCH and x.reading is Reading.FAILED) else 0
    ),
)
