"""The faux model as a real HTTP server on loopback, speaking the OpenAI Chat
Completions, OpenAI Responses (with background jobs) and Anthropic Messages wire
formats, so tests drive the real SDKs over real HTTP.

Each request takes the script's next reply. Streams go out with chunked transfer
encoding, so a scripted drop is a broken stream to the client, not a clean end.
"""

from __future__ import annotations

import json
import os
import re
import select
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from eukhe.ai.faux import wire
from eukhe.ai.faux.script import Script, Turn
from eukhe.json_types import JsonValue


@dataclass
class Job:
    turn: Turn
    polls_left: int
    status: str = "queued"
    errors_left: int = 0


@dataclass
class Seen:
    """One request the server took: method, path, JSON body, and whether the client
    hung up while the server was silent."""

    method: str
    path: str
    body: JsonValue
    hung_up: bool = False


@dataclass
class State:
    script: Script
    lock: threading.Lock = field(default_factory=threading.Lock)
    jobs: dict[str, Job] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)
    count: int = 0
    models: tuple[str, ...] = ()  # what GET /models lists (none: it answers 404, as a server without it)


def results(body: JsonValue) -> int:
    """How many tool results the request's context holds, in any of the three formats."""
    if not isinstance(body, dict):
        return 0
    items = body.get("messages") or body.get("input") or []
    n = 0
    for m in items if isinstance(items, list) else []:
        if not isinstance(m, dict):
            continue
        if m.get("role") == "tool" or m.get("type") == "function_call_output":
            n += 1
        elif isinstance(m.get("content"), list):
            n += sum(1 for p in m["content"] if isinstance(p, dict) and p.get("type") == "tool_result")
    return n


