"""The editor face: eukhe as an Agent Client Protocol agent (`eukhe acp`)."""

from typing import TYPE_CHECKING

# Named, not loaded: the protocol's SDK loads only for `eukhe acp`.
if TYPE_CHECKING:
    from eukhe.acp import serve

__all__ = [
    "serve",
]
