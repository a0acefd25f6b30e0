"""`eukhe mcp ...`: the MCP servers eukhe starts (`eukhe.mcp.config` reads them).

`add` and `remove` edit the home's `settings.json` (`$EUKHE_HOME`, default `~/.eukhe`):
read and checked as every command reads it (a malformed file is an error, left as it
is), changed in its `mcpServers` only, every other key kept in its order, and written
at once (a temporary file beside it, renamed over it, readable by its owner only).
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from eukhe.cli.options import flag
from eukhe.cli.output import echo
from eukhe.errors import Code, EukheError
from eukhe.home import HomeError, private_dir, private_write
from eukhe.json_types import JsonObject
from eukhe.mcp import check
from eukhe.mcp.config import KEY, ServerConfig, entries, entry, home_file, safe_name, servers
from eukhe.settings.load import SettingsError, read

mcp_app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="The MCP servers eukhe starts: in ~/.eukhe/settings.json ($EUKHE_HOME), and in a trusted "
    "project's .mcp.json or .eukhe/settings.json.",
    rich_markup_mode="markdown",
)


class Refused(EukheError):
    """What the command cannot do, said to the user; `status`: its exit status."""

    code = Code.INPUT

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


# ---------------------------------------------------------------- the home's file


def _home_settings() -> Path:
    """The home's settings file, as its link (if it is one) points: a rename replaces the
    file, not the link."""
    return Path(os.path.realpath(home_file(os.environ)))


def edit(change: Callable[[JsonObject, Path], str]) -> str:
    """Apply `change` to the home's settings' `mcpServers` (it edits the object in place
    and says what it did) and write the file back; what it said. Nothing is written
    when the file is malformed or `change` refuses."""
    f = _home_settings()
    data = read(f)  # SettingsError: malformed, left as it is
    servers = entries(data, f)
    said = change(servers, f)
    data[KEY] = servers
    try:
        private_dir(f.parent)
        private_write(f, json_text(data))
    except HomeError as e:
        raise Refused(str(e)) from e
    return said


def json_text(data: JsonObject) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _run(command: str, act: Callable[[], str]) -> None:
    try:
        echo(act())
    except SettingsError as e:
        echo(f"eukhe mcp {command}: {e}", err=True)
        raise typer.Exit(2) from None
    except Refused as e:
        echo(f"eukhe mcp {command}: {e}", err=True)
        raise typer.Exit(e.status) from None


# ---------------------------------------------------------------- add


def _pairs(given: list[str], sep: str, option: str, want: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in given:
        k, found, v = item.partition(sep)
        if not found or not k.strip():
            raise Refused(f"{option} {item!r}: expected {want}", 2)
        out[k.strip()] = v.strip() if sep == ":" else v
    return out


def new_entry(
    command: list[str], url: str | None, env: list[str], cwd: str | None, headers: list[str]
) -> JsonObject:
    """The entry the options describe, as settings.json holds it."""
    if command and url is not None:
        raise Refused("give the server's command (after --) or its --url, not both", 2)
    if url is not None:
        if env or cwd is not None:
            raise Refused("--env and --cwd are a stdio server's; an http server (--url) takes --header", 2)
        spec: JsonObject = {"type": "http", "url": url}
        if headers:
            spec["headers"] = _pairs(headers, ":", "--header", "'Name: value'")
        return spec
    if not command:
        raise Refused(
            "give the server's command after -- (eukhe mcp add NAME -- COMMAND ARGS...) or its --url URL", 2
        )
    if headers:
        raise Refused("--header is an http server's (--url); a stdio server takes --env", 2)
    spec = {"command": command[0]}
    if command[1:]:
        spec["args"] = command[1:]
    if env:
        spec["env"] = _pairs(env, "=", "--env", "KEY=VALUE")
    if cwd is not None:
        spec["cwd"] = cwd if "${" in cwd else str(Path(cwd).expanduser().resolve())
    return spec


def _what(name: str, spec: JsonObject) -> str:
    if spec.get("type") == "http":
        return f"the http server {name} ({spec['url']})"
    line = shlex.join([spec["command"], *spec.get("args", [])])
    return f"the stdio server {name} ({line})"


@mcp_app.command(
    "add",
    epilog="Examples: `eukhe mcp add files -- npx -y @modelcontextprotocol/server-filesystem ~/src`; "
    "`eukhe mcp add docs --url https://example.com/mcp --header 'Authorization: Bearer ${DOCS_TOKEN}'`",
)
def add_command(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The server's name: letters, digits, - and _.")],
    command: Annotated[
        list[str] | None,
        typer.Argument(metavar="-- COMMAND ARGS", help="A stdio server: the command that runs it."),
    ] = None,
    url: Annotated[str | None, typer.Option("--url", help="A streamable HTTP server: its URL.")] = None,
    env: Annotated[
        list[str] | None,
        typer.Option(
            "--env", "-e", metavar="KEY=VALUE", help="A stdio server's environment variable; repeatable."
        ),
    ] = None,
    cwd: Annotated[str | None, typer.Option("--cwd", help="The folder a stdio server runs in.")] = None,
    header: Annotated[
        list[str] | None,
        typer.Option("--header", "-H", metavar="'NAME: VALUE'", help="An http server's header; repeatable."),
    ] = None,
    force: Annotated[bool, flag("--force", help="Replace a server of that name.")] = False,
) -> None:
    """Add an MCP server to ~/.eukhe/settings.json ($EUKHE_HOME): a stdio server's command
    after `--`, or an http server's --url. Values may name environment variables,
    ${VAR} or ${VAR:-default}, expanded when the server starts (quote them from your shell)."""

    def act() -> str:
        if safe_name(name) != name or not name:
            raise Refused(f"server name {name!r}: use letters, digits, '-' or '_'", 2)
        spec = new_entry(command or [], url, env or [], cwd, header or [])

        def change(servers: JsonObject, f: Path) -> str:
            entry(name, spec, f)  # the shape config reads, before anything is written
            same = [n for n in servers if n != name and safe_name(n) == name]
            if same:
                raise Refused(f"the server {same[0]!r} in {f} already goes by the name {name!r}")
            there = name in servers
            if there and not force:
                raise Refused(f"a server {name} is already in {f}; --force replaces it")
            servers[name] = spec
            return f"replaced {_what(name, spec)} in {f}" if there else f"added {_what(name, spec)} to {f}"

        return edit(change)

    _run("add", act)


# ---------------------------------------------------------------- remove


@mcp_app.command("remove")
def remove_command(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The server's name.")],
) -> None:
    """Remove an MCP server from ~/.eukhe/settings.json ($EUKHE_HOME). A project's servers
    (.mcp.json, .eukhe/settings.json) are the project's: edit those files."""

    def change(servers: JsonObject, f: Path) -> str:
        if name not in servers:
            there = ", ".join(servers) if servers else "none"
            raise Refused(f"no server {name} in {f}; the servers there: {there}")
        del servers[name]
        return f"removed the server {name} from {f}"

    _run("remove", lambda: edit(change))


