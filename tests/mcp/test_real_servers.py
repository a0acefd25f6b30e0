"""Real MCP servers, through `eukhe.mcp.servers`: the reference servers `mcp-server-time`
and `mcp-server-git` over stdio (installed apart, `make mcpservers`), and a streamable
HTTP server made with the SDK's own `MCPServer`. Each start and call ends as it should,
within its bound, and no server process is left running.

Each case prints `REAL <case>: ...` with the time it took (`pytest -s` shows them)."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from eukhe.mcp.config import ServerConfig
from eukhe.mcp.live import RunningServer
from eukhe.mcp.servers import Servers
from eukhe.rules import mcp as model
from eukhe.rules.mcp import End, Phase
from eukhe.tools.base import Context

BIN = Path(__file__).resolve().parents[2] / ".venv-mcp" / "bin"
TIME = BIN / "mcp-server-time"
GIT = BIN / "mcp-server-git"
SLACK = 2.0
"""Seconds past its bound an ending may take on a slow machine."""
STARTUP_MS = 30_000
TOOL_MS = 20_000


def need(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"{path.name} is not installed: make mcpservers")


def config(
    name: str, command: str = "", args: tuple[str, ...] = (), url: str = "", **kw: Any
) -> ServerConfig:
    return ServerConfig(
        name=name,
        transport="http" if url else "stdio",
        command=command,
        args=args,
        env={},
        cwd=None,
        url=url,
        headers={},
        startup_ms=kw.get("startup_ms", STARTUP_MS),
        tool_ms=kw.get("tool_ms", TOOL_MS),
        source=Path("/nonexistent/settings.json"),
        from_home=True,
    )


def gone(pid: int, within: float = 2.0) -> bool:
    """The process has ended (no such process, or a zombie) within `within` seconds."""
    until = time.monotonic() + within
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return True
            state = "?"
        if state in ("Z", "X"):
            return True
        if time.monotonic() >= until:
            return False
        time.sleep(0.02)


def assert_no_process_left(live: RunningServer) -> None:
    pids = [c.proc.pid for c in live._all if c.proc is not None]
    assert pids, "the server never ran"
    for pid in pids:
        assert gone(pid), f"server process {pid} still runs"


async def ready(live: RunningServer, within: float) -> float:
    """Seconds until the server is READY (asserted, within `within`)."""
    t = time.monotonic()
    await live.settled(t + within)
    assert live.state.phase is Phase.READY, live.state.cause
    return time.monotonic() - t


async def closed(servers: Servers) -> float:
    t = time.monotonic()
    await servers.aclose()
    took = time.monotonic() - t
    assert took < model.CLOSE_MS / 1000 + 1.0
    for live in servers.live:
        assert live.state.phase is Phase.CLOSED
    return took


# ------------------------------------------------------------------------------ mcp-server-time


def test_the_time_server_starts_and_tells_the_time_in_utc(tmp_path: Path) -> None:
    need(TIME)
    cfg = config("time", str(TIME))

    async def go() -> None:
        s = Servers([cfg], os.environ, tmp_path / "cache")
        live = s.live[0]
        s.start()
        try:
            took = await ready(live, STARTUP_MS / 1000)
            print(f"REAL time: started in {took:.2f} s")
            assert took < STARTUP_MS / 1000 + SLACK
            tools, notices, _ = await s.offered(model.GATE_MS)
            assert notices == []
            assert "mcp__time__get_current_time" in tools
            t = time.monotonic()
            result = await tools["mcp__time__get_current_time"].run(
                {"timezone": "UTC"}, Context(cwd=tmp_path)
            )
            called = time.monotonic() - t
            print(f"REAL time: get_current_time answered in {called:.2f} s")
            assert not result.is_error, result.content
            assert "UTC" in result.content
            assert called < TOOL_MS / 1000 + SLACK
            assert (tmp_path / "cache" / "time.json").exists()
        finally:
            print(f"REAL time: closed in {await closed(s):.2f} s")
        assert_no_process_left(live)

    asyncio.run(go())


# ------------------------------------------------------------------------------ mcp-server-git


def repository(path: Path) -> Path:
    path.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    for args in (["init", "-q", "-b", "trunk"], ["add", "a.txt"], ["commit", "-q", "-m", "one"]):
        if args[0] == "add":
            (path / "a.txt").write_text("a\n")
        subprocess.run(["git", *args], cwd=path, env=env, check=True)
    return path


def test_the_git_server_tells_the_status_and_a_second_start_offers_its_tools_from_the_cache_at_once(
    tmp_path: Path,
) -> None:
    need(GIT)
    repo = repository(tmp_path / "repo")
    cache = tmp_path / "cache"
    cfg = config("git", str(GIT), ("--repository", str(repo)))
    status = "mcp__git__git_status"

    async def first() -> None:
        s = Servers([cfg], os.environ, cache)
        live = s.live[0]
        s.start()
        try:
            took = await ready(live, STARTUP_MS / 1000)
            print(f"REAL git: started in {took:.2f} s")
            tools, notices, _ = await s.offered(model.GATE_MS)
            assert notices == []
            assert status in tools
            result = await tools[status].run({"repo_path": str(repo)}, Context(cwd=tmp_path))
            assert not result.is_error, result.content
            assert "On branch trunk" in result.content
            assert (cache / "git.json").exists()
        finally:
            print(f"REAL git: closed in {await closed(s):.2f} s")
        assert_no_process_left(live)

    async def second() -> None:
        s = Servers([cfg], os.environ, cache)
        live = s.live[0]
        s.start()
        try:
            t = time.monotonic()
            tools, notices, _ = await s.offered(0)
            offered_in = time.monotonic() - t
            print(f"REAL git: offered from the cache in {offered_in:.3f} s")
            assert offered_in < 0.1
            assert live.state.phase is Phase.STARTING  # still starting: the tools are the cache's
            assert status in tools and notices == []
            t = time.monotonic()
            end, got = await live.call("git_status", {"repo_path": str(repo)})
            called = time.monotonic() - t
            print(f"REAL git: a call made while it started answered in {called:.2f} s")
            assert end is End.RESULT, got
            assert "On branch trunk" in got.text
            assert called < TOOL_MS / 1000 + SLACK
            assert live.state.phase is Phase.READY
        finally:
            print(f"REAL git: the second closed in {await closed(s):.2f} s")
        assert_no_process_left(live)

    asyncio.run(first())
    asyncio.run(second())


# ------------------------------------------------------------------------------ streamable HTTP

ADDER = """
import sys

