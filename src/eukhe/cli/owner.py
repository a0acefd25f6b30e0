"""`eukhe status`, `eukhe shutdown`, `eukhe doctor`, `eukhe abort`: the home's owner
as a person looks at it. None of them starts an owner."""

from __future__ import annotations

import asyncio
import os
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import click
import typer

from eukhe.cli import lazy
from eukhe.cli.folder_settings import settings_here
from eukhe.cli.jobs import jobs, jobs_json, jobs_lines
from eukhe.cli.options import flag
from eukhe.cli.output import echo, echo_json, width
from eukhe.display import provider_line
from eukhe.home import HomeError, exposed, made_private
from eukhe.jobs import listing
from eukhe.json_types import JsonObject, JsonValue
from eukhe.rules.child import CHILD_POLL_FAILURES
from eukhe.run.owner_access import (
    OwnerError,
    RequestKind,
    UnsafeSocket,
    alive,
    ask_once,
    info_path,
    read_info,
    socket_folder,
    socket_path,
)
from eukhe.run.store_access import StoreError, database_url, read_problem
from eukhe.settings import SettingsError, home


def _home() -> Path:
    return home()


def subagents() -> list[JsonObject] | str:
    """The subagents whose task has not ended, or why the store cannot say (a part of
    `eukhe status`, which never fails for it). A store no run has used has none."""
    try:
        return lazy.stored().subagents()
    except (typer.Exit, click.exceptions.Exit, SystemExit):
        return "the run store cannot be read (above)"
    except Exception as e:
        return f"{type(e).__name__}: {e}"


def _jobs(home: Path) -> list[JsonObject]:
    """The home's background jobs that still run (`eukhe jobs --json` lists them all)."""
    return [j for j in jobs_json(listing(home)) if not j["ended"]]


