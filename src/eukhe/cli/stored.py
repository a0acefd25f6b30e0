"""The command line's store half: every command's part that opens or reads the home's
store (DBOS and SQLAlchemy, a second on a slow machine). `cli/lazy.py` loads it for
the first command that needs it, so that `eukhe --help`, `eukhe laws` and `eukhe demo`
never do."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import NoReturn, TypeVar

import typer

from eukhe.cli.control import Control
from eukhe.cli.folder_settings import settings_here
from eukhe.cli.output import echo
from eukhe.cli.printer import RunView
from eukhe.home import HomeError
from eukhe.json_types import JsonObject
from eukhe.run import home_store
from eukhe.run.chat_access import Entry
from eukhe.run.home_store import (
    Chat,
    ChatStore,
    ChatStoreError,
    FleetView,
    LineageError,
    Migrated,
    SessionRow,
)
from eukhe.run.session_service import Sessions, Transcript
from eukhe.run.spec import RunSpec, SessionSetup
from eukhe.run.store_access import StoreError, cause, database_url, shown
from eukhe.runtime import Busy, leave, open_runtime
from eukhe.settings import SettingsError, home, memory_settings

T = TypeVar("T")

# ---------------------------------------------------------------- runs


def run_here(settings: JsonObject, view: RunView, spec: RunSpec | None, session: str | None) -> NoReturn:
    """Open the run store, recover what a dead process left in flight (through the home's
    owner), run `spec` (if any) in `session`, finish the recovered runs, and end the process
    with its exit code. The run's own text streams as it comes, and `view` shows its outcome
    the moment it ends: recovered runs never hold either back."""
    code = ran_here(settings, view, spec, session)
    # Every run this process waited for has its end in the store (`Runtime.result` reads it
    # there), and a run left in flight is the owner's or `eukhe resume`'s, as after a kill:
    # DBOS's threads are not joined, nor the interpreter torn down (about 1 s of 2.7 s, a
    # 0-round run).
    leave(code)


def ran_here(settings: JsonObject, view: RunView, spec: RunSpec | None, session: str | None) -> int:
    """`run_here`'s work, with the process going on after it (`eukhe demo` says what to run
    next): its exit code. The caller ends the process with `leave`, as `run_here` does."""
    try:  # the owner runs what is recovered; this process only once it recovers itself
        runtime = open_runtime(home(), settings, view)
    except StoreError as e:
        view.refused(str(e))
        return view.code
    try:
        runtime.to_end(runtime.drive(spec, session))
    except Busy as e:
        view.refused(str(e))  # runs recovered meanwhile stay in flight, resumable
    except BaseException:
        runtime.close()
        raise
    view.leftover()
    return view.code


def control_here(made: SessionSetup, view: RunView, session: str, given: bool) -> NoReturn:
    """`eukhe run --control`: open the run store and serve the session's requests on
    standard input (`cli/control.py`) to its end; the process ends with the last run's
    exit code."""
    try:
        runtime = open_runtime(home(), made.settings, view)
    except StoreError as e:
        view.refused(str(e))
        leave(view.code)
    try:
        code = runtime.to_end(Control(runtime, made, view, session, given).serve(sys.stdin.buffer))
    except BaseException:
        runtime.close()
        raise
    view.leftover()
    leave(code)


# ---------------------------------------------------------------- reading the runs


def _read(work: Callable[[Sessions], Awaitable[T]], empty: T) -> T:
    """`work` on the session service, reading the run store as a client: no run is started,
    recovered or picked up. `empty`: what a store no run has made or used yet holds. A store
    that cannot be read is one line and exit 2, never a traceback."""
    try:
        url = database_url(home(), settings_here())
    except (SettingsError, StoreError) as e:
        echo(f"eukhe: {e}", err=True)
        raise typer.Exit(2) from None
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists():
        return empty

    async def read() -> T:
        async with home_store.reading(url, home()) as service:
            return await work(service)

    try:
        return asyncio.run(read())
    except (LineageError, StoreError) as e:  # a fork or a rewind's: no such run, a store it cannot write
        echo(f"eukhe: {e}", err=True)
        raise typer.Exit(2) from None
    except Exception as e:
        if "no such table: main.workflow_status" in str(e):  # a store no run has used yet (a chat import)
            return empty
        echo(f"eukhe: cannot read the run store at {shown(url)}: {cause(e)}", err=True)
        raise typer.Exit(2) from None


def rows() -> list[SessionRow]:
    """The sessions: id, started, runs, last prompt, outcome."""
    return _read(Sessions.rows, [])


def subagents() -> list[JsonObject]:
    """The subagents whose task has not ended."""
    return _read(Sessions.subagents, [])


def fleet() -> FleetView:
    """The fleet on the home's store (`eukhe status --fleet`): its hosts, executors, leases
    and the runs each holds; on SQLite, one machine and no fleet."""
    try:
        url = database_url(home(), settings_here())
    except (SettingsError, StoreError) as e:
        echo(f"eukhe: {e}", err=True)
        raise typer.Exit(2) from None
    try:
        return home_store.read_fleet(url)
    except Exception as e:
        echo(f"eukhe: cannot read the fleet in the store at {shown(url)}: {cause(e)}", err=True)
        raise typer.Exit(2) from None


def transcript(session: str) -> Transcript:
    """The session's transcript: the runs it shows (a fork's parent's first), each with its
    outcome and messages, and a line a rewind."""
    return _read(lambda s: s.transcript(session), Transcript())


def route(session: str) -> JsonObject:
    """The model, base URL and API the session's last run started with ({} when none)."""

    async def last(s: Sessions) -> JsonObject:
        given = await s.last_input(session)
        return {k: given.get(k) for k in ("model", "baseUrl", "api")} if given else {}

    return _read(last, {})


# ---------------------------------------------------------------- the chat


def chat_store() -> ChatStore:
    """The chat's tables in this home's store; a store that cannot be opened is one line."""
    try:
        return home_store.open_chat_store(database_url(home(), settings_here()), home())
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
    return home_store.open_chat(store, budget)


async def import_entries(where: Path, entries: list[Entry]) -> tuple[int, int, int]:
    """The entries through the owner, in batches (`run.home_store.import_entries`)."""
    return await home_store.import_entries(where, entries)


# ---------------------------------------------------------------- the store itself


def migrate_home() -> tuple[str, Migrated | None, str]:
    """Migrate the home's store (`run.home_store.migrate_home`)."""
    return home_store.migrate_home(home())


# ---------------------------------------------------------------- forks and rewinds


def own_runs(session: str) -> list[tuple[int, bool, str]]:
    """The session's own runs: each one's number, whether it is in flight, and its prompt."""
    return _read(lambda s: s.numbered(session), [])


def fork(parent: str, at: int | None) -> tuple[str, int]:
    """A new session whose transcript begins with `parent`'s runs 1..`at` (its last when None):
    its id and the run it starts after. A parent with no run, or no run `at`, is an error."""
    if not own_runs(parent):
        echo(f"eukhe: no session {parent!r} (eukhe sessions lists them)", err=True)
        raise typer.Exit(1)
    return _read(lambda s: s.fork(parent, at), ("", 0))


def rewind_conversation(session: str, first: int, last: int) -> str:
    """End the session's runs first..last in its transcript (`run.rewind`): what was done."""
    return _read(lambda s: s.rewind_conversation(session, first, last), "")
