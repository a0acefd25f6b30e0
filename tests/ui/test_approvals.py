"""A person answers the permission rule's asks in the interactive agent: the call shown
whole above the prompt, its keys (y once, a always this session, p always this project,
n no with a reason, Esc no), its countdown on the status line, and Ctrl-C. The asker on
its own across two loops in two threads, then the real `eukhe` in tmux against the faux
model."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from eukhe import waits
from eukhe.ai.faux import FauxServer, parse
from eukhe.display.view import View
from eukhe.events import event
from eukhe.rules.permission import Answer
from eukhe.rules.wait import End
from eukhe.run.loop import ABORT_GRACE
from eukhe.run.permit import Asked
from eukhe.ui.approvals import KEYS, REASON, Approvals
from tests.ui.term import Term, faux_home, needs_tmux

ASKS = {"permissions": {"ask": ["Bash(touch *)"]}}


def bash(command: str) -> dict[str, Any]:
    return {"calls": [{"name": "bash", "arguments": {"command": command}}]}


def tool_results(server: FauxServer) -> list[str]:
    """The tool results the model got, in its last request."""
    return [str(m["content"]) for m in server.seen[-1].body["messages"] if m["role"] == "tool"]


# ---------------------------------------------------------------- the asker across two loops


@pytest.fixture
def loops() -> Iterator[tuple[asyncio.AbstractEventLoop, asyncio.AbstractEventLoop]]:
    """The app's loop (this thread's) and a run's loop in a thread of its own, as DBOS has it."""
    app, run = asyncio.new_event_loop(), asyncio.new_event_loop()
    thread = threading.Thread(target=run.run_forever, daemon=True)
    thread.start()
    yield app, run
    run.call_soon_threadsafe(run.stop)
    thread.join(timeout=5)
    run.close()
    app.close()


def until(app: asyncio.AbstractEventLoop, ok: Callable[[], bool]) -> None:
    async def look() -> None:
        while not ok():
            await asyncio.sleep(0.01)

    app.run_until_complete(asyncio.wait_for(look(), timeout=10))


def asked(command: str) -> Asked:
    return Asked("bash", f'{{"command": "{command}"}}', "an ask rule matches it", command)


def test_the_asker_hands_its_question_to_the_apps_loop_and_the_key_back_to_the_runs(
    loops: tuple[asyncio.AbstractEventLoop, asyncio.AbstractEventLoop],
) -> None:
    app, run = loops
    approvals = Approvals(lambda work: app.call_soon_threadsafe(work), View())
    first = asyncio.run_coroutine_threadsafe(approvals.ask(asked("touch a")), run)
    until(app, lambda: approvals.current is not None)
    second = asyncio.run_coroutine_threadsafe(approvals.ask(asked("touch b")), run)
    until(app, lambda: len(approvals.waiting) == 2)
    lines = [text for _, text in approvals.lines()]
    assert lines == ["? bash asks: an ask rule matches it · 1 more waiting", "  touch a", KEYS]
    approvals.answer(Answer.SESSION)
    assert first.result(timeout=5) == (Answer.SESSION, "")
    until(app, lambda: not first.running())
    assert [text for _, text in approvals.lines()][1] == "  touch b"  # one at a time, in order
    approvals.reason()
    assert approvals.lines()[-1][1] == REASON
    approvals.answer(Answer.NO, "not b")
    assert second.result(timeout=5) == (Answer.NO, "not b")
    until(app, lambda: not approvals.waiting and not approvals.reasoning)


def test_an_ask_the_gates_race_ends_leaves_the_screen(
    loops: tuple[asyncio.AbstractEventLoop, asyncio.AbstractEventLoop],
) -> None:
    app, run = loops
    approvals = Approvals(lambda work: app.call_soon_threadsafe(work), View())

    async def ask(deadline: float, cancel: asyncio.Event | None = None) -> End:
        clock = waits.LoopClock()
        return (await waits.race(approvals.ask(asked("touch a")), clock.now() + deadline, cancel, clock)).end

    timed = asyncio.run_coroutine_threadsafe(ask(0.5), run)
    until(app, lambda: approvals.current is not None)
    approvals.reason()  # the person was typing a reason when the deadline came
    assert timed.result(timeout=5) is End.DEADLINE
    until(app, lambda: approvals.current is None and not approvals.reasoning)
    approvals.answer(Answer.ONCE)  # a key after the ask left answers nothing

    cancel = asyncio.Event()
    aborted = asyncio.run_coroutine_threadsafe(ask(60, cancel), run)
    until(app, lambda: approvals.current is not None)
    run.call_soon_threadsafe(cancel.set)  # Ctrl-C: the run's abort
    assert aborted.result(timeout=5) is End.CANCEL
    until(app, lambda: approvals.current is None)


