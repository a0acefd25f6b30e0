"""`eukhe store ...`: the home's run store itself."""

from __future__ import annotations

from pathlib import Path

import typer

from eukhe.cli.echo import echo
from eukhe.home import home
from eukhe.settings import SettingsError
from eukhe.store.urls import StoreError, shown, sqlite_path

store_app = typer.Typer(
    add_completion=False, no_args_is_help=True, help="The home's run store.", rich_markup_mode="markdown"
)


@store_app.command("migrate")
def migrate_command() -> None:
    """Rewrite the home's store as this eukhe keeps it: rows an earlier eukhe wrote in
    pickle become JSON, and its runs in flight are handed to this version. Opening the
    store does the same; this says what it did."""
    # loaded here, not above: only a command that opens the store imports DBOS (half a second)
    from eukhe.store.durable import VERSION, own_url
    from eukhe.store.migrate import migrate

    try:
        url = own_url(home())
        file = sqlite_path(url)
        if file is not None and not Path(file).exists():
            echo(f"the store at {shown(url)} does not exist yet: nothing to migrate")
            return
        done = migrate(url, VERSION)
    except (SettingsError, StoreError) as e:
        echo(f"eukhe store migrate: {e}", err=True)
        raise typer.Exit(2) from None
    echo(
        f"the store at {shown(url)}: {done.rows} pickled rows rewritten as JSON, "
        f"{done.runs} runs in flight handed to {VERSION}"
    )
