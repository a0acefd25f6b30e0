"""`eukhe mcp list` and `eukhe mcp test NAME`, as a user runs them: real servers started,
each one's state, tools and last error shown, then closed; a failure exits 1."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from eukhe.ui import commands
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


def test_the_agents_mcp_command_shows_the_same_and_tries_one_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EUKHE_HOME", str(tmp_path / "home"))
    assert eukhe("mcp", "add", "time", "--", str(TIME), cwd=tmp_path, home=tmp_path / "home").returncode == 0
    s = SimpleNamespace(cwd=tmp_path)
    cmd, arg = commands.command_of("/mcp", s)  # type: ignore[arg-type]
    assert cmd is commands.COMMANDS["mcp"] and arg == ""
    [line] = asyncio.run(cmd.run(s, ""))  # type: ignore[arg-type]
    assert line.startswith("time  ready, 2 tools  (stdio: ")
    started, closed = asyncio.run(cmd.run(s, "reconnect time"))  # type: ignore[arg-type]
    assert started.startswith("time: started and listed 2 tools in ") and closed.startswith("closed in ")
    with pytest.raises(commands.CommandError, match=r"^/mcp: no server nope here; the servers: time$"):
        asyncio.run(cmd.run(s, "reconnect nope"))  # type: ignore[arg-type]


def test_list_never_shows_a_secret_a_server_was_given(tmp_path: Path) -> None:
    """The attack on the screen: a `${GITHUB_TOKEN}` in a server's arguments is expanded when
    it starts, and a server may echo it to its stderr; `eukhe mcp list` prints neither."""
    token = "ghp_" + "s3cr3t" * 6
    leak = ["/bin/sh", "-c", 'echo "bad token $1" >&2; exit 4', "sh", "${GITHUB_TOKEN}"]
    assert eukhe("mcp", "add", "gh", "--", *leak, cwd=tmp_path).returncode == 0
    done = eukhe("mcp", "list", cwd=tmp_path, extra={"GITHUB_TOKEN": token})
    assert done.returncode == 1
    [line] = done.stdout.splitlines()
    assert token not in done.stdout + done.stderr
    assert line.startswith("gh  failed: exited with status 4; stderr: bad token [redacted]  (stdio: /bin/sh")


def test_a_server_that_closes_its_stdout_before_it_exits_is_shown_with_its_exit_status(
    tmp_path: Path,
) -> None:
    """The race CI once lost: the ended stream reached the session before the process's
    exit, and the cause said "Connection closed". The reader tells a stdio server's death,
    after its exit status."""
    late = ["/bin/sh", "-c", "echo gone >&2; exec 1>&-; sleep 0.3; exit 5"]
    assert eukhe("mcp", "add", "late", "--", *late, cwd=tmp_path).returncode == 0
    done = eukhe("mcp", "list", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    [line] = done.stdout.splitlines()
    assert line.startswith("late  failed: exited with status 5; stderr: gone  (stdio: /bin/sh"), line
