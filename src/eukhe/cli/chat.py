"""`eukhe chat ...`: the endless chat of this eukhe home, as a person looks at it."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from eukhe.cli import lazy
from eukhe.cli.options import flag
from eukhe.cli.output import echo, echo_json
from eukhe.json_types import JsonObject
from eukhe.run.chat_access import Entry, EntryKind, now, page, read_session, status_json, status_lines, zoomed
from eukhe.run.owner_access import OwnerError
from eukhe.settings import home
from eukhe.terminal import json_text

if TYPE_CHECKING:  # the store's half loads them only for a command that reads the chat
    from eukhe.run.home_store import Chat, ChatStore

chat_app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="The endless chat: its log and memory.",
    rich_markup_mode="markdown",  # a docstring's lines join into paragraphs, never broken mid-sentence
)


def _store() -> ChatStore:
    """The chat's tables in this home's store (`cli/stored.py`)."""
    store: ChatStore = lazy.stored().chat_store()
    return store


def _chat(store: ChatStore) -> Chat:
    """The chat as loaded from the store (no compactor: reading only)."""
    chat: Chat = lazy.stored().chat(store)
    return chat


@chat_app.command("import")
def import_command(
    paths: Annotated[
        list[Path],
        typer.Argument(metavar="FILE...", help="Session files of eukhe, Claude Code, Codex or pi."),
    ],
    as_json: Annotated[bool, flag("--json", help="One JSON object.")] = False,
) -> None:
    """Log the user's words and the agent's final replies of other sessions into the
    chat, in order, through the home's owner (the chat's one writer). Importing a
    file again logs nothing twice; a malformed line gets a diagnostic and the rest of
    the file is taken; a file of another format is refused."""
    when = now()
    reports: list[JsonObject] = []
    refused = 0
    for path in paths:
        report = read_session(path)
        entries = [Entry(it.key, EntryKind(it.kind), it.text, it.date or when) for it in report.items]
        try:
            logged, new, handed = (
                asyncio.run(lazy.stored().import_entries(home(), entries)) if entries else (0, 0, 0)
            )
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


@chat_app.command("status")
def status_command(as_json: Annotated[bool, flag("--json", help="One JSON object.")] = False) -> None:
    """Messages, lines built, pending and failed, the view's bytes against its budget, the
    compactor calls running in every process, and the last settle wait and how it ended."""
    store = _store()
    try:
        s = _chat(store).status()
    finally:
        store.close()
    out = status_json(s, time.time())
    if as_json:
        echo_json(out)
        return
    for line in status_lines(out):
        echo(line)


@chat_app.command("view")
def view_command(as_json: Annotated[bool, flag("--json", help="One JSON object.")] = False) -> None:
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
    id: Annotated[
        int,
        typer.Argument(min=0, metavar="ID", help="The line's first message (the ID of ID+N in the view)."),
    ],
    n: Annotated[
        int, typer.Argument(min=1, metavar="N", help="How many messages it covers (the N of ID+N).")
    ],
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
