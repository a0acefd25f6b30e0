"""MCP servers that misbehave, each a small Python script speaking raw JSON-RPC lines (no
SDK, so it starts at once): every start and every call ends as `rules.mcp` says, within
its bound, with its cause said, and no process of theirs is left running.

Each case prints `HOSTILE <case>: ended in X.XX s` (`pytest -s` shows them)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import http.server
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from eukhe.mcp import tools as mcp_tools
from eukhe.mcp.client import Answer
from eukhe.mcp.config import ServerConfig
from eukhe.mcp.live import RunningServer
from eukhe.mcp.servers import Servers
from eukhe.rules import mcp as model
from eukhe.rules.mcp import End, Phase
from eukhe.tools.base import Context

SLACK = 2.0
"""Seconds past its bound an ending may take on a slow machine."""

T = TypeVar("T")

PRELUDE = r"""
import json, os, signal, subprocess, sys, time

LOG = sys.argv[1]


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def answer(msg, result):
    send({"jsonrpc": "2.0", "id": msg["id"], "result": result})


def initialized(msg):
    version = msg.get("params", {}).get("protocolVersion", "2025-06-18")
    answer(msg, {
        "protocolVersion": version,
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "hostile", "version": "0"},
    })


TOOLS = {"tools": [{"name": "work", "description": "does work", "inputSchema": {"type": "object"}}]}


def text(msg, body):
    answer(msg, {"content": [{"type": "text", "text": body}], "isError": False})


def lines():
    while True:
        line = sys.stdin.readline()
        if not line:
            return
        with open(LOG, "a") as f:
            f.write(line)
        if line.strip():
            yield json.loads(line)
"""

NEVER_INITIALIZES = """
for msg in lines():
    pass
"""

HANGS_ON_CALL = """
for msg in lines():
    m = msg.get("method")
    if m == "initialize":
        initialized(msg)
    elif m == "tools/list":
        answer(msg, TOOLS)
    # tools/call: never answered
"""

EXITS_MID_CALL = """
for msg in lines():
    m = msg.get("method")
    if m == "initialize":
        initialized(msg)
    elif m == "tools/list":
        answer(msg, TOOLS)
    elif m == "tools/call":
        sys.stderr.write("boom\\n")
        sys.stderr.flush()
        os._exit(3)
"""

GARBAGE = """
for msg in lines():
    if msg.get("method") == "initialize":
        sys.stdout.write("Listening on port 1234, ready to rock\\n")
        sys.stdout.flush()
"""

HUGE_RESULT = """
for msg in lines():
    m = msg.get("method")
    if m == "initialize":
        initialized(msg)
    elif m == "tools/list":
        answer(msg, TOOLS)
    elif m == "tools/call":
        text(msg, "x" * 20_000_000)
"""

SLOW_LIST = """
for msg in lines():
    m = msg.get("method")
    if m == "initialize":
        initialized(msg)
    elif m == "tools/list":
        time.sleep(2)
        answer(msg, TOOLS)
"""

STUBBORN = """
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
with open(LOG + ".child", "w") as f:
    f.write(str(child.pid))
for msg in lines():
    m = msg.get("method")
    if m == "initialize":
        initialized(msg)
    elif m == "tools/list":
        answer(msg, TOOLS)
while True:  # stdin closed: sleep on regardless
    time.sleep(1)
"""

DIES_ONCE = """
first = not os.path.exists(LOG + ".ran")
open(LOG + ".ran", "w").close()
for msg in lines():
    m = msg.get("method")
    if m == "initialize":
        initialized(msg)
    elif m == "tools/list":
        answer(msg, TOOLS)
        if first:
            time.sleep(0.3)
            sys.stderr.write("going away\\n")
            sys.stderr.flush()
            os._exit(0)
    elif m == "tools/call":
        text(msg, "alive")
