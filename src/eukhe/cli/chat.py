"""`eukhe chat ...`: the endless chat of this eukhe home, as a person looks at it."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Annotated, Any

import typer

chat_app = typer.Typer(
    add_completion=False, no_args_is_help=True, help="The endless chat: its log and memory."
)


def _store() -> Any:
    """The chat's tables in this home's store; a store that cannot be opened is one line."""
    from eukhe.settings import SettingsError, home, load
    from eukhe.store.chat import ChatStore, ChatStoreError
    from eukhe.store.durable import StoreError, database_url

    try:
        url = database_url(home(), load(Path.cwd()))
        home().mkdir(parents=True, exist_ok=True)
        return ChatStore(url)
    except (SettingsError, StoreError, ChatStoreError, OSError) as e:
        typer.echo(f"eukhe chat: {e}", err=True)
        raise typer.Exit(2) from None


@chat_app.command("import")
def import_command(
    paths: Annotated[list[Path], typer.Argument(help="Session files of eukhe, Claude Code, Codex or pi.")],
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object.")] = False,
) -> None:
    """Log the user's words and the agent's final replies of other sessions into the
    chat, in order. Importing a file again logs nothing twice; a malformed line gets a
    diagnostic and the rest of the file is taken; a file of another format is refused."""
    from eukhe.memory.imports import read_session
    from eukhe.memory.log import Entry, Kind
    from eukhe.store.chat import ChatStoreError

    store = _store()
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    reports: list[dict[str, Any]] = []
    refused = 0
    try:
        for path in paths:
            report = read_session(path)
            entries = [Entry(it.key, Kind(it.kind), it.text, it.date or now) for it in report.items]
            before = store.count()
            try:
                logged = store.append(entries) if entries else []
            except ChatStoreError as e:
                typer.echo(f"eukhe chat import: {e}", err=True)
                raise typer.Exit(2) from None
            new = store.count() - before
            refused += report.refused
            reports.append({**report.json(), "logged": new, "already": len(logged) - new})
            if not as_json and report.refused:
                typer.echo(f"eukhe chat import: {report.summary}", err=True)
            elif not as_json:
                for d in report.diagnostics:
                    typer.echo(f"  {d.text}", err=True)
                line = f"{report.summary}: logged {new} new"
                typer.echo(line + (f", {len(logged) - new} already in the chat" if len(logged) > new else ""))
    finally:
        store.close()
    if as_json:
        typer.echo(json.dumps({"files": reports}, ensure_ascii=False))
    raise typer.Exit(1 if refused else 0)
