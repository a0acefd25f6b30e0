"""A loopback HTTP server that answers every request with a recorded response
(status, headers, body), as the real provider sent it."""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

RECORDINGS = Path(__file__).resolve().parents[1] / "fixtures" / "recordings"
HOP = {"content-length", "transfer-encoding", "content-encoding", "connection"}


@contextmanager
def serve(
    status: int,
    headers: dict[str, str],
    body: bytes,
    *,
    cut_after: int | None = None,
    pause_after: int | None = None,
    pause: float = 0.0,
    seen: list[dict[str, Any]] | None = None,
) -> Iterator[str]:
    """Serve one response to every request; `cut_after`: drop the connection after
    that many body bytes; `pause_after`: go silent for `pause` seconds after that
    many. `seen` gets each request, and whether the client hung up. Yields the base URL."""
    seen = [] if seen is None else seen

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            n = int(self.headers.get("content-length") or 0)
            seen.append({"path": self.path, "headers": dict(self.headers), "body": self.rfile.read(n)})
            self.send_response(status)
            for k, v in headers.items():
                if k.lower() not in HOP:
                    self.send_header(k, v)
            if pause_after is not None:
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[:pause_after])
                self.wfile.flush()
                deadline = time.monotonic() + pause
                while time.monotonic() < deadline:  # watch for the client hanging up
                    time.sleep(0.05)
                    if select.select([self.connection], [], [], 0)[0] and not self.connection.recv(
                        1, socket.MSG_PEEK
                    ):
                        seen[-1]["hung_up"] = True
                        return
                self.wfile.write(body[pause_after:])
            elif cut_after is None:
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            else:
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[:cut_after])
                self.wfile.flush()
                self.connection.shutdown(2)

        do_GET = do_POST

    yield from serving(Handler)


def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve `handler` on loopback for the duration of a `with` (yields the /v1 URL)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def recording(name: str) -> dict[str, Any]:
    """A recorded response, from tests/fixtures/recordings (a missing one is an error)."""
    data: dict[str, Any] = json.loads((RECORDINGS / name).read_text())
    return data
