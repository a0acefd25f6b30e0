"""`eukhe mcp add` and `eukhe mcp remove`: they edit the home's settings.json at once,
keep every other key in its order, refuse what would be lost or is not there, and
never touch a file they cannot read."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from eukhe.cli.main import main
from eukhe.mcp.config import servers

OTHERS = {"model": "openai/gpt-4.1", "retry": {"maxRetries": 2}, "mine": [1, {"b": 2}], "zeta": "last"}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("EUKHE_HOME", str(h))
    monkeypatch.chdir(tmp_path)
    return h


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(["mcp", *args])
    out = capsys.readouterr()
    return int(done.value.code or 0), out.out, out.err


def settings(home: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((home / "settings.json").read_text())
    return data


def test_add_stdio_then_remove_keeps_every_other_key_in_its_order(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = home / "settings.json"
    f.write_text(json.dumps(OTHERS))
    got = run(
        capsys,
        "add",
        "files",
        "--env",
        "ROOT=/src",
        "-e",
        "TOKEN=${FS_TOKEN}",
        "--",
        "npx",
        "-y",
        "srv",
        "a b",
    )
    assert got == (0, f"added the stdio server files (npx -y srv 'a b') to {f}\n", "")
    data = settings(home)
    assert list(data) == [*OTHERS, "mcpServers"]
    assert {k: data[k] for k in OTHERS} == OTHERS
    assert data["mcpServers"] == {
        "files": {
            "command": "npx",
            "args": ["-y", "srv", "a b"],
            "env": {"ROOT": "/src", "TOKEN": "${FS_TOKEN}"},
        }
    }
    assert f.stat().st_mode & 0o777 == 0o600
    assert run(capsys, "remove", "files") == (0, f"removed the server files from {f}\n", "")
    assert settings(home) == {**OTHERS, "mcpServers": {}}
    assert list(settings(home)) == [*OTHERS, "mcpServers"]


def test_add_http_with_headers_and_what_the_config_reads(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = home / "settings.json"
    got = run(
        capsys,
        "add",
        "docs",
        "--url",
        "https://h/mcp",
        "--header",
        "Authorization: Bearer ${T}",
        "-H",
        "X-A:b",
    )
    assert got == (0, f"added the http server docs (https://h/mcp) to {f}\n", "")
    assert settings(home) == {
        "mcpServers": {
            "docs": {
                "type": "http",
                "url": "https://h/mcp",
                "headers": {"Authorization": "Bearer ${T}", "X-A": "b"},
            }
        }
    }
    [docs], said = servers(tmp_path, {"EUKHE_HOME": str(home), "T": "t0k"})
    assert (docs.transport, docs.headers["Authorization"], docs.from_home, said) == (
        "http",
        "Bearer t0k",
        True,
        (),
    )


def test_add_cwd_is_made_absolute(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "add", "s", "--cwd", "sub", "--", "x")[0] == 0
    assert settings(home)["mcpServers"] == {"s": {"command": "x", "cwd": str(tmp_path / "sub")}}


def test_adding_a_name_already_there_is_refused_unless_forced(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = home / "settings.json"
    assert run(capsys, "add", "s", "--", "old")[0] == 0
    before = f.read_bytes()
    assert run(capsys, "add", "s", "--", "new") == (
        1,
        "",
        f"eukhe mcp add: a server s is already in {f}; --force replaces it\n",
    )
    assert f.read_bytes() == before
    assert run(capsys, "add", "s", "--force", "--url", "https://h") == (
        0,
        f"replaced the http server s (https://h) in {f}\n",
        "",
    )
    assert settings(home)["mcpServers"] == {"s": {"type": "http", "url": "https://h"}}


def test_removing_an_unknown_name_names_the_servers_there(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = home / "settings.json"
    assert run(capsys, "remove", "x") == (
        1,
        "",
        f"eukhe mcp remove: no server x in {f}; the servers there: none\n",
    )
    assert not f.exists()
    run(capsys, "add", "a", "--", "x")
    run(capsys, "add", "b", "--url", "http://h")
    before = f.read_bytes()
    assert run(capsys, "remove", "c") == (
        1,
        "",
        f"eukhe mcp remove: no server c in {f}; the servers there: a, b\n",
    )
    assert f.read_bytes() == before


def test_a_malformed_settings_file_is_an_error_and_left_untouched(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = home / "settings.json"
    for text in ('{"model": "a/b",', '{"mcpServers": []}', '{"retry": {"maxRetries": "3"}}'):
        f.write_text(text)
        for args in (("add", "s", "--", "x"), ("remove", "s")):
            code, out, err = run(capsys, *args)
            assert (code, out) == (2, ""), err
            assert err.startswith(f"eukhe mcp {args[0]}: ") and str(f) in err
            assert f.read_text() == text
    assert [p.name for p in home.iterdir()] == ["settings.json"]  # no temporary file left


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            ("s",),
            "give the server's command after -- (eukhe mcp add NAME -- COMMAND ARGS...) or its --url URL",
        ),
        (
            ("s", "--url", "https://h", "--", "x"),
            "give the server's command (after --) or its --url, not both",
        ),
        (("s", "--env", "NOEQUALS", "--", "x"), "--env 'NOEQUALS': expected KEY=VALUE"),
        (("s", "--url", "https://h", "-H", "nocolon"), "--header 'nocolon': expected 'Name: value'"),
        (
            ("s", "--url", "https://h", "--env", "A=1"),
            "--env and --cwd are a stdio server's; an http server (--url) takes --header",
        ),
        (("s", "-H", "A: b", "--", "x"), "--header is an http server's (--url); a stdio server takes --env"),
        (("my server", "--", "x"), "server name 'my server': use letters, digits, '-' or '_'"),
    ],
)
def test_what_cannot_be_added_is_said_and_nothing_is_written(
    home: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], error: str
) -> None:
    assert run(capsys, "add", *args) == (2, "", f"eukhe mcp add: {error}\n")
    assert not (home / "settings.json").exists()


def test_a_url_that_is_not_http_is_refused_as_the_config_would(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = home / "settings.json"
    assert run(capsys, "add", "s", "--url", "ftp://h") == (
        2,
        "",
        f"eukhe mcp add: setting mcpServers.s.url='ftp://h' in {f}: expected an http:// or https:// URL\n",
    )
    assert not f.exists()


def test_a_name_another_server_already_goes_by_is_refused(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = home / "settings.json"
    f.write_text(json.dumps({"mcpServers": {"a.b": {"command": "x"}}}))
    assert run(capsys, "add", "a_b", "--force", "--", "y") == (
        1,
        "",
        f"eukhe mcp add: the server 'a.b' in {f} already goes by the name 'a_b'\n",
    )


def test_a_linked_settings_file_is_written_where_it_points(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real = tmp_path / "dotfiles" / "eukhe.json"
    real.parent.mkdir()
    real.write_text(json.dumps(OTHERS))
    (home / "settings.json").symlink_to(real)
    assert run(capsys, "add", "s", "--", "x")[0] == 0
    assert (home / "settings.json").is_symlink()
    assert json.loads(real.read_text()) == {**OTHERS, "mcpServers": {"s": {"command": "x"}}}


def test_a_missing_home_is_made_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    h = tmp_path / "new-home"
    monkeypatch.setenv("EUKHE_HOME", str(h))
    assert run(capsys, "add", "s", "--", "x")[0] == 0
    assert os.stat(h).st_mode & 0o777 == 0o700
    assert json.loads((h / "settings.json").read_text()) == {"mcpServers": {"s": {"command": "x"}}}
