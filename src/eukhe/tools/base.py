"""What every tool is: a name, a description and a JSON Schema for its arguments
the model sees, and `run`, which turns checked arguments into a `Result`.

`call` is the one way the harness runs a tool: it never raises for a bad name,
bad arguments or a tool's own bug (each becomes an error `Result` the model can
read and act on); only cancellation propagates.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from eukhe.ai.models import key_variables
from eukhe.home import home
from eukhe.json_types import JsonMapping, JsonObject, JsonValue
from eukhe.rules.child import Abort
from eukhe.rules.todo import Tasks
from eukhe.settings.secrets import tool_environment
from eukhe.tools.reach import Check, standalone

if TYPE_CHECKING:  # types only: the sandbox and the skills load with the tools that use them
    from eukhe.sandbox.bwrap import Sandbox
    from eukhe.skills import Agent

__all__ = [
    "BackgroundJobs",
    "Context",
    "Limits",
    "Result",
    "Spawned",
    "Tool",
    "call",
    "describe",
    "validate",
]


@dataclass(frozen=True)
class Result:
    """What a tool call gives back to the model."""

    content: str
    is_error: bool = False


@dataclass(frozen=True)
class Limits:
    """The bounds the built-in tools keep."""

    bash_timeout: float = 120.0
    """Seconds a command may run when the call gives no `timeout`."""
    bash_timeout_max: float = 600.0
    """The most seconds any command may run."""
    bash_head: int = 20_000
    """Bytes of a command's output kept from its start."""
    bash_tail: int = 20_000
    """Bytes of a command's output kept from its end."""
    kill_grace: float = 2.0
    """Seconds between SIGTERM and SIGKILL when a command times out."""
    drain_grace: float = 1.0
    """Seconds to wait for the output to close once the command has ended."""
    read_max_file: int = 10 * 1024 * 1024
    """Bytes a file may have for `read` to read it whole (a range reads any size)."""
    read_max_output: int = 50_000
    """Characters of file text one `read` returns."""
    read_max_line: int = 5_000
    """Characters of one line `read` shows before cutting it."""
    search_timeout: float = 30.0
    """Seconds `grep` and `glob` may search before they stop and show what they found."""
    search_max_files: int = 100_000
    """Files `glob` looks at, at most (a larger tree is said, and a deeper path asked for)."""


def _environment() -> dict[str, str]:
    """This process's environment without its secrets: a run passes its own (`run.secrets`:
    its settings' providers and `shell.environment.keep`); one that passes none still leaks none."""
    return tool_environment(os.environ, (), key_variables())


class ChatLookup(Protocol):
    """What `zoom` and `date` ask of the chat memory (`memory.access.Memory` gives it)."""

    async def zoom(self, id: int, n: int) -> str | None: ...
    async def total(self) -> int: ...
    async def date(self, id: int) -> str | None: ...


class PythonKernel(Protocol):
    """What `ipython` asks of the conversation's kernel (`kernel.Kernel` gives it)."""

    async def execute(self, code: str, cancel: asyncio.Event) -> Result: ...
    async def job(self, n: int, action: str, cancel: asyncio.Event) -> Result: ...


class BackgroundJobs(Protocol):
    """What `bash`'s `run_in_background`, `job_output` and `job_kill` ask of the run's jobs
    (`jobs.Scope` gives it): start one (its id), read what it printed since the last look,
    end it; a JobError's message says what could not be done."""

    async def start(
        self, argv: Sequence[str], command: str, cwd: Path, env: Mapping[str, str], box: Sandbox | None
    ) -> str: ...
    async def output(self, job_id: str, pattern: str | None) -> str: ...
    async def kill(self, job_id: str, cancel: asyncio.Event) -> str: ...


@dataclass(frozen=True)
class Spawned:
    """A subagent started: its run's `id`, the branch of its worktree ("": it has none), and
    what else its spawn says (`note`: an agent's isolation it runs without, and why)."""

    id: str
    branch: str = ""
    note: str = ""


