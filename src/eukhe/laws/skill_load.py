"""The laws of H7.3 (skill and prompt-template loaders report each failing
candidate) over the model `rules.skill_load`, and its breaks.

The state is the loader's tally (candidates met, loaded, diagnosed); an input is
one candidate's shape. The limits are the name's and the description's lengths.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import skill_load
from eukhe.rules.skill_load import Candidate, Front, Given, Kind, Limits, Problem, Read, Tally, Verdict
from eukhe.rules.states import replace


@dataclass(frozen=True)
class Model:
    check: Callable[[Limits, Candidate], Verdict]
    count: Callable[[Tally, Verdict], Tally]


MODEL = Model(check=skill_load.check, count=skill_load.count)


def cached(m: Model) -> Model:
    return Model(check=functools.lru_cache(maxsize=1 << 16)(m.check), count=m.count)


def valid(cfg: Limits, t: Tally) -> bool:
    return skill_load.tally_valid(t)


def cfg_valid(cfg: Limits) -> bool:
    return (cfg.name >= 0) & (cfg.description >= 0)


# ---------------------------------------------------------------- the spec's terms


def failures(lim: Limits, c: Candidate) -> tuple[Problem, ...]:
    """What fails in a candidate, as the spec and the issue say (H7.3): a path missing or
    not markdown; an unreadable entry or file; invalid YAML frontmatter; for a skill, a
    name that is not lowercase letters, digits and single hyphens or longer than the
    limit, a description missing, blank, not text or longer than the limit, a
    `disable-model-invocation` that is not true or false; a name an earlier candidate
    took, for one that is otherwise fine."""
    if c.read is Read.MISSING:
        return (Problem.MISSING,)
    if c.read is Read.NOT_MARKDOWN:
        return (Problem.NOT_MARKDOWN,)
    if c.read is Read.ENTRY:
        return (Problem.UNREADABLE_ENTRY,)
    if c.read is Read.FILE:
        return (Problem.UNREADABLE_FILE,)
    if c.front is Front.INVALID:
        return (Problem.INVALID_YAML,)
    skill = c.kind is Kind.SKILL
    wrong = (
        (Problem.NAME_NOT_TEXT, skill and c.name is Given.OTHER),
        (Problem.NAME_INVALID, skill and c.name is not Given.OTHER and not c.name_ok),
        (Problem.NAME_TOO_LONG, skill and c.name is not Given.OTHER and c.name_length > lim.name),
        (
            Problem.NO_DESCRIPTION,
            skill
            and (
                c.description is Given.ABSENT or (c.description is Given.TEXT and c.description_length <= 0)
            ),
        ),
        (Problem.DESCRIPTION_NOT_TEXT, skill and c.description is Given.OTHER),
        (
            Problem.DESCRIPTION_TOO_LONG,
            skill and c.description is Given.TEXT and c.description_length > lim.description,
        ),
        (Problem.DISABLE_NOT_BOOL, skill and not c.disable_ok),
    )
    found = tuple(p for p, bad in wrong if bad)
    if not found and c.taken:
        return (Problem.COLLISION,)
    return found


def _within(few: tuple[Problem, ...], many: tuple[Problem, ...]) -> bool:
    ok = True
    for p in few:
        ok = ok & (p in many)
    return ok


# ---------------------------------------------------------------- laws


def skill_failure_reported(m: Model, cfg: Limits, t: Tally, x: Candidate) -> bool:
    """Each candidate is loaded or diagnosed; a failing one with every cause it has."""
    v = m.check(cfg, x)
    return (v.loads | (len(v.problems) > 0)) & _within(failures(cfg, x), v.problems)


def skill_failure_reported_tally(m: Model, cfg: Limits, t: Tally) -> bool:
    """Every candidate met is counted loaded or diagnosed."""
    return t.loaded + t.diagnosed >= t.candidates


def skill_loaded_not_failed(m: Model, cfg: Limits, t: Tally, x: Candidate) -> bool:
    """Never both: a loaded candidate has no problem and no failure; a candidate without
    failures is not diagnosed (so it loads); no problem is made up."""
    v = m.check(cfg, x)
    fails = failures(cfg, x)
    both = v.loads & (len(v.problems) > 0)
    return (
        (not both)
        & ((not v.loads) | (len(fails) == 0))
        & ((len(fails) > 0) | (len(v.problems) == 0))
        & _within(v.problems, fails)
    )


def skill_loaded_not_failed_tally(m: Model, cfg: Limits, t: Tally) -> bool:
    """No candidate met is counted both loaded and diagnosed."""
    return t.loaded + t.diagnosed <= t.candidates


LAWS = (
    Law(
        "skill_failure_reported",
        "H7.3",
        "Each candidate loaded or diagnosed; a failing one with each of its causes.",
        edge=skill_failure_reported,
        node=skill_failure_reported_tally,
    ),
    Law(
        "skill_loaded_not_failed",
        "H7.3",
        "Distinct paths: never both loaded and diagnosed; a loaded one has no failure.",
        edge=skill_loaded_not_failed,
        node=skill_loaded_not_failed_tally,
    ),
)


# ---------------------------------------------------------------- breaks


def _break(change: Callable[[Limits, Candidate, Verdict], Verdict]) -> Model:
    def check(lim: Limits, c: Candidate) -> Verdict:
        return change(lim, c, skill_load.check(lim, c))

    return Model(check=check, count=skill_load.count)


def _silent_failure(lim: Limits, c: Candidate, v: Verdict) -> Verdict:
    return Verdict(False, ()) if v.problems == (Problem.INVALID_YAML,) else v


def _warned_and_loaded(lim: Limits, c: Candidate, v: Verdict) -> Verdict:
    return Verdict(True, v.problems) if v.problems == (Problem.NO_DESCRIPTION,) else v


def _collision_loaded(lim: Limits, c: Candidate, v: Verdict) -> Verdict:
    return skill_load.check(lim, replace(c, taken=False))


def _entry_as_file(lim: Limits, c: Candidate, v: Verdict) -> Verdict:
    return Verdict(False, (Problem.UNREADABLE_FILE,)) if c.read is Read.ENTRY else v


def _broken_template_loaded(lim: Limits, c: Candidate, v: Verdict) -> Verdict:
    return Verdict(True, ()) if c.kind is Kind.TEMPLATE and c.front is Front.INVALID else v


def _long_name_loaded(lim: Limits, c: Candidate, v: Verdict) -> Verdict:
    return Verdict(True, ()) if v.problems == (Problem.NAME_TOO_LONG,) else v


def _uncounted(t: Tally, v: Verdict) -> Tally:
    """A diagnosed candidate the tally loses."""
    return Tally(t.candidates + 1, t.loaded + (1 if v.loads else 0), t.diagnosed)


MUTANTS = (
    Mutant("a failing skill neither loaded nor reported", "H7.3", _break(_silent_failure)),
    Mutant("a skill without description loaded with a warning", "H7.3", _break(_warned_and_loaded)),
    Mutant("a name collision loaded as well", "H7.3", _break(_collision_loaded)),
    Mutant("an unreadable entry reported as an unreadable file", "H7.3", _break(_entry_as_file)),
    Mutant("a template with invalid YAML loaded", "H7.3", _break(_broken_template_loaded)),
    Mutant("a name over the limit loaded", "H7.3", _break(_long_name_loaded)),
    Mutant("a diagnosed candidate the loader loses", "H7.3", Model(check=skill_load.check, count=_uncounted)),
)


# ---------------------------------------------------------------- the area


def proof_cases() -> list[tuple[dict[str, Enum], dict[str, Enum]]]:
    """Each kind of candidate with each read, and a read one with each frontmatter;
    every other field symbolic."""
    out: list[tuple[dict[str, Enum], dict[str, Enum]]] = []
    for k in Kind:
        out += [({}, {"kind": k, "read": r}) for r in Read if r is not Read.OK]
        out += [({}, {"kind": k, "read": Read.OK, "front": f}) for f in Front]
    return out


@functools.cache
def candidates(cfg: Limits) -> tuple[Candidate, ...]:
    """Every shape that matters under the limits: each failed read and invalid
    frontmatter once a kind and collision, and every combination of the fields of a
    read file, with lengths 0, at the limit, and past it."""
    out: list[Candidate] = []
    for kind, taken in itertools.product(Kind, (False, True)):
        for read in (Read.MISSING, Read.NOT_MARKDOWN, Read.ENTRY, Read.FILE):
            out.append(Candidate(kind, read, Front.NONE, Given.ABSENT, True, 1, Given.TEXT, 1, True, taken))
        out.append(Candidate(kind, Read.OK, Front.INVALID, Given.ABSENT, True, 1, Given.TEXT, 1, True, taken))
    for kind, front, name, ok, n_len, desc, d_len, disable, taken in itertools.product(
        Kind,
        (Front.NONE, Front.MAPPING),
        Given,
        (False, True),
        sorted({0, cfg.name, cfg.name + 1}),
        Given,
        sorted({0, cfg.description, cfg.description + 1}),
        (False, True),
        (False, True),
    ):
        out.append(Candidate(kind, Read.OK, front, name, ok, n_len, desc, d_len, disable, taken))
    return tuple(out)


def inputs(cfg: Limits, t: Tally) -> tuple[Candidate, ...]:
    return candidates(cfg)


def cfgs() -> Iterator[Limits]:
    for name, description in itertools.product(range(3), range(3)):
        yield Limits(name, description)


def sample_cfg(seed: int) -> Limits:
    return Limits(seed % 80, (seed // 80) % 1200)


MEANT = {
    "a failing skill neither loaded nor reported": "skill_failure_reported",
    "a skill without description loaded with a warning": "skill_loaded_not_failed",
    "a name collision loaded as well": "skill_failure_reported",
    "an unreadable entry reported as an unreadable file": "skill_failure_reported",
    "a template with invalid YAML loaded": "skill_failure_reported",
    "a name over the limit loaded": "skill_failure_reported",
    "a diagnosed candidate the loader loses": "skill_failure_reported",
}
"""Each break and the law meant to kill it: `eukhe laws` fails one killed first by another."""

AREA = Area(
    name="skill_load",
    model=MODEL,
    cfg_type=Limits,
    state_type=Tally,
    input_type=Candidate,
    proof_cases=proof_cases,
    valid=valid,
    cfg_valid=cfg_valid,
    start=lambda m, cfg: skill_load.START,
    next=lambda m, cfg, t, x: m.count(t, m.check(cfg, x)),
    inputs=inputs,
    cfgs=cfgs,
    bounds="name and description limits 0..2; lengths 0, at and past the limit",
    depth=2,
    sample_cfg=sample_cfg,
    laws=LAWS,
    mutants=MUTANTS,
    meant=MEANT,
    cached=cached,
)
