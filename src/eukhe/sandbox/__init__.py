"""The sandbox: bash and the Python kernel run under bubblewrap (`bwrap`), and which commands a call runs."""

from typing import TYPE_CHECKING

# Named, not loaded: each is imported from its module.
if TYPE_CHECKING:
    from eukhe.sandbox import ending
    from eukhe.sandbox.bwrap import READ_ONLY, Sandbox, why_not
    from eukhe.sandbox.guard import Check
    from eukhe.sandbox.session import for_run

__all__ = [
    "READ_ONLY",
    "Check",
    "Sandbox",
    "ending",
    "for_run",
    "why_not",
]