"""


# ------------------------------------------------------------------------------ helpers


def server(tmp_path: Path, name: str, body: str, startup_ms: int = 2000, tool_ms: int = 2000) -> ServerConfig:
    """A config running `body` (after the prelude) with `sys.executable`; it logs every line
    it receives to `<tmp_path>/<name>.log`."""
    script = tmp_path / f"{name}.py"
    script.write_text(PRELUDE + body)
    log = tmp_path / f"{name}.log"
    return ServerConfig(
        name=name,
        transport="stdio",
        command=sys.executable,
        args=("-u", str(script), str(log)),
        env={},
        cwd=tmp_path,
        url="",
        headers={},
        startup_ms=startup_ms,
        tool_ms=tool_ms,
        source=tmp_path / "settings.json",
        from_home=True,
    )


def log_of(tmp_path: Path, name: str) -> list[dict[str, Any]]:
    path = tmp_path / f"{name}.log"
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def gone(pid: int) -> bool:
    """The process has ended: no such process, or a zombie no one reaped yet."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def wait_gone(pid: int, within: float = 2.0) -> bool:
    until = time.monotonic() + within
    while time.monotonic() < until:
        if gone(pid):
            return True
        time.sleep(0.02)
    return gone(pid)


def assert_no_process_left(live: RunningServer) -> None:
    pids = [c.proc.pid for c in live._all if c.proc is not None]
    assert pids, "the server never ran"
    for pid in pids:
        assert wait_gone(pid), f"server process {pid} still runs"


async def ended(case: str, work: Awaitable[T]) -> tuple[T, float]:
    t = time.monotonic()
    got = await work
    took = time.monotonic() - t
    print(f"HOSTILE {case}: ended in {took:.2f} s")
    return got, took


async def until_phase(live: RunningServer, phase: Phase, within: float) -> None:
    until = time.monotonic() + within
    while live.state.phase is not phase:
        assert time.monotonic() < until, f"{live.cfg.name} is {live.state.phase}, not {phase}"
        await asyncio.sleep(0.01)


@contextlib.asynccontextmanager
async def ready(cfg: ServerConfig) -> AsyncIterator[RunningServer]:
    """The server started and ready; after the test, closed, and none of its processes left."""
    s = Servers([cfg], os.environ, None)
    live = s.live[0]
    s.start()
    try:
        await until_phase(live, Phase.READY, 10)
        yield live
    finally:
        await s.aclose()
    assert_no_process_left(live)


async def in_log(
    tmp_path: Path, name: str, test: Callable[[dict[str, Any]], bool], within: float = 2.0
) -> bool:
    until = time.monotonic() + within
    while time.monotonic() < until:
        if any(test(m) for m in log_of(tmp_path, name)):
            return True
        await asyncio.sleep(0.02)
    return False


def call_id(tmp_path: Path, name: str) -> Any:
    [call] = [m for m in log_of(tmp_path, name) if m.get("method") == "tools/call"]
    return call["id"]


def cancelled(request_id: Any) -> Callable[[dict[str, Any]], bool]:
    def test(m: dict[str, Any]) -> bool:
        params = m.get("params") or {}
        return m.get("method") == "notifications/cancelled" and params.get("requestId") == request_id

    return test


# ------------------------------------------------------------------------------ the starts


def test_a_server_that_never_answers_initialize_fails_at_its_startup_deadline(tmp_path: Path) -> None:
    cfg = server(tmp_path, "mute", NEVER_INITIALIZES, startup_ms=1000)

    async def go() -> None:
        s = Servers([cfg], os.environ, None)
        live = s.live[0]
        s.start()
        _, took = await ended("never answers initialize", live.settled(time.monotonic() + 10))
        try:
            assert live.state.phase is Phase.FAILED
            assert "the start took longer than 1000 ms" in live.state.cause
            assert 1.0 - 0.05 <= took < 1.0 + SLACK
            tools, notices, _ = await s.offered(500)
            assert tools == {}
            assert notices == ["MCP server 'mute' is not offered: the start took longer than 1000 ms"]
            assert [m["method"] for m in log_of(tmp_path, "mute")] == ["initialize"]
        finally:
            await s.aclose()
        assert_no_process_left(live)

    asyncio.run(go())


def test_a_server_that_writes_garbage_instead_of_answering_fails_within_its_startup_deadline_quoting_it(
    tmp_path: Path,
) -> None:
    cfg = server(tmp_path, "noisy", GARBAGE, startup_ms=1000)

    async def go() -> None:
        s = Servers([cfg], os.environ, None)
        live = s.live[0]
        s.start()
        _, took = await ended("writes garbage", live.settled(time.monotonic() + 10))
        try:
            assert live.state.phase is Phase.FAILED
            assert took < 1.0 + SLACK
            assert "took longer than 1000 ms" in live.state.cause
            assert "Listening on port 1234, ready to rock" in live.state.cause
            _, notices, _ = await s.offered(500)
            assert "Listening on port 1234" in notices[0]
        finally:
            await s.aclose()
        assert_no_process_left(live)

    asyncio.run(go())


