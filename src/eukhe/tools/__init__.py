"""The built-in tools: read, grep, glob, ls, bash, edit and write, and `call`, the one way to run a tool."""

from __future__ import annotations

from eukhe.tools.base import Context, Limits, Result, Tool, call, validate
from eukhe.tools.bash import BASH, Bash
from eukhe.tools.edit import EDIT, Edit
from eukhe.tools.read import READ, Read
from eukhe.tools.search.glob import GLOB, Glob
from eukhe.tools.search.grep import GREP, Grep
from eukhe.tools.search.ls import LS, Ls
from eukhe.tools.write import WRITE, Write

BUILTIN: dict[str, Tool] = {t.name: t for t in (READ, GREP, GLOB, LS, BASH, EDIT, WRITE)}
"""Every built-in tool by name."""

__all__ = [
    "BASH",
    "BUILTIN",
    "EDIT",
    "GLOB",
    "GREP",
    "LS",
    "READ",
    "WRITE",
    "Bash",
    "Context",
    "Edit",
    "Glob",
    "Grep",
    "Limits",
    "Ls",
    "Read",
    "Result",
    "Tool",
    "Write",
    "call",
    "validate",
]
