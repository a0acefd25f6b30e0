"""`eukhe trust`: the folders whose `.eukhe/settings.json` applies in full
(`eukhe.settings.trust`). The interactive agent asks once (`eukhe.ui.trust`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from eukhe.cli.options import flag
from eukhe.cli.output import echo
from eukhe.home import home
from eukhe.settings import trust


def trust_command(
    path: Annotated[
        Path | None, typer.Argument(metavar="FOLDER", help="The folder to trust (default: the current one).")
    ] = None,
    listed: Annotated[bool, flag("--list", help="Show the records, trusted or not.")] = False,
    revoke: Annotated[Path | None, typer.Option("--revoke", help="Remove the record of this folder.")] = None,
) -> None:
    """Trust a folder: its .eukhe/settings.json then applies in full (providers, the store,
    auxiliaryModel, paths outside it, kept secrets), in it and in the folders below it.
    In a folder you have not trusted those keys are ignored, each with a notice."""
    where = home()
    try:
        if listed:
            rows = trust.records(where)
            if not rows:
                echo("no folder is trusted or refused yet; `eukhe trust [PATH]` trusts one")
            for r in sorted(rows, key=lambda r: r.folder):
                echo(f"{'trusted' if r.trusted else 'refused'}  {r.folder}  ({r.at})")
            return
        if revoke is not None:
            if not trust.revoke(where, revoke):
                echo(f"eukhe trust: no record of {trust.real(revoke)} (see `eukhe trust --list`)", err=True)
                raise typer.Exit(1)
            echo(f"removed the record of {trust.real(revoke)}")
            return
        folder = path if path is not None else Path.cwd()
        if not folder.is_dir():
            echo(f"eukhe trust: {folder} is not a folder", err=True)
            raise typer.Exit(2)
        r = trust.record(where, folder, True)
        echo(f"trusted {r.folder}: its .eukhe/settings.json applies in full, and so do the folders' below")
    except trust.TrustError as e:
        echo(f"eukhe trust: {e}", err=True)
        raise typer.Exit(1) from None