def test_a_server_whose_tool_list_outlasts_the_gate_is_not_waited_for_past_it(tmp_path: Path) -> None:
    cfg = server(tmp_path, "slow", SLOW_LIST, startup_ms=3000)

    async def go() -> None:
        s = Servers([cfg], os.environ, None)  # no cache: its tools only come from its start
        live = s.live[0]
        s.start()
        (tools, notices, _), took = await ended("tools/list outlasts the gate", s.offered(300))
        try:
            assert took < 0.3 + SLACK
            assert live.state.phase is Phase.STARTING
            assert tools == {}
            assert len(notices) == 1
            assert "MCP server 'slow' is still starting after the startup gate (300 ms" in notices[0]
        finally:
            await s.aclose()
        assert_no_process_left(live)

    asyncio.run(go())


def test_a_server_the_gate_passed_by_joins_at_the_next_turn_and_the_model_is_told_once(
    tmp_path: Path,
) -> None:
    """No cache, a start slower than the gate: not offered at this turn, its listing cached
    when it comes; the next turn offers it at once and tells the model it joined; the one
    after says nothing more."""
    cfg = server(tmp_path, "late", SLOW_LIST, startup_ms=5000)
    cache = tmp_path / "cache"

    async def turn(gate_ms: int) -> tuple[dict[str, Any], list[str], str, RunningServer]:
        s = Servers([cfg], os.environ, cache)
        s.start()
        tools, notices, section = await s.offered(gate_ms)
        await s.live[0].settled(time.monotonic() + 10)
        await s.aclose()
        return dict(tools), notices, section, s.live[0]

    async def go() -> None:
        tools, notices, section, _ = await turn(300)
        assert tools == {} and "still starting after the startup gate" in notices[0] and section == ""
        tools, notices, section, _ = await turn(0)
        assert "mcp__late__work" in tools
        assert notices == ["MCP server 'late' joined: its tools are offered from this turn"]
        assert section == "## MCP server late\n\nIt joined at this turn: its tools are new."
        tools, notices, section, _ = await turn(0)
        assert "mcp__late__work" in tools and notices == [] and section == ""

    asyncio.run(go())


def test_the_runs_abort_ends_the_wait_at_the_gate(tmp_path: Path) -> None:
    """A gate set long (a user's choice) still ends at once when the run is aborted."""
    cfg = server(tmp_path, "slower", SLOW_LIST, startup_ms=3000)

    async def go() -> None:
        s = Servers([cfg], os.environ, None)
        cancel = asyncio.Event()
        s.start()
        asyncio.get_running_loop().call_later(0.2, cancel.set)
        (tools, _, _), took = await ended("aborted at the gate", s.offered(60_000, cancel))
        try:
            assert tools == {} and took < 0.2 + SLACK
        finally:
            await s.aclose()

    asyncio.run(go())


# ------------------------------------------------------------------------------ the calls


def test_a_call_the_server_never_answers_ends_at_its_deadline_and_is_cancelled_at_the_server(
    tmp_path: Path,
) -> None:
    cfg = server(tmp_path, "hang", HANGS_ON_CALL, tool_ms=1500)

    async def go() -> None:
        async with ready(cfg) as live:
            (end, got), took = await ended("hangs on tools/call", live.call("work", {}))
            assert end is End.TIMEOUT
            assert 1.5 - 0.05 <= took < 1.5 + SLACK
            said = mcp_tools.said(live, end, got)
            assert said.is_error
            assert "took longer than 1500 ms (mcp.toolTimeoutMs)" in said.content
            assert await in_log(tmp_path, "hang", cancelled(call_id(tmp_path, "hang")))
            assert live.state.phase is Phase.READY  # the server lives on

    asyncio.run(go())


def test_a_call_aborted_by_the_run_ends_at_once_and_is_cancelled_at_the_server(tmp_path: Path) -> None:
    cfg = server(tmp_path, "hang", HANGS_ON_CALL, tool_ms=3000)

    async def go() -> None:
        async with ready(cfg) as live:
            cancel = asyncio.Event()
            asyncio.get_running_loop().call_later(0.3, cancel.set)
            (end, got), took = await ended("aborted by the run", live.call("work", {}, cancel))
            assert end is End.ABORTED
            assert 0.3 - 0.05 <= took < 0.3 + SLACK
            assert took < 1.0  # at once, not at its deadline
            assert mcp_tools.said(live, end, got).content == "the call to MCP server 'hang' was aborted"
            assert await in_log(tmp_path, "hang", cancelled(call_id(tmp_path, "hang")))

    asyncio.run(go())


