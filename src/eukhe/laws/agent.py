"""The laws of `rules.agent` (issue 44): a subagent a user defines loads or is said, never
both; its run never offers a tool its parent's run does not; naming no tools, it has its
parent's.

The state is a run (the tools it offers, its depth); an input is one definition's shape
(at the root only) with the tools it names and denies, and the next state the run of the
agent it spawns, so a history is a chain of agents each spawned by the last. The limits are
the name's and the description's lengths. The tools are names, not numbers: the laws are
walked and sampled, not proven.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import agent as rule
from eukhe.rules.agent import Names, Problem, Shape, Verdict
from eukhe.rules.skill_load import Front, Given, Limits, Read
from eukhe.rules.states import replace

ROOT = ("read", "bash", "edit", "mcp__s__a", "mcp__s__b")
"""The tools the root run offers."""

NAMES = ("read", "edit", "write", "mcp__s", "mcp__s__b")
"""Names a definition may give: some offered, one never offered, a whole MCP server."""


@dataclass(frozen=True)
class Model:
    check: Callable[[Limits, Shape], Verdict]
    tools_for: Callable[[Sequence[str] | None, Sequence[str], Iterable[str]], tuple[str, ...]]


MODEL = Model(check=rule.check, tools_for=rule.tools_for)


@dataclass(frozen=True)
class Run:
    offered: tuple[str, ...]  # the tools the run offers, in order
    depth: int  # 0: the root's


@dataclass(frozen=True)
class Spawned:
    shape: Shape  # the definition as read
    named: tuple[str, ...] | None  # the tools it names (None: none)
    denied: tuple[str, ...]  # the tools it denies


def cached(m: Model) -> Model:
    return Model(check=functools.lru_cache(maxsize=1 << 16)(m.check), tools_for=m.tools_for)


# ---------------------------------------------------------------- the spec's terms


def failures(lim: Limits, s: Shape) -> frozenset[Problem]:
    """What fails in a definition, as the issue says: a file that cannot be read (or leads
    out of its folder), one too large, invalid YAML; no name, or one that is not lowercase
    words joined by hyphens or is over the limit; no description, or one over the limit; a
    tool name no tool answers; a model that is not text; a name an earlier agent took, for
    one that is otherwise fine."""
    if s.read is not Read.OK:
        return frozenset({Problem.UNREADABLE_FILE if s.read is Read.FILE else Problem.UNREADABLE_ENTRY})
    if s.cut:
        return frozenset({Problem.TOO_LARGE})
    if s.front is Front.INVALID:
        return frozenset({Problem.INVALID_YAML})
    text = s.name is Given.TEXT and s.name_length > 0
    wrong = {
        Problem.NAME_NOT_TEXT: s.name is Given.OTHER,
        Problem.NO_NAME: s.name is Given.ABSENT or (s.name is Given.TEXT and s.name_length <= 0),
        Problem.NAME_INVALID: text and not s.name_ok,
        Problem.NAME_TOO_LONG: text and s.name_length > lim.name,
        Problem.DESCRIPTION_NOT_TEXT: s.description is Given.OTHER,
        Problem.NO_DESCRIPTION: s.description is Given.ABSENT
        or (s.description is Given.TEXT and s.description_length <= 0),
        Problem.DESCRIPTION_TOO_LONG: s.description is Given.TEXT and s.description_length > lim.description,
        Problem.TOOLS_NOT_NAMES: s.tools is Names.OTHER,
        Problem.UNKNOWN_TOOL: s.tools is Names.UNKNOWN,
        Problem.DENIED_NOT_NAMES: s.denied is Names.OTHER,
        Problem.UNKNOWN_DENIED: s.denied is Names.UNKNOWN,
        Problem.MODEL_NOT_TEXT: s.model is Given.OTHER,
    }
    found = frozenset(p for p, bad in wrong.items() if bad)
    return found if found or not s.taken else frozenset({Problem.COLLISION})


def _names(given: str, tool: str) -> bool:
    """A name given covers a tool: the tool's own name, or its MCP server's."""
    return tool == given or (given.count("__") == 1 and tool.startswith(given + "__"))


def allowed(x: Spawned, offered: Sequence[str]) -> tuple[str, ...]:
    """The tools the spec gives the agent: of its parent's, in order, those it names (all,
    naming none) and does not deny."""
    given = x.named
    return tuple(
        t
        for t in offered
        if (given is None or any(_names(n, t) for n in given)) and not any(_names(d, t) for d in x.denied)
    )


# ---------------------------------------------------------------- laws


def agent_loaded_or_said(m: Model, cfg: Limits, s: Run, x: Spawned) -> bool:
    """A definition loads, or is said with every problem it has and no other; never both."""
    v = m.check(cfg, x.shape)
    return (v.loads != (len(v.problems) > 0)) & (frozenset(v.problems) == failures(cfg, x.shape))


def agent_never_widens(m: Model, cfg: Limits, s: Run, x: Spawned) -> bool:
    """The agent's run offers only tools its parent's run offers, named by it (when it
    names any) and not denied."""
    got = m.tools_for(x.named, x.denied, s.offered)
    named = x.named
    return all(
        t in s.offered
        and (named is None or any(_names(n, t) for n in named))
        and not any(_names(d, t) for d in x.denied)
        for t in got
    )


def agent_never_widens_chain(m: Model, cfg: Limits, s: Run) -> bool:
    """However deep the chain of agents, no run offers a tool the root's does not."""
    return all(t in ROOT for t in s.offered)


