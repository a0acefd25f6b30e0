"""Reading the run store from a command that runs nothing: sessions, transcripts, subagents."""

from __future__ import annotations

from typing import Any

import typer

from eukhe.cli.echo import echo
from eukhe.cli.here import settings_here
from eukhe.store.urls import StoreError, cause, database_url, shown


def store_read(what: str, session: str = "") -> Any:
    """Read the run store as a client: no run is started, recovered or picked up."""
    import asyncio
    from pathlib import Path

    from eukhe.settings import SettingsError, home
    from eukhe.store import durable, sessions

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

    async def read() -> Any:
        if what == "rows":
            return await sessions.rows(client)
        if what == "subagents":
            return await sessions.subagents(client)
        return [
            (w.workflow_id, sessions.outcome_of(w), await sessions.transcript(w.workflow_id, client))
            for w in await sessions.runs(session, client)
        ]

    try:
        return asyncio.run(read())
    except Exception as e:  # a store that cannot be read is a clear error, never a traceback
        if "no such table: main.workflow_status" in str(e):  # a store no run has used yet (a chat import)
            return []
        echo(f"eukhe: cannot read the run store at {shown(url)}: {cause(e)}", err=True)
        raise typer.Exit(2) from None
    finally:
        client.destroy()


def subagents() -> list[dict[str, Any]] | str:
    """The subagents whose task has not ended, or why the store cannot say (a part of
    `eukhe status`, which never fails for it). A store no run has used has none."""
    import click

    try:
        return list(store_read("subagents"))
    except (typer.Exit, click.exceptions.Exit, SystemExit):
        return "the run store cannot be read (above)"
    except Exception as e:
        return f"{type(e).__name__}: {e}"
