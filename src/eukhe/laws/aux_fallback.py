"""The laws of H7.1 and H7.2 (an unusable auxiliary model falls back to the session
model, and the session shows why, once) over the model `rules.aux_fallback`, and
its breaks.

The state is what one session has shown for one purpose and selector; an input
is one summarizer pass with the outcome of every check. A history is one
session's passes for that purpose and selector.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import aux_fallback
from eukhe.rules.aux_fallback import Ask, Reason, Route, Shown
from eukhe.rules.states import replace


@dataclass(frozen=True)
class Model:
    decide: Callable[[Shown, Ask], Route]


MODEL = Model(decide=aux_fallback.decide)


def cached(m: Model) -> Model:
    return Model(decide=functools.lru_cache(maxsize=1 << 14)(m.decide))


@dataclass(frozen=True)
class ACfg:
    """No limits: the model has none."""


INPUTS = [Ask(*flags) for flags in itertools.product((False, True), repeat=8)]


def inputs(cfg: ACfg, s: Shown) -> list[Ask]:
    return INPUTS


def valid(cfg: ACfg, s: Shown) -> bool:
    return True


def cfg_valid(cfg: ACfg) -> bool:
    return True


# ---------------------------------------------------------------- the spec's terms

FLAG = {
    Reason.NOT_ALLOWED: "not_allowed",
    Reason.LIST_UNREADABLE: "list_unreadable",
    Reason.NO_MODEL: "no_model",
    Reason.NO_KEY: "no_key",
    Reason.NOT_IN_SESSION: "not_in_session",
    Reason.TOO_SMALL: "too_small",
}
"""The field of `Shown` that holds each reason's row."""


def _flag(s: Shown, r: Reason) -> bool:
    return bool(getattr(s, FLAG[r]))


def unusable(x: Ask) -> Reason:
    """The reason the spec gives, in its check order (H7.1): `allowedModels` does not
    include it; the available-models list is unreadable; no model with a configured key
    has this name; API key not found; the session model list does not include it;
    context window too small for the request."""
    if not x.allowed:
        return Reason.NOT_ALLOWED
    if not x.listed:
        return Reason.LIST_UNREADABLE
    if not x.named:
        return Reason.NO_MODEL
    if not x.keyed:
        return Reason.NO_KEY
    if not x.offered:
        return Reason.NOT_IN_SESSION
    if not x.fits:
        return Reason.TOO_SMALL
    return Reason.NONE


def _other(x: Ask) -> bool:
    """auxiliaryModel names another model than the session's."""
    return x.given & (not x.same)


def _silent(s: Shown, t: Route) -> bool:
    return (not t.auxiliary) & (not t.notice) & (t.reason is Reason.NONE) & (t.shown == s)


# ---------------------------------------------------------------- history


@dataclass(frozen=True)
class Ghost:
    """Rows shown so far in this session for this purpose and selector, per reason."""

    rows: tuple[int, ...]


def ghost_start(cfg: ACfg) -> Ghost:
    return Ghost((0,) * len(FLAG))


def _rows(m: Model, g: Ghost, s: Shown, x: Ask) -> tuple[int, ...]:
    t = m.decide(s, x)
    return tuple(n + (1 if t.notice and t.reason is r else 0) for r, n in zip(FLAG, g.rows, strict=True))


def ghost_next(m: Model, cfg: ACfg, g: Ghost, s: Shown, x: Ask, t: Shown) -> Ghost:
    return Ghost(_rows(m, g, s, x))


# ---------------------------------------------------------------- laws


def fallback_is_reported(m: Model, cfg: ACfg, s: Shown, x: Ask) -> bool:
    """An unusable other model: the session model runs the pass, for the first failing
    check in the spec's order; its row is shown unless this session showed it already,
    and is marked shown; no other row changes."""
    r = unusable(x)
    if not _other(x) or r is Reason.NONE:
        return True
    t = m.decide(s, x)
    others = True
    for q in FLAG:
        if q is not r:
            others = others & (_flag(t.shown, q) == _flag(s, q))
    return (not t.auxiliary) & (t.reason is r) & (t.notice == (not _flag(s, r))) & _flag(t.shown, r) & others


def fallback_is_reported_history(m: Model, cfg: ACfg, g: Ghost, s: Shown, x: Ask, t: Shown) -> bool:
    """Over a session: each reason's row shown at most once, and shown once it occurred."""
    rows = _rows(m, g, s, x)
    r = unusable(x)
    seen = (not _other(x)) | (r is Reason.NONE) or rows[list(FLAG).index(r)] == 1
    return all(n <= 1 for n in rows) and seen


def fallback_quiet_when_routed(m: Model, cfg: ACfg, s: Shown, x: Ask) -> bool:
    """A row only with a substitution: a usable other model runs the pass, silently."""
    t = m.decide(s, x)
    substituted = _other(x) & (unusable(x) is not Reason.NONE)
    if t.notice and not substituted:
        return False
    if _other(x) & (unusable(x) is Reason.NONE):
        return t.auxiliary & (not t.notice) & (t.reason is Reason.NONE) & (t.shown == s)
    return True