def _ago(since: JsonValue) -> str:
    if not isinstance(since, int | float):
        return "?"
    s = max(0, round(time.time() - since))
    return (
        f"{s // 3600}h{s // 60 % 60:02d}m"
        if s >= 3600
        else (f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s")
    )


def status(
    as_json: Annotated[bool, flag("--json", help="One JSON object.")] = False,
    fleet: Annotated[
        bool,
        flag("--fleet", help="The fleet on the shared store: its hosts, executors, leases and runs."),
    ] = False,
) -> None:
    """The home's owner: its pid and age, its clients, the runs in flight and where
    each waits, the root-turn lease, and per provider the slots held and queued.
    With --fleet: the hosts sharing the home's store instead (docs/fleet.md)."""
    if fleet:
        _fleet(as_json)
        return
    home = _home()
    try:
        got = asyncio.run(ask_once(home, RequestKind.STATUS))
    except OwnerError as e:
        if as_json:
            echo_json(
                {
                    "owner": None,
                    "runs": [],
                    "lease": None,
                    "providers": {},
                    "why": str(e),
                    "jobs": _jobs(home),
                }
            )
        else:
            said = f"no owner runs for {home}: the next `eukhe run` starts one ({e})"
            echo(textwrap.fill(said, width(), subsequent_indent="  "))
            for line in jobs_lines(listing(home)):
                _fit(line)
        return
    if as_json:
        echo_json({**got, "subagents": subagents(), "jobs": _jobs(home)}, indent=2)
        return
    owner = got["owner"]
    _fit(f"owner: pid {owner['pid']}, up {_ago(owner['since'])}, home {home}")
    clients = got.get("clients") or []
    _fit(f"clients: {len(clients)}")
    for c in clients:
        _fit(
            f"  pid {c.get('pid')} ({' '.join(c.get('argv') or []) or '?'}), "
            f"connected {_ago(c.get('since'))} ago"
        )
    runs = got.get("runs") or []
    _fit(f"runs in flight: {len(runs)}")
    for r in runs:
        _fit(f"  {r.get('run')} (session {r.get('session')}, pid {r.get('pid')}): {r.get('waits')}")
        if r.get("taken"):  # taken up by this owner: from where (another host's executor gone)
            _fit(f"    {r['taken']}")
    lease = got["lease"]
    holder = lease.get("holder")
    if holder:
        _fit(
            f"root-turn lease: run {holder.get('run')} of session {holder.get('session')}, "
            f"for {_ago(holder.get('since'))}"
        )
    else:
        _fit("root-turn lease: free")
    for w in lease.get("waiters") or []:
        _fit(f"  waiting: run {w.get('run')} of session {w.get('session')}, for {_ago(w.get('since'))}")
    for name, p in (got.get("providers") or {}).items():
        _fit(provider_line(name, p))
    _subagents()
    for line in jobs_lines(listing(home)):  # the running ones (`eukhe jobs` lists them all)
        _fit(line)
    memory = got.get("memory")
    if memory is None:
        _fit("chat: not opened by this owner yet")
    elif "error" in memory:
        _fit(f"chat: its store cannot say: {memory['error']}")
    else:
        model = f" (model {memory['model']})" if memory["model"] else ""
        who = "this owner writes it" if memory["writer"] else "another owner of the store writes it"
        _fit(
            f"chat: {memory['messages']} messages, {memory['built']} lines built, "
            f"{memory['pending']} pending, {memory['jobs']} compactor jobs running{model}; {who}"
        )


def _seconds(s: float | None) -> str:
    return "?" if s is None else _ago(time.time() - s)


def _fleet(as_json: bool) -> None:
    """`eukhe status --fleet`: read from the store, not asked of the owner (a look at the
    fleet works with no owner up, and on any host of it)."""
    view = lazy.stored().fleet()
    if as_json:
        echo_json(view.json(), indent=2)
        return
    if not view.shared:
        _fit(f"no fleet: the store at {view.store} is this machine's (a fleet shares one: docs/fleet.md)")
        return
    executors = sum(len(h.executors) for h in view.hosts)
    hosts = len(view.hosts)
    _fit(f"fleet on {view.store}: {hosts} hosts, {executors} executors, {view.runs()} runs in flight")
    for h in view.hosts:
        _fit(f"host {h.host}")
        for e in h.executors:
            if e.beat_age_s is None:
                lease = "no lease in the store"
            else:
                lease = f"up {_seconds(e.up_s)}, beat {_seconds(e.beat_age_s)} ago"
                lease += ", lock held" if e.lock_held else ", lock free"
            state = "gone: its runs go to the next watch of a live owner" if e.gone else "live"
            pid = f"pid {e.pid}, " if e.pid is not None else ""
            _fit(f"  {e.executor}: {pid}{lease}; {state}")
            for run in e.runs:
                _fit(f"    run {run}")


def _fit(line: str) -> None:
    """A line of the status, wrapped to the columns (`width`), its continuation indented
    under it; a path or a word longer than a line is kept whole on a line of its own, unindented."""
    indent = " " * (len(line) - len(line.lstrip(" ")) + 4)
    columns = width()
    wrapped = textwrap.wrap(
        line, columns, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False
    )
    # A word that fits the columns only without the indent (a long home) loses the indent.
    echo("\n".join(w.lstrip(" ") if len(w) > columns else w for w in wrapped))


def _subagents() -> None:
    """The subagents whose task has not ended, with their watch's clock."""
    kids = subagents()
    if isinstance(kids, str):
        _fit(f"subagents: the store cannot say: {kids}")
        return
    _fit(f"subagents: {len(kids)}")
    for k in kids:
        w = k.get("watch") or {}
        if w.get("phase") == "watch":
            left = int(w.get("leftMs") or 0) / 1000
            clock = (
                f"quiet {w.get('quietSeconds')} s, {left:.0f} s left before stalled, "
                f"{w.get('failedPolls')} of {CHILD_POLL_FAILURES} failed polls"
            )
        else:
            clock = "not polled yet" if not w else "its report waits to be placed"
        branch = f", in a worktree on branch {w['branch']}" if w.get("branch") else ""
        _fit(f"  {k.get('name')} ({k.get('child')}, session {k.get('session')}{branch}): {clock}")


def shutdown() -> None:
    """End the home's owner once its work is checkpointed. Clients that still run go
    on and start a new owner when they next need one: nothing is lost."""
    home = _home()
    try:
        got = asyncio.run(ask_once(home, RequestKind.SHUTDOWN))
    except OwnerError as e:
        echo(f"no owner runs for {home} ({e})")
        return
    pid = int(got["pid"])
    end = time.monotonic() + 10
    while alive(pid) and socket_path(home).exists() and time.monotonic() < end:
        time.sleep(0.02)
    echo(
        f"the owner (pid {pid}) ended"
        if not socket_path(home).exists()
        else f"the owner (pid {pid}) was asked to end"
    )


def doctor() -> None:
    """Check the home: its owner, its socket, its store. Each problem is one line
    with its fix; the exit code is 1 when there is one."""
    home = _home()
    problems = 0

    def bad(line: str) -> None:
        nonlocal problems
        problems += 1
        echo(f"✗ {line}")

    sock = socket_path(home)
    info = read_info(home)
    try:
        began = time.monotonic()
        got = asyncio.run(ask_once(home, RequestKind.STATUS))
        took = (time.monotonic() - began) * 1000
        echo(f"✓ owner: pid {got['owner']['pid']} answers on {sock} ({took:.0f} ms)")
    except OwnerError:
        if sock.exists():
            bad(
                f"stale socket {sock}: no owner listens on it; "
                f"fix: `rm {sock}` (the next `eukhe run` also replaces it)"
            )
        if info is not None and not alive(int(info.get("pid", 0) or 0)):
            bad(
                f"dead owner: {info_path(home)} names pid {info.get('pid')}, which is not running; "
                f"fix: `rm {info_path(home)}` (the next `eukhe run` starts a new owner)"
            )
        if not sock.exists() and (info is None or alive(int(info.get("pid", 0) or 0))):
            echo("✓ owner: none runs; the next `eukhe run` starts one")
    problems += _store(home, bad)
    _private(home, bad)
    raise typer.Exit(1 if problems else 0)


def _private(home: Path, bad: Callable[[str], None]) -> None:
    """The home made private where eukhe can (said), and what it cannot fix, each a
    problem: a mode it could not change, an entry of another user, an unsafe socket folder."""
    if not home.exists():
        echo(f"✓ home: {home} does not exist yet; the first run makes it, yours alone")
        return
    try:
        _, line = made_private(home)
        if line is not None:
            echo(f"✓ {line.removeprefix('eukhe: ')}")
        socket_folder(home)
    except (HomeError, UnsafeSocket) as e:
        bad(str(e))
        return
    found = exposed(home)
    for line in found:
        bad(line)
    if not found:
        echo(f"✓ home: {home} is yours alone (folders 0700, files 0600)")


def _store(home: Path, bad: Callable[[str], None]) -> int:
    """Whether the home's store opens and reads; 1 for a problem (said), else 0."""
    try:
        url = database_url(home, settings_here())
    except (SettingsError, StoreError) as e:
        bad(f"settings: {e}; fix: correct the file it names")
        return 0
    if url.startswith("sqlite"):
        path = Path(url.split("///", 1)[-1])
        if not path.exists():
            echo(f"✓ store: {path} does not exist yet; the first run makes it")
            return 0
        if not os.access(path, os.R_OK | os.W_OK):
            bad(f"unreadable store {path}: no read and write access; fix: `chmod u+rw {path}`")
            return 0
    problem = read_problem(url)
    if problem is not None:
        bad(problem)
        return 0
    echo(f"✓ store: {url} opens and reads")
    return 0


def _run_id(run: str) -> bool:
    """Whether `run` has a run's form: SESSION/N, and .cK for each level of subagent."""
    session, slash, rest = run.partition("/")
    if not slash or not session or not all(c.isalnum() or c in "-_." for c in session):
        return False
    n, *children = rest.split(".c")
    return n.isdigit() and all(k.isdigit() for k in children)


def abort(
    run: Annotated[str, typer.Argument(metavar="RUN", help="The run, as SESSION/N (see `eukhe sessions`).")],
) -> None:
    """End a run wherever it executes: it ends aborted, its transcript kept. A run
    that waits for the root-turn lease stops waiting."""
    home = _home()
    if not _run_id(run):
        echo(f"eukhe abort: {run!r} is not a run: a run is SESSION/N, or SESSION/N.cK for a subagent "
             "(see `eukhe sessions` and `eukhe status`)", err=True)  # fmt: skip
        raise typer.Exit(2)
    try:
        got = asyncio.run(ask_once(home, RequestKind.ABORT, run=run))
    except OwnerError as e:
        if not socket_path(home).exists():  # no owner: nothing of this home is in flight
            echo(f"eukhe abort: run {run} is not in flight: no eukhe process of this home runs", err=True)
        else:
            echo(f"eukhe abort: {run}: {e}", err=True)
        raise typer.Exit(1) from None
    echo(f"run {run}: abort sent to pid {got['pid']}; it ends aborted within its grace")


def register(app: typer.Typer) -> None:
    app.command("status")(status)
    app.command("shutdown")(shutdown)
    app.command("doctor")(doctor)
    app.command("abort")(abort)
    app.command("jobs")(jobs)
