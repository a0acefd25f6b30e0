"""A client of the home's owner: one connection, requests with their reply
deadlines (H6.1), and the owner started, detached, when none answers.

A request waits for its reply with `waits.race`: the reply, its deadline from
`protocol.reply_deadline` (on the client's clock, which tests move), the
caller's cancel. A miss is an `OwnerError` that names the request, the owner and
the deadline. The owner's connection closing ends every wait at once.

Nothing is sent before the owner is known to be this user's: its socket's folder in
the temp dir is checked (`protocol.socket_folder`), and the process that listens is
asked for its uid (SO_PEERCRED) before the first byte; the requests carry API keys
(a compactor's route).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from eukhe import waits
from eukhe.client import protocol
from eukhe.client.handoff import ForkedOwner, spawn_owner
from eukhe.client.protocol import RequestKind
from eukhe.errors import Code, EukheError
from eukhe.home import HomeError
from eukhe.json_types import JsonObject, JsonValue
from eukhe.rules.wait import End
from eukhe.store.processes import alive, started

__all__ = ["Client", "OwnerError", "alive", "ask_once", "read_info", "spawn_owner", "started"]

START = 10.0
"""Seconds a new owner has to listen before the client gives up on it."""

CONNECT_POLL = 0.02
"""Seconds between two tries to connect to an owner that is starting."""

TRIES = 3
"""Connections tried when the owner goes away while it is greeted."""

RESPAWN = 0.2
"""Seconds before an owner is started again when the one started found the home
taken and no owner answers (the one that holds it is closing)."""


Streams = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class OwnerError(EukheError):
    """A request the owner did not answer in time, refused, or could not get (the
    connection closed). `refused`: why the owner refused, when it says (a full
    admission queue: "queue_full")."""

    code = Code.OWNER

    def __init__(self, message: str, refused: str | None = None) -> None:
        super().__init__(message)
        self.refused = refused


class Client:
    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        clock: waits.Clock | None = None,
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.clock = clock or waits.LoopClock()
        self.owner: JsonObject = {}
        self.closed = asyncio.Event()
        self.why = ""
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[JsonObject]] = {}
        self._events: dict[str, Callable[[JsonObject], None]] = {}  # "slot:N", "lease:N"
        self._reader = asyncio.ensure_future(self._read())

    # ------------------------------------------------------------ connecting

    @classmethod
    async def connect(
        cls,
        home: Path,
        *,
        spawn: bool = True,
        clock: waits.Clock | None = None,
        cancel: asyncio.Event | None = None,
    ) -> Client:
        """A connection to the home's owner, said hello to. With `spawn`, an owner is
        started (detached) when none listens, and waited for up to START seconds.
        An owner that dies while it is greeted (a listener that is going away still
        takes connections for a moment) is tried again, at most TRIES times."""
        for attempt in range(TRIES):
            reader, writer = await cls._reach(home, spawn, cancel)
            client = cls(reader, writer, clock)
            try:
                client.owner = await client.request(
                    RequestKind.HELLO,
                    cancel=cancel,
                    pid=os.getpid(),
                    started=started(os.getpid()),
                    argv=sys.argv[1:3],
                    host=socket.gethostname(),
                )
            except OwnerError:
                gone = client.closed.is_set()  # the connection went, rather than an answer or a deadline
                await client.close()
                if not gone or attempt == TRIES - 1:
                    raise
                await asyncio.sleep(CONNECT_POLL)
                continue
            except BaseException:
                await client.close()
                raise
            return client
        raise AssertionError("unreachable: the last try raises")

    @staticmethod
    async def _reach(home: Path, spawn: bool, cancel: asyncio.Event | None) -> Streams:
        path = protocol.socket_path(home)
        try:
            return await _open(home)
        except OSError as first:
            if not spawn:
                raise OwnerError(f"no owner listens at {path}: {first.strerror or first}") from None
        try:
            proc = spawn_owner(home)
        except HomeError as e:
            raise OwnerError(f"cannot start the owner: {e}") from None
        raced = await waits.race(_open_soon(proc, home), waits.LoopClock().now() + START, cancel)
        if raced.end is End.CANCEL:
            raise OwnerError("the wait for the owner to start was cancelled")
        if raced.end is End.DEADLINE:
            raise OwnerError(
                f"the owner started for {home} did not listen within {START:g} s; "
                f"its log is {protocol.log_path(home)}"
            )
        return raced.result()

    # ------------------------------------------------------------ requests

    def ask(self, kind: RequestKind, **fields: JsonValue) -> tuple[int, asyncio.Future[JsonObject]]:
        """Send a request; its id and the future of its reply (no deadline: the
        caller races it)."""
        if "id" in fields or "kind" in fields:
            raise ValueError(f"{kind.value}: 'id' and 'kind' are the wire's own fields, not a request's")
        rid = next(self._ids)
        fut: asyncio.Future[JsonObject] = asyncio.get_running_loop().create_future()
        if self.closed.is_set():
            fut.set_exception(OwnerError(f"{kind.value}: {self.why}"))
            return rid, fut
        try:
            line = protocol.encode({"id": rid, "kind": kind.value, **fields})
        except protocol.ProtocolError as e:  # too long for the wire: this request fails, the connection stays
            fut.set_exception(OwnerError(f"{kind.value}: {e}"))
            return rid, fut
        self._pending[rid] = fut
        self.writer.write(line)
        return rid, fut

    def tell(self, kind: RequestKind, **fields: JsonValue) -> None:
        """Send a request whose reply nobody waits for (a release)."""
        if not self.closed.is_set():
            rid, fut = self.ask(kind, **fields)
            self._pending.pop(rid, None)
            fut.cancel()

    async def request(
        self,
        kind: RequestKind,
        cancel: asyncio.Event | None = None,
        *,
        stop: Callable[[int], None] | None = None,
        progress: Callable[[JsonObject], None] | None = None,
        **fields: JsonValue,
    ) -> JsonObject:
        """A request and its reply, within the kind's reply deadline. On `cancel`, an
        OwnerError; or, with `stop`, `stop(id)` asks the owner to end the request now,
        and its reply (what it had) is waited for within REPLY more. `progress`: the
        events the owner sends while it works on the request (each its `text`, and the
        fields of a wait's line: `pending`, `seconds`)."""
        limit = protocol.reply_deadline(kind, fields)
        rid, fut = self.ask(kind, **fields)
        if progress is not None:

            def said(msg: JsonObject, progress: Callable[[JsonObject], None] = progress) -> None:
                if msg.get("event") == "progress":  # not the connection's close ("gone")
                    progress(msg)

            self.on_event(f"request:{rid}", said)
        try:
            deadline = None if limit is None else self.clock.now() + limit
            # with `stop`, the reply outlives a cancel (the race cancels the work it drops)
            raced = await waits.race(asyncio.shield(fut) if stop else fut, deadline, cancel, self.clock)
            if raced.end is End.CANCEL and stop is not None:
                stop(rid)
                limit = protocol.REPLY
                raced = await waits.race(fut, self.clock.now() + limit, None, self.clock)
        finally:
            self._pending.pop(rid, None)
            if progress is not None:
                self.on_event(f"request:{rid}", None)
        if raced.end is End.DEADLINE:
            raise OwnerError(
                f"the owner (pid {self.owner.get('pid', '?')}) did not answer {kind.value} "
                f"within its reply deadline of {limit:g} s"
            )
        if raced.end is End.CANCEL:
            raise OwnerError(f"{kind.value}: the wait was cancelled")
        return raced.result()

    def on_event(self, key: str, handle: Callable[[JsonObject], None] | None) -> None:
        """Events of one slot, lease or request (`slot:N`, `lease:N`, `request:N`), or
        of the client (`abort`); None: no more."""
        if handle is None:
            self._events.pop(key, None)
        else:
            self._events[key] = handle

    async def _read(self) -> None:
        why = "the owner closed the connection"
        try:
            while True:
                try:
                    line = await self.reader.readline()
                except (ValueError, asyncio.LimitOverrunError, ConnectionError) as e:
                    why = f"the owner's connection broke: {type(e).__name__}: {e}"
                    break
                if not line:
                    break
                try:
                    msg = protocol.decode(line)
                except protocol.ProtocolError as e:
                    why = f"the owner sent what is not its protocol: {e}"
                    break
                if "event" in msg:
                    if "slot" in msg:
                        key = f"slot:{msg['slot']}"
                    elif "lease" in msg:
                        key = f"lease:{msg['lease']}"
                    elif "request" in msg:
                        key = f"request:{msg['request']}"
                    else:
                        key = str(msg["event"])  # "abort"
                    handle = self._events.get(key)
                    if handle is not None:
                        handle(msg)
                    continue
                fut = self._pending.pop(msg.get("id", -1), None)
                if fut is None or fut.done():
                    continue
                if "error" in msg:
                    fut.set_exception(OwnerError(str(msg["error"]), msg.get("refused")))
                else:
                    fut.set_result(dict(msg.get("ok") or {}))
        finally:
            self._closed(why)

    def _closed(self, why: str) -> None:
        self.why = why
        self.closed.set()
        for fut in self._pending.values():
            if not fut.done():
                fut.set_exception(OwnerError(why))
        self._pending.clear()
        for handle in list(self._events.values()):
            handle({"event": "gone"})

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.writer.wait_closed(), 1.0)
        self._reader.cancel()
        with contextlib.suppress(BaseException):
            await self._reader


