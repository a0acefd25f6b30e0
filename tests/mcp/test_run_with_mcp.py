"""A whole `eukhe run` with a real MCP server (`mcp-server-time`, from PyPI), driven by the
faux model: its tools are offered as `mcp__time__*`, a call reaches the server and its
answer the model; the next run offers them from the home's cache at once; a project's
server is not believed when it says it only reads, so headless its call is denied."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from eukhe.ai.faux import FauxServer, parse
from eukhe.ids import is_root
from eukhe.settings.trust import record
from tests.proc import eukhe

SERVERS = Path(__file__).resolve().parents[2] / ".venv-mcp" / "bin"
TIME = SERVERS / "mcp-server-time"
NOW = "mcp__time__get_current_time"

pytestmark = pytest.mark.skipif(not TIME.exists(), reason="the reference servers: make mcpservers")


def script() -> list[dict[str, Any]]:
    call = {"name": NOW, "arguments": {"timezone": "UTC"}}
    return [{"results": 0, "calls": [call]}, {"results": 1, "text": "it is late"}]


def home_with(tmp_path: Path, settings: dict[str, Any]) -> Path:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "settings.json").write_text(json.dumps(settings))
    return home


def run(tmp_path: Path, home: Path, cwd: Path | None = None) -> tuple[Any, list[dict[str, Any]]]:
    with FauxServer(parse(script())) as server:
        args = ["run", "--model", "vllm/m", "--base-url", server.url, "--events", "what time is it"]
        done = eukhe(*args, cwd=cwd or tmp_path, home=home)
        bodies = [s.body for s in server.seen]
    return done, bodies


def tool_result(bodies: list[dict[str, Any]]) -> str:
    [result] = [m["content"] for m in bodies[-1]["messages"] if m["role"] == "tool"]
    return str(result)


def first_user(body: dict[str, Any]) -> str:
    return str(next(m["content"] for m in body["messages"] if m["role"] == "user"))


def offered(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


def test_a_run_calls_a_real_servers_tool_and_the_next_run_offers_it_from_the_cache(tmp_path: Path) -> None:
    servers = {"time": {"command": str(TIME)}}
    slow_gate = {"mcpServers": servers, "mcp": {"startupGateMs": 30_000}}
    home = home_with(tmp_path, slow_gate)
    done, bodies = run(tmp_path, home)
    assert done.returncode == 0, done.stderr
    assert NOW in offered(bodies[0])
    text = tool_result(bodies)
    assert '"timezone": "UTC"' in text and "datetime" in text, text
    events = [json.loads(line) for line in done.stdout.splitlines()]
    states = [e["text"] for e in events if e["type"] in ("mcp", "mcp_state")]
    assert "time: ready, 2 tools" in states and states[-1] == "time: closed, 2 tools", states
    assert (home / "mcp" / "time.json").exists()
    # the next run waits for no gate: the tools come from the cache, the call waits for the server
    home_with(tmp_path, {"mcpServers": servers, "mcp": {"startupGateMs": 0}})
    done, bodies = run(tmp_path, home)
    assert done.returncode == 0, done.stderr
    assert NOW in offered(bodies[0])
    assert '"timezone": "UTC"' in tool_result(bodies)


def test_a_project_servers_read_only_hint_is_not_believed(tmp_path: Path) -> None:
    """The same server from a trusted project's `.mcp.json`: it says its tools only read, but
    only the home's servers are believed, so a headless call is denied, saying why."""
    home = home_with(tmp_path, {"mcp": {"startupGateMs": 30_000}})
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"time": {"command": str(TIME)}}}))
    record(home, repo, True)
    done, bodies = run(tmp_path, home, cwd=repo)
    assert done.returncode == 0, done.stderr
    assert NOW in offered(bodies[0])
    text = tool_result(bodies)
    assert "permissions.allow (mcp__time__get_current_time, or mcp__time for all" in text, text
    assert "datetime" not in text


def test_an_untrusted_projects_server_never_starts(tmp_path: Path) -> None:
    """A cloned repository's `.mcp.json` in a folder never trusted: nothing of it runs."""
    home = home_with(tmp_path, {})
    repo = tmp_path / "repo"
    repo.mkdir()
    marker = tmp_path / "ran"
    hostile = {"command": "/bin/sh", "args": ["-c", f"touch {marker}"]}
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"evil": hostile}}))
    done, bodies = run(tmp_path, home, cwd=repo)
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    assert not [n for n in offered(bodies[0]) if n.startswith("mcp__")]


def test_a_subagent_shares_its_parents_servers(tmp_path: Path) -> None:
    """A child run calls the parent's MCP server: the same server process, started once,
    closed when the last of the two lets go."""
    servers = {"time": {"command": str(TIME)}}
    home = home_with(tmp_path, {"mcpServers": servers, "mcp": {"startupGateMs": 30_000}})
    now = {"calls": [{"name": NOW, "arguments": {"timezone": "UTC"}}]}
    spawn = {"calls": [{"name": "spawn", "arguments": {"task": "tell the time"}, "id": "s0"}]}
    script = [
        {"when": "tell the time", "results": 0, **now},
        {"when": "tell the time", "results": 1, "text": "the child told the time"},
        {"when": "[child-", "results": 0, "text": "my child told the time"},
        {"when": "go", "results": 0, **spawn},
        {"when": "go", "results": 1, "text": "spawned"},
    ]
    with FauxServer(parse(script)) as server:
        args = ["run", "--model", "vllm/m", "--base-url", server.url, "--events", "go"]
        done = eukhe(*args, cwd=tmp_path, home=home)
        child = [s.body for s in server.seen if "tell the time" in first_user(s.body)]
    assert done.returncode == 0, done.stderr
    assert child and NOW in offered(child[0])
    text = tool_result(child)
    assert '"timezone": "UTC"' in text, text
    events = [json.loads(line) for line in done.stdout.splitlines()]
    starts = [e["run"] for e in events if e["type"] == "mcp_state" and e["text"].startswith("time: starting")]
    assert starts and all(is_root(run) for run in starts), starts  # the child started none of its own
    assert any(not is_root(e["run"] or "") for e in events if e["type"] == "tool" and NOW in e["text"])
