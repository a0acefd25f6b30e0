"""The engine that checks the laws of each rules area, and says how.

A law is checked in the strongest way that fits:

- proven: CrossHair symbolically runs the law over the real model and
  reports "Confirmed over all paths." for every case of it. Each case fixes
  the enum fields (phase, reply kind, ...) and leaves every number and flag
  symbolic and unbounded. A step law is proven over every valid state and
  input; an invariant is proven inductively (it holds at the start and every
  step keeps it).
- exhaustive: every history of inputs from the start, up to a printed depth,
  for every limit within printed bounds; the law is checked on every state
  and every step reached.
- sampled: Hypothesis draws limits and long histories; the number of
  examples is printed.

A mutant is the model with one break. It is killed when a law fails on it
(exhaustively, or failing that, sampled); a surviving mutant fails the run.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import functools
import gc
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

Pred = Callable[..., bool]


@dataclass(frozen=True)
class Law:
    """One law of the spec, by its name, in up to three forms.

    edge: (model, cfg, state, input) -> bool, a law of every step.
    node: (model, cfg, state) -> bool, an invariant of every reachable state.
    history: (model, cfg, ghost, state, input, next) -> bool, a law of histories
        (the ghost carries what the history did, e.g. the requests cut so far).
    scope: which proof cases (enum fields of state and input) the edge form
        concerns; the law holds vacuously in the others.
    keep: which proof cases the invariant's keeping concerns (others, such as ended
        runs, never change: another law proves that).
    prove: the edge and node forms are checked by CrossHair.
    extra: (model, cfg) -> counterexample or None, one more exhaustive check.
    """

    name: str
    rule: str
    says: str
    edge: Pred | None = None
    node: Pred | None = None
    history: Pred | None = None
    scope: Callable[[dict[str, Enum], dict[str, Enum]], bool] | None = None
    prove: bool = True
    extra: Callable[[Any, Any], str | None] | None = None
    keep: Callable[[dict[str, Enum], dict[str, Enum]], bool] | None = None


@dataclass(frozen=True)
class Mutant:
    """The model with one break; `model` replaces the real one."""

    name: str
    rule: str
    model: Any


@dataclass(frozen=True)
class Area:
    """A rules module and its laws.

    model: the real model (an object whose functions the laws call).
    cfg_type, state_type, input_type: the dataclasses proofs range over.
    proof_cases: every (state enums, input enums) case a step proof splits into.
    valid(cfg, state): the states of the model; cfg_valid(cfg): the limits.
    start(model, cfg), next(model, cfg, state, input): the walk of histories.
    inputs(cfg, state): the inputs explored from a state.
    cfgs: the limits checked exhaustively; bounds: how they are printed.
    """

    name: str
    model: Any
    cfg_type: type
    state_type: type
    input_type: type
    proof_cases: Callable[[], list[tuple[dict[str, Enum], dict[str, Enum]]]]
    valid: Callable[[Any, Any], bool]
    cfg_valid: Callable[[Any], bool]
    start: Callable[[Any, Any], Any]
    next: Callable[[Any, Any, Any, Any], Any]
    inputs: Callable[[Any, Any], Sequence[Any]]
    cfgs: Callable[[], Iterable[Any]]
    bounds: str
    depth: int
    sample_cfg: Callable[[int], Any]  # from one drawn integer: limits beyond the exhaustive bounds
    laws: tuple[Law, ...]
    mutants: tuple[Mutant, ...] = ()
    # a mutant's name -> the law meant to kill it: killed by another law first, it survives
    # the law it was written for (`check_mutant`), so `eukhe laws` itself keeps each break
    # aimed at its law, once a run, not a test walking the area again
    meant: Mapping[str, str] = field(default_factory=dict)
    ghost_start: Callable[[Any], Any] = lambda cfg: None
    ghost_next: Callable[[Any, Any, Any, Any, Any, Any], Any] = lambda m, cfg, g, s, x, t: None
    samples: int = 300
    sample_length: int = 60
    cached: Callable[[Any], Any] = lambda m: m  # the model with its steps remembered
    where: str = ""  # "module:attribute" the prover's process imports this area from
    walk_first: bool = False  # a long walk that is one part: dealt first, so it never ends the check alone
    # a mutant's walk goes through every limit at half the depth before any at the whole: for an
    # area whose limits differ in kind (a face and its own inputs), where a break that shows under
    # one limit was found only after the others' whole walks (the drive area's three dearest
    # mutants: 10 CPU-seconds each, spent on walks that could not kill them; all 26: 47 to 0.6).
    # Not for areas of many limits of one kind (the run area's 256: 0.06 to 4.5)
    shallow_first: bool = False


@dataclass
class Verdict:
    """How one law fared."""

    name: str
    rule: str
    methods: list[str] = field(default_factory=list)
    cases: dict[str, int] = field(default_factory=dict)
    bounds: str = ""
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def method(self) -> str:
        for m in ("proven", "exhaustive", "sampled"):
            if m in self.methods:
                return m
        return "none"

    @property
    def passed(self) -> bool:
        return not self.failures and bool(self.methods)


@dataclass
class MutantVerdict:
    name: str
    rule: str
    area: str
    killed_by: str | None
    how: str = ""


# ---------------------------------------------------------------- exhaustive


class Found(Exception):
    pass


def _show(v: Any) -> str:
    return repr(v)


def explore(area: Area, model: Any, cfg: Any, depth: int, stop_at_first: bool = False) -> dict[str, Any]:
    """Walk every history of up to `depth` inputs from the start under `cfg`.

    Returns per law: cases checked and the first counterexample (or None)."""
    laws = area.laws
    found: dict[str, str] = {}
    s0 = area.start(model, cfg)
    g0 = area.ghost_start(cfg)
    parent: dict[Any, tuple[Any, Any] | None] = {(s0, g0): None}
    frontier = [(s0, g0)]
    # The laws of each form, in table order (a mutant is killed by the first law of the table
    # that fails on the first edge any fails on), and the area's functions, looked up once:
    # the walk calls them some millions of times.
    node_laws = [(law, law.node) for law in laws if law.node is not None]
    step_laws = [(law, law.edge, law.history) for law in laws if law.edge or law.history]
    inputs, step, ghost_next = area.inputs, area.next, area.ghost_next
    nodes = edges = 0  # every node law is checked on each node, every edge and history law on each edge

    def history(node: Any) -> list[Any]:
        out: list[Any] = []
        while parent[node] is not None:
            prev, x = parent[node]  # type: ignore[misc]
            out.append(x)
            node = prev
        return out[::-1]

    def fail(law: Law, node: Any, what: str) -> None:
        if law.name not in found:
            found[law.name] = f"cfg={_show(cfg)} after {_show(history(node))}: {what}"
            if stop_at_first:
                raise Found

    try:
        for level in range(depth + 1):
            nxt = []
            deeper = level < depth
            for node in frontier:
                s, g = node
                nodes += 1
                for law, holds in node_laws:
                    if not holds(model, cfg, s):
                        fail(law, node, f"state {_show(s)}")
                for x in inputs(cfg, s):
                    t = step(model, cfg, s, x)
                    g2 = ghost_next(model, cfg, g, s, x, t)
                    edges += 1
                    for law, edge, hist in step_laws:
                        if edge is not None and not edge(model, cfg, s, x):
                            fail(law, node, f"state {_show(s)}, input {_show(x)} gives {_show(t)}")
                        if hist is not None and not hist(model, cfg, g, s, x, t):
                            fail(
                                law,
                                node,
                                f"ghost {_show(g)}, state {_show(s)}, input {_show(x)} gives {_show(t)}",
                            )
                    if deeper:
                        child = (t, g2)
                        # one lookup (a state's hash is its fields', enums among them: the walk's
                        # most frequent call): the child is new when the dict grew
                        known = len(parent)
                        parent.setdefault(child, (node, x))
                        if len(parent) > known:
                            nxt.append(child)
            frontier = nxt
        for law in laws:
            if law.extra is not None:
                why = law.extra(model, cfg)
                if why is not None:
                    fail(law, (s0, g0), why)
    except Found:
        pass
    cases = {
        law.name: nodes * (law.node is not None)
        + edges * ((law.edge is not None) + (law.history is not None))
        + (law.extra is not None)
        for law in laws
    }
    return {"cases": cases, "found": found}


@contextlib.contextmanager
def acyclic() -> Iterator[None]:
    """The cyclic collector held off while a walk runs: the walk keeps every state it reached
    (hundreds of thousands of small objects, none in a cycle; reference counting frees what it
    drops), and each of the collector's passes walked them all again (the queue area's walk:
    6.7 CPU-seconds with it, 3.1 without). It is on again, as it was, once the walk is done."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def check_exhaustive(
    area: Area,
    model: Any,
    verdicts: dict[str, Verdict] | None,
    stop_at_first: bool = False,
    part: tuple[int, int] = (0, 1),
) -> dict[str, str]:
    """Every cfg within the area's bounds (`part` (k, n): the k-th of every n of them);
    returns the first counterexample per law. `stop_at_first` (a mutant's check): the
    cfgs from both ends in turn, the smallest, the largest, the next smallest, ...: most
    breaks show under small limits, and those that need large ones are found there
    without first walking every smaller limit (all mutants: 30 s of CPU in order, 6.5 so)."""
    found: dict[str, str] = {}
    mine, parts = part
    cfgs = list(area.cfgs())
    depths = [area.depth]
    if stop_at_first:
        cfgs = [c for pair in zip(cfgs, reversed(cfgs), strict=True) for c in pair][: len(cfgs)]
        if area.shallow_first:
            depths = [area.depth // 2, area.depth]
    with acyclic():
        for depth in depths:
            for i, cfg in enumerate(cfgs):
                if i % parts != mine or not area.cfg_valid(cfg):
                    continue
                r = explore(area, area.cached(model), cfg, depth, stop_at_first=stop_at_first)
                for name, why in r["found"].items():
                    found.setdefault(name, why)
                if verdicts is not None:
                    for name, n in r["cases"].items():
                        v = verdicts[name]
                        v.cases["exhaustive"] = v.cases.get("exhaustive", 0) + n
                if stop_at_first and found:
                    return found
    return found


# ---------------------------------------------------------------- sampled


def _sampler(examples: int) -> Callable[[Callable[[int, int], None]], Callable[[], None]]:
    """Hypothesis's test of `examples` histories, each drawn as two integers: the seed of
    its limits and the seed of its route. Derandomized, so every law and every mutant is
    walked over the same histories."""
    from hypothesis import HealthCheck, Verbosity, given, settings
    from hypothesis import strategies as st

    def wrap(body: Callable[[int, int], None]) -> Callable[[], None]:
        @settings(
            max_examples=examples,
            database=None,
            deadline=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
            verbosity=Verbosity.quiet,  # the counterexample is reported once, in the model's terms
        )
        # A history is drawn as a seed of its own, walked for the area's whole sample length: a
        # list of picks drawn one by one cost Hypothesis most of the time, and it drew short ones
        # (about 8 inputs on average, no deeper than the exhaustive walk).
        @given(st.integers(0, 10**9), st.integers(0, 2**32 - 1))
        def walk(seed: int, route: int) -> None:
            body(seed, route)

        return walk

    return wrap


def _history(area: Area, model: Any, laws: Sequence[Law], seed: int, route: int) -> dict[str, str]:
    """One drawn history walked for the area's sample length, every law in `laws` checked
    on each of its states and steps; the first failure of each law that fails."""
    failed: dict[str, str] = {}
    cfg = area.sample_cfg(seed)
    if not area.cfg_valid(cfg):
        return failed
    s = area.start(model, cfg)
    g = area.ghost_start(cfg)
    done: list[Any] = []
    live = list(laws)
    for law in live:
        if law.node is not None and not law.node(model, cfg, s):
            failed[law.name] = f"cfg={cfg!r}: start state {s!r}"
    live = [law for law in live if law.name not in failed]
    picks = random.Random(route)
    for _ in range(area.sample_length):
        xs = area.inputs(cfg, s)
        if not xs or not live:
            break
        x = xs[picks.randrange(len(xs))]
        t = area.next(model, cfg, s, x)
        # the counterexample is written only when a law fails: its history's repr grows
        # with every step, and written each step it was most of the sampling's time
        for law in live:
            if law.edge is not None and not law.edge(model, cfg, s, x):
                failed[law.name] = _step_shown(cfg, done, s, x, t)
            elif law.history is not None and not law.history(model, cfg, g, s, x, t):
                failed[law.name] = f"ghost {g!r}, {_step_shown(cfg, done, s, x, t)}"
            elif law.node is not None and not law.node(model, cfg, t):
                failed[law.name] = _step_shown(cfg, done, s, x, t)
        live = [law for law in live if law.name not in failed]
        g = area.ghost_next(model, cfg, g, s, x, t)
        done.append(x)
        s = t
    return failed


def check_sampled(area: Area, model: Any, law: Law, examples: int) -> str | None:
    """Hypothesis over long histories under limits beyond the exhaustive bounds: the law's
    counterexample, shrunk, or None."""

    def body(seed: int, route: int) -> None:
        why = _history(area, model, (law,), seed, route).get(law.name)
        if why is not None:
            raise AssertionError(why)

    try:
        _sampler(examples)(body)()
    except AssertionError as e:
        return str(e).splitlines()[0] if str(e) else "assertion failed"
    return None


def check_sampled_laws(area: Area, model: Any, examples: int, shrink: bool = True) -> dict[str, str]:
    """Every law of the area over the same drawn histories at once (each law alone walked
    the very same ones: the draws are derandomized); the failing laws, each with its
    counterexample, shrunk as `check_sampled` shrinks it (`shrink`; a mutant's check needs
    only which). A law that fails is not checked further; the others go on over every
    history."""
    first: dict[str, str] = {}

    def body(seed: int, route: int) -> None:
        live = [law for law in area.laws if law.name not in first]
        for name, why in _history(area, model, live, seed, route).items():
            first.setdefault(name, why)

    _sampler(examples)(body)()
    if not shrink:
        return first
    # the rare failure is drawn again, alone, for Hypothesis to shrink it
    laws = {law.name: law for law in area.laws}
    return {name: check_sampled(area, model, laws[name], examples) or why for name, why in first.items()}


def _step_shown(cfg: Any, done: list[Any], s: Any, x: Any, t: Any) -> str:
    return f"cfg={cfg!r} after {done!r}: state {s!r}, input {x!r} gives {t!r}"


# ---------------------------------------------------------------- proven


@dataclass(frozen=True)
class Target:
    """One proof case: a law's form with the enum fields fixed, numbers symbolic."""

    area: Area
    law: Law
    form: str  # "edge", "init" or "keep"
    s_enums: dict[str, Enum]
    x_enums: dict[str, Enum]

    def params(self) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        out += _scalars("c_", self.area.cfg_type, {})
        if self.form != "init":
            out += _scalars("s_", self.area.state_type, self.s_enums)
            out += _scalars("x_", self.area.input_type, self.x_enums)
        return out

    def pre(self, cfg: Any, s: Any, x: Any) -> bool:
        if self.form == "init":
            return bool(self.area.cfg_valid(cfg))
        ok = self.area.cfg_valid(cfg) & self.area.valid(cfg, s)
        if self.form == "keep" and self.law.node is not None:
            ok = ok & self.law.node(self.area.model, cfg, s)
        return bool(ok)

    def check(self, cfg: Any, s: Any, x: Any) -> bool:
        m = self.area.model
        if self.form == "init":
            s0 = self.area.start(m, cfg)
            return bool(self.area.valid(cfg, s0) & (self.law.node is None or self.law.node(m, cfg, s0)))
        if self.form == "keep":
            t = self.area.next(m, cfg, s, x)
            assert self.law.node is not None
            return bool(self.area.valid(cfg, t) & self.law.node(m, cfg, t))
        assert self.law.edge is not None
        return bool(self.law.edge(m, cfg, s, x))

    def build(self, i: int) -> tuple[list[str], str]:
        """Source lines that bind this case's constants, and the expression of its
        cfg, state and input built from the parameters: plain constructor calls, so
        the prover traces as little as it can."""
        ref = f"_T{i}"
        lines = [
            f"{ref}_c, {ref}_s, {ref}_x = {ref}.area.cfg_type, {ref}.area.state_type, {ref}.area.input_type"
        ]
        args = []
        parts: list[tuple[str, type, dict[str, Enum]]] = [("c", self.area.cfg_type, {})]
        if self.form != "init":
            parts += [("s", self.area.state_type, self.s_enums), ("x", self.area.input_type, self.x_enums)]
        for part, t, fixed in parts:
            kws = []
            for f in _fields(t):
                name = f"{ref}_{part}_{f.name}"
                if f.name in fixed:
                    lines.append(f"{name} = {ref}.{part}_enums[{f.name!r}]")
                    kws.append(f"{f.name}={name}")
                elif _is_enum(_hints(t)[f.name]):
                    lines.append(f"{name} = _all_members({ref}_{part}, {f.name!r})")
                    kws.append(f"{f.name}=_member({name}, {part}_{f.name})")
                else:
                    kws.append(f"{f.name}={part}_{f.name}")
            args.append(f"{ref}_{part}({', '.join(kws)})")
        args += ["None"] * (3 - len(args))
        return lines, ", ".join(args)


def _is_enum(h: Any) -> bool:
    return isinstance(h, type) and issubclass(h, Enum)


def _all_members(t: type, name: str) -> list[Any]:
    return list(_hints(t)[name])


def _fields(t: type) -> list[dataclasses.Field[Any]]:
    return list(dataclasses.fields(t))


def _scalars(prefix: str, t: type, fixed: dict[str, Enum]) -> list[tuple[str, str]]:
    out = []
    hints = _hints(t)
    for f in _fields(t):
        if f.name in fixed:
            continue
        h = hints[f.name]
        if isinstance(h, type) and issubclass(h, Enum):
            out.append((prefix + f.name, "int"))  # an index into the members, taken modulo their number
        elif h in (int, bool):
            out.append((prefix + f.name, h.__name__))
        else:
            raise TypeError(f"proof parameter {t.__name__}.{f.name}: {h} is neither int, bool nor an enum")
    return out


@functools.cache
def _hints(t: type) -> dict[str, Any]:
    """Field types, looked up once (never under the prover, where it is slow)."""
    return typing.get_type_hints(t)


def _member(members: list[Any], i: int) -> Any:
    """The i-th member, by comparisons the prover can split on (the first when out of range).
    The first is the fall-through, not a comparison of its own: n members make n paths, not
    n + 1 (the prover's time grows with the product of these over a case's enums)."""
    for k in range(1, len(members)):
        if i == k:
            return members[k]
    return members[0]


def targets(area: Area) -> list[Target]:
    for t in (area.cfg_type, area.state_type, area.input_type):
        _hints(t)
    out: list[Target] = []
    for law in area.laws:
        if not law.prove:
            continue
        if law.edge is not None:
            for s_en, x_en in area.proof_cases():
                if law.scope is None or law.scope(s_en, x_en):
                    out.append(Target(area, law, "edge", s_en, x_en))
        if law.node is not None:
            out.append(Target(area, law, "init", {}, {}))
            for s_en, x_en in area.proof_cases():
                if law.keep is None or law.keep(s_en, x_en):
                    out.append(Target(area, law, "keep", s_en, x_en))
    return out


REGISTRY: dict[str, list[Target]] = {}


def proof_target(where: str, i: int) -> Target:
    """The case a generated proof function checks (looked up in the prover's process)."""
    if where not in REGISTRY:
        import importlib

        module, _, attr = where.partition(":")
        REGISTRY[where] = targets(getattr(importlib.import_module(module), attr))
    return REGISTRY[where][i]


def where_of(area: Area) -> str:
    """The "module:attribute" another process imports the area from."""
    return area.where or f"eukhe.laws.{area.name}:AREA"


def _source(cases: list[tuple[int, Case]]) -> tuple[str, dict[int, int]]:
    """A prover's file of proof cases (numbered `n` in its file, of any area); the line each
    case's function starts on -> its number."""
    lines = ["from eukhe.laws.engine import proof_target, _member, _all_members", ""]
    where: dict[int, int] = {}
    for n, (area, i, t) in cases:
        sig = ", ".join(f"{name}: {ty}" for name, ty in t.params())
        lines.append(f"_T{n} = proof_target({area!r}, {i})")
        consts, objects = t.build(n)
        lines += consts
        where[len(lines) + 1] = n
        lines.append(f"def case_{n}({sig}) -> None:")
        # built once, in the precondition (CrossHair reads the leading asserts as one), so the
        # prover traces the constructors and their enum splits once, not once an assert
        lines.append(f"    assert _T{n}.pre(*(made := ({objects})))")
        lines.append(f"    assert _T{n}.check(*made)")
        lines.append("")
    return "\n".join(lines) + "\n", where


Case = tuple[str, int, Target]
"""A proof case as a prover's process finds it: its area's `where_of`, its place among the
area's `targets`, and the case."""


CONFIRMED = re.compile(r"^(?P<file>.+?):(?P<line>\d+): (?P<level>\w+): (?P<msg>.*)$")


PROVERS = 2
"""Prover processes at once: each needs a core and about 200 MB, and the laws' own walks
and `make test`'s pytest run beside them."""

PROVER_DEADLINE = 1800.0
"""Seconds a prover process may run in all; past it, it is killed and its cases are unproven."""


@dataclass
class Proof:
    """One prover process's file of proof cases, and its answer (stdout, stderr) once it is done."""

    where: dict[int, int]  # the line each case's function starts on -> the case's index
    cases: dict[int, Target]
    tmp: str
    answer: concurrent.futures.Future[tuple[str, str]]


class Provers:
    """The prover processes of one check, at most `at_once` running. `stop` cancels the
    ones queued and kills the ones running: an interrupted check waits for none of them."""

    def __init__(self, at_once: int) -> None:
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=at_once)
        self._live: set[subprocess.Popen[str]] = set()
        self._lock = threading.Lock()
        self._stopped = False

    def submit(
        self, path: str, env: dict[str, str], timeout: float, deadline: float
    ) -> concurrent.futures.Future[tuple[str, str]]:
        """CrossHair on one file of proof cases, once a place is free; its stdout and stderr."""
        return self._pool.submit(self._crosshair, path, env, timeout, deadline)

    def done(self) -> None:
        """No more files come; the ones queued still run."""
        self._pool.shutdown(wait=False)

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            live = list(self._live)
        self._pool.shutdown(wait=False, cancel_futures=True)
        for p in live:
            p.kill()

    def _crosshair(self, path: str, env: dict[str, str], timeout: float, deadline: float) -> tuple[str, str]:
        argv = [
            sys.executable,
            "-m",
            "eukhe.laws.prover",  # CrossHair's command line, a callee's conditions looked up once
            "check",
            "--analysis_kind=asserts",
            "--report_all",
            f"--per_condition_timeout={timeout}",
            "--max_uninteresting_iterations=1000000",
            path,
        ]
        with self._lock:
            if self._stopped:
                return "", "the check was stopped before this prover started"
            p = subprocess.Popen(
                argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                cwd=os.path.dirname(path),
            )
            self._live.add(p)
        try:
            return p.communicate(timeout=deadline)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            return out, f"the prover did not finish within {deadline:.0f} s and was stopped. {err}"
        finally:
            with self._lock:
                self._live.discard(p)