async def ask_once(home: Path, kind: RequestKind, *, spawn: bool = False, **fields: JsonValue) -> JsonObject:
    """One request to the home's owner over a connection of its own (for a command,
    or from a loop that is not the runs' own)."""
    client = await Client.connect(home, spawn=spawn)
    try:
        return await client.request(kind, **fields)
    finally:
        await client.close()


async def _open(home: Path) -> Streams:
    """A connection to the home's owner, known to be this user's before anything is
    sent: an unsafe socket folder, or a listener of another uid, is an OwnerError."""
    try:
        protocol.socket_folder(home)
    except protocol.UnsafeSocket as e:
        raise OwnerError(str(e)) from None
    path = protocol.socket_path(home)
    reader, writer = await asyncio.open_unix_connection(str(path), limit=protocol.MAX_LINE)
    try:
        _ours(writer, path)
    except BaseException:
        writer.close()
        raise
    return reader, writer


def _ours(writer: asyncio.StreamWriter, path: Path) -> None:
    """The listener's uid, from the kernel (SO_PEERCRED): another user's process at
    the socket's path is refused before a byte reaches it."""
    sock = writer.get_extra_info("socket")
    pid, uid = protocol.peer(sock)
    if uid != os.getuid():
        raise OwnerError(
            f"the process listening on {path} (pid {pid}) runs as uid {uid}, not as you "
            f"(uid {os.getuid()}): it is not your owner, and nothing was sent to it; fix: remove "
            f"{path} (as its owner or root), or set a shorter EUKHE_HOME so that the socket is in the home"
        )


async def _open_soon(proc: subprocess.Popen[bytes] | ForkedOwner, home: Path) -> Streams:
    """Connect once the owner listens (another client's owner may win the home: the
    one we started then ends, and the winner answers). One that ended because an
    owner that is going away still held the home is started again. An owner that
    failed to start is an error with the last line of its log."""
    while True:
        try:
            return await _open(home)
        except OSError:
            code = proc.poll()
            if code not in (None, 0):
                raise OwnerError(f"the owner exited with code {code}: {_last_line(home)}") from None
            if code == 0:  # the home was taken: by a live owner (it answers soon) or by one closing
                await asyncio.sleep(RESPAWN)
                with contextlib.suppress(OSError):
                    return await _open(home)
                proc = spawn_owner(home)
            await asyncio.sleep(CONNECT_POLL)


def _last_line(home: Path) -> str:
    try:
        lines = protocol.log_path(home).read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError as e:
        return f"its log cannot be read: {e}"
    return lines[-1] if lines else "its log is empty"


def read_info(home: Path) -> JsonObject | None:
    """What the owner wrote of itself (pid, since), or None."""
    try:
        info = json.loads(protocol.info_path(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None
