"""`eukhe hooks ...`: the user's hooks in effect here (`eukhe.hooks.config` reads them), and
one event's run on a sample payload, to see what they do before a run meets them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from eukhe.cli.options import flag
from eukhe.cli.output import echo, echo_json
from eukhe.hooks import payload, report
from eukhe.hooks.config import Loaded, load
from eukhe.hooks.runner import run_event_blocking
from eukhe.humanize import counted
from eukhe.json_types import JsonObject, JsonValue
from eukhe.rules import hook as rule
from eukhe.run.secrets import secrets
from eukhe.settings import SettingsError
from eukhe.settings import load as load_settings

hooks_app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="The hooks in effect here (~/.eukhe/settings.json, a trusted project's "
    ".claude/settings.json): list them, or run an event's on a sample payload. See docs/hooks.md.",
    rich_markup_mode="markdown",
)

INTERRUPTED = 130
"""The exit status after Ctrl-C (a shell's for SIGINT)."""


def _refuse(message: str, status: int = 2) -> NoReturn:
    echo(f"eukhe hooks: {message}", err=True)
    raise typer.Exit(status)


def _loaded(cwd: Path) -> Loaded:
    try:
        return load(cwd, os.environ)
    except SettingsError as e:
        _refuse("; ".join(str(e).splitlines()))


@hooks_app.command("list")
def list_command(
    as_json: Annotated[
        bool, flag("--json", help="One JSON object: the hooks by event, and the notices.")
    ] = False,
) -> None:
    """Every hook in effect in this folder, by event: its matcher, command, timeout,
    onFailure and the file it came from; then what was held back (an untrusted project's
    hooks, counted) or left out."""
    cwd = Path.cwd()
    got = _loaded(cwd)
    if as_json:
        echo_json(report.listing_json(got, cwd))
        return
    for line in report.listing(got, cwd):
        echo(line)


def _event(name: str) -> rule.Event:
    for e in rule.Event:
        if e.value.lower() == name.lower():
            return e
    said = {k.lower(): (k, why) for k, why in rule.NOT_FIRED.items()}.get(name.lower())
    if said is not None:  # Claude Code's, with no meaning in eukhe: said why
        _refuse(f"{said[0]} is Claude Code's, and eukhe never fires it: {said[1]}")
    _refuse(f"no event {name!r}; the events: {', '.join(e.value for e in rule.Event)}")


def _arguments(given: str | None) -> JsonObject | None:
    if given is None:
        return None
    try:
        got: JsonValue = json.loads(given)
    except ValueError as e:
        _refuse(
            f'--input is no JSON ({e}); give the tool\'s input as an object, such as \'{{"command": "ls"}}\''
        )
    if not isinstance(got, dict):
        _refuse('--input: give the tool\'s input as a JSON object, such as \'{"command": "ls"}\'')
    return got


@hooks_app.command(
    "test",
    epilog='Examples: `eukhe hooks test PreToolUse --tool Bash --input \'{"command": "rm -rf build"}\'`; '
    "`eukhe hooks test Stop`",
)
def test_command(
    event_name: Annotated[
        str, typer.Argument(metavar="EVENT", help="The event, such as PreToolUse or Stop.")
    ],
    tool: Annotated[
        str | None,
        typer.Option(
            "--tool", metavar="NAME", help="A tool event's tool: Bash (or bash), Edit, mcp__s__t..."
        ),
    ] = None,
    given: Annotated[
        str | None,
        typer.Option("--input", metavar="JSON", help="A tool event's tool_input (default: a sample one)."),
    ] = None,
) -> None:
    """Run the hooks EVENT (and, for a tool event, its tool) matches, here, on a sample
    payload in Claude Code's field names, as a run would: show each one's command, how it
    ended and in how long, its failure, then their verdict. Exit 0 when every hook ran
    clean, 1 when one failed or timed out; Ctrl-C ends them."""
    event = _event(event_name)
    tool_event = event in rule.MATCHED
    if tool_event and tool is None:
        _refuse(f"{event.value} is a tool event: name its tool, such as --tool Bash")
    if not tool_event and (tool is not None or given is not None):
        tools = ", ".join(e.value for e in rule.Event if e in rule.MATCHED)
        _refuse(f"--tool and --input are for the tool events ({tools}), not {event.value}")
    arguments = _arguments(given)
    cwd = Path.cwd()
    got = _loaded(cwd)
    try:
        env = secrets(load_settings(cwd), cwd=cwd).env
    except SettingsError as e:
        _refuse("; ".join(str(e).splitlines()))
    for line in got.notices:
        echo(f"eukhe: {line}", err=True)
    name = payload.eukhe_name(tool) if tool is not None else None
    what = event.value + (f" {rule.claude_name(name)}" if name else "")
    sample = payload.sample(event, name, arguments, cwd)
    hooks = got.hooks.for_event(event, name if tool_event else payload.subject(event, sample))
    if not hooks:
        echo(f"no hook of {what} is in effect here (eukhe hooks list shows them all)")
        return
    echo(f"{what}: {counted(len(hooks), 'hook')}, on stdin: {json.dumps(sample, ensure_ascii=False)}")
    ran = run_event_blocking(event, hooks, sample, cwd=cwd, env=env, environ=os.environ)
    for line in report.ran_lines(event, ran):
        echo(line)
    if any(r.ran.proc.aborted for r in ran.runs):
        raise typer.Exit(INTERRUPTED)
    if not report.clean(event, ran):
        raise typer.Exit(1)
