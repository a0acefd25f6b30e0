"""One start of one MCP server: its process (stdio) or its URL (streamable HTTP), and its
client session on the official `mcp` SDK, owned by one task (anyio's cancel scopes do
not cross tasks).

This module decides nothing about time: it never waits on its own deadline. It reports
what happens (`ready`, `died`, a call's `result` or `error`) to its `Sink`, and does
what it is told (`send`, `cancel`, `close_stdin`, `signal`); `eukhe.mcp.live` steps the
model `rules.mcp` with each report and races every wait against the model's deadlines.

The process is ours, not the SDK's: it runs in a process group of its own, so a stop
reaches what it started; its stdout is read a line at a time up to `MAX_LINE` bytes; the
tail of its stderr is kept for the cause of its death; its environment holds only
`BASE_VARIABLES` and the server's configured `env`, never the user's keys.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
import httpx2
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from eukhe.json_types import JsonMapping, JsonObject, JsonValue
from eukhe.mcp.config import ServerConfig
from eukhe.settings.secrets import key_values, redact, secret_variable

MAX_LINE = 64 * 1024 * 1024
"""Bytes one message from a server may have; a longer line breaks its stream."""
STDERR_TAIL = 2_000
"""Characters of a server's stderr kept for the cause of its death."""
BASE_VARIABLES = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR")
"""The user's environment a stdio server gets, besides its own `env`: no key, no token."""
EXIT_WAIT = 1.0
"""Seconds a closed stdout waits for its process's exit status before the death is told."""
PAGES = 20
"""Pages of `tools/list` read at most."""
PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform == "linux" else None


def _die_with_parent() -> None:
    """In a server's process before its program runs: SIGKILL when eukhe's thread that
    started it ends. A `kill -9` of eukhe runs no close, and a server in a session of its
    own gets no hangup: this is what leaves none running then (Linux; elsewhere, the close)."""
    if _LIBC is not None:
        _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


@dataclass(frozen=True)
class ToolInfo:
    """One tool as the server listed it."""

    name: str
    description: str
    schema: JsonMapping
    read_only: bool  # its `readOnlyHint` (a hint: trusted only for the home's servers)

    def json(self) -> JsonObject:
        return {
            "name": self.name,
            "description": self.description,
            "schema": dict(self.schema),
            "readOnly": self.read_only,
        }

    @staticmethod
    def of(d: JsonMapping) -> ToolInfo:
        return ToolInfo(
            str(d["name"]), str(d.get("description", "")), dict(d["schema"]), bool(d.get("readOnly"))
        )


@dataclass(frozen=True)
class Listed:
    tools: tuple[ToolInfo, ...]
    instructions: str


@dataclass(frozen=True)
class Answer:
    """A call's outcome as the server gave it: its text, its structured content, whether
    the tool said it failed."""

    text: str
    structured: JsonValue = None
    is_error: bool = False


class Sink(Protocol):
    """Where a connection reports (each with its generation: a report of an earlier
    start is stale)."""

    def ready(self, gen: int, listed: Listed) -> None: ...
    def died(self, gen: int, cause: str) -> None: ...
    def result(self, gen: int, call: int, answer: Answer) -> None: ...
    def error(self, gen: int, call: int, cause: str) -> None: ...
    def progress(
        self, gen: int, call: int, progress: float, total: float | None, message: str | None
    ) -> None: ...


def hidden_values(cfg: ServerConfig, outer: Mapping[str, str]) -> tuple[str, ...]:
    """What no text of a server shows (a cause, a result, a listing): the values of the
    environment's secret variables (a `${TOKEN}` in its arguments is expanded) and the
    server's own env and header values."""
    own = {f"v{i}": v for i, v in enumerate((*cfg.env.values(), *cfg.headers.values()))}
    return key_values({**outer, **own}, [*(n for n in outer if secret_variable(n)), *own])