def prove(
    area: Area,
    verdicts: dict[str, Verdict],
    jobs: int = 1,
    timeout: float = 120.0,
    provers: Provers | None = None,
    deadline: float = PROVER_DEADLINE,
) -> list[Proof]:
    """CrossHair on every proof case of the area, in `jobs` processes run by `provers` (by
    default, all at once); `collect` reads the answers."""
    return prove_areas([area], jobs, timeout, provers, deadline)


def prove_areas(
    areas: Sequence[Area],
    jobs: int = PROVERS,
    timeout: float = 120.0,
    provers: Provers | None = None,
    deadline: float = PROVER_DEADLINE,
) -> list[Proof]:
    """CrossHair on every proof case of the areas, dealt in turn to `jobs` processes run by
    `provers` (by default, all at once): each process's start (CrossHair, z3 and the areas
    imported, about a CPU-second) is paid `jobs` times, not once an area's file, and each
    area's cases are shared evenly among them, however few or slow. `collect` reads the answers."""
    cases: list[Case] = [(where_of(a), i, t) for a in areas for i, t in enumerate(targets(a))]
    if not cases:
        return []
    own = provers is None
    runner = provers or Provers(jobs)
    tmp = tempfile.mkdtemp(prefix=f"eukhe-laws-{areas[0].name if len(areas) == 1 else 'all'}-")
    proofs = []
    for k in range(min(jobs, len(cases))):
        chunk = list(enumerate(cases))[k::jobs]
        src, where = _source(chunk)
        path = os.path.join(tmp, f"proofs_{k}.py")
        with open(path, "w") as f:
            f.write(src)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([tmp, *sys.path])
        answer = runner.submit(path, env, timeout, deadline)
        proofs.append(Proof(where, {n: t for n, (_, _, t) in chunk}, tmp, answer))
    if own:
        runner.done()
    return proofs


