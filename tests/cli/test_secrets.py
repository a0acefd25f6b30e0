"""Secrets stay out of tools, as attacks: a real `eukhe run` against the faux model, with
provider keys and other secrets in its environment, whose model asks the tools for them
(`env` in bash, `os.environ` and `bash('env')` in the kernel, a subagent's bash, `cat` of
a file holding a key, the key in its own answer). None comes back, in the transcript
(`eukhe session show --json`), in what the run shows, in what is sent to the model, or in
the outcome; a variable `shell.environment.keep` names comes back. A secret the user puts
in the prompt, or a project's instruction file quotes, reaches neither the model nor the
store. And `eukhe settings` masks an apiKey."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from eukhe.ai.faux import FauxServer, parse
from tests.proc import eukhe, messages, sessions
from tests.user_secrets import SECRETS

KEPT = {"DEPLOY_TOKEN": "deploy-token-kept-0123456789"}  # shell.environment.keep: ["DEPLOY_*"]
PLAIN = {"EUKHE_TEST_PLAIN": "plain-value-shown"}  # proves the environment was read at all
SETTINGS = {
    "providers": {
        "vllm": {"apiKeyEnv": "LAB_ACCESS"},
        "corp": {"api": "openai-chat", "baseUrl": "http://127.0.0.1:9/v1", "apiKeyEnv": "CORP_ACCESS"},
    },
    "shell": {"environment": {"keep": ["DEPLOY_*"]}},
}


def home_with(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps(SETTINGS))
    return home


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"calls": [{"name": name, "arguments": arguments}]}


def run(script: list[Any], tmp_path: Path, home: Path, prompt: str = "go") -> tuple[Any, list[Any]]:
    """`eukhe run --json` of `prompt` against `script`; the run and the requests the model got."""
    with FauxServer(parse(script)) as server:
        done = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "--json", prompt,
            cwd=tmp_path, home=home, extra={**SECRETS, **KEPT, **PLAIN},
        )  # fmt: skip
        sent = [r.body for r in server.seen]
    assert done.returncode == 0, done.stderr
    return done, sent


def tool_results(tmp_path: Path, home: Path) -> list[str]:
    [row] = sessions(tmp_path, home)
    return [str(m["content"]) for m in messages(row["id"], tmp_path, home) if m["role"] == "tool"]


def assert_no_secret(text: str) -> None:
    for name, value in SECRETS.items():
        assert name not in text, f"{name} reached the model: {text[:3000]}"
        assert value not in text, f"{name}'s value reached the model: {text[:3000]}"


def assert_env_read(text: str) -> None:
    assert PLAIN["EUKHE_TEST_PLAIN"] in text, text[:3000]  # the environment was read
    assert KEPT["DEPLOY_TOKEN"] in text, text[:3000]  # and the kept variable came back


def test_bash_env_gets_no_secret_but_the_kept_one(tmp_path: Path) -> None:
    home = home_with(tmp_path)
    done, sent = run([call("bash", command="env"), "done"], tmp_path, home)
    [result] = tool_results(tmp_path, home)
    assert "PATH=" in result
    assert_env_read(result)
    assert_no_secret(result)
    assert_no_secret(json.dumps(sent[1]["messages"]))  # what went back to the model
    assert_no_secret(done.stdout + done.stderr)  # what the run showed


def test_the_kernel_and_its_bash_get_no_secret_but_the_kept_one(tmp_path: Path) -> None:
    home = home_with(tmp_path)
    script = [
        call("ipython", code="import os; print(dict(os.environ))"),
        call("ipython", code="h = bash('env'); h.wait(20); print(h.output())"),
        "done",
    ]
    done, sent = run(script, tmp_path, home)
    environ, shell = tool_results(tmp_path, home)
    assert "'PATH'" in environ and "PATH=" in shell
    for result in (environ, shell):
        assert_env_read(result)
        assert_no_secret(result)
    assert_no_secret(json.dumps(sent[-1]["messages"]))
    assert_no_secret(done.stdout + done.stderr)


def test_a_subagents_tools_get_no_secret_but_the_kept_one(tmp_path: Path) -> None:
    home = home_with(tmp_path)
    script = [
        {"when": "dump the env", "results": 0, **call("bash", command="env > child.env")},
        {"when": "dump the env", "results": 1, "text": "dumped"},
        {"when": "[child-exited", "results": 0, "text": "my child dumped it"},
        {"when": "go", "results": 0, "calls": [{"name": "spawn", "arguments": {"task": "dump the env"}}]},
        {"when": "go", "results": 1, "text": "spawned"},
    ]
    run(script, tmp_path, home)
    dumped = (tmp_path / "child.env").read_text()
    assert "PATH=" in dumped
    assert_env_read(dumped)
    assert_no_secret(dumped)


def test_a_key_a_tool_echoes_or_the_model_repeats_is_redacted(tmp_path: Path) -> None:
    """The model reads a file holding two provider keys (the built-in openai one, and the
    one the settings' apiKeyEnv names) and repeats them in its answer, streamed in small
    pieces: each is `[redacted]` in the stored result, the request, the events and the answer."""
    home = home_with(tmp_path)
    keys = (SECRETS["OPENAI_API_KEY"], SECRETS["LAB_ACCESS"])
    (tmp_path / "key.txt").write_text(f"openai={keys[0]}\nlab={keys[1]}\n")
    answer = f"The keys are {keys[0]} and {keys[1]}."
    done, sent = run([call("bash", command="cat key.txt"), {"text": answer, "chunks": 9}], tmp_path, home)
    [result] = tool_results(tmp_path, home)
    assert result.startswith("openai=[redacted]\nlab=[redacted]\n"), result
    assert "openai=[redacted]" in json.dumps(sent[1]["messages"])
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["answer"] == "The keys are [redacted] and [redacted].", out
    [row] = sessions(tmp_path, home)
    stored = json.dumps(messages(row["id"], tmp_path, home))
    shown = done.stdout + done.stderr
    for text in (stored, shown, json.dumps(sent)):
        for key in keys:
            assert key not in text, text[:3000]
    assert "[redacted]" in shown


def test_another_providers_key_in_an_error_is_redacted(tmp_path: Path) -> None:
    """The server echoes a key of another provider of the settings, which the adapter in use
    does not know: the run's failure holds it `[redacted]` all the same."""
    home = home_with(tmp_path)
    body = {"error": {"message": f"the key {SECRETS['CORP_ACCESS']} is not valid here"}}
    with FauxServer(parse([{"error": {"status": 400, "body": body}}])) as server:
        done = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "--json", "go",
            cwd=tmp_path, home=home, extra=SECRETS,
        )  # fmt: skip
    assert done.returncode == 1, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert "the key [redacted] is not valid here" in out["error"]["message"], out
    assert SECRETS["CORP_ACCESS"] not in done.stdout + done.stderr


