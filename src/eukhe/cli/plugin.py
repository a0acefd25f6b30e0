"""`eukhe plugin ...`: Claude Code's plugins a person adds (`eukhe.plugins`), in the home
(`$EUKHE_HOME`, default `~/.eukhe`): `add` a marketplace or a plugin (a folder, a git URL, a
name of `extraKnownMarketplaces`), `list` them, `remove`, `enable`, `disable` one (by
`name@marketplace`, by name, or every plugin of a marketplace)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from eukhe.cli.options import flag
from eukhe.cli.output import echo, echo_json
from eukhe.plugins import PluginError, add, enable, listing, listing_json, remove
from eukhe.settings import home

__all__ = ["plugin_app"]

plugin_app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Claude Code's plugins you add: their hooks, agents, commands, skills and MCP servers load in "
    "every run while enabled. See docs/plugins.md.",
    rich_markup_mode="markdown",
)


def _home() -> Path:
    return home(os.environ)


def _failed(command: str, e: PluginError) -> typer.Exit:
    echo(f"eukhe plugin {command}: {e}", err=True)
    return typer.Exit(1)


@plugin_app.command("add")
def add_command(
    source: Annotated[
        str, typer.Argument(help="A folder, a git URL, owner/name, or a known marketplace's name.")
    ],
    plugins: Annotated[
        list[str] | None, typer.Argument(help="Only these of the marketplace's plugins.")
    ] = None,
) -> None:
    """Add a marketplace (`.claude-plugin/marketplace.json`) and its plugins, or one plugin
    (`.claude-plugin/plugin.json`), enabled. A git source is cloned into the home now; nothing
    is fetched at run time. Adding it again takes it anew."""
    try:
        got = add(_home(), source, Path.cwd(), plugins or ())
    except PluginError as e:
        raise _failed("add", e) from None
    m = got.marketplace
    echo(
        f"added {m.name} ({m.kind} {m.source}): {len(got.plugins)} plugin(s), enabled, trusted as your choice"
    )
    for p in got.plugins:
        echo(f"  {p.id}: {p.description or 'no description'}")
    for why in got.skipped:
        echo(f"  not added: {why}")


@plugin_app.command("list")
def list_command(as_json: Annotated[bool, flag("--json", help="One JSON object.")] = False) -> None:
    """The marketplaces and plugins added, and which are in effect in this folder."""
    try:
        if as_json:
            echo_json(listing_json(_home(), Path.cwd()))
            return
        for line in listing(_home(), Path.cwd()):
            echo(line)
    except PluginError as e:
        raise _failed("list", e) from None


@plugin_app.command("remove")
def remove_command(
    name: Annotated[str, typer.Argument(help="name@marketplace, a plugin's name, or a marketplace's.")],
) -> None:
    """Remove plugins (and their copies in the home; a marketplace left with none goes too)."""
    try:
        gone = remove(_home(), name)
    except PluginError as e:
        raise _failed("remove", e) from None
    echo("removed " + ", ".join(p.id for p in gone))


def _switch(name: str, on: bool) -> None:
    try:
        got = enable(_home(), name, on)
    except PluginError as e:
        raise _failed("enable" if on else "disable", e) from None
    echo(("enabled " if on else "disabled ") + ", ".join(p.id for p in got))


@plugin_app.command("enable")
def enable_command(
    name: Annotated[str, typer.Argument(help="name@marketplace, a plugin's name, or a marketplace's.")],
) -> None:
    """Enable plugins (a trusted project's enabledPlugins may still switch them)."""
    _switch(name, True)


@plugin_app.command("disable")
def disable_command(
    name: Annotated[str, typer.Argument(help="name@marketplace, a plugin's name, or a marketplace's.")],
) -> None:
    """Disable plugins: their hooks, agents, commands, skills and servers no longer load."""
    _switch(name, False)