def agent_inherits_unnamed(m: Model, cfg: Limits, s: Run, x: Spawned) -> bool:
    """It has exactly what the spec gives it: naming none and denying none, its parent's
    tools, all of them; else every tool of its parent's it names and does not deny."""
    return m.tools_for(x.named, x.denied, s.offered) == allowed(x, s.offered)


LAWS = (
    Law(
        "agent_loaded_or_said",
        "issue 44",
        "A defined agent loads, or is said with each of its problems; never both.",
        edge=agent_loaded_or_said,
        prove=False,
    ),
    Law(
        "agent_never_widens",
        "issue 44",
        "A defined agent's run offers no tool its parent's does not, nor one it does not name or denies.",
        edge=agent_never_widens,
        node=agent_never_widens_chain,
        prove=False,
    ),
    Law(
        "agent_inherits_unnamed",
        "issue 44",
        "Naming no tools, an agent has its parent's; else each of its parent's it names, less those denied.",
        edge=agent_inherits_unnamed,
        prove=False,
    ),
)


# ---------------------------------------------------------------- breaks


def _check_break(change: Callable[[Limits, Shape, Verdict], Verdict]) -> Model:
    def check(lim: Limits, s: Shape) -> Verdict:
        return change(lim, s, rule.check(lim, s))

    return Model(check=check, tools_for=rule.tools_for)


def _tools_break(
    change: Callable[[Sequence[str] | None, Sequence[str], tuple[str, ...]], tuple[str, ...]],
) -> Model:
    def tools_for(
        named: Sequence[str] | None, denied: Sequence[str], offered: Iterable[str]
    ) -> tuple[str, ...]:
        return change(named, denied, tuple(offered))

    return Model(check=rule.check, tools_for=tools_for)


def _unknown_tool_loaded(lim: Limits, s: Shape, v: Verdict) -> Verdict:
    return Verdict(True, ()) if v.problems == (Problem.UNKNOWN_TOOL,) else v


def _nameless_loaded(lim: Limits, s: Shape, v: Verdict) -> Verdict:
    return Verdict(True, ()) if v.problems == (Problem.NO_NAME,) else v


def _bad_yaml_silent(lim: Limits, s: Shape, v: Verdict) -> Verdict:
    return Verdict(False, ()) if v.problems == (Problem.INVALID_YAML,) else v


def _collision_loaded(lim: Limits, s: Shape, v: Verdict) -> Verdict:
    return rule.check(lim, replace(s, taken=False))


def _unreadable_said_and_loaded(lim: Limits, s: Shape, v: Verdict) -> Verdict:
    return Verdict(True, v.problems) if v.problems == (Problem.UNREADABLE_FILE,) else v


def _named_taken_whole(
    named: Sequence[str] | None, denied: Sequence[str], offered: tuple[str, ...]
) -> tuple[str, ...]:
    """The names it gives, offered or not."""
    got = rule.tools_for(named, denied, offered)
    return got if named is None else tuple(dict.fromkeys((*got, *(n for n in named if n not in denied))))


def _denied_ignored(
    named: Sequence[str] | None, denied: Sequence[str], offered: tuple[str, ...]
) -> tuple[str, ...]:
    return rule.tools_for(named, (), offered)


def _unnamed_gets_none(
    named: Sequence[str] | None, denied: Sequence[str], offered: tuple[str, ...]
) -> tuple[str, ...]:
    return () if named is None else rule.tools_for(named, denied, offered)


def _server_names_nothing(
    named: Sequence[str] | None, denied: Sequence[str], offered: tuple[str, ...]
) -> tuple[str, ...]:
    return tuple(
        t for t in offered if (named is None or t in named) and not any(rule.covers(d, t) for d in denied)
    )


MUTANTS = (
    Mutant("an unknown tool name loaded", "issue 44", _check_break(_unknown_tool_loaded)),
    Mutant("a definition without name loaded", "issue 44", _check_break(_nameless_loaded)),
    Mutant("invalid YAML neither loaded nor said", "issue 44", _check_break(_bad_yaml_silent)),
    Mutant("a name collision loaded as well", "issue 44", _check_break(_collision_loaded)),
    Mutant("an unreadable file said and loaded", "issue 44", _check_break(_unreadable_said_and_loaded)),
    Mutant("an agent given the tools it names, offered or not", "issue 44", _tools_break(_named_taken_whole)),
    Mutant("disallowedTools ignored", "issue 44", _tools_break(_denied_ignored)),
    Mutant("an agent naming no tools given none", "issue 44", _tools_break(_unnamed_gets_none)),
    Mutant(
        "an MCP server's name covering none of its tools", "issue 44", _tools_break(_server_names_nothing)
    ),
)


