"""The `eukhe` command."""

from typing import TYPE_CHECKING

# Named, not loaded: `eukhe`'s first step imports nothing of the command line it may not need.
if TYPE_CHECKING:
    from eukhe.cli.entry import main
    from eukhe.cli.main import command  # the warm template builds it before it forks runs

__all__ = [
    "command",
    "main",
]
