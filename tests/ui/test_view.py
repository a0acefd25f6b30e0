"""The interactive agent's view as state (no terminal): lines from events, the status
line's waits with their exits and the budgets; its commands and options."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from eukhe.display.lines import marked
from eukhe.display.view import View
from eukhe.events import SETTLE_WAY_OUT, Event, event
from eukhe.ui import commands
from eukhe.ui.app import parse
from eukhe.ui.session import Options

RUN = "s1/0001"


def ev(type_: str, text: str = "", run: str | None = RUN, **data: object) -> Event:
    return Event(type_, text, run, data, 0.0)


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_streamed_text_becomes_lines_and_a_line_of_the_run_ends_it_first() -> None:
    v = View()
    v.add(ev("text", "The answer"))
    v.add(ev("text", " is\nforty"))
    assert [ln.text for ln in v.take()] == ["The answer is"] and v.partial == "forty"
    v.add(ev("calls", "read"))
    assert [ln.text for ln in v.take()] == ["forty", "→ calls: read"] and v.partial == ""


def test_tools_are_numbered_and_their_results_open_by_number() -> None:
    v = View()
    v.add(ev("tool", 'read {"path": "a"}', id="c1", name="read"))
    v.add(ev("result", "line one\nline two", id="c1", name="read", error=False, chars=17))
    v.add(ev("tool", "bash {}", id="c2", name="bash"))
    v.add(ev("result", "boom", id="c2", name="bash", error=True, chars=4))
    lines = v.take()
    assert [ln.text for ln in lines] == [
        '  tool: [1] read {"path": "a"}',
        "  ← [1] ok, 17 chars: line one",
        "  tool: [2] bash {}",
        "  ← [2] error, 4 chars: boom",
    ]
    assert lines[3].style == "red" and [r.text for r in v.results] == ["line one\nline two", "boom"]


def test_the_status_line_shows_the_newest_wait_with_its_exit_and_the_budgets() -> None:
    clock = Clock()
    v = View(clock=clock)
    assert v.status() == "ready"
    v.started(RUN, "go")
    v.add(ev("run", "go", caps={"rounds": 250, "notes": 8, "retries": 3}))
    assert v.status() == "working · run 1 · rounds 0/250 notes 0/8 retries 0/3 · Ctrl-C aborts"
    v.add(ev("stream", wait="stream", idle=4.0))
    clock.t += 3
    assert "model streaming: quiet 3 s; a stall at 4 s" in v.status()
    v.add(ev("retry", "HTTP 503; waiting 2.0 s", wait="retry", deadline=clock.t + 2))
    clock.t += 0.6
    assert "retry in 1 s" in v.status() and "streaming" not in v.status()
    assert [ln.text for ln in v.take()] == ["⏳ retry: HTTP 503; waiting 2.0 s"]
    v.add(ev("waited", wait="retry"))
    assert "model streaming" in v.status()
    v.add(
        ev(
            "budget",
            "",
            used={"rounds": 2, "notes": 1, "retries": 1},
            caps={"rounds": 250, "notes": 8, "retries": 3},
        )
    )
    assert "rounds 2/250 notes 1/8 retries 1/3" in v.status()


def test_a_running_hook_shows_in_the_status_line_with_its_countdown() -> None:
    clock = Clock()
    v = View(clock=clock)
    v.started(RUN, "go")
    v.add(ev("hook", "PreToolUse Bash: 1 hook", state="started", wait="hook", deadline=clock.t + 12))
    clock.t += 2
    assert "PreToolUse Bash: 1 hook: running, ended in 10 s at the latest" in v.status()
    v.add(ev("waited", wait="hook"))
    assert "running" not in v.status()


def test_memory_and_lease_waits_show_in_the_status_line_not_the_scrollback() -> None:
    clock = Clock()
    v = View(clock=clock)
    v.started(RUN, "go")
    v.add(
        ev(
            "lease",
            "waiting for the root-turn lease: ...",
            wait="lease",
            holder={"session": "s0", "run": "s0/3"},
        )
    )
    assert "waiting for the root-turn lease: session s0, run s0/3 holds it" in v.status()
    v.add(ev("waited", wait="lease"))
    v.add(
        ev(
            "memory",
            "memory: 3 lines pending, 20 s to the deadline",
            wait="memory",
            pending=3,
            deadline=clock.t + 20,
        )
    )
    assert "memory: 3 lines pending, 20 s to the deadline" in v.status()
    v.add(ev("memory", "memory: the settle deadline passed; the turn goes on with 3 lines shown cut"))
    assert [ln.text for ln in v.take()] == [
        "◷ memory: the settle deadline passed; the turn goes on with 3 lines shown cut",
        SETTLE_WAY_OUT,  # why, and the way out: once a session
    ]
    v.add(ev("memory", "memory: the settle deadline passed; the turn goes on with 1 line shown cut"))
    assert [ln.text for ln in v.take()] == [
        "◷ memory: the settle deadline passed; the turn goes on with 1 line shown cut"
    ]


def test_a_wait_the_run_said_before_the_app_heard_its_id_still_shows() -> None:
    # the run starts on the runs' loop, and under load its first events (its budgets, its
    # wait for the lease) reach the app before the run's id does: they must not be lost
    v = View(clock=Clock())
    v.add(ev("retry", "HTTP 503", run="s1/0000", wait="retry", deadline=5.0))  # an earlier run's
    v.add(ev("run", "go", caps={"rounds": 250, "notes": 8, "retries": 3}))
    v.add(ev("lease", "waiting…", wait="lease", holder={"session": "s0", "run": "s0/0003"}))
    v.started(RUN, "go")
    status = v.status()
    assert "waiting for the root-turn lease: session s0, run s0/0003 holds it" in status
    assert "rounds 0/250 notes 0/8 retries 0/3" in status
    assert "retry" not in status
    v.ended()
    v.started("s1/0002", "next")
    assert v.status() == "working · run 2 · Ctrl-C aborts"


def test_a_childs_wait_is_its_own_not_the_sessions() -> None:
    v = View()
    v.started(RUN, "go")
    v.add(ev("retry", "[c1] HTTP 503; waiting 2.0 s", run=f"{RUN}.c1", wait="retry", deadline=5.0))
    assert "retry" not in v.status()


def test_a_line_never_carries_a_control_sequence_to_the_terminal() -> None:
    v = View()
    v.add(ev("text", "clear \x1b[2J the screen\tand ring\x07\n"))
    v.add(ev("result", "\x1b]0;pwned\x07", id="c", name="read", error=False, chars=9))
    text = "\n".join(ln.text for ln in v.take())
    assert "\x1b" not in text and "\x07" not in text and "\t" not in text
    assert "clear \\x1b[2J the screen   and ring\\x07" in text


def test_the_outcome_line() -> None:
    out = {
        "outcome": "failed",
        "error": {"kind": "run_limit", "message": "cap"},
        "calls": 4,
        "rounds": 3,
        "notes": 0,
        "retries": 1,
    }
    assert View.outcome_line(out) == "✗ failed (run_limit): cap · after 4 model calls: 3 tool rounds, 1 retry"
    answered = {"outcome": "answered", "error": None, "calls": 1, "rounds": 0, "notes": 0, "retries": 0}
    assert View.outcome_line(answered) == "✓ answered in 1 model call"


def session(**made: object) -> object:
    snapshot = SimpleNamespace(
        prompts=[SimpleNamespace(name="review", description="review a change")],
        skills=[SimpleNamespace(name="pdf", description="fill PDF forms")],
    )
    return SimpleNamespace(
        made=SimpleNamespace(snapshot=snapshot, settings=made, model="vllm/m"), options=Options()
    )


def test_a_slash_word_is_a_command_a_template_a_skill_a_path_or_says_why_not() -> None:
    s = session()
    assert commands.command_of("/memory", s)[0] is commands.COMMANDS["memory"]  # type: ignore[arg-type]
    assert commands.command_of("/zoom 0 1", s)[1] == "0 1"  # type: ignore[arg-type]
    assert commands.command_of("/review this diff", s) == (None, "")  # type: ignore[arg-type]
    assert commands.command_of("/skill:pdf form.pdf", s) == (None, "")  # type: ignore[arg-type]
    assert commands.command_of("/etc/hosts is broken", s) == (None, "")  # type: ignore[arg-type]
    assert commands.command_of("hello", s) == (None, "")  # type: ignore[arg-type]
    _, why = commands.command_of("/nope", s)  # type: ignore[arg-type]
    assert why == "unknown command /nope: /help lists the commands and templates"
    _, why = commands.command_of("/skill:nope", s)  # type: ignore[arg-type]
    assert why == "no skill 'nope': the skills are pdf"


def test_completion_offers_commands_templates_skills_and_models() -> None:
    s = session(model="vllm/m", providers={"openai": {}}, models={"anthropic/claude-x": {}})
    got = [c for c, _ in commands.completions("/", s)]  # type: ignore[arg-type]
    assert "/help" in got and "/review" in got and "/skill:pdf" in got
    assert [c for c, _ in commands.completions("/me", s)] == ["/memory"]  # type: ignore[arg-type]
    models = [c for c, _ in commands.completions("/model ", s)]  # type: ignore[arg-type]
    assert models == ["/model vllm/m", "/model anthropic/claude-x", "/model openai/"]
    assert commands.completions("hello", s) == []  # type: ignore[arg-type]


def test_the_agents_options_and_what_is_wrong_with_them() -> None:
    o = parse(["--model", "vllm/m", "--base-url=http://x/v1", "--session", "abc"])
    assert isinstance(o, Options) and (o.model, o.base_url, o.session) == ("vllm/m", "http://x/v1", "abc")
    assert str(parse(["--nope"])).startswith("eukhe: unknown option '--nope'")
    assert str(parse(["--model"])).startswith("eukhe: --model needs a value")


def test_without_a_terminal_the_agent_says_what_to_run(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "eukhe"], cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True,
        text=True, env={"EUKHE_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert (
        done.stderr.strip() == 'eukhe: the interactive agent needs a terminal; eukhe run "task" runs one turn'
    )


def test_a_line_that_never_ends_goes_to_the_scrollback_in_pieces() -> None:
    from eukhe.display.view import PARTIAL

    v = View()
    for _ in range(10):
        v.add(ev("text", "x" * 1_000))
    assert len(v.partial) <= PARTIAL and "".join(ln.text for ln in v.take()) + v.partial == "x" * 10_000


def test_a_providers_slots_read_in_words_with_no_limit_said_so() -> None:
    from eukhe.admission import UNLIMITED
    from eukhe.display.lines import provider_line

    status = {"held": 1, "queued": {"interactive": 0, "background": 2}, "limit": UNLIMITED}
    assert provider_line("vllm", status) == (
        "provider vllm: 1 slots held (no limit), 0 interactive and 2 background queued"
    )
    assert "(a limit of 4)" in provider_line("vllm", {**status, "limit": 4})


def test_a_sub_second_idle_deadline_shows_its_tenths() -> None:
    v = View(clock=Clock())
    v.started(RUN, "go")
    v.add(ev("stream", wait="stream", idle=0.3))
    assert "a stall at 0.3 s" in v.status()  # not "a stall at 0 s"


def test_an_mcp_servers_news_shows_once_a_session_and_its_routine_not_at_all() -> None:
    """Each run starts its servers again: 'time: ready, 2 tools' is said once a session;
    starting, closing and closed are for --events only."""
    v = View()
    for run in ("s-1", "s-2"):
        v.add(event("mcp_state", "time: starting, 2 tools", run))
        v.add(event("mcp", "time: ready, 2 tools", run))
        v.add(event("mcp_state", "time: closed, 2 tools", run))
    v.add(event("mcp", "time: failed: exited with status 1", "s-3"))
    assert [ln.text for ln in v.lines if "time" in ln.text] == [
        marked("mcp", "time: ready, 2 tools")[0],
        marked("mcp", "time: failed: exited with status 1")[0],
    ]


def test_the_task_list_takes_ten_rows_at_most_whatever_its_items_hold() -> None:
    """A model's list of 50 items of 300 bytes, each with line breaks, escape sequences and
    wide characters: the list above the prompt is TODO_SHOWN rows, each within the width."""
    text = "step\n" * 20 + "\x1b]0;pwned\x07\x1b[2J" + "工" * 40 + "\u2028" + "x" * 30
    v = View()
    v.add(ev("todo", "", items=[{"text": text, "state": "pending"}] * 50))
    for width in (80, 40):
        rows = v.todo_lines() if width == 80 else v.todo_lines(width)  # 80: the default
        assert len(rows) == 10 and rows[-1] == "  … and 41 more"
        for row in rows:
            assert "\n" not in row and "\x1b" not in row and "\x07" not in row and "\u2028" not in row
            assert sum(2 if "\u4e00" <= c <= "\u9fff" else 1 for c in row) <= width, row
    assert v.todo_lines()[0].startswith("☐ step step step") and v.todo_lines()[0].endswith("…")
    assert "\\x1b]0;pwned\\x07" in v.todo_lines(400)[0]  # the escape shown as its code