def test_an_edit_is_asked_as_its_diff_and_a_long_call_is_printed_whole_above(
    loops: tuple[asyncio.AbstractEventLoop, asyncio.AbstractEventLoop],
) -> None:
    app, run = loops
    view = View()
    approvals = Approvals(lambda work: app.call_soon_threadsafe(work), view)
    edit = Asked(
        "edit",
        '{"path": "a.py", "old_text": "x = 1\\ny = 2\\n", "new_text": "x = 1\\ny = 3\\n"}',
        "the approval policy is untrusted, and it is not read-only",
        "edit a.py: ...",
    )
    asyncio.run_coroutine_threadsafe(approvals.ask(edit), run)
    until(app, lambda: approvals.current is not None)
    shown = approvals.lines()
    assert [text for _, text in shown[1:-1]] == [
        "  edit a.py:",
        "  @@ -1,2 +1,2 @@",
        "   x = 1",
        "  -y = 2",
        "  +y = 3",
    ]
    assert [style for style, _ in shown[-3:-1]] == ["class:ask.del", "class:ask.add"]
    assert not view.lines  # it fits: nothing printed above
    approvals.answer(Answer.ONCE)
    long = "\n".join(f"echo {i}" for i in range(40))
    asyncio.run_coroutine_threadsafe(approvals.ask(asked(long)), run)
    until(app, lambda: approvals.current is not None)
    assert approvals.lines()[-2][1] == "  … 40 lines: the whole call is printed above"
    printed = [ln.text for ln in view.take()]
    assert printed[0] == "? bash asks to run, whole:" and printed[1:] == [f"  echo {i}" for i in range(40)]
    approvals.answer(Answer.NO)


def test_the_status_line_counts_an_ask_down_a_subagents_too() -> None:
    view = View(clock=lambda: 1000.0)
    root, child = "20261202-010101-abc/0001", "20261202-010101-abc/0001.c1"
    view.started(root, "go")
    ask = {"wait": "ask", "tool": "bash", "why": "an ask rule matches it"}
    view.add(event("ask", "bash: touch a", root, {**ask, "deadline": 1030.0}))
    assert "bash waits for your answer: denied in 30 s without one" in view.status()
    view.add(event("ask", "[c1.1] bash: touch b", child, {**ask, "deadline": 1045.0}))
    assert "c1.1: bash waits for your answer: denied in 45 s without one" in view.status()
    view.add(event("waited", "", child, {"wait": "ask"}))  # the child's ends; the root's still waits
    assert "· bash waits for your answer: denied in 30 s without one" in view.status()
    view.add(event("waited", "", root, {"wait": "ask"}))
    assert "waits for your answer" not in view.status()


# ---------------------------------------------------------------- in the terminal


def settle(t: Term) -> None:
    t.until("the prompt idle again", lambda s: bool(re.search(r"ready · session \d", t.screen())))


def empty_prompt(t: Term) -> bool:
    """The prompt holds nothing: no key of the ask went into it."""
    return any(line.rstrip() == "›" for line in t.screen().splitlines())


@needs_tmux
def test_an_ask_answered_once_runs_the_command_and_its_result_is_in_the_transcript(tmp_path: Path) -> None:
    script = [{"results": 0, **bash("touch made.txt")}, {"results": 1, "text": "Made it."}]
    with FauxServer(parse(script)) as server, Term(tmp_path, tmp_path / "home") as t:
        faux_home(tmp_path / "home", server.url, ASKS)
        t.ready()
        t.send("make the file")
        asked = "? bash asks: an ask rule matches it\n  touch made.txt\n" + KEYS
        t.until("the ask whole on the screen", lambda s: asked in t.screen())  # a frame at a time
        screen = t.screen()
        assert asked in screen
        assert re.search(r"bash waits for your answer: denied in \d+ (s|min) without one", screen), screen
        assert not (tmp_path / "made.txt").exists()
        t.keys("y")
        text = t.until("✓ answered")
        settle(t)
        assert KEYS not in t.screen() and empty_prompt(t)
    assert (tmp_path / "made.txt").exists()
    assert "  ← [1] ok" in text and "Made it." in text
    [result] = tool_results(server)
    assert "not run" not in result


