"""The `eukhe` command."""

from typing import TYPE_CHECKING

# Named, not loaded: `eukhe`'s first step imports nothing of the command line it may not need.
if TYPE_CHECKING:
    from eukhe.cli.entry import main

__all__ = [
    "main",
]
