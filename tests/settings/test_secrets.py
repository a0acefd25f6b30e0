"""The secrets rules (`settings.secrets`): which variables the tools never get, which
settings values are masked, which values the process knows as secret, and how they are
taken out of texts (streamed ones, and JSON's spellings, included); and a run's secrets as
`run.secrets` makes them from its settings, its environment and its MCP servers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eukhe.ai.models import key_variables
from eukhe.run.secrets import redaction, secrets
from eukhe.settings.secrets import (
    MASK,
    REDACTED,
    Redaction,
    held,
    key_values,
    masked,
    masked_leaf,
    redact,
    secret_setting,
    secret_values,
    secret_variable,
    tool_environment,
)


def test_secret_variables_by_their_names_case_insensitively() -> None:
    for name in ("OPENAI_API_KEY", "aws_secret_access_key", "GITHUB_TOKEN", "My_Password", "GCP_CREDENTIALS"):
        assert secret_variable(name), name
    for name in ("PATH", "HOME", "LANG", "EUKHE_HOME", "PWD"):
        assert not secret_variable(name), name
    assert secret_variable("LAB_ACCESS", hidden={"LAB_ACCESS"})  # a provider's apiKeyEnv, whatever its name


def test_the_tools_environment_drops_secrets_but_those_kept() -> None:
    env = {"PATH": "/bin", "GITHUB_TOKEN": "g", "DEPLOY_TOKEN": "d", "LAB_ACCESS": "l", "MY_PASSWORD": "p"}
    got = tool_environment(env, keep=["DEPLOY_*", "MY_PASSWORD"], hidden={"LAB_ACCESS"})
    assert got == {"PATH": "/bin", "DEPLOY_TOKEN": "d", "MY_PASSWORD": "p"}
    assert tool_environment(env, keep=["deploy_*"]) == {"PATH": "/bin", "LAB_ACCESS": "l"}  # names as written


def test_key_values_are_the_long_ones_longest_first() -> None:
    env = {"A": "short", "B": "sk-0123456789", "C": "sk-0123456789-and-more", "D": ""}
    assert key_values(env, {"A", "B", "C", "D", "MISSING"}) == ("sk-0123456789-and-more", "sk-0123456789")


def test_redact_takes_every_key_out_in_one_pass() -> None:
    keys = ("sk-0123456789-and-more", "sk-0123456789")
    text = "a sk-0123456789-and-more b sk-0123456789 c"
    assert redact(text, keys) == f"a {REDACTED} b {REDACTED} c"
    assert redact("[redacted]", ("redacted",)) == f"[{REDACTED}]"  # never matched again
    assert redact(text, ()) == text


def test_a_key_split_across_stream_pieces_is_taken_out_whole() -> None:
    key = "sk-abcdXXabcd-0123"  # split across three pieces
    r = Redaction((key,))
    shown, rest = [], ""
    for piece in ("The key is sk-ab", "cdXXab", "cd-0123, abc", "d."):
        ready, rest = r.stream(rest + piece)
        shown.append(ready)
    shown.append(rest)
    assert "".join(shown) == f"The key is {REDACTED}, abcd."
    assert key not in "".join(shown) and all("sk-ab" not in s for s in shown[1:])
    assert held("text sk-ab", (key,)) == 5 and held("text", (key,)) == 0


def test_settings_values_under_secret_names_are_masked() -> None:
    for name in ("apiKey", "api_key", "API_KEY", "token", "accessToken", "password", "clientSecret"):
        assert secret_setting(name), name
    for name in ("apiKeyEnv", "maxOutputTokens", "keep", "baseUrl", "model"):
        assert not secret_setting(name), name
    tree = {
        "providers": {"corp": {"apiKey": "sk-1", "apiKeyEnv": "CORP_KEY"}},
        "token": None,
        "auth": {"password": 3},
    }
    assert masked(tree) == {
        "providers": {"corp": {"apiKey": MASK, "apiKeyEnv": "CORP_KEY"}},
        "token": None,
        "auth": {"password": MASK},
    }
    assert masked_leaf(("providers", "corp", "apiKey"), "sk-1") == MASK
    assert masked_leaf(("auth", "password", "old"), "x") == MASK  # under a secret key
    assert masked_leaf(("providers", "corp", "apiKeyEnv"), "CORP_KEY") == "CORP_KEY"


def test_a_runs_secrets_come_from_its_settings_and_the_environment() -> None:
    env = {
        "PATH": "/bin",
        "OPENAI_API_KEY": "sk-open-0123456789",
        "LAB_ACCESS": "lab-0123456789",
        "X_TOKEN": "x",
    }
    settings = {
        "providers": {"vllm": {"apiKeyEnv": "LAB_ACCESS"}},
        "shell": {"environment": {"keep": ["X_*"]}},
    }
    made = secrets(settings, env)
    assert made.env == {"PATH": "/bin", "X_TOKEN": "x"}
    assert made.redact("lab-0123456789 and sk-open-0123456789") == f"{REDACTED} and {REDACTED}"
    assert {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY", "LAB_ACCESS"} <= key_variables(
        settings["providers"]
    )


# ---------------------------------------------------------------- every secret value known (issue 40, item 5)


def test_every_secret_value_the_process_knows() -> None:
    """Secret-looking variables and the providers' key variables; the settings' values under a
    secret-looking key, and under `headers` and `env` with a secret-looking name, a bearer's
    token too; never a short value, a variable still named, or one the tools keep on purpose."""
    env = {
        "GITHUB_TOKEN": "ghp-0123456789",
        "LAB_ACCESS": "lab-0123456789",  # a provider's apiKeyEnv: secret by that alone
        "DEPLOY_TOKEN": "deploy-0123456789",  # kept for the tools: it comes back
        "MY_PASSWORD": "short",  # under MIN_KEY: it would cut words
        "PATH": "/usr/local/bin:/usr/bin",
    }
    settings = {
        "providers": {
            "corp": {"apiKey": "sk-corp-0123456789", "headers": {"Authorization": "Bearer tok-0123456789"}},
            "lab": {"headers": {"X-Api-Key": "xkey-0123456789", "X-Trace": "trace-not-secret"}},
        },
        "mcpServers": {
            "vault": {
                "command": "vault-mcp",
                "env": {"VAULT_TOKEN": "vault-0123456789", "LOG": "verbose-log"},
            },
            "web": {"type": "http", "url": "http://x", "headers": {"Authorization": "${WEB_AUTH}"}},
        },
        "model": "openai/gpt-4.1",
    }
    got = secret_values(env, [settings], hidden={"LAB_ACCESS"}, keep=["DEPLOY_*"])
    assert set(got) == {
        "ghp-0123456789",
        "lab-0123456789",
        "sk-corp-0123456789",
        "Bearer tok-0123456789",
        "tok-0123456789",
        "xkey-0123456789",
        "vault-0123456789",
    }
    assert list(got) == sorted(got, key=lambda v: (-len(v), v))  # longest first
    # a provider's key is never given back, whatever keep says
    assert "lab-0123456789" in secret_values(env, (), hidden={"LAB_ACCESS"}, keep=["LAB_*"])


def test_a_value_is_taken_out_in_every_spelling_json_gives_it() -> None:
    """A value holding a quote, a backslash and a non-ASCII letter is spelled otherwise inside
    JSON (a call's raw arguments, a serialized body): every spelling is taken out."""
    value = 'sk-"quoted"\\back-é-0123'
    r = Redaction((value,))
    for text in (value, json.dumps(value), json.dumps(value, ensure_ascii=False), json.dumps({"a": [value]})):
        assert value not in r(text) and REDACTED in r(text), text
    raw = json.dumps({"command": f"echo {value}"})
    assert json.loads(r(raw)) == {"command": f"echo {REDACTED}"}  # still JSON
    tree = {"k": [value, (1, f"x{value}x")], value: None, "n": 3}
    assert r.deep(tree) == {"k": [REDACTED, (1, f"x{REDACTED}x")], REDACTED: None, "n": 3}
    assert Redaction().deep(tree) is tree  # nothing known: nothing walked


def test_a_runs_redaction_holds_its_mcp_servers_values_as_eukhe_starts_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An MCP server's env value comes from a variable whose name says nothing: as eukhe
    expands it for the server, it is known, and taken out."""
    home = tmp_path / "home"
    home.mkdir()
    servers = {"vault": {"command": "vault-mcp", "env": {"VAULT_TOKEN": "${PLAIN_NAME}"}}}
    (home / "settings.json").write_text(json.dumps({"mcpServers": servers}))
    env = {"EUKHE_HOME": str(home), "PLAIN_NAME": "vault-from-a-plain-variable"}
    monkeypatch.setenv("EUKHE_HOME", str(home))
    settings = {"mcpServers": servers}
    assert redaction(settings, env, cwd=tmp_path)("v=vault-from-a-plain-variable") == f"v={REDACTED}"
    assert redaction(settings, env)("v=vault-from-a-plain-variable") == "v=vault-from-a-plain-variable"