def collect(proofs: list[Proof], verdicts: dict[str, Verdict]) -> None:
    """Read the prover's answers on one area's cases: a law is proven when every case is confirmed."""
    _collect(proofs, lambda t: verdicts[t.law.name])


def collect_areas(proofs: list[Proof], verdicts: dict[str, dict[str, Verdict]]) -> None:
    """Read the prover's answers on the cases of several areas (`prove_areas`), into each
    area's verdicts (by its name)."""
    _collect(proofs, lambda t: verdicts[t.area.name][t.law.name])


def _collect(proofs: list[Proof], verdict: Callable[[Target], Verdict]) -> None:
    for p in proofs:
        out, err = p.answer.result()
        where, cases = p.where, p.cases
        starts = sorted(where)
        confirmed: set[int] = set()
        problems: dict[int, str] = {}
        for line in out.splitlines():
            m = CONFIRMED.match(line.strip())
            if not m:
                continue
            ln = int(m["line"])
            owner = max((s for s in starts if s <= ln), default=None)
            if owner is None:
                continue
            i = where[owner]
            if m["msg"].startswith("Confirmed over all paths"):
                confirmed.add(i)
            else:
                problems[i] = m["msg"]
        by_law: dict[tuple[str, str], list[int]] = {}
        for i, t in cases.items():
            by_law.setdefault((t.area.name, t.law.name), []).append(i)
        for idx in by_law.values():
            v = verdict(cases[idx[0]])
            v.cases["proven"] = v.cases.get("proven", 0) + len(idx)
            bad = [i for i in idx if i not in confirmed]
            if not bad:
                if "proven" not in v.methods and not v.failures:
                    v.methods.append("proven")
                continue
            i = bad[0]
            t = cases[i]
            what = problems.get(
                i, "not confirmed over all paths" + (f" ({err.strip()[-300:]})" if err.strip() else "")
            )
            case = f"{t.form} case {t.s_enums} {t.x_enums}"
            if i in problems and "not confirmed" not in what.lower():
                v.failures.append(f"CrossHair: {case}: {what}")
            else:
                # a law meant to be proven that the prover could not confirm fails:
                # a proof that silently became a test is a regression
                v.failures.append(f"not proven: {len(bad)} of {len(idx)} cases, e.g. {case}: {what}")
    for tmp in {p.tmp for p in proofs}:  # the provers are all done with their files
        shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------- the run