# ---------------------------------------------------------------- the area


FINE = Shape(Read.OK, Front.MAPPING, False, Given.TEXT, True, 1, Given.TEXT, 1, Names.ABSENT, Names.ABSENT,
             Given.ABSENT, False)  # fmt: skip
"""A definition that loads under every limit but 0 (the tools' inputs carry it)."""


@functools.cache
def shapes(cfg: Limits) -> tuple[Shape, ...]:
    """Each failed read, a file too large and invalid YAML once; then every combination of
    the frontmatter's fields, the lengths 0, at the limit and past it."""
    out = [replace(FINE, read=r) for r in (Read.ENTRY, Read.FILE)]
    out += [replace(FINE, cut=True), replace(FINE, front=Front.INVALID), replace(FINE, front=Front.NONE)]
    out[-1] = replace(out[-1], name=Given.ABSENT, description=Given.ABSENT)
    names = [(Given.ABSENT, False, 0), (Given.OTHER, False, 0), (Given.TEXT, True, 0), (Given.TEXT, False, 1)]
    names += [(Given.TEXT, True, n) for n in sorted({cfg.name, cfg.name + 1} - {0})]
    descriptions = [(Given.ABSENT, 0), (Given.OTHER, 0)] + [
        (Given.TEXT, n) for n in sorted({0, cfg.description, cfg.description + 1})
    ]
    for (name, ok, n_len), (desc, d_len), tools, denied, model, taken in itertools.product(
        names, descriptions, Names, (Names.ABSENT, Names.UNKNOWN, Names.OTHER), Given, (False, True)
    ):
        out.append(
            Shape(Read.OK, Front.MAPPING, False, name, ok, n_len, desc, d_len, tools, denied, model, taken)
        )
    return tuple(out)


def _subsets(names: Sequence[str]) -> list[tuple[str, ...]]:
    return [c for k in range(len(names) + 1) for c in itertools.combinations(names, k)]


TOOLS: tuple[tuple[tuple[str, ...] | None, tuple[str, ...]], ...] = tuple(
    (named, denied)
    for named in (None, *_subsets(NAMES))
    for denied in ((), ("edit",), ("mcp__s",), ("bash", "mcp__s__a"))
)
"""Each set of names (and none), with a few denials."""


def inputs(cfg: Limits, s: Run) -> tuple[Spawned, ...]:
    return _inputs(cfg, s.depth == 0)


@functools.cache
def _inputs(cfg: Limits, root: bool) -> tuple[Spawned, ...]:
    tools = tuple(Spawned(FINE, named, denied) for named, denied in TOOLS)
    return (*(Spawned(sh, None, ()) for sh in shapes(cfg)), *tools) if root else tools


def nxt(m: Model, cfg: Limits, s: Run, x: Spawned) -> Run:
    """The run of the agent it spawns (a definition that does not load spawns none)."""
    if not m.check(cfg, x.shape).loads:
        return s
    return Run(m.tools_for(x.named, x.denied, s.offered), s.depth + 1)


def cfgs() -> Iterator[Limits]:
    yield from (Limits(0, 0), Limits(1, 2), Limits(2, 1))


SAMPLED = (0, 1, 2, 63, 64, 1024)


def sample_cfg(seed: int) -> Limits:
    """Limits from a few that matter (the shapes of each are made once)."""
    return Limits(SAMPLED[seed % len(SAMPLED)], SAMPLED[(seed // len(SAMPLED)) % len(SAMPLED)])


def proof_cases() -> list[tuple[dict[str, Enum], dict[str, Enum]]]:
    return []


MEANT = {
    "an unknown tool name loaded": "agent_loaded_or_said",
    "a definition without name loaded": "agent_loaded_or_said",
    "invalid YAML neither loaded nor said": "agent_loaded_or_said",
    "a name collision loaded as well": "agent_loaded_or_said",
    "an unreadable file said and loaded": "agent_loaded_or_said",
    "an agent given the tools it names, offered or not": "agent_never_widens",
    "disallowedTools ignored": "agent_never_widens",
    "an agent naming no tools given none": "agent_inherits_unnamed",
    "an MCP server's name covering none of its tools": "agent_inherits_unnamed",
}
"""Each break and the law meant to kill it: `eukhe laws` fails one killed first by another."""

AREA = Area(
    name="agent",
    model=MODEL,
    cfg_type=Limits,
    state_type=Run,
    input_type=Spawned,
    proof_cases=proof_cases,
    valid=lambda cfg, s: s.depth >= 0,
    cfg_valid=lambda cfg: (cfg.name >= 0) & (cfg.description >= 0),
    start=lambda m, cfg: Run(ROOT, 0),
    next=nxt,
    inputs=inputs,
    cfgs=cfgs,
    bounds="name and description limits (0, 0), (1, 2), (2, 1); lengths 0, at and past the limit; "
    "every set of 5 tool names with 4 denials, agents spawning agents 3 deep",
    depth=3,
    sample_cfg=sample_cfg,
    laws=LAWS,
    mutants=MUTANTS,
    meant=MEANT,
    cached=cached,
    samples=100,
)
