"""A recording proxy on loopback in front of a real server: every request is forwarded as
it came and its answer streamed back as it comes (the connection closes at its end), and
the JSON bodies of the POSTs are kept, so a test sees what eukhe sent a real model."""

from __future__ import annotations

import http.client
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length", "host"})
TIMEOUT = 120.0  # seconds one forwarded request may take


class Recorder:
    """`with Recorder(upstream) as proxy:` then `proxy.base_url`; `proxy.bodies`: the POSTs' JSON."""

    def __init__(self, upstream: str) -> None:
        self.upstream = urlsplit(upstream)  # e.g. http://127.0.0.1:PORT/v1
        self.bodies: list[Any] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._forward(None)

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                recorder.bodies.append(json.loads(body or b"null"))
                self._forward(body)

            def _forward(self, body: bytes | None) -> None:
                up = recorder.upstream
                conn = http.client.HTTPConnection(up.hostname or "127.0.0.1", up.port, timeout=TIMEOUT)
                try:
                    headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
                    conn.request(self.command, self.path, body=body, headers=headers)
                    got = conn.getresponse()
                    self.send_response(got.status)
                    for k, v in got.getheaders():
                        if k.lower() not in HOP:
                            self.send_header(k, v)
                    self.send_header("Connection", "close")
                    self.end_headers()
                    while chunk := got.read1(65536):
                        self.wfile.write(chunk)
                        self.wfile.flush()
                finally:
                    conn.close()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{self.upstream.path}"

    def __enter__(self) -> Recorder:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
