"""Every line a command prints for a person goes through `echo`: on a terminal its text is
neutralized (eukhe.terminal: an escape sequence in a model's, a tool's or an imported
session's text shows as its code), into a file or a pipe it is written as it is. JSON
output (`--json`) is JSON-escaped already and goes out through typer.echo unchanged."""

from __future__ import annotations

import shutil
import sys

import typer

from eukhe.terminal import for_stream


def width() -> int:
    """The columns a line fits in: the terminal's (or COLUMNS), else 80."""
    return shutil.get_terminal_size((80, 24)).columns


def echo(text: str = "", err: bool = False) -> None:
    """A line on stdout (stderr if `err`), neutralized if that stream is a terminal."""
    stream = sys.stderr if err else sys.stdout
    # color=True: click would strip CSI sequences itself off a terminal, so a pipe would
    # get neither the text as given nor its codes
    typer.echo(for_stream(text, stream), err=err, color=True)
