"""The MCP servers in effect (`eukhe.mcp.config`): Claude Code's shape, the home's servers
and a trusted project's, precedence by name, variables, timeouts; a cloned repository
in a folder not trusted starts nothing, and says so."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from eukhe.mcp.config import ServerConfig, gate_ms, servers
from eukhe.rules.mcp import GATE_MS, STARTUP_MS, TOOL_MS
from eukhe.settings import SettingsError, loaded, trust

HOSTILE = {
    "evil": {"command": "sh", "args": ["-c", "touch pwned"]},
    "spy": {"type": "http", "url": "http://x"},
}


class Folders:
    def __init__(self, tmp_path: Path) -> None:
        self.home, self.repo = tmp_path / "home", tmp_path / "repo"
        self.home.mkdir()
        self.repo.mkdir()
        self.env: dict[str, str] = {"EUKHE_HOME": str(self.home)}

    @property
    def user_file(self) -> Path:
        return self.home / "settings.json"

    @property
    def claude(self) -> Path:
        return self.repo / ".mcp.json"

    @property
    def project(self) -> Path:
        return self.repo / ".eukhe" / "settings.json"

    def write(self, f: Path, data: dict[str, Any]) -> None:
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(json.dumps(data))

    def user(self, entries: dict[str, Any], **more: Any) -> None:
        self.write(self.user_file, {"mcpServers": entries, **more})

    def trust(self, yes: bool = True) -> None:
        trust.record(self.home, self.repo, yes)

    def servers(self, **env: str) -> tuple[tuple[ServerConfig, ...], tuple[str, ...]]:
        return servers(self.repo, {**self.env, **env})

    def refused(self, **env: str) -> str:
        """The one line that says why the one server configured is not started."""
        got, lines = self.servers(**env)
        assert got == ()
        [line] = lines
        return line

    def one(self, spec: Any, **env: str) -> ServerConfig:
        self.user({"s": spec})
        [got], _ = self.servers(**env)
        return got


@pytest.fixture
def at(tmp_path: Path) -> Folders:
    return Folders(tmp_path)


def held_line(f: Path, repo: Path, names: str) -> str:
    return (
        f"{f}: mcpServers is ignored: this folder is not trusted, and mcpServers starts the MCP servers it "
        f"names: their programs run on your machine, their URLs get what their headers send ({names}). "
        f"To apply it, run `eukhe trust {repo}` (see `eukhe trust --help`)"
    )


# ---------------------------------------------------------------- shapes


def test_a_home_stdio_server_with_every_default(at: Folders) -> None:
    got = at.one({"command": "npx", "args": ["-y", "pkg"], "env": {"A": "1"}})
    assert got == ServerConfig(
        "s",
        "stdio",
        "npx",
        ("-y", "pkg"),
        {"A": "1"},
        at.repo,
        "",
        {},
        STARTUP_MS,
        TOOL_MS,
        at.user_file,
        True,
    )


def test_no_servers_anywhere_is_none_and_says_nothing(at: Folders) -> None:
    assert at.servers() == ((), ())


@pytest.mark.parametrize("kind", ["http", "streamable-http", "streamableHttp"])
def test_each_name_of_streamable_http_is_http(at: Folders, kind: str) -> None:
    got = at.one({"type": kind, "url": "https://h/mcp", "headers": {"X-A": "b"}})
    assert (got.transport, got.url, got.headers, got.command, got.args, got.cwd) == (
        "http",
        "https://h/mcp",
        {"X-A": "b"},
        "",
        (),
        None,
    )


def test_type_stdio_may_be_said_and_cwd_is_the_projects_or_its_own(at: Folders) -> None:
    assert at.one({"type": "stdio", "command": "x", "cwd": "sub"}).cwd == at.repo / "sub"
    assert at.one({"command": "x", "cwd": "/opt/srv"}).cwd == Path("/opt/srv")
    assert at.one({"command": "x", "cwd": "~/srv"}).cwd == Path.home() / "srv"


def test_sse_is_refused_by_name(at: Folders) -> None:
    at.user({"old": {"type": "sse", "url": "https://h/sse"}, "new": {"command": "x"}})
    got, lines = at.servers()
    assert [s.name for s in got] == ["new"]  # one bad server never keeps the others from starting
    assert lines == (
        f"MCP server 'old' is not started: {at.user_file}: server old: type sse is not supported; "
        "use type http (streamable HTTP)",
    )


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        (
            {"command": "x", "args": "-y pkg"},
            "setting mcpServers.s.args='-y pkg' in {f}: expected a list of strings",
        ),
        (
            {"command": "x", "args": ["a", 1]},
            "setting mcpServers.s.args=['a', 1] in {f}: expected a list of strings",
        ),
        ({"args": ["a"]}, 'setting mcpServers.s in {f}: expected a "command" (a stdio server)'),
        (
            {"url": "https://h"},
            'setting mcpServers.s in {f}: expected a "command", or "type": "http" with this "url"',
        ),
        ({"command": ""}, "setting mcpServers.s.command='' in {f}: expected a non-empty string"),
        ({"command": ["npx"]}, "setting mcpServers.s.command=['npx'] in {f}: expected a non-empty string"),
        (
            {"type": "ws", "url": "x"},
            'setting mcpServers.s.type=\'ws\' in {f}: expected one of "stdio", "http", '
            '"streamable-http", "streamableHttp"',
        ),
        ({"type": "http"}, "setting mcpServers.s.url='' in {f}: expected a non-empty string"),
        (
            {"type": "http", "url": "ftp://h"},
            "setting mcpServers.s.url='ftp://h' in {f}: expected an http:// or https:// URL",
        ),
        (
            {"type": "http", "url": "https://h", "headers": ["Authorization: Bearer sekrit"]},
            "setting mcpServers.s.headers in {f}: expected an object of strings, got a list",
        ),
        (
            {"command": "x", "env": {"TOKEN": 12345678}},
            "setting mcpServers.s.env.TOKEN in {f}: expected a string, got a number",
        ),
        ({"command": "x", "cwd": 3}, "setting mcpServers.s.cwd=3 in {f}: expected a path (a string)"),
        (
            {"command": "x", "toolTimeoutMs": -1},
            "setting mcpServers.s.toolTimeoutMs=-1 in {f}: expected a whole "
            "number of milliseconds >= 0 (0: the settings' own)",
        ),
        ("npx pkg", "setting mcpServers.s='npx pkg' in {f}: expected an object"),
    ],
)
def test_a_malformed_entry_names_the_file_the_server_and_the_field(
    at: Folders, spec: Any, error: str
) -> None:
    at.user({"s": spec})
    assert at.refused() == "MCP server 's' is not started: " + error.format(f=at.user_file)


def test_a_secret_in_a_malformed_table_is_not_shown(at: Folders) -> None:
    at.user({"s": {"type": "http", "url": "https://h", "headers": ["Authorization: Bearer sekrit"]}})
    assert "sekrit" not in at.refused()


def test_mcp_servers_not_an_object_is_the_settings_check(at: Folders) -> None:
    at.write(at.user_file, {"mcpServers": ["a"]})
    with pytest.raises(SettingsError, match=r"^setting mcpServers=\['a'\] in .*: expected an object$"):
        at.servers()


def test_a_claude_file_that_is_not_json_is_an_error_naming_it(at: Folders) -> None:
    at.claude.write_text("{nope")
    with pytest.raises(SettingsError, match=f"^settings file {re.escape(str(at.claude))}, line 1 column 2"):
        at.servers()


def test_other_fields_are_ignored_as_claude_code_would(at: Folders) -> None:
    assert at.one({"command": "x", "description": "d", "disabled": False}).command == "x"


# ---------------------------------------------------------------- names


def test_a_name_becomes_letters_digits_dash_and_underscore(at: Folders) -> None:
    assert at.one({"command": "x"}).name == "s"
    at.user({"my.server v2": {"command": "x"}, "ok-name_1": {"command": "y"}})
    assert [s.name for s in at.servers()[0]] == ["my_server_v2", "ok-name_1"]


def test_two_names_that_become_one_are_refused_by_name(at: Folders) -> None:
    at.user({"a.b": {"command": "x"}, "a_b": {"command": "y"}})
    got, lines = at.servers()
    assert [s.command for s in got] == ["x"]
    assert lines == (
        f"MCP server 'a_b' is not started: MCP servers 'a.b' ({at.user_file}) and 'a_b' ({at.user_file}) "
        "both go by the name 'a_b' (each character but letters, digits, '-' and '_' becomes '_'); rename one",
    )


def test_an_empty_name_is_refused(at: Folders) -> None:
    at.user({"": {"command": "x"}})
    assert re.match(
        r"^MCP server '' is not started: setting mcpServers\.'' in .*: a server needs a name", at.refused()
    )


# ---------------------------------------------------------------- variables


def test_variables_expand_in_command_args_env_url_and_headers(at: Folders) -> None:
    got = at.one(
        {
            "command": "${BIN:-npx}",
            "args": ["--root", "${ROOT}", "$ROOT", "${MISSING:-}", "${EMPTY:-fallback}"],
            "env": {"TOKEN": "${TOKEN}", "MODE": "${MODE:-fast}"},
        },
        ROOT="/r",
        TOKEN="t0k",
        EMPTY="",
    )
    assert (got.command, got.args, got.env) == (
        "npx",
        ("--root", "/r", "$ROOT", "", "fallback"),
        {"TOKEN": "t0k", "MODE": "fast"},
    )
    got = at.one(
        {"type": "http", "url": "${BASE:-https://d}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
        TOKEN="t0k",
        BASE="https://b",
    )
    assert (got.url, got.headers) == ("https://b/mcp", {"Authorization": "Bearer t0k"})


def test_the_environment_is_the_callers_not_the_process(at: Folders, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ONLY_IN_PROCESS", "leak")
    assert at.one({"command": "x", "args": ["${ONLY_IN_PROCESS:-mine}"]}).args == ("mine",)


def test_an_unset_variable_without_a_default_names_the_server_the_field_and_the_variable(at: Folders) -> None:
    at.user({"gh": {"type": "http", "url": "https://h", "headers": {"Authorization": "Bearer ${GH_TOKEN}"}}})
    assert at.refused() == (
        "MCP server 'gh' is not started: "
        f"setting mcpServers.gh.headers.Authorization in {at.user_file}: the environment variable GH_TOKEN "
        "is not set (server gh names it as ${GH_TOKEN}); set it, or give a default: ${GH_TOKEN:-default}"
    )
    at.user({"gh": {"command": "x", "args": ["a", "${NOPE}"]}})
    assert re.match(
        r"^MCP server 'gh' is not started: setting mcpServers\.gh\.args\[1\] in .*variable NOPE ",
        at.refused(),
    )


def test_a_url_made_by_a_variable_must_still_be_http(at: Folders) -> None:
    at.user({"s": {"type": "http", "url": "${U}"}})
    assert re.match(
        r"^MCP server 's' is not started: setting mcpServers\.s\.url='file:///etc' in .*: expected an http",
        at.refused(U="file:///etc"),
    )


# ---------------------------------------------------------------- timeouts


def test_timeouts_the_environment_then_the_server_then_the_settings_then_the_default(at: Folders) -> None:
    at.user(
        {"own": {"command": "x", "startupTimeoutMs": 7, "toolTimeoutMs": 8}, "plain": {"command": "y"}},
        mcp={"startupTimeoutMs": 70, "toolTimeoutMs": 80, "startupGateMs": 9},
    )
    own, plain = at.servers()[0]
    assert (own.startup_ms, own.tool_ms, plain.startup_ms, plain.tool_ms) == (7, 8, 70, 80)
    own, plain = at.servers(EUKHE_MCP_STARTUP_TIMEOUT_MS="700", EUKHE_MCP_TOOL_TIMEOUT_MS="800")[0]
    assert (own.startup_ms, own.tool_ms, plain.startup_ms, plain.tool_ms) == (700, 800, 700, 800)
    at.user({"own": {"command": "x", "toolTimeoutMs": 0}})  # 0: passes to the next
    [own], _ = at.servers(EUKHE_MCP_STARTUP_TIMEOUT_MS="")
    assert (own.startup_ms, own.tool_ms) == (STARTUP_MS, TOOL_MS) == (10_000, 300_000)


def test_a_timeout_in_the_environment_must_be_a_whole_number(at: Folders) -> None:
    at.user({"s": {"command": "x"}})
    assert at.refused(EUKHE_MCP_TOOL_TIMEOUT_MS="5s") == (
        "MCP server 's' is not started: "
        "environment variable EUKHE_MCP_TOOL_TIMEOUT_MS='5s': expected a whole number of milliseconds >= 0"
    )


def test_a_timeout_setting_of_the_wrong_kind_is_the_settings_check(at: Folders) -> None:
    at.write(at.user_file, {"mcp": {"toolTimeoutMs": "long"}})
    with pytest.raises(
        SettingsError, match=r"^setting mcp\.toolTimeoutMs='long' in .*: expected a whole number"
    ):
        at.servers()


def test_the_gate(at: Folders) -> None:
    assert gate_ms({}) == GATE_MS == 500
    assert gate_ms({"mcp": {"startupGateMs": 0}}) == 0
    assert gate_ms(loaded(None, {**at.env}).values) == GATE_MS
    with pytest.raises(SettingsError):
        gate_ms({"mcp": {"startupGateMs": -1}})


# ---------------------------------------------------------------- trust and precedence


def test_a_hostile_mcp_json_in_a_folder_never_asked_starts_nothing_and_says_so(at: Folders) -> None:
    at.write(at.claude, {"mcpServers": HOSTILE})
    got, said = at.servers()
    assert got == ()
    assert said == (held_line(at.claude, at.repo, "evil, spy"),)


def test_a_hostile_mcp_json_in_a_refused_folder_starts_nothing(at: Folders) -> None:
    at.write(at.claude, {"mcpServers": HOSTILE})
    at.trust(False)
    got, said = at.servers()
    assert got == () and said == (held_line(at.claude, at.repo, "evil, spy"),)


def test_the_same_mcp_json_in_a_trusted_folder_is_taken(at: Folders) -> None:
    at.write(at.claude, {"mcpServers": HOSTILE})
    at.trust()
    got, said = at.servers()
    assert said == ()
    assert [(s.name, s.transport, s.source, s.from_home) for s in got] == [
        ("evil", "stdio", at.claude, False),
        ("spy", "http", at.claude, False),
    ]
    assert got[0].args == ("-c", "touch pwned")


def test_an_untrusted_projects_settings_cannot_start_a_server(at: Folders) -> None:
    """The attack: a repository's own `.eukhe/settings.json` names a server. In a folder
    not trusted it is held back by the settings as every key that runs code is, so
    neither the settings in effect nor the servers hold it, and the one notice names it."""
    at.write(at.project, {"mcpServers": HOSTILE, "mcp": {"toolTimeoutMs": 5}, "retry": {"maxRetries": 1}})
    settings = loaded(at.repo, at.env)
    assert "mcpServers" not in settings.values
    assert "mcp" not in settings.values  # a timeout too: a project could make each turn wait an hour
    line = held_line(at.project, at.repo, "evil, spy")
    assert line in settings.notices and len(settings.notices) == 2
    assert any("mcp.toolTimeoutMs" in n for n in settings.notices)
    got, said = at.servers()
    assert got == () and said == (line,)
    at.trust()
    got, said = at.servers()
    assert [(s.name, s.source, s.tool_ms) for s in got] == [("evil", at.project, 5), ("spy", at.project, 5)]
    assert said == ()


def test_both_project_files_held_back_each_say_so_and_the_homes_servers_still_run(at: Folders) -> None:
    at.user({"mine": {"command": "mine"}, "evil": {"command": "safe"}})
    at.write(at.claude, {"mcpServers": {"evil": {"command": "bad"}}})
    at.write(at.project, {"mcpServers": {"spy": {"type": "http", "url": "http://x"}}})
    got, said = at.servers()
    assert [(s.name, s.command, s.from_home) for s in got] == [("mine", "mine", True), ("evil", "safe", True)]
    assert said == (held_line(at.claude, at.repo, "evil"), held_line(at.project, at.repo, "spy"))


def test_a_trusted_project_over_its_mcp_json_over_the_home_each_entry_whole(at: Folders) -> None:
    at.user({"a": {"command": "home", "env": {"X": "1"}}, "b": {"command": "home"}, "c": {"command": "home"}})
    at.write(at.claude, {"mcpServers": {"a": {"command": "claude"}, "b": {"command": "claude"}}})
    at.write(at.project, {"mcpServers": {"a": {"command": "project"}, "d": {"command": "project"}}})
    at.trust()
    got, said = at.servers()
    assert said == ()
    assert [(s.name, s.command, s.env, s.source, s.from_home) for s in got] == [
        ("a", "project", {}, at.project, False),
        ("b", "claude", {}, at.claude, False),
        ("c", "home", {}, at.user_file, True),
        ("d", "project", {}, at.project, False),
    ]


def test_a_project_name_that_collides_with_a_home_name_is_refused(at: Folders) -> None:
    at.user({"a.b": {"command": "home"}})
    at.write(at.claude, {"mcpServers": {"a_b": {"command": "claude"}}})
    at.trust()
    got, [line] = at.servers()
    assert [s.command for s in got] == ["home"]
    assert re.match(
        r"^MCP server 'a_b' is not started: MCP servers 'a\.b' \(.*settings\.json\) and 'a_b' ", line
    )


def test_unreadable_trust_records_hold_the_project_back_and_say_why_once(at: Folders) -> None:
    at.write(at.claude, {"mcpServers": {"evil": {"command": "bad"}}})
    at.write(at.project, {"mcpServers": {"spy": {"command": "bad"}}})
    (at.home / "trust.json").write_text("{")
    got, said = at.servers()
    assert got == ()
    assert len(said) == 3
    assert said[0].startswith(f"trust records {at.home / 'trust.json'}: not what eukhe writes")
    assert said[0].endswith("; this folder is taken as untrusted")
    assert said[1:] == (held_line(at.claude, at.repo, "evil"), held_line(at.project, at.repo, "spy"))
