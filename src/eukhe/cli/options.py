"""A flag of the command line: an option that takes no value, so its help shows none
(typer would show `<bool>`, as if it took one); `--help` itself is one (`valueless_help`)."""

from __future__ import annotations

from typing import Any

import typer


def flag(*decls: str, **kwargs: Any) -> Any:
    """`typer.Option(*decls, **kwargs)` for a bool, shown without a value."""
    return typer.Option(*decls, metavar="", **kwargs)


def valueless_help(command: Any) -> Any:
    """`command` and every subcommand with `--help` shown as the flag it is, not `--help <bool>`:
    each one's help option, made when first asked for, gets no value to show (on these objects
    only, made for this call)."""
    made = command.get_help_option

    def help_option(ctx: Any) -> Any:
        got = made(ctx)
        if got is not None:
            got.metavar = ""
        return got

    command.get_help_option = help_option  # typer's click command (typer vendors its own click)
    for sub in getattr(command, "commands", {}).values():
        valueless_help(sub)
    return command
