"""`--sandbox MODE` and `--approval POLICY` on `eukhe run` and on the interactive agent:
checked with a clear error, and carried into the run's spec beside the settings."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from eukhe.cli import main as cli
from eukhe.run.spec import RunSpec
from eukhe.ui import commands
from eukhe.ui.app import USAGE, parse
from eukhe.ui.session import Options
from tests.proc import eukhe

MODES = 'expected one of "read-only", "workspace-write", "danger-full-access"'
POLICIES = 'expected one of "never", "untrusted", "on-request"'


def test_run_refuses_a_mode_or_a_policy_it_does_not_know(tmp_path: Path) -> None:
    done = eukhe("run", "--model", "vllm/m", "--sandbox", "wide-open", "hello", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2,
        f"eukhe run: --sandbox 'wide-open' on the command line: {MODES}\n",
    )
    done = eukhe("run", "--model", "vllm/m", "--approval=sometimes", "hello", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2,
        f"eukhe run: --approval 'sometimes' on the command line: {POLICIES}\n",
    )


def test_the_agent_refuses_them_too_before_it_needs_a_terminal(tmp_path: Path) -> None:
    done = eukhe("--approval", "sometimes", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2,
        f"eukhe: --approval 'sometimes' on the command line: {POLICIES}\n{USAGE}\n",
    )
    assert parse(["--sandbox=read-only", "--approval", "never", "--model", "vllm/m"]) == Options(
        model="vllm/m", sandbox="read-only", approval="never"
    )
    assert parse(["--sandbox", "full"]) == f"eukhe: --sandbox 'full' on the command line: {MODES}\n{USAGE}"


def test_run_carries_the_flags_into_the_runs_spec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("EUKHE_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    specs: list[dict[str, Any]] = []

    def durable(settings: Any, printer: Any, spec: RunSpec, *rest: Any) -> int:
        specs.append(spec.json())  # as the workflow's input holds it; the run itself is not looked at
        return 0

    monkeypatch.setattr(cli, "_durable", durable)
    base = ["run", "--model", "vllm/m", "--base-url", "http://127.0.0.1:9/v1"]
    for argv in ([*base, "--sandbox", "danger-full-access", "--approval", "never", "go"], [*base, "go"]):
        with pytest.raises(SystemExit) as done:
            cli.main(argv)
        assert done.value.code == 0, capsys.readouterr().err
    assert [(s["sandbox"], s["approval"], s["prompt"]) for s in specs] == [
        ("danger-full-access", "never", "go"),
        (None, None, "go"),  # no flag: the settings' mode and policy
    ]


def test_run_refuses_settings_whose_permissions_cannot_be_read(tmp_path: Path) -> None:
    (tmp_path / ".eukhe").mkdir()
    f = tmp_path / ".eukhe" / "settings.json"
    f.write_text('{"permissions": {"deny": ["Bash(rm"]}}')
    done = eukhe("run", "--model", "vllm/m", "hello", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith(f"eukhe run: setting permissions.deny[0]='Bash(rm' in {f}: expected a rule")


def test_the_agents_permissions_command_shows_the_flags_over_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EUKHE_HOME", str(tmp_path / "home"))
    s = SimpleNamespace(cwd=tmp_path, options=Options(sandbox="read-only"))
    lines = asyncio.run(commands.COMMANDS["permissions"].run(s, ""))  # type: ignore[arg-type]
    assert lines[:2] == ["sandbox mode: read-only (command line)", "approval policy: on-request (default)"]
    (tmp_path / ".eukhe").mkdir()
    (tmp_path / ".eukhe" / "settings.json").write_text('{"permissions": {"askTimeoutMs": 0}}')
    with pytest.raises(commands.CommandError, match=r"^setting permissions\.askTimeoutMs=0 in "):
        asyncio.run(commands.COMMANDS["permissions"].run(s, ""))  # type: ignore[arg-type]
