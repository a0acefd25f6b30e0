"""The command line's store half: every command's part that opens or reads the home's
store (DBOS and SQLAlchemy, a second on a slow machine). `cli/halves.py` loads it for
the first command that needs it, so that `eukhe --help`, `eukhe laws` and `eukhe demo`
never do."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import typer

from eukhe.cli.folder_settings import settings_here
from eukhe.cli.output import echo
from eukhe.cli.printer import Printer, Stream
from eukhe.client.client import Client, ask_once
from eukhe.client.protocol import RequestKind
from eukhe.client.remote_chat import batches
from eukhe.events import of_session
from eukhe.home import HomeError, open_home
from eukhe.ids import new_session
from eukhe.json_types import JsonObject
from eukhe.memory.chat import Chat
from eukhe.memory.log import Entry
from eukhe.memory.tables import ChatStore, ChatStoreError
from eukhe.run import driver
from eukhe.run import rewind as lineage
from eukhe.run.spec import RunSpec
from eukhe.runtime import leave, open_runtime
from eukhe.settings import SettingsError, home, memory_settings
from eukhe.store import durable, sessions
from eukhe.store.lineage import Lineage, LineageError, Lineages, forked_from, shown_runs
from eukhe.store.migrate import Migrated, migrate
from eukhe.store.urls import StoreError, cause, database_url, shown, sqlite_path

# ---------------------------------------------------------------- runs


def run_here(
    settings: JsonObject,
    printer: Printer | Stream,
    spec: RunSpec | None,
    session: str | None,
    finish: Callable[[JsonObject], int] = lambda out: 0,
    announced: str | None = None,
) -> NoReturn:
    """Open the run store, recover what a dead process left in flight, run `spec`
    (if any) in `session` (default: a new one), finish the recovered runs, and end
    the process with its exit code. The run's own text streams as it comes, and
    `finish` shows its outcome the moment it ends: recovered runs never hold either back.
    `announced`: the run's line, already shown (`run.driver.drive`)."""
    session = session or (new_session() if spec is not None else None)

    def live_show(run: str, kind: str, text: str, data: Any = None) -> None:
        e = of_session(session if spec is not None else None, run, kind, text, data)
        if e is not None:
            printer.event(e)

    try:  # the owner runs what is recovered; this process only once it recovers itself
        runtime = open_runtime(home(), settings, live_show)
    except StoreError as e:
        echo(f"eukhe: {e}", err=True)
        raise typer.Exit(2) from None
    code = 0

    def ended(out: JsonObject) -> None:
        nonlocal code
        code = finish(out)

    def recover_with(cut: list[str]) -> Any:
        return ask_once(home(), RequestKind.RECOVER, spawn=True, runs=cut)

    try:
        runtime.drive(spec, session, printer.say, ended, recover_with, announced)
    except driver.Busy as e:
        echo(f"eukhe: {e}", err=True)
        code = 2  # runs recovered meanwhile stay in flight, resumable
    except BaseException:
        runtime.close()
        raise
    # Every run this process waited for has its end in the store (driver.result reads it
    # there), and a run left in flight is the owner's or `eukhe resume`'s, as after a kill:
    # DBOS's threads are not joined, nor the interpreter torn down (about 1 s of 2.7 s, a
    # 0-round run).
    leave(code)


# ---------------------------------------------------------------- reading the runs


def read(what: str, session: str = "") -> Any:
    """Read the run store as a client: no run is started, recovered or picked up.
    `what`: "rows" (the sessions), "subagents", "show" (`session`'s transcript: the runs it
    shows, a fork's parent's first, each with its outcome and messages, and a line a rewind),
    "runs" (`session`'s own runs), or "route" (the model, base URL and API its last run
    started with: {} when none)."""
    try:
        url = database_url(home(), settings_here())
    except (SettingsError, StoreError) as e:
        echo(f"eukhe: {e}", err=True)
        raise typer.Exit(2) from None
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists():
        return []
    try:
        client = durable.client(url, home())
    except StoreError as e:
        echo(f"eukhe: {e}", err=True)
        raise typer.Exit(2) from None

    async def reading() -> Any:
        if what == "rows":
            return await sessions.rows(client)
        if what == "subagents":
            return await sessions.subagents(client)
        if what == "runs":
            return await sessions.runs(session, client)
        lines = Lineages(url)

        async def rows(s: str) -> Lineage:
            return lines.of(s)

        try:
            got, notes = await shown_runs(session, lambda s: sessions.runs(s, client), rows)
        finally:
            lines.close()
        if what == "route":  # where the session last ran: its model, base URL and API
            given = sessions.last_input([x.run for x in got])
            return {k: given.get(k) for k in ("model", "baseUrl", "api")} if given else {}
        runs = [
            (x.run.workflow_id, sessions.outcome_of(x.run), await sessions.shown(x.run, client)) for x in got
        ]
        return {"runs": runs, "notes": notes}

    try:
        return asyncio.run(reading())
    except Exception as e:  # a store that cannot be read is a clear error, never a traceback
        if "no such table: main.workflow_status" in str(e):  # a store no run has used yet (a chat import)
            return []
        echo(f"eukhe: cannot read the run store at {shown(url)}: {cause(e)}", err=True)
        raise typer.Exit(2) from None
    finally:
        client.destroy()