@needs_tmux
def test_always_for_this_session_runs_a_second_identical_call_without_asking(tmp_path: Path) -> None:
    # a command that names no file that exists: the gate asks about a path no allow rule covers
    # (a `touch x` is asked again once x exists, whatever the session's rule for it)
    script = [
        {"results": 0, **bash("rm -f gone.txt")},
        {"results": 1, **bash("rm -f gone.txt")},
        {"results": 2, "text": "Removed it twice."},
    ]
    with FauxServer(parse(script)) as server, Term(tmp_path, tmp_path / "home") as t:
        # the policy asks, not an ask rule: a rule that asks comes before every allow, a session's too
        faux_home(tmp_path / "home", server.url, {"permissions": {"approval": "untrusted"}})
        t.ready()
        t.send("remove it twice")
        t.until(KEYS)
        t.keys("a")
        text = t.until("✓ answered")
        settle(t)
        assert empty_prompt(t)
    assert text.count("? ask: ") == 1  # asked once; the second call ran on the session's rule
    assert "  ← [1] ok" in text and "  ← [2] ok" in text and "Removed it twice." in text
    assert not any("not run" in r for r in tool_results(server))


@needs_tmux
def test_always_for_this_project_is_kept_in_the_home_for_the_next_runs(tmp_path: Path) -> None:
    from eukhe.settings.approvals import approvals

    script = [
        {"when": "remove it", "results": 0, **bash("rm -f gone.txt")},
        {"when": "remove it", "results": 1, "text": "Removed it."},
        {"when": "once more", "results": 0, **bash("rm -f gone.txt")},
        {"when": "once more", "results": 1, "text": "Removed it again."},
    ]
    home = tmp_path / "home"
    with FauxServer(parse(script)) as server, Term(tmp_path, home) as t:
        faux_home(home, server.url, {"permissions": {"approval": "untrusted"}})
        t.ready()
        t.send("remove it")
        t.until(KEYS)
        t.keys("p")
        t.until("✓ answered")
        settle(t)
        t.send("once more")  # a new run: the project's rule, read from the home, lets it run unasked
        text = t.until("Removed it again.")
    assert text.count("? ask: ") == 1 and "  ← [1] ok" in text and "  ← [2] ok" in text
    assert [(r.tool, r.pattern) for r in approvals(home, tmp_path)] == [("Bash", "rm -f gone.txt")]


@needs_tmux
def test_a_denial_with_a_reason_reaches_the_model_as_the_calls_result(tmp_path: Path) -> None:
    script = [{"results": 0, **bash("touch nope.txt")}, {"results": 1, "text": "Fine, I did not."}]
    with FauxServer(parse(script)) as server, Term(tmp_path, tmp_path / "home") as t:
        faux_home(tmp_path / "home", server.url, ASKS)
        t.ready()
        t.send("make nope.txt")
        t.until(KEYS)
        t.keys("n")
        t.until(REASON)
        t.type("not in this repo, please")  # its y, a, p and n are the reason's letters now
        t.until("the reason typed", lambda s: "reason › not in this repo, please" in t.screen())
        t.keys("Enter")
        text = t.until("Fine, I did not.")
        settle(t)
        assert empty_prompt(t) and REASON not in t.screen()
    assert not (tmp_path / "nope.txt").exists()
    [result] = tool_results(server)
    assert result.startswith("Tool bash was not run: permission denied: a person denied it (Bash(touch *))")
    assert result.endswith("The user's reason: not in this repo, please")
    assert "⛔ denied" in text


@needs_tmux
def test_an_ask_nobody_answers_counts_down_and_ends_in_a_denial_naming_the_timeout(tmp_path: Path) -> None:
    settings = {
        **ASKS,
        "permissions": {**ASKS["permissions"], "askTimeoutMs": 2000},
        "subagentStallMs": 60000,
    }
    script = [
        {"when": "make late", "results": 0, **bash("touch late.txt")},
        {"when": "make late", "results": 1, "text": "Nobody answered."},
        {"when": "and now", "text": "The prompt still works."},
    ]
    with FauxServer(parse(script)) as server, Term(tmp_path, tmp_path / "home") as t:
        faux_home(tmp_path / "home", server.url, settings)
        t.ready()
        t.send("make late.txt")
        t.until("the countdown", lambda s: bool(re.search(r"denied in [12] s without one", t.screen())))
        t.keys("n")  # a reason half typed when the deadline comes
        t.type("becau")
        t.until("Nobody answered.")
        settle(t)
        assert KEYS not in t.screen() and REASON not in t.screen() and "reason ›" not in t.screen()
        [result] = tool_results(server)
        t.send("and now?")  # the keys are the prompt's again
        t.until("The prompt still works.")
    assert not (tmp_path / "late.txt").exists()
    assert result.startswith(
        "Tool bash was not run: permission denied: nobody answered before permissions.askTimeoutMs"
    )
    assert "nobody answered within 2 s (permissions.askTimeoutMs)" in result


