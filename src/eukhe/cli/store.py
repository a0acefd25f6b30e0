"""`eukhe store ...`: the home's run store itself."""

from __future__ import annotations

import typer

from eukhe.cli import lazy
from eukhe.cli.output import echo
from eukhe.run.store_access import StoreError
from eukhe.settings import SettingsError

store_app = typer.Typer(
    add_completion=False, no_args_is_help=True, help="The home's run store.", rich_markup_mode="markdown"
)


@store_app.command("migrate")
def migrate_command() -> None:
    """Rewrite the home's store as this eukhe keeps it: rows an earlier eukhe wrote in
    pickle become JSON, and its runs in flight are handed to this version. Opening the
    store does the same; this says what it did."""
    try:
        url, done, version = lazy.stored().migrate_home()
    except (SettingsError, StoreError) as e:
        echo(f"eukhe store migrate: {e}", err=True)
        raise typer.Exit(2) from None
    if done is None:
        echo(f"the store at {url} does not exist yet: nothing to migrate")
        return
    echo(
        f"the store at {url}: {done.rows} pickled rows rewritten as JSON, "
        f"{done.runs} runs in flight handed to {version}"
    )