class Progress(Protocol):
    """Where the check says how far it has come (`eukhe laws`: a line on stderr)."""

    def line(self, text: str) -> None: ...


class Quiet:
    def line(self, text: str) -> None:
        pass


QUIET = Quiet()


@dataclass
class Report:
    laws: list[tuple[str, Verdict]]
    mutants: list[MutantVerdict]
    seconds: float

    @property
    def passed(self) -> bool:
        return all(v.passed for _, v in self.laws) and all(m.killed_by for m in self.mutants)


Walk = Callable[[Sequence[Area], dict[str, dict[str, Verdict]], int | None, Progress], list[MutantVerdict]]
"""Every area's histories walked and sampled into its verdicts, and its mutants tried."""


def walk_all(
    areas: Sequence[Area],
    verdicts: dict[str, dict[str, Verdict]],
    examples: int | None,
    progress: Progress,
) -> list[MutantVerdict]:
    """The areas one after another, in this process (`spread.walker` deals them to processes)."""
    return [m for a in areas for m in walk_area(a, verdicts[a.name], examples, progress)]


def check(
    areas: Sequence[Area],
    proofs: bool = True,
    examples: int | None = None,
    progress: Progress = QUIET,
    walk: Walk = walk_all,
) -> Report:
    """Check every law of the areas and every mutant. The provers run in other
    processes while `walk` walks histories and draws samples."""
    t0 = time.monotonic()
    verdicts = {a.name: {law.name: Verdict(law.name, law.rule) for law in a.laws} for a in areas}
    provers = Provers(PROVERS)
    procs: list[Proof] = []
    try:
        procs = prove_areas(areas, PROVERS, provers=provers) if proofs else []
        provers.done()
        mutants = walk(areas, verdicts, examples, progress)
        t1 = time.monotonic()
        collect_areas(procs, verdicts)
        waited = time.monotonic() - t1
        proven = [a for a in areas if any(law.prove for law in a.laws)]
        for a in proven:
            for v in verdicts[a.name].values():
                v.seconds += waited / max(sum(len(p.laws) for p in proven), 1)
        if procs:
            progress.line(f"proofs collected, {len(procs)} prover processes (waited {waited:.1f} s)")
    except BaseException:  # an interrupted or broken check leaves no prover behind, nor its files
        provers.stop()
        for tmp in {p.tmp for p in procs}:
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    laws = [(a.name, verdicts[a.name][law.name]) for a in areas for law in a.laws]
    return Report(laws, mutants, time.monotonic() - t0)


