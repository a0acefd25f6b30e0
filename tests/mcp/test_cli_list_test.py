"""`eukhe mcp list` and `eukhe mcp test NAME`, as a user runs them: real servers started,
each one's state, tools and last error shown, then closed; a failure exits 1."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.proc import eukhe

TIME = Path(__file__).resolve().parents[2] / ".venv-mcp" / "bin" / "mcp-server-time"

pytestmark = pytest.mark.skipif(not TIME.exists(), reason="the reference servers: make mcpservers")


def test_list_shows_each_servers_state_tools_and_last_error(tmp_path: Path) -> None:
    assert eukhe("mcp", "add", "time", "--", str(TIME), cwd=tmp_path).returncode == 0
    assert (
        eukhe(
            "mcp", "add", "bad", "--", "/bin/sh", "-c", "echo no such thing >&2; exit 4", cwd=tmp_path
        ).returncode
        == 0
    )
    done = eukhe("mcp", "list", cwd=tmp_path)
    assert done.returncode == 1, done.stderr  # one server failed
    time_line, bad_line = done.stdout.splitlines()
    assert time_line.startswith("time  ready, 2 tools  (stdio: ")
    assert bad_line.startswith("bad  failed: exited with status 4; stderr: no such thing  (stdio: /bin/sh")


def test_test_times_the_start_and_the_close(tmp_path: Path) -> None:
    assert eukhe("mcp", "add", "time", "--", str(TIME), cwd=tmp_path).returncode == 0
    done = eukhe("mcp", "test", "time", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    started, closed = done.stdout.splitlines()
    assert re.fullmatch(
        r"time: started and listed 2 tools in [0-9.]+ s: get_current_time, convert_time", started
    )
    assert re.fullmatch(r"closed in [0-9.]+ s", closed)
    missing = eukhe("mcp", "test", "nope", cwd=tmp_path)
    assert (
        missing.returncode == 1
        and missing.stderr == "eukhe mcp test: no server nope here; the servers: time\n"
    )


def test_list_with_nothing_configured_says_how_to_add_one(tmp_path: Path) -> None:
    done = eukhe("mcp", "list", cwd=tmp_path)
    assert done.returncode == 0
    assert done.stdout.startswith(
        "no MCP servers are configured here: add one with `eukhe mcp add NAME -- COMMAND`"
    )
