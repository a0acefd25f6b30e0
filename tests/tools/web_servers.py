"""Real HTTP servers on loopback for the web_fetch tests, each misbehaving one way, all in
the test's own event loop (asyncio's streams), each bounded in time and bytes so none
outlives its test; and a watch on every connection this process tries."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field

Handler = Callable[[str, asyncio.StreamWriter], Awaitable[None]]
"""(the request's path, the writer): what a server does with one request."""

SERVE_S = 10.0
"""Seconds any server goes on with one request at most: it stops by itself."""


@dataclass
class Served:
    """A server's address and what it saw: the paths asked, the bytes of body it sent."""

    port: int
    paths: list[str] = field(default_factory=list)
    sent: int = 0

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"


def head(status: str, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status}", *(f"{k}: {v}" for k, v in headers.items()), "", ""]
    return "\r\n".join(lines).encode()


@contextlib.asynccontextmanager
async def serving(
    handle: Callable[[Served, str, asyncio.StreamWriter], Awaitable[None]],
) -> AsyncIterator[Served]:
    """A server on 127.0.0.1 whose every request `handle` answers; closed on exit, with
    whatever it was still doing."""
    served = Served(0)
    tasks: set[asyncio.Task[None]] = set()

    async def one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        tasks.add(task)  # type: ignore[arg-type]
        try:
            line = await reader.readline()
            while (await reader.readline()).strip():  # the headers
                pass
            path = line.decode().split(" ")[1] if line.count(b" ") >= 2 else "/"
            served.paths.append(path)
            async with asyncio.timeout(SERVE_S):
                await handle(served, path, writer)
        except (ConnectionError, TimeoutError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(one, "127.0.0.1", 0)
    served.port = server.sockets[0].getsockname()[1]
    try:
        yield served
    finally:
        server.close()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def page(
    served: Served, body: bytes, content_type: str, writer: asyncio.StreamWriter, status: str = "200 OK"
) -> None:
    writer.write(head(status, {"Content-Type": content_type, "Content-Length": str(len(body))}) + body)
    served.sent += len(body)
    await writer.drain()


async def silent(served: Served, path: str, writer: asyncio.StreamWriter) -> None:
    """Accepts, reads the request, and says nothing."""
    await asyncio.sleep(SERVE_S)


async def trickle(served: Served, path: str, writer: asyncio.StreamWriter) -> None:
    """Its head at once, then its body a byte every tenth of a second."""
    writer.write(head("200 OK", {"Content-Type": "text/plain", "Content-Length": "1000"}))
    for _ in range(100):
        await writer.drain()
        await asyncio.sleep(0.1)
        writer.write(b"x")
        served.sent += 1


async def endless(served: Served, path: str, writer: asyncio.StreamWriter) -> None:
    """A body without end (it stands in for a gigabyte), 64 KiB at a time, until the reader
    goes away or 100 MiB are sent."""
    writer.write(head("200 OK", {"Content-Type": "text/plain", "Content-Length": str(1 << 30)}))
    chunk = b"y" * 65536
    while served.sent < 100 << 20:
        writer.write(chunk)
        await writer.drain()
        served.sent += len(chunk)


def redirecting(
    to: Callable[[Served, str], str],
) -> Callable[[Served, str, asyncio.StreamWriter], Awaitable[None]]:
    """A 302 to `to(served, path)`."""

    async def handle(served: Served, path: str, writer: asyncio.StreamWriter) -> None:
        writer.write(head("302 Found", {"Location": to(served, path), "Content-Length": "0"}))
        await writer.drain()

    return handle


@contextlib.contextmanager
def never_accepting() -> Iterator[int]:
    """A port on 127.0.0.1 whose queue of connections is full: a new connection's SYN is
    dropped, so connecting to it never completes. Yields the port."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    filler = socket.socket()
    filler.setblocking(False)
    filler.connect_ex(("127.0.0.1", port))
    try:
        yield port
    finally:
        filler.close()
        listener.close()


# ---------------------------------------------------------------- the watch on connections


class Watch:
    """Every address this process tries to connect a socket to while it is on, seen by an
    audit hook at `socket.connect`: a test shows that a refused address was never tried, and
    any address off loopback is stopped there (no test's traffic ever leaves the machine)."""

    def __init__(self) -> None:
        self.on = False
        self.tried: list[str] = []
        self.lock = threading.Lock()

    def hook(self, event: str, args: tuple[object, ...]) -> None:
        if not self.on or event != "socket.connect" or len(args) < 2:
            return
        where = args[1]
        host = str(where[0]) if isinstance(where, tuple) and where else str(where)
        with self.lock:
            self.tried.append(host)
        if not (host.startswith("127.") or host in ("::1", "localhost")) and not host.startswith("/"):
            raise ConnectionRefusedError(f"the test's watch stopped a connection to {host}")

    @contextlib.contextmanager
    def watching(self) -> Iterator[list[str]]:
        with self.lock:
            self.tried.clear()
        self.on = True
        try:
            yield self.tried
        finally:
            self.on = False


WATCH = Watch()
sys.addaudithook(WATCH.hook)  # once a process: an audit hook cannot be taken off