from mcp.server.mcpserver import MCPServer

app = MCPServer("adder")


@app.tool()
def add(a: int, b: int) -> int:
    "The sum of a and b."
    return a + b


app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def listening(port: int, proc: subprocess.Popen[bytes], within: float) -> None:
    until = time.monotonic() + within
    while time.monotonic() < until:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"the HTTP server did not listen on {port} within {within} s")


def test_a_streamable_http_server_made_with_the_sdk_adds(tmp_path: Path) -> None:
    script = tmp_path / "adder.py"
    script.write_text(ADDER)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(script), str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    cfg = config("adder", url=f"http://127.0.0.1:{port}/mcp")

    async def go() -> None:
        s = Servers([cfg], os.environ, tmp_path / "cache")
        live = s.live[0]
        s.start()
        try:
            took = await ready(live, STARTUP_MS / 1000)
            print(f"REAL http: started in {took:.2f} s")
            tools, notices, _ = await s.offered(model.GATE_MS)
            assert notices == []
            t = time.monotonic()
            result = await tools["mcp__adder__add"].run({"a": 2, "b": 40}, Context(cwd=tmp_path))
            called = time.monotonic() - t
            print(f"REAL http: add answered in {called:.2f} s")
            assert not result.is_error, result.content
            assert result.content.strip() == "42"
            assert called < TOOL_MS / 1000 + SLACK
        finally:
            print(f"REAL http: closed in {await closed(s):.2f} s")
        assert all(c.proc is None for c in live._all)  # nothing of ours ran: the server is its own

    try:
        listening(port, proc, 30)
        asyncio.run(go())
    finally:
        os.killpg(proc.pid, 9)
        proc.wait(5)
        if proc.stderr:
            proc.stderr.close()
    assert gone(proc.pid)
