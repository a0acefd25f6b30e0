"""The `eukhe` command line."""

from __future__ import annotations

import json
import sys
import time
from typing import Annotated

import typer

app = typer.Typer(
    add_completion=False, no_args_is_help=True, help="eukhe: a coding agent harness whose liveness is law."
)


@app.callback()
def _root() -> None:
    """eukhe: a coding agent harness whose liveness is law."""


@app.command()
def laws(
    area: Annotated[
        list[str] | None,
        typer.Option("--area", help="Check only this area (run, recovery, wait); repeatable."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object instead of the table.")
    ] = False,
    no_proofs: Annotated[
        bool, typer.Option("--no-proofs", help="Skip the CrossHair proofs (exhaustive and sampled only).")
    ] = False,
    examples: Annotated[
        int | None, typer.Option("--examples", min=1, help="Hypothesis examples a law (default: the area's).")
    ] = None,
) -> None:
    """Check every law of the rules against its model, and kill every mutant.

    Exit code 1 when a law fails or a mutant survives."""
    from eukhe.laws import engine
    from eukhe.laws.areas import AREAS

    names = area or list(AREAS)
    unknown = [n for n in names if n not in AREAS]
    if unknown:
        typer.echo(f"eukhe laws: unknown area {unknown[0]!r}; the areas are: {', '.join(AREAS)}", err=True)
        raise typer.Exit(2)
    areas = [AREAS[n] for n in names]
    start = time.monotonic()

    def progress(line: str) -> None:
        if not as_json:
            typer.echo(f"  … {line} [{time.monotonic() - start:.0f} s]", err=True)

    report = engine.check(areas, proofs=not no_proofs, examples=examples, progress=progress)
    if as_json:
        typer.echo(json.dumps(_json(report), indent=2))
    else:
        _table(report)
    raise typer.Exit(0 if report.passed else 1)


faux_app = typer.Typer(add_completion=False, no_args_is_help=True, help="The scripted faux model.")
app.add_typer(faux_app, name="faux")


@faux_app.command("serve")
def faux_serve(
    script: Annotated[str, typer.Option("--script", help="The JSON script (see docs/faux.md).")],
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="Port on 127.0.0.1 (0: any free one).")
    ] = 0,
) -> None:
    """Serve the faux model on loopback: OpenAI Chat Completions, Responses and
    Anthropic Messages wire formats, until interrupted."""
    from eukhe.ai.faux import FauxServer, ScriptError, load

    try:
        loaded = load(script)
    except ScriptError as e:
        typer.echo(f"eukhe faux serve: {e}", err=True)
        raise typer.Exit(2) from None
    try:
        server = FauxServer(loaded, port=port).start()
    except OSError as e:
        typer.echo(f"eukhe faux serve: cannot listen on 127.0.0.1:{port}: {e.strerror}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"faux model serving {len(loaded.turns)} replies on {server.url}", err=True)
    typer.echo(server.url)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


def _json(report: object) -> dict[str, object]:
    from eukhe.laws.engine import Report

    assert isinstance(report, Report)
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


def _table(report: object) -> None:
    from eukhe.laws.engine import Report

    assert isinstance(report, Report)
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
        out.write(f"\nSURVIVED {m.area} mutant {m.name!r} ({m.rule}): no law fails on it\n")
    n = len(report.laws)
    passed = sum(1 for _, v in report.laws if v.passed)
    killed = sum(1 for m in report.mutants if m.killed_by)
    total = f"{passed} of {n} laws pass, {killed} of {len(report.mutants)} mutants killed"
    out.write(f"\n{total}, in {report.seconds:.1f} s\n")


def main(argv: list[str] | None = None) -> None:
    app(args=argv, prog_name="eukhe")


if __name__ == "__main__":
    main()