class Subagents(Protocol):
    """What `spawn`, `progress`, `stop_child` and `merge_child` ask of the run's subagents
    (`run.children.Children` gives it)."""

    @property
    def max_depth(self) -> int: ...
    @property
    def spawned(self) -> list[str]: ...
    @property
    def may_spawn(self) -> bool: ...
    async def spawn(
        self, prompt: str, model: str | None, agent: Agent | None = None, isolation: str | None = None
    ) -> Spawned: ...
    def agent_fallback(self, agent: Agent) -> str: ...
    def note(self, text: str) -> bool: ...
    async def stop(self, cid: str, how: Abort) -> None: ...
    async def merge(self, branch: str) -> str: ...


@dataclass
class Context:
    """Where and within what a tool runs. What it offers from the layers above the tools (the
    chat, the kernel, the subagents) it offers as the protocols the tools ask of them."""

    cwd: Path
    cancel: asyncio.Event = field(default_factory=asyncio.Event)
    """Set to abort: a running tool stops as soon as it can and says so."""
    limits: Limits = field(default_factory=Limits)
    chat: ChatLookup | None = None
    """The chat memory (`eukhe.memory.access.Memory`) for zoom and date; None in a run without one."""
    kernel: PythonKernel | None = None
    """The conversation's Python kernel (`eukhe.kernel.Kernel`), started on first use; None: no kernel
    offered."""
    children: Subagents | None = None
    """The run's subagents (`eukhe.run.children.Children`): spawn, progress notes, stop; None:
    none offered."""
    env: Mapping[str, str] = field(default_factory=_environment)
    """The environment of every process a tool starts (bash, the kernel's): never a secret of
    this process's unless the settings keep it."""
    progressed: Callable[[str, float], object] = lambda call, value: None
    """A running call's progress (`call`: which call, `value`: how far): the run's work ledger
    counts it when it rises (a subagent's watch sees new work)."""
    readable: Callable[[Path], bool] = lambda path: True
    """Whether the search tools may read a file they come upon (false: a `Read` deny rule names
    it): a search of a folder never shows what the rules keep from `read`."""
    sandbox: Sandbox | None = None
    """Where bash runs (`eukhe.sandbox.bwrap.Sandbox`: `wrap` and `refusal`), made from the run's
    settings; None: unconfined (a caller that makes no run)."""
    reach: Check | None = None
    """The boundary every file and search tool asks on the object it opened (`tools.reach`):
    the run's permission gate (`run.permit.Gate.opened`); None: a tool run outside any run,
    confined to `cwd` with nobody to ask (`standalone`)."""
    hidden: tuple[str, ...] = ()
    """The secret values the run keeps from the model (its redaction's): a search never reads
    a file that holds one, whatever its pattern, so whether a pattern matches one is never
    told either."""
    jobs: BackgroundJobs | None = None
    """The run's background jobs (`jobs.Scope`); None: a run that offers none (a command runs
    to its end or its timeout)."""
    todo: Callable[[Tasks], object] | None = None
    """Where the list a `todo` call writes goes: the run shows it (its `todo` event); None: the
    run keeps no task list."""

    def boundary(self) -> Check:
        """What the tools ask before they touch what they opened."""
        return self.reach if self.reach is not None else standalone(self.cwd, home(), Path.home())


@runtime_checkable
class Tool(Protocol):
    """A tool; its members may be plain or class attributes, properties, or dataclass fields."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str:
        """What the model reads about the tool."""
        ...

    @property
    def schema(self) -> JsonMapping:
        """A JSON Schema object for the tool's arguments (a JSON-serializable dict)."""
        ...

    @property
    def replay_safe(self) -> bool:
        """Whether running the call again has no effect beyond the first run (true of reads)."""
        ...

    async def run(self, args: JsonObject, ctx: Context) -> Result:
        """Run with arguments `validate` has passed; `call` catches what it raises."""
        ...


