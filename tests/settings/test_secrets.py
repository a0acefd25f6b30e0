"""The secrets rules (`settings.secrets`): which variables the tools never get, which
settings values are masked, and how known key values are taken out of texts, streamed
ones included; and a run's secrets as `run.secrets` makes them from its settings."""

from __future__ import annotations

from eukhe.ai.models import key_variables
from eukhe.run.secrets import secrets
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
