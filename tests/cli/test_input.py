"""Bad input gets a clear error and loses nothing: settings files that are not regular
files, too deep or of the wrong shape are refused by `eukhe run` and `eukhe settings` in
the same words, never with a traceback or a hang; a prompt comes from its argument or
standard input, as UTF-8 text."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from eukhe.ai.faux import FauxServer, parse
from eukhe.cli.prompt import PROMPT_MAX, Prompt, PromptError, prompt_of
from tests.proc import env, eukhe


def project(tmp_path: Path) -> tuple[Path, Path, Path]:
    home, repo = tmp_path / "home", tmp_path / "repo"
    home.mkdir()
    (repo / ".eukhe").mkdir(parents=True)
    return home, repo, repo / ".eukhe" / "settings.json"


def run_and_settings(repo: Path, home: Path) -> list[subprocess.CompletedProcess[str]]:
    """`eukhe run` and `eukhe settings` in the folder, each bounded: a hang fails the test."""
    run = ("run", "--model", "vllm/m", "--base-url", "http://127.0.0.1:9/v1", "hello")
    return [eukhe(*args, cwd=repo, home=home, timeout=60) for args in (run, ("settings",))]


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (
            lambda f: os.mkfifo(f),
            "a FIFO (named pipe), not a regular file; eukhe reads settings from regular files only",
        ),
        (lambda f: f.symlink_to("/dev/zero"), "a character device, not a regular file"),
        (lambda f: f.mkdir(), "a directory, not a regular file"),
        (
            lambda f: f.write_bytes(b" " * (1 << 20) + b"{}"),
            "1,048,578 bytes; a settings file holds at most 1,048,576",
        ),
        (lambda f: f.write_text("[" * 100_000 + "]" * 100_000), "nested too deeply to be settings"),
        (lambda f: f.write_bytes(b'{"model": "\xff"}'), "not UTF-8 text (byte 11)"),
    ],
    ids=["fifo", "dev-zero", "directory", "over-1-MiB", "deep", "not-utf-8"],
)
def test_a_settings_file_that_is_not_settings_is_refused_by_every_command_at_once(
    tmp_path: Path, make: object, said: str
) -> None:
    home, repo, f = project(tmp_path)
    make(f)  # type: ignore[operator]
    for done in run_and_settings(repo, home):
        assert done.returncode == 2, done.stderr
        assert f"settings file {f}: {said}" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({"providers": ["x"]}, "setting providers=['x'] in {f}: expected an object"),
        ({"providers": {"vllm": "x"}}, "setting providers.vllm='x' in {f}: expected an object"),
        (
            {"providers": {"vllm": {"baseUrl": 3}}},
            "setting providers.vllm.baseUrl=3 in {f}: expected a string or null",
        ),
        (
            {"models": {"vllm/m": {"contextWindow": "big"}}},
            "setting models.vllm/m.contextWindow='big' in {f}: expected a whole number >= 0",
        ),
        ({"retry": "yes"}, "setting retry='yes' in {f}: expected an object"),
        (
            {"memory": {"settleTimeoutMs": -1}},
            "setting memory.settleTimeoutMs=-1 in {f}: expected a whole number >= 0",
        ),
    ],
)
def test_run_and_settings_refuse_a_malformed_shape_in_the_same_words(
    tmp_path: Path, settings: dict[str, object], said: str
) -> None:
    home, repo, _ = project(tmp_path)
    f = home / "settings.json"  # the user's own file: it applies in any folder
    f.write_text(json.dumps(settings))
    for done in run_and_settings(repo, home):
        assert done.returncode == 2, done.stderr
        assert said.format(f=f) in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


def test_a_prompt_that_is_not_utf_8_is_refused_with_why(tmp_path: Path) -> None:
    home, repo, _ = project(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "eukhe", "run", "--model", "vllm/m", b"fix \xff this"],
        cwd=repo, env=env(home), capture_output=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 2
    assert b"eukhe run: the prompt argument is not valid UTF-8: byte 0xff at character 4" in done.stderr


def test_a_prompt_is_read_from_standard_input_for_a_dash_or_stdin(tmp_path: Path) -> None:
    home, repo, _ = project(tmp_path)
    long = "summarize this: " + "x" * 200_000  # over what one argument may hold on Linux (128 KiB)
    with FauxServer(parse([{"when": "summarize this", "text": "summarized"}])) as server:
        for args in (["-"], ["--stdin"]):
            run = ["run", "--model", "vllm/m", "--base-url", server.url, "--json", *args]
            done = eukhe(*run, cwd=repo, home=home, input=long)
            assert done.returncode == 0, done.stderr
            assert json.loads(done.stdout.splitlines()[-1])["answer"] == "summarized"
        sent = [[m["content"] for m in seen.body["messages"] if m["role"] == "user"] for seen in server.seen]
    assert sum(long in user for user in sent) >= 2  # each run's prompt (the compactor's calls besides)


def test_standard_input_is_never_read_when_the_prompt_is_an_argument(tmp_path: Path) -> None:
    never = io.BytesIO(b"not this")
    assert prompt_of("this", never) == Prompt("this", "this") and never.tell() == 0
    with pytest.raises(PromptError, match=r"^no prompt: give it as an argument"):
        prompt_of(None, never)  # terminal or not: a missing prompt is never read from standard input
    assert never.tell() == 0
    with pytest.raises(
        PromptError, match=r"^the prompt on standard input is not valid UTF-8: byte 0xff at byte 2$"
    ):
        prompt_of("-", io.BytesIO(b"ab\xff"))
    with pytest.raises(PromptError, match=r"over 16,777,216 bytes"):
        prompt_of("-", io.BytesIO(b"x" * (PROMPT_MAX + 1)))
    log = prompt_of("explain", io.BytesIO(b"the log\n"), from_stdin=True)  # what was typed kept apart
    assert log == Prompt("explain\n\nthe log\n", typed="explain", piped="the log\n")
    assert prompt_of("-", io.BytesIO(b"the log\n")) == Prompt("the log\n", typed="", piped="the log\n")
    assert prompt_of("explain", io.BytesIO(b""), from_stdin=True) == Prompt(
        "explain", "explain"
    )  # the argument
    assert eukhe("run", "--help", cwd=tmp_path, home=tmp_path).returncode == 0


def test_an_empty_prompt_is_refused_before_any_run(tmp_path: Path) -> None:
    home, repo, _ = project(tmp_path)
    with FauxServer(parse(["a reply no one asked for"])) as server:
        for prompt in ("", "  \n\t"):
            done = eukhe("run", "--model", "vllm/m", "--base-url", server.url, prompt, cwd=repo, home=home)
            assert (done.returncode, done.stderr) == (2, "eukhe run: the prompt is empty\n"), done.stderr
        assert server.seen == []  # no model call, no run
    assert not (home / "eukhe.sqlite").exists()