@needs_tmux
def test_ctrl_c_during_an_ask_aborts_the_run_and_takes_the_ask_off_the_screen(tmp_path: Path) -> None:
    script = [
        {"when": "make it", "results": 0, **bash("touch never.txt")},
        {"when": "and now", "text": "The second answer."},
    ]
    with FauxServer(parse(script)) as server, Term(tmp_path, tmp_path / "home") as t:
        faux_home(tmp_path / "home", server.url, ASKS)
        t.ready()
        t.send("make it")
        t.until(KEYS)
        pressed = time.monotonic()
        t.keys("C-c")
        t.until("■ aborted", wait=ABORT_GRACE + 5)
        assert time.monotonic() - pressed <= ABORT_GRACE + 1
        settle(t)
        assert KEYS not in t.screen() and empty_prompt(t)
        t.send("and now?")
        t.until("The second answer.")
        assert server.seen[-1].body["messages"][-1]["content"] == "and now?"
    assert not (tmp_path / "never.txt").exists()


def test_a_run_closed_while_it_asks_is_asked_again_by_the_owner_which_denies_it(tmp_path: Path) -> None:
    """An ask is a durable wait: the terminal closes while a call waits for its answer; the
    owner takes the run up, makes the same call again, has nobody to ask, and denies it with
    that cause: the call never runs unasked."""
    from tests.ui.test_agent import session_of, show

    home = tmp_path / "home"
    script = [
        {"when": "make it", "results": 0, **bash("touch made")},
        {"when": "make it", "results": 1, "text": "Could not make it."},
    ]
    with FauxServer(parse(script)) as server:
        faux_home(home, server.url, ASKS)
        with Term(tmp_path, home) as t:
            t.ready()
            t.send("make it")
            session = session_of(t.until("the ask", lambda s: "touch made" in s and "y once" in t.screen()))

        # the terminal is gone (its tmux server killed: a hang-up), the ask unanswered
        def ended() -> bool:
            runs = show(session, tmp_path, home)["runs"]
            return bool(runs) and runs[0]["outcome"] == "answered"

        deadline = time.monotonic() + 90
        while not ended():
            assert time.monotonic() < deadline, "the owner did not finish the run"
            time.sleep(0.5)
    assert not (tmp_path / "made").exists()
    [result] = [
        m["content"] for m in show(session, tmp_path, home)["runs"][0]["messages"] if m["role"] == "tool"
    ]
    assert result.startswith("Tool bash was not run: permission denied: no person can answer an ask here")


@needs_tmux
def test_shift_tab_turns_plan_mode_on_its_plan_is_asked_and_a_yes_ends_it(tmp_path: Path) -> None:
    write = {"calls": [{"name": "write", "arguments": {"path": "x.txt", "content": "x\n"}}]}
    plan = {"calls": [{"name": "exit_plan", "arguments": {"plan": "1. Write x.txt.\n2. Say done."}}]}
    script = [
        {"results": 0, **write},
        {"results": 1, **plan},
        {"results": 2, **write},
        {"results": 3, "text": "Done."},
    ]
    mark = "· ⏸ plan mode"

    def status(t: Term) -> str:
        return next((ln for ln in t.screen().splitlines() if "ready · session" in ln), "")

    with FauxServer(parse(script)) as server, Term(tmp_path, tmp_path / "home") as t:
        faux_home(tmp_path / "home", server.url)
        t.ready()
        assert mark not in status(t)
        t.keys("BTab")
        t.until("plan mode on the status line", lambda s: mark in status(t))
        t.send("add x.txt")
        asked = "? exit_plan asks: only a person approves a plan, which ends plan mode\n  1. Write x.txt.\n"
        t.until("the plan whole on the screen", lambda s: asked in t.screen() and KEYS in t.screen())
        assert not (tmp_path / "x.txt").exists() and mark in t.screen()
        t.keys("y")
        text = t.until("✓ answered")
        settle(t)
        assert mark not in status(t)  # the plan approved: plan mode is off, for the next runs too
        t.keys("BTab")  # so the key turns it on again, not off
        t.until("plan mode on again", lambda s: mark in status(t))
    assert (tmp_path / "x.txt").read_text() == "x\n"
    assert "⛔ denied: Tool write was not run: permission denied: plan mode is on" in text
    assert "⏸ mode: plan mode off (the plan approved): back to workspace-write" in text
    runs = [r for r in server.seen if r.body.get("tools")]  # the run's, not the chat compactor's after it
    denied, approved, wrote = [str(m["content"]) for m in runs[-1].body["messages"] if m["role"] == "tool"]
    assert "call exit_plan with your plan" in denied and "not run" not in wrote
    assert approved.startswith("The person approved your plan")