def environment(cfg: ServerConfig, outer: Mapping[str, str]) -> dict[str, str]:
    kept = {k: outer[k] for k in BASE_VARIABLES if k in outer}
    return {**kept, **cfg.env}


def content_text(blocks: Sequence[object]) -> str:
    """A result's content as text: text kept, an image or audio said by its type and size,
    a resource by its URI (and its text when embedded)."""
    out: list[str] = []
    for b in blocks:
        kind = getattr(b, "type", "")
        if kind == "text":
            out.append(str(getattr(b, "text", "")))
        elif kind in ("image", "audio"):
            data = str(getattr(b, "data", ""))
            out.append(f"[{kind}: {getattr(b, 'mime_type', '?')}, {len(data) * 3 // 4} bytes]")
        elif kind == "resource":
            res = getattr(b, "resource", None)
            text = getattr(res, "text", None)
            out.append(text if isinstance(text, str) else f"[resource: {getattr(res, 'uri', '?')}]")
        elif kind == "resource_link":
            out.append(f"[resource: {getattr(b, 'uri', '?')}]")
        else:
            out.append(f"[{kind or 'content'}]")
    return "\n".join(out)


def _why(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return text if len(text) <= 500 else text[:499] + "…"


class Connection:
    """One start of a server. `open` begins it (spawn, initialize, tools/list) in its own
    task; every later order is sync and quick. `aclose` ends what is left, bounded."""

    def __init__(self, cfg: ServerConfig, gen: int, sink: Sink, outer: Mapping[str, str]) -> None:
        self.cfg, self.gen, self.sink, self.outer = cfg, gen, sink, outer
        self.hidden = hidden_values(cfg, outer)
        self.proc: asyncio.subprocess.Process | None = None
        self.stderr_tail = ""
        self.garbage = ""  # the last line of stdout that was not JSON-RPC
        self.refused = ""  # an HTTP server's last answer that was not 2xx (the SDK keeps no status)
        self._calls: asyncio.Queue[tuple[int, str, JsonObject]] = asyncio.Queue()
        self._scopes: dict[int, anyio.CancelScope] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._main: asyncio.Task[None] | None = None
        self._told = False  # its death was told once

    # --- orders -------------------------------------------------------------------------------

    def open(self) -> None:
        self._main = asyncio.create_task(self._run(), name=f"mcp {self.cfg.name}")

    def send(self, call: int, tool: str, arguments: JsonObject) -> None:
        self._calls.put_nowait((call, tool, arguments))

    def cancel(self, call: int) -> None:
        """Abandon the call: the SDK sends `notifications/cancelled` for a request it wrote."""
        scope = self._scopes.get(call)
        if scope is not None:
            scope.cancel()

    def close_stdin(self) -> None:
        if self.proc is None:  # nothing to close gently: end the session (an HTTP one says DELETE)
            main = self._main
            self._stop_tasks()
            if main is not None:  # its end is the close's: told as the death (CLOSING -> CLOSED)
                main.add_done_callback(lambda _: self._die("the session was closed"))
            return
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()

    def signal(self, sig: int) -> None:
        """Signal the server's process group (its own session, so its children too)."""
        if self.proc is not None and self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, sig)

    def stop(self) -> None:
        """End it now: SIGKILL its group, cancel its tasks."""
        self.signal(signal.SIGKILL)
        self._stop_tasks()

    async def aclose(self, grace: float = 1.0) -> None:
        """Everything of this start ended: its group killed, its tasks given `grace` real
        seconds to end, never waited on longer."""
        self.stop()
        live = [t for t in (*self._tasks, self._main) if t is not None and not t.done()]
        if self.proc is not None:
            live.append(asyncio.ensure_future(self.proc.wait()))  # type: ignore[arg-type]
        if live:
            with contextlib.suppress(BaseException):
                await asyncio.wait(live, timeout=grace)

    def _stop_tasks(self) -> None:
        for t in (*self._tasks, self._main):
            if t is not None and not t.done():
                t.cancel()

    # --- the start and the session --------------------------------------------------------------

    def _die(self, cause: str) -> None:
        if not self._told:
            self._told = True
            self.sink.died(self.gen, cause)

    async def _run(self) -> None:
        try:
            async with (
                self._streams() as (read, write),
                ClientSession(read, write, message_handler=self._message) as s,
            ):
                init = await s.initialize()
                tools = await self._list(s)
                self.sink.ready(self.gen, Listed(tools, init.instructions or ""))
                async with anyio.create_task_group() as tg:
                    while True:
                        call, tool, arguments = await self._calls.get()
                        tg.start_soon(self._call, s, call, tool, arguments)
        except asyncio.CancelledError:
            raise
        except BaseException as e:  # the start or the session broke: the death, with its cause
            first = _first(e)
            if self.proc is not None and _closed(first):
                return  # a stdio stream ended: its reader tells the death, after the exit status
            self._die(self._cause(_why(first)))

    async def _list(self, s: ClientSession) -> tuple[ToolInfo, ...]:
        out: list[ToolInfo] = []
        cursor: str | None = None
        for _ in range(PAGES):
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await s.list_tools(params=params)
            for t in page.tools:
                ro = bool(t.annotations and t.annotations.read_only_hint)
                out.append(ToolInfo(t.name, t.description or "", dict(t.input_schema), ro))
            cursor = page.next_cursor
            if not cursor:
                break
        return tuple(out)

    async def _call(self, s: ClientSession, call: int, tool: str, arguments: JsonObject) -> None:
        async def progress(progress: float, total: float | None, message: str | None) -> None:
            self.sink.progress(self.gen, call, progress, total, message)

        with anyio.CancelScope() as scope:
            self._scopes[call] = scope
            try:
                got = await s.call_tool(tool, arguments, progress_callback=progress)
                text = content_text(list(got.content))
                if got.structured_content is not None and not text.strip():
                    text = json.dumps(got.structured_content, ensure_ascii=False)
                answer = Answer(redact(text, self.hidden), got.structured_content, bool(got.is_error))
                self.sink.result(self.gen, call, answer)
            except Exception as e:
                if not _closed(e):
                    self.sink.error(self.gen, call, redact(_why(e), self.hidden))
                elif self.proc is None:  # an HTTP stream ended: the death, now
                    self._die(self._cause(_why(e)))
                # a stdio server's ended stream: its reader tells the death, with its exit status
            finally:
                self._scopes.pop(call, None)

    async def _message(self, message: object) -> None:
        """What the session routes to no request: a server's notices (its tools changed, a
        log line) and stream errors. None is acted on: a changed tool list is read at the
        next start, and a line that was not JSON-RPC never reaches the session (`_read`
        keeps it for the cause)."""

    def _cause(self, what: str) -> str:
        parts = [what]
        if self.proc is not None and self.proc.returncode is not None:
            parts = [f"exited with status {self.proc.returncode}"]
        if heard := self.heard():
            parts.append(heard)
        return redact("; ".join(parts), self.hidden)

    def heard(self) -> str:
        """What the server said besides JSON-RPC (stdout that was not, the tail of its
        stderr), for the cause of a start or a death; "" if nothing."""
        parts = [self.refused] if self.refused else []
        if self.garbage:
            parts.append(f"it wrote to stdout: {self.garbage!r}")
        if self.stderr_tail.strip():
            parts.append(f"stderr: {self.stderr_tail.strip()[-500:]}")
        return redact("; ".join(parts), self.hidden)

    # --- transports -------------------------------------------------------------------------------

    async def _status(self, response: httpx2.Response) -> None:
        code = response.status_code
        if code in (401, 403):
            self.refused = (
                f"it answered HTTP {code}: it asks for authorization (OAuth), which eukhe does not "
                "speak; give its token in the server's headers"
            )
        elif code >= 400:
            self.refused = f"it answered HTTP {code}"

    @contextlib.asynccontextmanager
    async def _streams(self) -> AsyncIterator[tuple[Any, Any]]:
        if self.cfg.transport == "http":
            headers = dict(self.cfg.headers)
            hooks = {"response": [self._status]}
            async with (
                httpx2.AsyncClient(
                    headers=headers, timeout=httpx2.Timeout(30.0, read=None), event_hooks=hooks
                ) as http,
                streamable_http_client(self.cfg.url, http_client=http) as streams,
            ):
                yield streams[0], streams[1]
            return
        async with self._stdio() as streams:
            yield streams

    @contextlib.asynccontextmanager
    async def _stdio(self) -> AsyncIterator[tuple[Any, Any]]:
        cfg = self.cfg
        try:
            self.proc = await asyncio.create_subprocess_exec(
                cfg.command,
                *cfg.args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=environment(cfg, self.outer),
                cwd=cfg.cwd or None,
                start_new_session=True,
                limit=MAX_LINE,
                preexec_fn=_die_with_parent,
            )
        except OSError as e:
            raise OSError(f"cannot start {cfg.command!r}: {e.strerror or e}") from e
        to_session: MemoryObjectSendStream[SessionMessage | Exception]
        from_server: MemoryObjectReceiveStream[SessionMessage | Exception]
        to_session, from_server = anyio.create_memory_object_stream(16)
        to_server: MemoryObjectSendStream[SessionMessage]
        from_session: MemoryObjectReceiveStream[SessionMessage]
        to_server, from_session = anyio.create_memory_object_stream(16)
        self._tasks += [
            asyncio.create_task(self._read(to_session)),
            asyncio.create_task(self._write(from_session)),
            asyncio.create_task(self._stderr()),
        ]
        yield from_server, to_server

    async def _read(self, out: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
        proc = self.proc
        assert proc is not None and proc.stdout is not None
        cause = "it closed its stdout"
        try:
            while True:
                try:
                    line = await proc.stdout.readline()
                except (ValueError, asyncio.LimitOverrunError):
                    cause = f"it wrote a message over {MAX_LINE} bytes"
                    break
                except OSError as e:
                    cause = f"its stdout broke: {_why(e)}"
                    break
                if not line:
                    break
                text = line.decode("utf-8", "replace").strip()
                if not text:
                    continue
                try:
                    msg = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
                except ValueError:
                    self.garbage = text[:200]
                    continue
                try:
                    await out.send(SessionMessage(msg))
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    break
        finally:
            out.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), EXIT_WAIT)
        self._die(self._cause(cause))

    async def _write(self, inbox: MemoryObjectReceiveStream[SessionMessage]) -> None:
        proc = self.proc
        assert proc is not None and proc.stdin is not None
        with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, OSError, ConnectionError):
            async for m in inbox:
                data = m.message.model_dump_json(by_alias=True, exclude_unset=True)
                proc.stdin.write(data.encode() + b"\n")
                await proc.stdin.drain()

    async def _stderr(self) -> None:
        proc = self.proc
        assert proc is not None and proc.stderr is not None
        with contextlib.suppress(OSError, ValueError):
            while chunk := await proc.stderr.read(4096):
                self.stderr_tail = (self.stderr_tail + chunk.decode("utf-8", "replace"))[-STDERR_TAIL:]


def _closed(e: BaseException) -> bool:
    """The SDK's error for a request whose stream ended (the server died or its stream
    broke): not the tool's error, the server's death."""
    return isinstance(e, MCPError) and e.code == types.CONNECTION_CLOSED


def _first(e: BaseException) -> BaseException:
    """The first leaf of an exception group (anyio's task groups wrap what broke)."""
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    return e


def dumps(listed: Listed) -> str:
    return json.dumps({"tools": [t.json() for t in listed.tools], "instructions": listed.instructions})


def loads(text: str) -> Listed:
    d = json.loads(text)
    return Listed(tuple(ToolInfo.of(t) for t in d["tools"]), str(d.get("instructions", "")))