def fallback_quiet_when_unset(m: Model, cfg: ACfg, s: Shown, x: Ask) -> bool:
    """auxiliaryModel unset: the session model runs the pass; nothing is shown."""
    if x.given:
        return True
    return _silent(s, m.decide(s, x))


def fallback_quiet_when_same(m: Model, cfg: ACfg, s: Shown, x: Ask) -> bool:
    """auxiliaryModel = the session model: the session model runs it; nothing is shown."""
    if not (x.given & x.same):
        return True
    return _silent(s, m.decide(s, x))


LAWS = (
    Law(
        "fallback_is_reported",
        "H7.1",
        "Every substituted key noticed: first failing check, once per session, purpose, selector, reason.",
        edge=fallback_is_reported,
        history=fallback_is_reported_history,
    ),
    Law(
        "fallback_quiet_when_routed",
        "H7.1",
        "Notice only with substitution; a usable auxiliary model runs silently.",
        edge=fallback_quiet_when_routed,
    ),
    Law(
        "fallback_quiet_when_unset",
        "H7.1",
        "auxiliaryModel unset: session model, silent.",
        edge=fallback_quiet_when_unset,
    ),
    Law(
        "fallback_quiet_when_same",
        "H7.1",
        "auxiliaryModel = session model: session model, silent.",
        edge=fallback_quiet_when_same,
    ),
)


# ---------------------------------------------------------------- breaks


def _break(change: Callable[[Shown, Ask, Route], Route]) -> Model:
    def decide(s: Shown, x: Ask) -> Route:
        return change(s, x, aux_fallback.decide(s, x))

    return Model(decide=decide)


def _shows_nothing(s: Shown, x: Ask, t: Route) -> Route:
    return replace(t, notice=False)


def _shows_twice(s: Shown, x: Ask, t: Route) -> Route:
    return replace(t, notice=t.reason is not Reason.NONE)


def _forgets(s: Shown, x: Ask, t: Route) -> Route:
    return replace(t, shown=s)


def _out_of_order(s: Shown, x: Ask, t: Route) -> Route:
    if _other(x) and not x.keyed and t.reason in (Reason.NO_MODEL, Reason.NOT_IN_SESSION, Reason.TOO_SMALL):
        r = Reason.NO_KEY
        return Route(False, r, not aux_fallback.was_shown(s, r), aux_fallback.mark(s, r))
    return t


def _unset_noticed(s: Shown, x: Ask, t: Route) -> Route:
    if not x.given:
        return Route(False, Reason.NO_MODEL, True, s)
    return t


def _same_noticed(s: Shown, x: Ask, t: Route) -> Route:
    if x.given and x.same and not x.allowed:
        r = Reason.NOT_ALLOWED
        return Route(False, r, not aux_fallback.was_shown(s, r), aux_fallback.mark(s, r))
    return t


def _routed_noticed(s: Shown, x: Ask, t: Route) -> Route:
    return replace(t, notice=True) if t.auxiliary else t


MUTANTS = (
    Mutant("a fallback that shows nothing", "H7.1", _break(_shows_nothing)),
    Mutant("a notice shown twice", "H7.2", _break(_shows_twice)),
    Mutant("a fallback that forgets its row was shown", "H7.2", _break(_forgets)),
    Mutant("reasons checked out of the spec's order", "H7.1", _break(_out_of_order)),
    Mutant("an unset auxiliaryModel noticed", "H7.1", _break(_unset_noticed)),
    Mutant("the session model as auxiliaryModel checked and noticed", "H7.1", _break(_same_noticed)),
    Mutant("a usable auxiliary model noticed", "H7.1", _break(_routed_noticed)),
)


# ---------------------------------------------------------------- the area


def proof_cases() -> list[tuple[dict[str, Enum], dict[str, Enum]]]:
    """One case: every flag of the state and the pass symbolic."""
    return [({}, {})]


def cfgs() -> Iterator[ACfg]:
    yield ACfg()


MEANT = {
    "a fallback that shows nothing": "fallback_is_reported",
    "a notice shown twice": "fallback_is_reported",
    "a fallback that forgets its row was shown": "fallback_is_reported",
    "reasons checked out of the spec's order": "fallback_is_reported",
    "an unset auxiliaryModel noticed": "fallback_quiet_when_routed",
    "the session model as auxiliaryModel checked and noticed": "fallback_quiet_when_routed",
    "a usable auxiliary model noticed": "fallback_quiet_when_routed",
}
"""Each break and the law meant to kill it: `eukhe laws` fails one killed first by another."""

AREA = Area(
    name="aux_fallback",
    model=MODEL,
    cfg_type=ACfg,
    state_type=Shown,
    input_type=Ask,
    proof_cases=proof_cases,
    valid=valid,
    cfg_valid=cfg_valid,
    start=lambda m, cfg: aux_fallback.NONE_SHOWN,
    next=lambda m, cfg, s, x: m.decide(s, x).shown,
    inputs=inputs,
    cfgs=cfgs,
    bounds="every pass (8 flags) from every reachable set of rows shown",
    depth=7,
    sample_cfg=lambda seed: ACfg(),
    laws=LAWS,
    mutants=MUTANTS,
    meant=MEANT,
    ghost_start=ghost_start,
    ghost_next=ghost_next,
    cached=cached,
)