def last_user(body: JsonValue) -> str:
    """The text of the request's last user message, in any of the three formats."""
    if not isinstance(body, dict):
        return ""
    items = body.get("messages") or body.get("input") or []
    if isinstance(items, str):
        return items
    for m in reversed(items if isinstance(items, list) else []):
        if isinstance(m, dict) and m.get("role") == "user":
            c = m.get("content")
            if isinstance(c, str):
                return c
            if isinstance(c, list):
                return " ".join(str(p.get("text", "")) for p in c if isinstance(p, dict))
    return ""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    size = 0  # the bytes of the request body being served
    disable_nagle_algorithm = True  # each event goes out as written, as a real server's do
    state: State

    def log_message(self, *args: object) -> None:
        pass

    def _body(self) -> JsonValue:
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        self.size = len(raw)
        if len(raw) < n:  # the client went away in the middle of its body: not a request
            return None
        try:
            return json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            return None

    def do_POST(self) -> None:
        body = self._body()
        seen = Seen("POST", self.path, body)
        st = self.state
        with st.lock:
            st.seen.append(seen)
            st.count += 1
            rid = f"faux{st.count}"
        m = re.search(r"/responses/([^/]+)/cancel$", self.path)
        if m:
            with st.lock:
                job = st.jobs.get(m.group(1))
                if job is not None:
                    job.status = "cancelled"
            if job is None:
                return self._json(404, {"error": {"message": f"no job {m.group(1)}"}})
            return self._json(200, wire.response_object(job.turn, "faux", m.group(1), "cancelled"))
        if body is None:
            return self._json(400, {"error": {"message": "the request body is not JSON"}})
        window = st.script.window
        if window is not None and self.size > window:  # a context too long: no reply taken
            return self._json(400, wire.overflow(self.path, self.size, window))
        with st.lock:
            turn = st.script.next(last_user(body), results(body))
        if turn.error_status:
            headers = {"retry-after": f"{turn.retry_after:g}"} if turn.retry_after is not None else {}
            return self._json(turn.error_status, turn.error_body, headers)
        model = str(body.get("model", "faux"))
        if self.path.endswith("/chat/completions") and not body.get("stream"):
            return self._json(200, wire.chat_completion(turn, model, rid))
        if self.path.endswith("/chat/completions"):
            return self._stream(_cut(wire.chat(turn, model, rid), turn, "chat"), turn, seen)
        if self.path.endswith("/messages"):
            return self._stream(_cut(wire.anthropic(turn, model, rid), turn, "anthropic"), turn, seen)
        if self.path.endswith("/responses"):
            if body.get("background"):
                with st.lock:
                    st.jobs[rid] = Job(turn, turn.deferred_polls, errors_left=turn.poll_errors)
                obj = wire.response_object(turn, model, rid, "queued")
                obj["background"] = True
                return self._json(200, obj)
            return self._stream(_cut(wire.responses(turn, model, rid), turn, "responses"), turn, seen)
        return self._json(404, {"error": {"message": f"the faux server has no route {self.path}"}})

    def do_GET(self) -> None:
        if self.path.endswith("/models"):  # a run's look at the listed models: no turn, not seen
            if not self.state.models:
                return self._json(404, {"error": {"message": "the faux server lists no models"}})
            return self._json(200, {"object": "list", "data": [{"id": m} for m in self.state.models]})
        with self.state.lock:
            self.state.seen.append(Seen("GET", self.path, None))
        m = re.search(r"/responses/([^/?]+)", self.path)
        job = self.state.jobs.get(m.group(1)) if m else None
        if m is None or job is None:
            return self._json(404, {"error": {"message": f"no such job: {self.path}"}})
        with self.state.lock:
            failing = job.errors_left > 0 and job.status not in ("cancelled", "completed")
            if failing:
                job.errors_left -= 1
        if failing:
            return self._json(503, {"error": {"message": "faux poll failure", "type": "server_error"}})
        with self.state.lock:
            if job.status not in ("cancelled", "completed"):
                if job.polls_left > 0:
                    job.polls_left -= 1
                    job.status = "in_progress"
                else:
                    job.status = "completed"
            status = job.status
        obj = wire.response_object(job.turn, "faux", m.group(1), status)
        obj["background"] = True
        return self._json(200, obj)

    def _json(self, status: int, body: JsonValue, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, events: list[bytes], turn: Turn, seen: Seen) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        try:
            for i, data in enumerate(events):
                if turn.drop_after is not None and i >= turn.drop_after:
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if turn.stall_after is not None and i == turn.stall_after:
                    self.wfile.flush()
                    if self._silent(turn.stall, turn.stall_until):
                        seen.hung_up = True
                        return
                if turn.delay and i:
                    time.sleep(turn.delay)
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            seen.hung_up = True

    def _silent(self, seconds: float, until: str | None = None) -> bool:
        """Say nothing for `seconds`, or until the file `until` exists; True when the
        client hangs up meanwhile."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not (until is not None and os.path.exists(until)):
            ready, _, _ = select.select([self.connection], [], [], 0.05)
            if ready and not self.connection.recv(1, socket.MSG_PEEK):
                return True
        return False


def _cut(events: list[bytes], turn: Turn, api: str) -> list[bytes]:
    """The events up to a scripted error inside the stream, then the error."""
    if turn.error_after is None:
        return events
    return [*events[: turn.error_after], wire.stream_error(api, turn)]


class _Quiet(ThreadingHTTPServer):
    """A client that hangs up (a process that ended with its connection open) is no error
    of the server's: nothing printed. Any other error still is."""

    def handle_error(
        self, request: socket.socket | tuple[bytes, socket.socket], client_address: object
    ) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class FauxServer:
    """`with FauxServer(script) as server:` serves on `server.url` (loopback)."""

    def __init__(self, script: Script, port: int = 0, models: tuple[str, ...] = ()) -> None:
        self.state = State(script, models=models)
        handler: Callable[..., Handler] = type("FauxHandler", (Handler,), {"state": self.state})
        self._server = _Quiet(("127.0.0.1", port), handler)  # loopback only
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="faux-server", daemon=True)

    @property
    def url(self) -> str:
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}/v1"

    @property
    def seen(self) -> list[Seen]:
        return self.state.seen

    def start(self) -> FauxServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FauxServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
