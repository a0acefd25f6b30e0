"""`eukhe chat ...`: the endless chat of this eukhe home, as a person looks at it."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from eukhe.cli.echo import echo
from eukhe.cli.here import settings_here
from eukhe.home import HomeError, open_home
from eukhe.memory.report import status_json, status_lines, zoomed
from eukhe.terminal import json_text

chat_app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="The endless chat: its log and memory.",
    rich_markup_mode="markdown",  # a docstring's lines join into paragraphs, never broken mid-sentence
)


def _store() -> Any:
    """The chat's tables in this home's store; a store that cannot be opened is one line."""
    from eukhe.memory.tables import ChatStore, ChatStoreError
    from eukhe.settings import SettingsError, home
    from eukhe.store.urls import StoreError, database_url

    try:
        url = database_url(home(), settings_here())
        open_home(home())
        return ChatStore(url)
    except (SettingsError, StoreError, ChatStoreError, HomeError, OSError) as e:
        echo(f"eukhe chat: {e}", err=True)
        raise typer.Exit(2) from None


@chat_app.command("import")
def import_command(
    paths: Annotated[list[Path], typer.Argument(help="Session files of eukhe, Claude Code, Codex or pi.")],
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object.")] = False,
) -> None:
    """Log the user's words and the agent's final replies of other sessions into the
    chat, in order, through the home's owner (the chat's one writer). Importing a
    file again logs nothing twice; a malformed line gets a diagnostic and the rest of
    the file is taken; a file of another format is refused."""
    import asyncio

    from eukhe.client.client import OwnerError
    from eukhe.memory.imports import read_session
    from eukhe.memory.log import Entry, EntryKind, now
    from eukhe.settings import home

    when = now()
    reports: list[dict[str, Any]] = []
    refused = 0
    for path in paths:
        report = read_session(path)
        entries = [Entry(it.key, EntryKind(it.kind), it.text, it.date or when) for it in report.items]
        try:
            logged, new, handed = asyncio.run(_import(home(), entries)) if entries else (0, 0, 0)
        except OwnerError as e:
            why = f"the home's owner did not take its messages: {e}"
            echo(f"eukhe chat import: {path}: {why}", err=True)
            raise typer.Exit(2) from None
        refused += report.refused
        reports.append({**report.json(), "logged": new, "already": logged - new - handed, "handed": handed})
        if not as_json and report.refused:
            echo(f"eukhe chat import: {report.summary}", err=True)
        elif not as_json:
            for d in report.diagnostics:
                echo(f"  {d.text}", err=True)
            line = f"{report.summary}: logged {new} new"
            if handed:
                line += f", {handed} handed to the owner that writes the shared chat"
            already = logged - new - handed
            echo(line + (f", {already} already in the chat" if already else ""))
    if as_json:
        typer.echo(json_text(json.dumps({"files": reports}, ensure_ascii=False)))
    raise typer.Exit(1 if refused else 0)


async def _import(where: Path, entries: list[Any]) -> tuple[int, int, int]:
    """The entries through the owner, in batches; how many are in the log, how many of
    them are new, and how many were handed to another owner that writes the chat."""
    from eukhe.client.client import Client
    from eukhe.client.protocol import RequestKind
    from eukhe.client.remote_chat import batches

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


def _chat(store: Any) -> Any:
    """The chat as loaded from the store (no compactor: reading only)."""
    from eukhe.memory.chat import Chat
    from eukhe.settings import SettingsError, memory_settings

    try:
        budget = memory_settings(settings_here()).view_bytes
    except SettingsError as e:
        store.close()
        echo(f"eukhe chat: {e}", err=True)
        raise typer.Exit(2) from None
    return Chat(store, budget=budget)


@chat_app.command("status")
def status_command(as_json: Annotated[bool, typer.Option("--json", help="One JSON object.")] = False) -> None:
    """Messages, lines built, pending and failed, the view's bytes against its budget, the
    compactor calls running in every process, and the last settle wait and how it ended."""
    store = _store()
    try:
        s = _chat(store).status()
    finally:
        store.close()
    out = status_json(s, time.time())
    if as_json:
        typer.echo(json.dumps(out))
        return
    for line in status_lines(out):
        echo(line)


@chat_app.command("view")
def view_command(as_json: Annotated[bool, typer.Option("--json", help="One JSON object.")] = False) -> None:
    """The view a turn would start from now (unbuilt lines shown as their input cut)."""
    store = _store()
    try:
        chat = _chat(store)
        text = chat.render()
        parts = [{"id": p.start, "n": p.n, "built": chat.is_built(p)} for p in chat.view.parts]
    finally:
        store.close()
    if as_json:
        typer.echo(json_text(json.dumps({"view": text, "parts": parts}, ensure_ascii=False)))
        return
    echo(text)


@chat_app.command("zoom")
def zoom_command(
    id: Annotated[int, typer.Argument(min=0, help="The line's first message (the ID of ID+N in the view).")],
    n: Annotated[int, typer.Argument(min=1, help="How many messages it covers (the N of ID+N).")],
) -> None:
    """Open line ID+N into the two lines below it; N = 1 prints message ID whole."""
    store = _store()
    try:
        got, why = zoomed(_chat(store), id, n)
    finally:
        store.close()
    if got is None:
        echo(f"eukhe chat zoom: {why}", err=True)
        raise typer.Exit(1)
    echo(got)


@chat_app.command("browse")
def browse_command(
    out: Annotated[Path, typer.Option("--out", help="The HTML file to write.")] = Path("chat.html"),
) -> None:
    """Write one self-contained page of the chat's tree: each line opens into its children."""
    from eukhe.memory.browse import page

    store = _store()
    try:
        chat = _chat(store)
        html = page(store.messages(), store.lines(), parts=[(p.l, p.i) for p in chat.view.parts])
    finally:
        store.close()
    try:
        out.write_text(html, encoding="utf-8")
    except OSError as e:
        echo(f"eukhe chat browse: cannot write {out}: {e.strerror or e}", err=True)
        raise typer.Exit(2) from None
    echo(f"wrote {out} ({len(html.encode()):,} bytes)")