# ---------------------------------------------------------------- list and test


def _configured(command: str) -> tuple[ServerConfig, ...]:
    try:
        found, said = servers(Path.cwd(), os.environ)
    except SettingsError as e:
        echo(f"eukhe mcp {command}: {e}", err=True)
        raise typer.Exit(2) from None
    for line in said:
        echo(line, err=True)
    return found


@mcp_app.command("list")
def list_command() -> None:
    """Start each MCP server in effect here (the home's, and a trusted project's), and show
    its state, its tools and its last error; then close them. Each start is bounded by its
    startupTimeoutMs."""
    found = _configured("list")
    if not found:
        where = home_file(os.environ)
        echo(f"no MCP servers are configured here: add one with `eukhe mcp add NAME -- COMMAND` ({where})")
        return
    rows = asyncio.run(check.check(found))
    for line in check.listing(rows):
        echo(line)
    if any(r.state != "ready" for r in rows):
        raise typer.Exit(1)


@mcp_app.command("test")
def test_command(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The server's name.")],
) -> None:
    """Start one MCP server, list its tools and close it, each step timed."""
    found = [c for c in _configured("test") if c.name == name]
    if not found:
        names = ", ".join(c.name for c in _configured("test")) or "none"
        echo(f"eukhe mcp test: no server {name} here; the servers: {names}", err=True)
        raise typer.Exit(1)
    [row] = asyncio.run(check.check(found))
    for line in check.tested(row):
        echo(line)
    if row.state != "ready":
        raise typer.Exit(1)
