"""A flag of the command line: an option that takes no value, so its help shows none
(typer would show `<bool>`, as if it took one)."""

from __future__ import annotations

from typing import Any

import typer


def flag(*decls: str, **kwargs: Any) -> Any:
    """`typer.Option(*decls, **kwargs)` for a bool, shown without a value."""
    return typer.Option(*decls, metavar="", **kwargs)
