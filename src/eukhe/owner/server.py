"""The owner process of one eukhe home: it holds what every `eukhe` process of the
home shares, and every other process is its client.

- the admission registry, for every provider of every client (H3 across processes);
- the root-turn lease (H6.2);
- the chat memory: its only writer, and the compactor's workers (`chat_host`);
- who is connected, for `eukhe status`.

One owner per home: the one that holds the lock file (`flock`, freed by the OS when
its process dies, so a dead owner is replaced by the next client that needs one).
It listens on a unix socket of mode 0600 in the home. Each connection is an origin:
when it closes, every slot and lease of it ends at once (`admission_every_ticket_ends`,
`lease_crash_frees`), so a dead client never holds a slot. With no client for
`idle` seconds, the owner ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import socket
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eukhe import waits
from eukhe.admission import Preempted, Queued, QueueFull, Registry
from eukhe.client import protocol
from eukhe.client.protocol import RequestKind
from eukhe.errors import Code, EukheError
from eukhe.home import open_home, private_open, private_write
from eukhe.json_types import JsonMapping, JsonObject, JsonValue
from eukhe.owner.chat_host import ChatHost
from eukhe.owner.log import logged
from eukhe.owner.root_lease import RootLease, Stopped
from eukhe.rules.lease import Entry
from eukhe.rules.wait import End
from eukhe.store.lease_holder import Holder, LeaseHolderError, LeaseHolderStore
from eukhe.store.processes import same
from eukhe.timing import timing

IDLE = 30.0
"""Seconds an owner with no client waits for one before it ends."""


OLD = 0
"""The origin of a lease holder from before this owner (connections count from 1)."""


class Taken(EukheError):
    """Another live owner holds the home."""

    code = Code.OWNER


@dataclass
class Conn:
    """One client connection: an origin of slots and leases."""

    origin: int
    writer: asyncio.StreamWriter
    hello: JsonObject = field(default_factory=dict)
    since: float = field(default_factory=time.time)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    slots: dict[int, asyncio.Task[None]] = field(default_factory=dict)  # client's slot id -> its task
    leases: dict[int, int] = field(default_factory=dict)  # client's lease id -> key (once granted)
    waits: dict[int, asyncio.Task[None]] = field(default_factory=dict)  # client's lease id -> its wait
    runs: dict[str, JsonObject] = field(default_factory=dict)  # the runs it executes
    asked: dict[int, JsonObject] = field(default_factory=dict)  # slot id -> provider, class, state
    views: dict[int, asyncio.Event] = field(default_factory=dict)  # a settle wait's request id -> its stop

    def send(self, obj: JsonObject) -> None:
        if self.writer.is_closing():
            return
        try:
            line = protocol.encode(obj)
        except protocol.ProtocolError as e:  # a reply too long for the wire: the request gets why instead
            line = protocol.encode({"id": obj.get("id"), "error": str(e)})
        self.writer.write(line)


class Owner:
    def __init__(
        self,
        home: Path,
        settings: JsonMapping | None = None,
        idle: float = IDLE,
        lease_holders: LeaseHolderStore | None = None,
        orphans: Callable[[list[str], JsonMapping], Awaitable[None]] | None = None,
        recover: Callable[[list[str]], Awaitable[JsonObject]] | None = None,
        busy: Callable[[], bool] = lambda: False,
        taken: Callable[[], Mapping[str, str]] = dict,
    ) -> None:
        self.home = home
        self.idle = idle
        self.registry = Registry(settings)
        # the home's chat, opened at its first request: this owner writes it (or, on a
        # Postgres store shared with other homes' owners, the elected one does)
        self.chat = ChatHost(home, self.registry)
        self.root_lease = RootLease(on_holder=self._record)
        self.lease_holders = lease_holders
        self.host = socket.gethostname()
        self.orphans = orphans  # a client died with runs in flight: who finishes them
        self.recover = recover  # a client asks the owner to take up what dead processes left
        self.busy = busy  # work of the owner's own under way: it does not end idle
        self.taken = taken  # the runs this owner took up and is finishing: what it said of each
        self._work: set[asyncio.Task[None]] = set()
        self.conns: dict[int, Conn] = {}
        self.since = time.time()
        self.pid = os.getpid()
        self._origins = 0
        self._lock: int | None = None
        self._server: asyncio.AbstractServer | None = None
        self._done = asyncio.Event()
        self._changed = asyncio.Event()

    # ------------------------------------------------------------ life

    def claim(self) -> None:
        """Take the home's lock, or raise `Taken` when a live owner holds it."""
        open_home(self.home)  # private, or tightened (said in the owner's log)
        fd = private_open(protocol.lock_path(self.home), os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise Taken(f"another owner holds {protocol.lock_path(self.home)}") from None
        self._lock = fd

    async def serve(self) -> None:
        """Listen until shut down, or idle for `idle` seconds with no client."""
        if self._lock is None:
            self.claim()
        path = protocol.socket_path(self.home)
        protocol.socket_folder(self.home, make=True)  # in the temp dir: ours alone, or refused
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # a socket left by a dead owner: the lock says none lives
        old = os.umask(0o177)  # the socket is born 0600: no moment when others may connect
        try:
            self._server = await asyncio.start_unix_server(
                self._client, path=str(path), limit=protocol.MAX_LINE
            )
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        info = {"pid": self.pid, "since": self.since, "socket": str(path)}
        private_write(protocol.info_path(self.home), json.dumps(info))
        adopted = self._adopt()
        try:
            await self._until_done()
        finally:
            if adopted is not None:
                adopted.cancel()
            await self.close()

    async def _until_done(self) -> None:
        clock = waits.LoopClock()
        while not self._done.is_set():
            if self._clients():
                self._changed.clear()
                await waits.race(self._changed.wait(), None, self._done)
                continue
            self._changed.clear()
            raced = await waits.race(self._changed.wait(), clock.now() + self.idle, self._done, clock)
            if raced.end is End.DEADLINE and not self._clients() and not self.busy() and not self._work:
                return

    def _clients(self) -> list[Conn]:
        """The connections of other processes (the owner's own recovered runs connect
        to it too, and keep it from nothing)."""
        return [c for c in self.conns.values() if c.hello.get("pid") != self.pid]

    def stop(self) -> None:
        self._done.set()

    # ------------------------------------------------------------ the holder in the store

    def _record(self, holder: Entry | None, about: JsonObject) -> None:
        """The lease's holder into the store (None: free), so that an owner after this
        one knows a turn that may still run."""
        if self.lease_holders is None or (holder is not None and holder.origin == OLD):
            return
        record = None
        if holder is not None:
            record = Holder(
                str(about.get("host") or self.host),
                int(about.get("pid") or 0),
                about.get("started"),
                str(about.get("session") or ""),
                str(about.get("run") or ""),
                float(about.get("since") or time.time()),
            )
        try:
            self.lease_holders.hold(record)
        except LeaseHolderError as e:  # the lease goes on in memory; a later owner may not know
            logged(str(e))

    def _adopt(self) -> asyncio.Task[None] | None:
        """A holder the store names whose process still runs here keeps the lease until
        that process is gone (polled every turn poll, `timing`); any other record is cleared."""
        if self.lease_holders is None:
            return None
        try:
            h = self.lease_holders.holder()
        except LeaseHolderError as e:
            logged(str(e))
            return None
        if h is None:
            return None
        if h.host != self.host or not same(h.pid, h.started):
            self._record(None, {})
            return None
        self.root_lease.adopt(OLD, h.about())
        return asyncio.ensure_future(self._until_gone(h))

    async def _until_gone(self, h: Holder) -> None:
        clock = waits.LoopClock()
        while same(h.pid, h.started) and not self._done.is_set():
            await waits.race(self._done.wait(), clock.now() + timing().turn_poll, None, clock)
        self.root_lease.crash(OLD)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for conn in list(self.conns.values()):
            conn.writer.close()
            self._gone(conn)
        await self.chat.close()  # its jobs stop (no failure: the next owner builds those lines)
        with contextlib.suppress(FileNotFoundError):
            protocol.socket_path(self.home).unlink()
        with contextlib.suppress(FileNotFoundError):
            protocol.info_path(self.home).unlink()
        if self._lock is not None:
            os.close(self._lock)  # frees the flock: the next client may start an owner
            self._lock = None

    # ------------------------------------------------------------ connections

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._origins += 1
        conn = Conn(self._origins, writer)
        self.conns[conn.origin] = conn
        self._changed.set()
        try:
            while True:
                try:
                    line = await reader.readline()
                except (ValueError, asyncio.LimitOverrunError, ConnectionError):
                    break  # a line past MAX_LINE, or a reset: the peer is broken
                if not line:
                    break
                try:
                    req = protocol.decode(line)
                except protocol.ProtocolError as e:
                    conn.send({"id": None, "error": str(e)})
                    continue
                self._handle(conn, req)
        except asyncio.CancelledError:
            pass  # the owner is closing: a handler that ends cancelled is logged by asyncio as a failure
        finally:
            self._gone(conn)
            writer.close()
            self._changed.set()

    def _gone(self, conn: Conn) -> None:
        """The connection closed: every slot and lease of it ends at once."""
        if self.conns.pop(conn.origin, None) is None:
            return
        for task in list(conn.tasks):
            task.cancel()
        self.root_lease.crash(conn.origin)
        if conn.runs and self.orphans is not None and not self._done.is_set():
            task = asyncio.ensure_future(self.orphans(list(conn.runs), dict(conn.hello)))
            self._work.add(task)
            task.add_done_callback(self._work.discard)
            task.add_done_callback(lambda _t: self._changed.set())

    def _spawn(self, conn: Conn, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(coro)
        conn.tasks.add(task)
        task.add_done_callback(conn.tasks.discard)
        return task

    def _handle(self, conn: Conn, req: JsonObject) -> None:
        rid = req.get("id")
        try:
            kind = RequestKind(req.get("kind"))
        except ValueError:
            conn.send({"id": rid, "error": f"unknown request kind {req.get('kind')!r}"})
            return
        try:
            match kind:
                case RequestKind.HELLO:
                    conn.hello = {k: req.get(k) for k in ("pid", "started", "argv", "host")}
                    self._changed.set()  # an own connection (the owner's recovered runs) is no client
                    conn.send({"id": rid, "ok": {"pid": self.pid, "since": self.since}})
                case RequestKind.STATUS:
                    conn.send({"id": rid, "ok": self.status()})
                case RequestKind.CONFIGURE:
                    self.registry.configure(dict(req.get("settings") or {}))
                    conn.send({"id": rid, "ok": {}})
                case RequestKind.ADMIT:
                    sid = int(req["slot"])
                    conn.slots[sid] = self._spawn(conn, self._admit(conn, rid, sid, req))
                case RequestKind.RELEASE:
                    sid = int(req["slot"])
                    task = conn.slots.get(sid)
                    if task is not None and not task.done():
                        task.cancel()  # a wait that is dropped, or a hold that ends
                    conn.send({"id": rid, "ok": {}})
                case RequestKind.LEASE:
                    lid = int(req["lease"])
                    conn.waits[lid] = self._spawn(conn, self._lease(conn, rid, lid, req))
                case RequestKind.UNLEASE:
                    lid = int(req["lease"])
                    wait = conn.waits.pop(lid, None)
                    if wait is not None and not wait.done():
                        wait.cancel()  # a stopped wait: nothing of it stays
                    key = conn.leases.pop(lid, None)
                    if key is not None:
                        self.root_lease.release(key)
                    conn.send({"id": rid, "ok": {}})
                case RequestKind.RUN:
                    run = str(req["run"])
                    if req.get("state") == "ended":
                        conn.runs.pop(run, None)
                    else:
                        conn.runs[run] = {"session": req.get("session"), "since": time.time()}
                    conn.send({"id": rid, "ok": {}})
                case RequestKind.ABORT:
                    run = str(req["run"])
                    where = next((c for c in self.conns.values() if run in c.runs), None)
                    if where is None:
                        conn.send(
                            {
                                "id": rid,
                                "error": f"no live eukhe process runs {run}; a run cut off by a crash "
                                "is finished by `eukhe resume`",
                            }
                        )
                    else:
                        where.send({"event": "abort", "run": run})
                        conn.send({"id": rid, "ok": {"pid": where.hello.get("pid")}})
                case RequestKind.RECOVER:
                    self._spawn(conn, self._recover(conn, rid, [str(r) for r in req.get("runs") or []]))
                case RequestKind.SHUTDOWN:
                    conn.send({"id": rid, "ok": {"pid": self.pid}})
                    self.stop()
                case (
                    RequestKind.VIEW
                    | RequestKind.LOG
                    | RequestKind.IMPORT
                    | RequestKind.ZOOM
                    | RequestKind.DATE
                    | RequestKind.MEMORY
                ):
                    self._spawn(conn, self._memory(conn, rid, kind, req))
                case RequestKind.UNVIEW:
                    stop = conn.views.get(int(req["view"]))
                    if stop is not None:
                        stop.set()
                    conn.send({"id": rid, "ok": {}})
        except (KeyError, TypeError, ValueError) as e:
            conn.send({"id": rid, "error": f"{kind.value}: malformed request: {type(e).__name__}: {e}"})

    async def _admit(self, conn: Conn, rid: JsonValue, sid: int, req: JsonObject) -> None:
        """Wait for a slot (no deadline: the client's release or its connection ends
        the wait, by cancelling this task), reply, and hold it until then; a
        preemption is an event, and so is a wait, when the client asks to be told
        (`told`): its place and what holds it up, from the controller's state, when
        it queues and when they change."""
        provider, interactive = str(req.get("provider")), bool(req.get("interactive", True))

        def queued(q: Queued) -> None:
            conn.send({"event": "queued", "slot": sid, "class": q.cls, "place": q.place, "ahead": q.ahead})

        asked = {
            "provider": provider,
            "class": "interactive" if interactive else "background",
            "state": "queued",
        }
        conn.asked[sid] = asked
        try:
            slot = self.registry.slot(
                provider, interactive=interactive, on_queued=queued if req.get("told") else None
            )
            async with slot:
                asked["state"] = "held"
                conn.send({"id": rid, "ok": {"slot": sid, "queued": slot.queued}})
                await asyncio.Event().wait()  # held until the release (or the close) cancels it
        except Preempted:  # a session request took the slot (H3.1): the client asks again
            conn.send({"event": "preempted", "slot": sid})
        except Exception as e:  # a full queue, or limits that cannot be read: the client's error
            refused = {"refused": "queue_full"} if isinstance(e, QueueFull) else {}
            conn.send({"id": rid, "error": f"admission: {type(e).__name__}: {e}", **refused})
        finally:
            conn.slots.pop(sid, None)
            conn.asked.pop(sid, None)

    async def _memory(self, conn: Conn, rid: JsonValue, kind: RequestKind, req: JsonObject) -> None:
        """A request of the chat, answered by the chat this owner holds; a settle wait
        says its progress (a line a second, with the lines it waits for and the seconds
        to its deadline), and ends early on UNVIEW (or with the connection)."""
        stop = conn.views[rid] = asyncio.Event()

        def progress(text: str) -> None:
            conn.send({"event": "progress", "request": rid, "text": text})

        def waiting(text: str, pending: int, seconds: float) -> None:
            line = {"text": text, "pending": pending, "seconds": round(seconds, 3)}
            conn.send({"event": "progress", "request": rid, **line})

        try:
            conn.send({"id": rid, "ok": await self.chat.answer(kind, req, progress, stop, waiting)})
        except Exception as e:  # the chat's store, or a malformed request: the turn shows why
            conn.send({"id": rid, "error": f"the chat: {type(e).__name__}: {e}"})
        finally:
            conn.views.pop(rid, None)

    async def _recover(self, conn: Conn, rid: JsonValue, cut: list[str]) -> None:
        if self.recover is None:
            conn.send({"id": rid, "error": "this owner recovers no runs"})
            return
        try:
            conn.send({"id": rid, "ok": await self.recover(cut)})
        except Exception as e:
            conn.send({"id": rid, "error": f"recovery failed: {type(e).__name__}: {e}"})

    async def _lease(self, conn: Conn, rid: JsonValue, lid: int, req: JsonObject) -> None:
        about = {
            "session": req.get("session"),
            "run": req.get("run"),
            "pid": conn.hello.get("pid"),
            "started": conn.hello.get("started"),
            "host": conn.hello.get("host"),
            "since": time.time(),
        }
        holder = self.root_lease.state.holder
        if holder is not None:  # it waits: say for whose turn, and since when
            conn.send({"event": "queued", "lease": lid, "holder": self.root_lease.about.get(holder.key, {})})
        try:
            key = await self.root_lease.acquire(conn.origin, about)
        except Stopped as e:
            conn.send({"id": rid, "error": str(e)})
            return
        finally:
            conn.waits.pop(lid, None)
        conn.leases[lid] = key
        conn.send({"id": rid, "ok": {"key": key}})

    # ------------------------------------------------------------ status

    def status(self) -> JsonObject:
        holder = self.root_lease.holder
        about = self.root_lease.about
        providers = {}
        for name in self.registry.providers():
            st = self.registry.statistics(name)
            providers[name] = {
                "held": st.held_interactive + st.held_background,
                "queued": {"interactive": st.waiting_interactive, "background": st.waiting_background},
                "limit": st.limit,
            }
        waiting = {a.get("run") for k, a in about.items() if k != holder}
        runs = []
        for c in self.conns.values():
            slots = [a for a in c.asked.values() if a["state"] == "queued"]
            for run, r in c.runs.items():
                if run in waiting:
                    waits = "the root-turn lease"
                elif slots:
                    waits = ", ".join(f"a {a['class']} slot of {a['provider']}" for a in slots)
                else:
                    waits = "nothing (running)"
                runs.append({"run": run, "session": r["session"], "pid": c.hello.get("pid"), "waits": waits})
        taken = self.taken()
        for r in runs:  # a run this owner took up from a gone process, another host's maybe: it says so
            if r["run"] in taken:
                r["taken"] = taken[str(r["run"])]
        return {
            "owner": {"pid": self.pid, "since": self.since},
            "clients": [
                {"origin": c.origin, "since": c.since, **c.hello, "slots": list(c.asked.values())}
                for c in self.conns.values()
            ],
            "runs": runs,
            "lease": {
                "holder": {"key": holder, **about.get(holder, {})} if holder >= 0 else None,
                "waiters": [{"key": k, **about.get(k, {})} for k in self.root_lease.waiters],
            },
            "providers": providers,
            "memory": self.chat.status(),
        }
