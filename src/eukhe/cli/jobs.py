"""`eukhe jobs`: the home's background jobs (command, age, state), and a person's stop of one
(`--kill ID`, `jobs.stop`)."""

from __future__ import annotations

import time
from typing import Annotated

import typer

from eukhe.cli.options import flag
from eukhe.cli.output import echo, echo_json
from eukhe.humanize import clipped
from eukhe.jobs import JobError, Listed, listing, stop
from eukhe.json_types import JsonObject
from eukhe.settings import home

__all__ = ["jobs", "jobs_json", "jobs_lines"]


def _age(s: float) -> str:
    n = int(max(s, 0))
    if n >= 3600:
        return f"{n // 3600}h{n // 60 % 60:02d}m"
    return f"{n // 60}m{n % 60:02d}s" if n >= 60 else f"{n}s"


def jobs_json(found: list[Listed]) -> list[JsonObject]:
    return [
        {
            "id": j.id,
            "command": j.command,
            "session": j.session,
            "startedAt": j.started_at,
            "state": j.state,
            "ended": j.ended,
            "orphaned": j.orphaned,
        }
        for j in found
    ]


def jobs_lines(found: list[Listed], every: bool = False) -> list[str]:
    """A line a job (the running ones; `every`: the ended ones too), after a count."""
    now = time.time()
    running = [j for j in found if not j.ended]
    shown = found if every else running
    lines = [
        f"background jobs: {len(running)} running" + (f", {len(found) - len(running)} ended" if every else "")
    ]
    for j in shown:
        orphan = " (its holder died: the owner's next start ends it)" if j.orphaned else ""
        lines.append(f"  {j.id}: {clipped(j.command, 70)}, {_age(now - j.started_at)}, {j.state}{orphan}")
    return lines


def jobs(
    as_json: Annotated[bool, flag("--json", help="One JSON object.")] = False,
    kill: Annotated[str | None, typer.Option("--kill", help="Stop this job (its id, job-...).")] = None,
) -> None:
    """The home's background jobs (started by bash with run_in_background): command, age and
    state, the ended ones too (kept 7 days). --kill ID stops one: every process it started
    gets SIGTERM, then SIGKILL after 2 s."""
    where = home()
    if kill is not None:
        try:
            echo(stop(where, kill))
        except JobError as e:
            echo(f"eukhe jobs: {e}", err=True)
            raise typer.Exit(1) from None
        return
    found = listing(where)
    if as_json:
        echo_json({"jobs": jobs_json(found)}, indent=2)
        return
    for line in jobs_lines(found, every=True):
        echo(line)
