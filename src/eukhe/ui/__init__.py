"""The interactive agent (`eukhe` with no arguments) and the events it shares with
`eukhe run --events`. This module itself stays light: the command's first step
draws the prompt's mark with it before anything else is imported."""

from typing import TYPE_CHECKING

PROMPT = "› "
"""The prompt's mark; tests and bench/startup.py wait for it as the sign that it is editable."""

# Named, not loaded: the agent's app loads behind its prompt's mark.
if TYPE_CHECKING:
    from eukhe.ui import PROMPT
    from eukhe.ui.app import main
    from eukhe.ui.typeahead import TypeAhead

__all__ = [
    "PROMPT",
    "TypeAhead",
    "main",
]