def walk_area(
    a: Area, vs: dict[str, Verdict], examples: int | None, progress: Progress
) -> list[MutantVerdict]:
    """The area's histories walked and sampled against its laws, and its mutants tried."""
    t1 = time.monotonic()
    exhausted(a, vs, check_exhaustive(a, a.model, vs), time.monotonic() - t1)
    progress.line(f"{a.name}: walked every history within {a.bounds} ({time.monotonic() - t1:.1f} s)")
    n = examples if examples is not None else a.samples
    t1 = time.monotonic()
    sampled(a, vs, n, check_sampled_laws(a, a.model, n), time.monotonic() - t1)
    progress.line(f"{a.name}: sampled {n} histories, every law over each ({time.monotonic() - t1:.1f} s)")
    t1 = time.monotonic()
    mutants = [check_mutant(a, mu) for mu in a.mutants]
    progress.line(f"{a.name}: tried {len(a.mutants)} mutants ({time.monotonic() - t1:.1f} s)")
    return mutants


def exhausted(a: Area, vs: dict[str, Verdict], found: dict[str, str], seconds: float) -> None:
    """The area's exhaustive verdicts: `found`, the first counterexample of each law that
    failed, in `seconds` shared among them."""
    for law in a.laws:
        v = vs[law.name]
        v.bounds = f"{a.bounds}; histories of {a.depth} inputs"
        v.seconds += seconds / max(len(a.laws), 1)
        if law.name in found:
            v.failures.append(f"exhaustive: {found[law.name]}")
        else:
            v.methods.append("exhaustive")