# --- arguments -----------------------------------------------------------------------------------------

_TYPES: dict[str, tuple[str, Any]] = {
    "object": ("an object", lambda v: isinstance(v, dict)),
    "string": ("a string", lambda v: isinstance(v, str)),
    "integer": ("an integer", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    "number": ("a number", lambda v: isinstance(v, int | float) and not isinstance(v, bool)),
    "boolean": ("a boolean", lambda v: isinstance(v, bool)),
    "array": ("an array", lambda v: isinstance(v, list)),
    "null": ("null", lambda v: v is None),
}


def describe(value: JsonValue, limit: int = 60) -> str:
    """A value as JSON (as the model wrote it), cut to `limit` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _where(path: str) -> str:
    return f"argument '{path}'" if path else "arguments"


def validate(schema: JsonMapping, args: JsonValue, path: str = "") -> str | None:
    """None if `args` fits `schema`, else a message naming the argument and why.

    Knows the subset the tools use: `type` (one or a list), `properties`, `required`,
    `additionalProperties: false`, `items`, `enum`, `minimum` and `maximum`.
    """
    kind = schema.get("type")
    if kind is not None:
        kinds = [kind] if isinstance(kind, str) else list(kind)
        if not any(_TYPES[k][1](args) for k in kinds):
            wanted = " or ".join(_TYPES[k][0] for k in kinds)
            if not path and "object" in kinds:
                return f"arguments must be a JSON object, got {describe(args)}"
            return f"{_where(path)}: expected {wanted}, got {describe(args)}"
    if "enum" in schema and args not in schema["enum"]:
        options = ", ".join(describe(o) for o in schema["enum"])
        return f"{_where(path)}: expected one of {options}, got {describe(args)}"
    if isinstance(args, int | float) and not isinstance(args, bool):
        if "minimum" in schema and args < schema["minimum"]:
            return f"{_where(path)}: must be at least {schema['minimum']}, got {describe(args)}"
        if "maximum" in schema and args > schema["maximum"]:
            return f"{_where(path)}: must be at most {schema['maximum']}, got {describe(args)}"
    if isinstance(args, dict):
        props: JsonMapping = schema.get("properties", {})
        for name in schema.get("required", ()):
            if name not in args:
                return f"missing required argument '{_join(path, name)}'"
        if schema.get("additionalProperties") is False:
            for name in args:
                if name not in props:
                    known = ", ".join(props) or "none"
                    return f"unknown argument '{_join(path, str(name))}' (the arguments are: {known})"
        for name, value in args.items():
            if name in props:
                err = validate(props[name], value, _join(path, name))
                if err:
                    return err
    if isinstance(args, list) and "items" in schema:
        for i, item in enumerate(args):
            err = validate(schema["items"], item, f"{path}[{i}]")
            if err:
                return err
    return None


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


# --- calling -------------------------------------------------------------------------------------------


async def call(tools: Mapping[str, Tool], name: str, args: JsonValue, ctx: Context) -> Result:
    """Run tool `name` with `args`: every failure but cancellation becomes an error `Result`."""
    tool = tools.get(name)
    if tool is None:
        offered = ", ".join(tools) or "(none)"
        return Result(f"tool_unavailable: tool '{name}' is not offered; the tools are: {offered}", True)
    if not isinstance(args, dict):
        return Result(f"arguments to '{name}' must be a JSON object, got {describe(args)}", True)
    err = validate(tool.schema, args)
    if err:
        return Result(err, True)
    if ctx.cancel.is_set():
        return Result(f"aborted: '{name}' was not run", True)
    try:
        return await tool.run(args, ctx)
    except Exception as e:  # a tool's bug is the model's news, never the harness's crash
        return Result(f"'{name}' failed: {type(e).__name__}: {e}", True)
