"""The built-in tools: bash, read, write and edit, and `call`, the one way to run a tool."""

from __future__ import annotations

from eukhe.tools.base import Context, Limits, Result, Tool, call, validate
from eukhe.tools.bash import BASH, Bash
from eukhe.tools.edit import EDIT, Edit
from eukhe.tools.read import READ, Read
from eukhe.tools.write import WRITE, Write

BUILTIN: dict[str, Tool] = {t.name: t for t in (READ, BASH, EDIT, WRITE)}
"""Every built-in tool by name."""

__all__ = [
    "BASH",
    "BUILTIN",
    "EDIT",
    "READ",
    "WRITE",
    "Bash",
    "Context",
    "Edit",
    "Limits",
    "Read",
    "Result",
    "Tool",
    "Write",
    "call",
    "validate",
]
