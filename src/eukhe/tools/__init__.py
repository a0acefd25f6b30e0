"""The built-in tools: read, grep, glob, ls, bash, edit and write, and `call`, the one way to run a tool."""

from __future__ import annotations

from typing import TYPE_CHECKING

from eukhe.tools.base import (
    ChatLookup,
    Context,
    Limits,
    PythonKernel,
    Result,
    Spawned,
    Subagents,
    Tool,
    call,
    validate,
)
from eukhe.tools.bash import BASH, Bash
from eukhe.tools.edit import EDIT, Edit
from eukhe.tools.read import READ, Read
from eukhe.tools.search.glob import GLOB, Glob
from eukhe.tools.search.grep import GREP, Grep
from eukhe.tools.search.ls import LS, Ls
from eukhe.tools.write import WRITE, Write

BUILTIN: dict[str, Tool] = {t.name: t for t in (READ, GREP, GLOB, LS, BASH, EDIT, WRITE)}
"""Every built-in tool by name."""

# Named, not loaded: imported from their modules (the web's converters, the kernel's tool load only
# with them).
if TYPE_CHECKING:
    from eukhe.tools.bash import Output
    from eukhe.tools.files import resolve, why
    from eukhe.tools.ipython import IPYTHON
    from eukhe.tools.jobs import JOB_KILL, JOB_OUTPUT
    from eukhe.tools.plan import EXIT_PLAN_TOOL
    from eukhe.tools.reach import beneath, where_of
    from eukhe.tools.read import read_whole
    from eukhe.tools.search.walk import Walked, walk
    from eukhe.tools.todo import TODO
    from eukhe.tools.web import WebFetch

__all__ = [
    "BASH",
    "BUILTIN",
    "EDIT",
    "EXIT_PLAN_TOOL",
    "GLOB",
    "GREP",
    "IPYTHON",
    "JOB_KILL",
    "JOB_OUTPUT",
    "LS",
    "READ",
    "TODO",
    "WRITE",
    "Bash",
    "ChatLookup",
    "Context",
    "Edit",
    "Glob",
    "Grep",
    "Limits",
    "Ls",
    "Output",
    "PythonKernel",
    "Read",
    "Result",
    "Spawned",
    "Subagents",
    "Tool",
    "Walked",
    "WebFetch",
    "Write",
    "beneath",
    "call",
    "read_whole",
    "resolve",
    "validate",
    "walk",
    "where_of",
    "why",
]