def test_a_server_that_exits_mid_call_ends_the_call_at_once_with_its_status_and_stderr(
    tmp_path: Path,
) -> None:
    cfg = server(tmp_path, "crash", EXITS_MID_CALL, tool_ms=3000)

    async def go() -> None:
        async with ready(cfg) as live:
            (end, got), took = await ended("exits mid-call", live.call("work", {}))
            assert end is End.DIED
            assert took < 1.5  # well before its 3 s deadline
            text = mcp_tools.said(live, end, got).content
            assert text.startswith("MCP server 'crash' died during the call: ")
            assert "exited with status 3" in text
            assert "boom" in text
            # it was ready once: it restarts after the backoff
            assert live.state.phase in (Phase.BACKOFF, Phase.STARTING, Phase.READY)

    asyncio.run(go())


def test_a_twenty_megabyte_result_is_cut_to_the_tools_bound_and_said_quickly(tmp_path: Path) -> None:
    cfg = server(tmp_path, "huge", HUGE_RESULT, tool_ms=3000)

    async def go() -> None:
        async with ready(cfg) as live:
            tools = {t.name: t for t in mcp_tools.tools_of(live)[0]}
            (end, got), took = await ended("20 MB result", live.call("work", {}))
            assert end is End.RESULT
            assert isinstance(got, Answer) and len(got.text) == 20_000_000
            result = mcp_tools.said(live, end, got)
            assert not result.is_error
            head, tail = result.content[: mcp_tools.RESULT_MAX], result.content[mcp_tools.RESULT_MAX :]
            assert head == "x" * mcp_tools.RESULT_MAX
            assert tail == f"\n… [cut: {20_000_000 - mcp_tools.RESULT_MAX} more characters of the result]"
            assert took < 3.0 + SLACK  # its deadline did not end it: it came before
            # the same through the tool the model calls
            ran, took = await ended(
                "20 MB result, as the tool", tools["mcp__huge__work"].run({}, Context(tmp_path))
            )
            assert not ran.is_error
            assert ran.content.startswith("x" * mcp_tools.RESULT_MAX + "\n… [cut: ")
            assert len(ran.content) < mcp_tools.RESULT_MAX + 100
            assert took < 3.0 + SLACK

    asyncio.run(go())


# ------------------------------------------------------------------------------ deaths and the close


def test_a_ready_server_that_dies_idle_restarts_after_the_backoff(tmp_path: Path) -> None:
    cfg = server(tmp_path, "flaky", DIES_ONCE, startup_ms=3000, tool_ms=3000)
    shown: list[tuple[float, str]] = []

    async def go() -> None:
        s = Servers([cfg], os.environ, None, show=lambda kind, text: shown.append((time.monotonic(), text)))
        live = s.live[0]
        s.start()
        try:
            await until_phase(live, Phase.BACKOFF, 10)
            assert "exited with status 0" in live.state.cause
            assert "going away" in live.state.cause
            assert live.state.due - live.state.now == model.BACKOFF_MS[0]
            await ended("dies idle, restarts", until_phase(live, Phase.READY, 10))
            texts = [t for _, t in shown]
            assert texts == [
                "flaky: starting, 0 tools",
                "flaky: ready, 1 tools",
                f"flaky: restarting after: {live._all[0]._cause('')}",
                "flaky: starting, 1 tools",
                "flaky: ready, 1 tools",
            ]
            backoff, restart = shown[2][0], shown[3][0]
            assert model.BACKOFF_MS[0] / 1000 - 0.05 <= restart - backoff < model.BACKOFF_MS[0] / 1000 + SLACK
            assert len(live._all) == 2 and live.gen == 2
            end, got = await live.call("work", {})  # the restarted server answers
            assert end is End.RESULT and isinstance(got, Answer) and got.text == "alive"
        finally:
            await s.aclose()
        assert_no_process_left(live)

    asyncio.run(go())