def sampled(a: Area, vs: dict[str, Verdict], n: int, failed: dict[str, str], seconds: float) -> None:
    """The area's sampled verdicts: `n` histories drawn, each walked once against every law
    (`check_sampled_laws`), in `seconds` shared among them."""
    for law in a.laws:
        v = vs[law.name]
        v.cases["sampled"] = n
        v.seconds += seconds / max(len(a.laws), 1)
        if law.name in failed:
            v.failures.append(f"sampled: {failed[law.name]}")
        else:
            v.methods.append("sampled")


def check_mutant(area: Area, mu: Mutant) -> MutantVerdict:
    """The first law, in table order, that fails on the mutant; None (it survives) when no
    law fails, or when the first is not the law `area.meant` names for it (`how` says so)."""
    found = check_exhaustive(area, mu.model, None, stop_at_first=True)
    for law in area.laws:
        if law.name in found:
            return _aimed(area, MutantVerdict(mu.name, mu.rule, area.name, law.name, "exhaustive"))
    failed = check_sampled_laws(area, mu.model, area.samples, shrink=False)
    for law in area.laws:
        if law.name in failed:
            return _aimed(area, MutantVerdict(mu.name, mu.rule, area.name, law.name, "sampled"))
    return MutantVerdict(mu.name, mu.rule, area.name, None)


def _aimed(area: Area, v: MutantVerdict) -> MutantVerdict:
    """A kill by the law meant for the mutant (or by any, when none is named); else a survivor
    of the law it was written for, the law that killed it said."""
    meant = area.meant.get(v.name)
    if meant is None or meant == v.killed_by:
        return v
    return MutantVerdict(v.name, v.rule, v.area, None, f"killed by {v.killed_by}, not by {meant}, its law")
