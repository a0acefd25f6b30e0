"""Every line a command prints for a person goes through `echo`, and its text is
neutralized whatever the stream is (eukhe.terminal: an escape sequence in a model's, a
tool's, a project's or an imported session's text shows as its code, on a terminal, into
a pipe and into a file alike). JSON output (`--json`) goes through `echo_json`: escaped
as JSON, DEL and C1 too."""

from __future__ import annotations

import json
import shutil

import typer

from eukhe.json_types import JsonValue
from eukhe.terminal import json_text, neutralized


def width() -> int:
    """The columns a line fits in: the terminal's (or COLUMNS), else 80."""
    return shutil.get_terminal_size((80, 24)).columns


def echo(text: str = "", err: bool = False) -> None:
    """A line on stdout (stderr if `err`), neutralized."""
    # color=True: click would strip CSI sequences itself off a terminal, a second rule
    # beside neutralized (which has left none to strip)
    typer.echo(neutralized(text), err=err, color=True)


def echo_json(value: JsonValue, indent: int | None = None) -> None:
    """`value` as one JSON text on stdout: every control character escaped (json.dumps
    leaves DEL raw)."""
    typer.echo(json_text(json.dumps(value, indent=indent)))