# ---------------------------------------------------------------- the chat


def chat_store() -> ChatStore:
    """The chat's tables in this home's store; a store that cannot be opened is one line."""
    try:
        url = database_url(home(), settings_here())
        open_home(home())
        return ChatStore(url)
    except (SettingsError, StoreError, ChatStoreError, HomeError, OSError) as e:
        echo(f"eukhe chat: {e}", err=True)
        raise typer.Exit(2) from None


def chat(store: ChatStore) -> Chat:
    """The chat as loaded from the store (no compactor: reading only)."""
    try:
        budget = memory_settings(settings_here()).view_bytes
    except SettingsError as e:
        store.close()
        echo(f"eukhe chat: {e}", err=True)
        raise typer.Exit(2) from None
    return Chat(store, budget=budget)


async def import_entries(where: Path, entries: list[Entry]) -> tuple[int, int, int]:
    """The entries through the owner, in batches; how many are in the log, how many of
    them are new, and how many were handed to another owner that writes the chat."""
    logged = new = handed = 0
    client = await Client.connect(where, spawn=True)
    try:
        for batch in batches(entries):  # a long session goes in several requests, in order
            got = await client.request(RequestKind.IMPORT, entries=[e.json() for e in batch])
            logged += int(got["logged"])
            new += int(got["new"])
            handed += len(batch) if got.get("handed") else 0
    finally:
        await client.close()
    return logged, new, handed


# ---------------------------------------------------------------- the store itself


def migrate_home() -> tuple[str, Migrated | None, str]:
    """Migrate the home's store (`store.migrate`): its URL as shown, what was done
    (None: the store does not exist yet), and the version its runs in flight went to."""
    url = durable.own_url(home())
    file = sqlite_path(url)
    if file is not None and not Path(file).exists():
        return shown(url), None, durable.VERSION
    return shown(url), migrate(url, durable.VERSION), durable.VERSION


# ---------------------------------------------------------------- forks and rewinds


def fork(parent: str, at: int | None) -> tuple[str, int]:
    """A new session whose transcript begins with `parent`'s runs 1..`at` (its last when None):
    its id and the run it starts after. A parent with no run, or no run `at`, is an error."""
    runs = read("runs", parent)
    if not runs:
        echo(f"eukhe: no session {parent!r} (eukhe sessions lists them)", err=True)
        raise typer.Exit(1)
    try:
        upto = forked_from(parent, at, runs)
        return lineage.fork(database_url(home(), settings_here()), parent, upto), upto
    except (LineageError, SettingsError, StoreError) as e:
        echo(f"eukhe: {e}", err=True)
        raise typer.Exit(2) from None


def own_runs(session: str) -> list[tuple[int, bool, str]]:
    """The session's own runs: each one's number, whether it is in flight, and its prompt."""
    return [
        (int(str(w.workflow_id).rpartition("/")[2]), w.status in sessions.IN_FLIGHT, sessions.prompt_of(w))
        for w in read("runs", session)
    ]


def rewind_conversation(session: str, first: int, last: int) -> str:
    """End the session's runs first..last in its transcript (`run.rewind`): what was done."""
    try:
        url = database_url(home(), settings_here())
        return asyncio.run(lineage.rewind_conversation(url, home(), session, first, last))
    except (LineageError, SettingsError, StoreError) as e:
        echo(f"eukhe: {e}", err=True)
        raise typer.Exit(2) from None