def test_eukhe_settings_masks_an_api_key(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    secret = "sk-settings-secret-0123456789"
    corp = {
        "api": "openai-chat",
        "baseUrl": "http://127.0.0.1:9/v1",
        "apiKeyEnv": "CORP_KEY",
        "apiKey": secret,
    }
    (home / "settings.json").write_text(json.dumps({"providers": {"corp": corp}}))
    text = eukhe("settings", cwd=tmp_path, home=home)
    as_json = eukhe("settings", "--json", cwd=tmp_path, home=home)
    assert text.returncode == 0 and as_json.returncode == 0, text.stderr + as_json.stderr
    assert secret not in text.stdout and secret not in as_json.stdout
    assert 'providers.corp.apiKey = "***"' in text.stdout, text.stdout
    assert 'providers.corp.apiKeyEnv = "CORP_KEY"' in text.stdout  # a variable's name is no secret
    shown = json.loads(as_json.stdout)["settings"]["providers"]["corp"]
    assert shown["apiKey"] == "***" and shown["apiKeyEnv"] == "CORP_KEY"


def store_text(home: Path) -> str:
    """Every row of every table of the home's store, as text."""
    db = sqlite3.connect(home / "eukhe.sqlite")
    try:
        tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return "\n".join(str(row) for t in tables for row in db.execute(f'SELECT * FROM "{t}"'))
    finally:
        db.close()


def test_a_secret_in_the_prompt_or_an_instruction_file_reaches_neither_the_model_nor_the_store(
    tmp_path: Path,
) -> None:
    """The user pastes a token into the prompt; the project's AGENTS.md quotes another: the
    request the model gets, the run's input and steps in the store and the transcript hold
    them redacted (the prompt reached all three, as written, on the code before)."""
    home = home_with(tmp_path)
    (tmp_path / "AGENTS.md").write_text(f"Deploy with the key {SECRETS['AWS_SECRET_ACCESS_KEY']}.\n")
    prompt = f"push with {SECRETS['GITHUB_TOKEN']} please"
    done, sent = run(["done"], tmp_path, home, prompt=prompt)
    [row] = sessions(tmp_path, home)
    places = {
        "the model": json.dumps(sent),
        "the store": store_text(home),
        "the transcript": json.dumps(messages(row["id"], tmp_path, home)),
        "what the run showed": done.stdout + done.stderr,
    }
    assert "Deploy with the key [redacted]" in places["the model"]  # the file was read, and redacted
    assert "push with [redacted] please" in places["the transcript"]
    for where, text in places.items():
        for name in ("GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY"):
            assert SECRETS[name] not in text, f"{name}'s value reached {where}"
