"""`eukhe laws`: every law checked against its model and every mutant killed, as a
table or JSON. The command line's half that loads the laws and their engine
(Hypothesis, CrossHair; `cli/lazy.py`)."""

from __future__ import annotations

import json
import sys
import time

import typer

from eukhe.cli.output import echo
from eukhe.laws import engine, spread
from eukhe.laws.areas import AREAS
from eukhe.laws.engine import Report


def check(
    area: list[str] | None, json_out: bool, no_proofs: bool, examples: int | None, jobs: int = 1
) -> int:
    """Check the areas (all by default) with their walks in `jobs` processes; the exit code
    (1: a law fails or a mutant survives)."""
    names = area or list(AREAS)
    unknown = [n for n in names if n not in AREAS]
    if unknown:
        echo(f"eukhe laws: unknown area {unknown[0]!r}; the areas are: {', '.join(AREAS)}", err=True)
        raise typer.Exit(2)
    areas = [AREAS[n] for n in names]

    walk = spread.walker(jobs) if jobs > 1 else engine.walk_all
    progress: engine.Progress = engine.QUIET if json_out else Lines(time.monotonic())
    report = engine.check(areas, proofs=not no_proofs, examples=examples, progress=progress, walk=walk)
    if json_out:
        typer.echo(json.dumps(as_json(report), indent=2))
    else:
        table(report)
    return 0 if report.passed else 1


class Lines:
    """The check's progress, a line on stderr each, with the seconds since `start`."""

    def __init__(self, start: float) -> None:
        self.start = start

    def line(self, text: str) -> None:
        echo(f"  … {text} [{time.monotonic() - self.start:.0f} s]", err=True)


def as_json(report: Report) -> dict[str, object]:
    return {
        "laws": [
            {
                "name": v.name,
                "area": area,
                "rule": v.rule,
                "method": v.method,
                "methods": [m for m in ("proven", "exhaustive", "sampled") if m in v.methods],
                "cases": v.cases,
                "bounds": v.bounds,
                "result": "pass" if v.passed else "fail",
                "seconds": round(v.seconds, 3),
                "failures": v.failures,
            }
            for area, v in report.laws
        ],
        "mutants": [
            {"name": m.name, "area": m.area, "rule": m.rule, "killed_by": m.killed_by, "how": m.how or None}
            for m in report.mutants
        ],
        "seconds": round(report.seconds, 3),
        "result": "pass" if report.passed else "fail",
    }


def table(report: Report) -> None:
    out = sys.stdout
    out.write(f"{'law':34} {'rule':7} {'method':10} {'result':6} {'seconds':>7}  cases\n")
    for _, v in report.laws:
        cases = ", ".join(f"{k} {n}" for k, n in v.cases.items())
        result = "pass" if v.passed else "FAIL"
        out.write(f"{v.name:34} {v.rule:7} {v.method:10} {result:6} {v.seconds:7.2f}  {cases}\n")
    bounds = sorted({v.bounds for _, v in report.laws if v.bounds})
    for b in bounds:
        out.write(f"  exhaustive bounds: {b}\n")
    out.write("\n")
    out.write(f"{'mutant':58} {'rule':7} killed by\n")
    for m in report.mutants:
        killer = f"{m.killed_by} ({m.how})" if m.killed_by else "SURVIVED"
        out.write(f"{m.name:58} {m.rule:7} {killer}\n")
    failing = [(a, v) for a, v in report.laws if not v.passed]
    for area, v in failing:
        out.write(f"\nFAIL {area}.{v.name} ({v.rule}):\n")
        for f in v.failures:
            out.write(f"  {f}\n")
    survivors = [m for m in report.mutants if not m.killed_by]
    for m in survivors:
        why = m.how or "no law fails on it"
        out.write(f"\nSURVIVED {m.area} mutant {m.name!r} ({m.rule}): {why}\n")
    n = len(report.laws)
    passed = sum(1 for _, v in report.laws if v.passed)
    killed = sum(1 for m in report.mutants if m.killed_by)
    total = f"{passed} of {n} laws pass, {killed} of {len(report.mutants)} mutants killed"
    out.write(f"\n{total}, in {report.seconds:.1f} s\n")
