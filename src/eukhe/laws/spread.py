"""The laws' walks spread over processes: each area's exhaustive walk in parts (its limits dealt
out), its samples, and each mutant, as tasks of a pool.

One process walked the areas one after another; `make test` runs it beside pytest, whose
workers mostly wait on processes and servers, so a core stood half idle while the run area's
walk (most of the laws' time) went on alone. The answers are the engine's own: the same
functions run on the same limits, only in other processes, and each verdict is put together
as `engine.walk_area` puts it. An area that another process cannot import as itself (a test's
area made in place, or one whose `where` names another) is walked in this process meanwhile.

The pool's processes are spawned, never forked: the parent runs the provers' threads. A task
that outlives `TASK_DEADLINE` fails its law, and an interrupted check kills the pool.
"""

from __future__ import annotations

import importlib
import multiprocessing
import time
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.pool import AsyncResult
from typing import Any

from eukhe.laws.engine import (
    Area,
    MutantVerdict,
    Progress,
    Verdict,
    Walk,
    check_exhaustive,
    check_mutant,
    check_sampled_laws,
    exhausted,
    sampled,
    walk_area,
    where_of,
)

__all__ = ["TASK_DEADLINE", "walker"]

TASK_DEADLINE = 3600.0
"""Seconds one task may take (a walk's part, a law's samples, a mutant) before its law fails."""

PARTS = 8
"""Parts an area's exhaustive walk is dealt into at most (one limit a part at least)."""


def _area(where: str) -> Area:
    module, _, attr = where.partition(":")
    area = getattr(importlib.import_module(module), attr)
    assert isinstance(area, Area)
    return area


def _importable(where: str, a: Area) -> bool:
    """Whether another process that imports `where` gets this very area."""
    try:
        return _area(where) is a
    except (ImportError, AttributeError, AssertionError):
        return False


def _exhaustive(where: str, part: int, parts: int) -> tuple[dict[str, str], dict[str, int], float]:
    # the worker's own CPU time, as the progress line says: wall time, under make test's
    # pytest beside it at a higher priority, counted its waits several times over
    t0 = time.process_time()
    area = _area(where)
    verdicts = {law.name: Verdict(law.name, law.rule) for law in area.laws}
    found = check_exhaustive(area, area.model, verdicts, part=(part, parts))
    return found, {n: v.cases.get("exhaustive", 0) for n, v in verdicts.items()}, time.process_time() - t0


def _sampled(where: str, examples: int) -> tuple[dict[str, str], float]:
    t0 = time.process_time()
    area = _area(where)
    return check_sampled_laws(area, area.model, examples), time.process_time() - t0


def _mutant(where: str, i: int) -> MutantVerdict:
    area = _area(where)
    return check_mutant(area, area.mutants[i])


@dataclass
class _Tasks:
    """One area's tasks in the pool."""

    area: Area
    walks: list[AsyncResult[tuple[dict[str, str], dict[str, int], float]]]
    samples: AsyncResult[tuple[dict[str, str], float]]
    mutants: list[AsyncResult[MutantVerdict]]


def _get(r: AsyncResult[Any], what: str) -> Any:
    try:
        return r.get(TASK_DEADLINE)
    except multiprocessing.TimeoutError:
        raise RuntimeError(f"{what} did not end within {TASK_DEADLINE:.0f} s") from None


def walker(jobs: int) -> Walk:
    """`engine.check`'s walk of every area, in `jobs` processes."""

    def walk(
        areas: Sequence[Area],
        verdicts: dict[str, dict[str, Verdict]],
        examples: int | None,
        progress: Progress,
    ) -> list[MutantVerdict]:
        with multiprocessing.get_context("spawn").Pool(jobs) as pool:  # its exit kills the workers
            ours = [a for a in areas if _importable(where_of(a), a)]
            # the long walks that are one part first (a pool takes its tasks in order: one
            # dealt last would run alone at the end), then each area's in the areas' order
            first = {a.name: _walks(pool, a) for a in ours if a.walk_first}
            tasks: dict[str, _Tasks] = {}
            for a in ours:
                where = where_of(a)
                n = examples if examples is not None else a.samples
                tasks[a.name] = _Tasks(
                    a,
                    first[a.name] if a.name in first else _walks(pool, a),
                    pool.apply_async(_sampled, (where, n)),
                    [pool.apply_async(_mutant, (where, i)) for i in range(len(a.mutants))],
                )
            mutants: list[MutantVerdict] = []
            for a in areas:
                if a.name in tasks:
                    mutants += _collect(tasks[a.name], verdicts[a.name], examples, progress)
                else:
                    mutants += walk_area(a, verdicts[a.name], examples, progress)
            return mutants

    return walk


def _walks(pool: Any, a: Area) -> list[AsyncResult[Any]]:
    """The parts of an area's exhaustive walk, dealt to the pool."""
    parts = min(PARTS, sum(1 for _ in a.cfgs()))
    return [pool.apply_async(_exhaustive, (where_of(a), k, parts)) for k in range(parts)]


def _collect(
    t: _Tasks, vs: dict[str, Verdict], examples: int | None, progress: Progress
) -> list[MutantVerdict]:
    a = t.area
    found: dict[str, str] = {}
    spent = 0.0
    for part in t.walks:
        got, cases, seconds = _get(part, f"a part of the {a.name} area's walk")
        spent += seconds
        for name, why in got.items():
            found.setdefault(name, why)
        for name, n in cases.items():
            vs[name].cases["exhaustive"] = vs[name].cases.get("exhaustive", 0) + n
    exhausted(a, vs, found, spent)
    progress.line(
        f"{a.name}: walked every history within {a.bounds} ({spent:.1f} s of CPU in {len(t.walks)} parts)"
    )
    n = examples if examples is not None else a.samples
    failed, spent = _get(t.samples, f"the {a.name} area's samples")
    sampled(a, vs, n, failed, spent)
    progress.line(f"{a.name}: sampled {n} histories, every law over each ({spent:.1f} s of CPU)")
    mutants = [_get(r, f"the mutant {mu.name!r}") for mu, r in zip(a.mutants, t.mutants, strict=True)]
    progress.line(f"{a.name}: tried {len(a.mutants)} mutants")
    return list(mutants)