def test_a_server_that_ignores_sigterm_and_stdin_is_killed_with_its_children_within_the_close_bound(
    tmp_path: Path,
) -> None:
    cfg = server(tmp_path, "stubborn", STUBBORN, startup_ms=3000)

    async def go() -> None:
        s = Servers([cfg], os.environ, None)
        live = s.live[0]
        s.start()
        await until_phase(live, Phase.READY, 10)
        child = int((tmp_path / "stubborn.log.child").read_text())
        assert not gone(child)
        _, took = await ended("ignores SIGTERM and stdin", s.aclose())
        assert took < model.CLOSE_MS / 1000 + 1.0
        assert took >= model.KILL_MS / 1000 - 0.05  # it took the SIGKILL
        assert live.state.phase is Phase.CLOSED
        assert_no_process_left(live)
        assert wait_gone(child), f"its child {child} still runs"

    asyncio.run(go())


def test_an_http_server_that_asks_for_oauth_fails_at_once_saying_so(tmp_path: Path) -> None:
    """OAuth is not spoken: a server that answers 401 fails its start at once, and the cause
    says what it asked and what to do (the SDK's own error keeps no status)."""

    class Refuses(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Bearer realm="mcp"')
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refuses)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_port}/mcp"
    cfg = ServerConfig("auth", "http", "", (), {}, None, url, {}, 3000, 3000, tmp_path / "s.json", True)

    async def go() -> None:
        s = Servers([cfg], os.environ, None)
        live = s.live[0]
        s.start()
        _, took = await ended("asks for OAuth", live.settled(time.monotonic() + 10))
        try:
            assert live.state.phase is Phase.FAILED
            assert "it answered HTTP 401: it asks for authorization (OAuth), which eukhe does not speak" in (
                live.state.cause
            )
            assert took < 3.0  # at once, not at its start deadline
        finally:
            await s.aclose()

    try:
        asyncio.run(go())
    finally:
        httpd.shutdown()


HOST = """
import asyncio, os, sys, time
from pathlib import PosixPath
from eukhe.mcp.config import ServerConfig
from eukhe.mcp.servers import Servers

async def main():
    cfg = ServerConfig(**eval(sys.argv[1]))
    s = Servers([cfg], os.environ, None)
    s.start()
    await s.live[0].settled(time.monotonic() + 10)
    print(s.live[0].conn.proc.pid, flush=True)
    await asyncio.sleep(120)

asyncio.run(main())
"""


def test_a_server_dies_with_eukhe_when_eukhe_is_killed_and_runs_no_close(tmp_path: Path) -> None:
    """`kill -9` of the process that started a server (no close runs) ends the server too,
    even one that ignores SIGTERM and a closed stdin: it dies with its parent."""
    cfg = server(tmp_path, "orphan", STUBBORN, startup_ms=5000)
    fields = {k: getattr(cfg, k) for k in cfg.__dataclass_fields__}
    fields["env"], fields["headers"] = dict(cfg.env), dict(cfg.headers)
    host = subprocess.Popen(
        [sys.executable, "-c", HOST, repr(fields)], stdout=subprocess.PIPE, text=True, cwd=tmp_path
    )
    try:
        assert host.stdout is not None
        pid = int(host.stdout.readline())
        assert not gone(pid)
        host.kill()
        host.wait(10)
        assert wait_gone(pid, within=5.0), f"server {pid} outlived its killed host"
    finally:
        host.kill()


def test_a_secret_a_server_was_given_never_reaches_the_model_or_a_cause(tmp_path: Path) -> None:
    """A server echoes the token it was configured with, in its result and on its stderr as it
    dies: the model's result and the death's cause hold it redacted."""
    token = "tok_" + "x9" * 12
    body = """
for msg in lines():
    m = msg.get("method")
    if m == "initialize":
        initialized(msg)
    elif m == "tools/list":
        answer(msg, TOOLS)
    elif m == "tools/call" and os.path.exists(LOG + ".once"):
        sys.stderr.write("dying with " + os.environ["API_TOKEN"] + "\\n")
        sys.stderr.flush()
        sys.exit(3)
    elif m == "tools/call":
        open(LOG + ".once", "w").close()
        text(msg, "your token is " + os.environ["API_TOKEN"])
"""
    cfg = dataclasses.replace(server(tmp_path, "echo", body, tool_ms=3000), env={"API_TOKEN": token})

    async def go() -> None:
        async with ready(cfg) as live:
            end, got = await live.call("work", {})
            said = mcp_tools.said(live, end, got).content
            assert end is End.RESULT and said == "your token is [redacted]"
            end, got = await live.call("work", {})
            said = mcp_tools.said(live, end, got).content
            assert end is End.DIED and "dying with [redacted]" in said and token not in said

    asyncio.run(go())
