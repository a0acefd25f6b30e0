"""`eukhe acp`: the editor face on stdio. The protocol has the process's stdin and stdout to
itself: before anything else they are moved to descriptors of their own, standard output
becomes standard error (a stray print can never break a message) and standard input
/dev/null (nothing the runs start can read the editor's pipe).

A line that is no JSON-RPC message (not JSON, not an object, no method and no id) is answered
with the protocol's error and the connection goes on; a line past `LINE_MAX` bytes too. When
the editor closes the pipe, each turn's model says what becomes of its run (left in flight,
finished by the home's owner), and the process leaves."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from typing import BinaryIO, cast

from acp.agent.connection import AgentSideConnection

from acp import Agent
from eukhe.acp.agent import Editor
from eukhe.json_types import JsonObject, JsonValue
from eukhe.process_exit import leave

LINE_MAX = 50 * 1024 * 1024
"""The longest message read (an image in a prompt is big); a longer line is refused, not read."""


def _error(msg_id: JsonValue, code: int, message: str) -> JsonObject:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


class Lines:
    """The protocol's messages, one JSON object a line, over the editor's pipes; what is not
    one is answered with its error and skipped, never a reason to stop listening."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, sent: Callable[[JsonObject], None]
    ) -> None:
        self.reader, self.writer, self.sent = reader, writer, sent
        self.lock = asyncio.Lock()

    async def send(self, message: JsonObject) -> None:
        data = (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        async with self.lock:
            self.writer.write(data)
            await self.writer.drain()
        self.sent(message)  # the editor's face orders what follows an answer after it

    async def _line(self) -> bytes | None:
        """The next line (None: the pipe closed); one past `LINE_MAX`: b"" after it is skipped."""
        try:
            return await self.reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as e:
            return e.partial or None
        except asyncio.LimitOverrunError:
            while True:  # the rest of the long line, dropped a buffer at a time
                try:
                    await self.reader.readuntil(b"\n")
                    break
                except asyncio.LimitOverrunError as e:
                    await self.reader.readexactly(e.consumed)
                except asyncio.IncompleteReadError:
                    break
            await self.send(_error(None, -32600, f"Invalid request: a message over {LINE_MAX} bytes"))
            return b""

    async def receive(self) -> JsonObject | None:
        while True:
            line = await self._line()
            if line is None:
                return None
            if not line.strip():
                continue
            try:
                msg = json.loads(line)
            except (ValueError, RecursionError) as e:
                await self.send(_error(None, -32700, f"Parse error: the line is no JSON ({e})"))
                continue
            if not isinstance(msg, dict):
                await self.send(_error(None, -32600, "Invalid request: a message is one JSON object"))
                continue
            method, has_id = msg.get("method"), "id" in msg
            if (method is not None and not isinstance(method, str)) or (method is None and not has_id):
                await self.send(_error(msg.get("id"), -32600, "Invalid request: no method and no id"))
                continue
            return msg

    async def close(self) -> None:
        self.writer.close()


def _own_stdio() -> tuple[BinaryIO, BinaryIO]:
    """The editor's pipes, on descriptors of their own; fd 1 is then stderr and fd 0 /dev/null."""
    given_in, given_out = os.dup(0), os.dup(1)
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdout = sys.stderr
    return os.fdopen(given_in, "rb", buffering=0), os.fdopen(given_out, "wb", buffering=0)


async def _serve(given_in: BinaryIO, given_out: BinaryIO) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_MAX)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), given_in)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, given_out)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    editor = Editor()
    # the SDK's Agent protocol names every method of the protocol; the router answers those
    # eukhe has not (fork, resume, list, config) with "method not found"
    conn = AgentSideConnection(cast(Agent, editor), Lines(reader, writer, editor.sent), listening=False)
    await conn.listen()
    await editor.closed()
    # now, before the loop's teardown cancels anything: a run in flight is cut off as a closed
    # terminal's is, never aborted, and the home's owner takes it up (DBOS's threads are not
    # waited for)
    leave(0)


def main() -> None:
    """Serve the editor on stdio until it closes the pipe; runs left in flight go to the owner."""
    given_in, given_out = _own_stdio()
    try:
        asyncio.run(_serve(given_in, given_out))
    except KeyboardInterrupt:
        leave(130)
    leave(1)  # not reached: `_serve` leaves
