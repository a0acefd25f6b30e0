"""What a run shows: lines, and the model's text as it streams, each written once."""

from __future__ import annotations

import io
import json
import re
import time

import pytest

from eukhe.cli.printer import Printer, RunView, Stream
from eukhe.events import SETTLE_WAY_OUT, event
from eukhe.humanize import counted, seconds
from eukhe.run.outcome import Ending, RunOutcome


def test_streamed_text_is_written_as_it_comes_and_the_answer_not_again(
    capsys: pytest.CaptureFixture[str],
) -> None:
    p = Printer(as_json=False)
    p.show("text", "Four")
    assert capsys.readouterr().out == "Four"  # at once, before the reply ends
    p.show("text", ".")
    p.answer("Four.")
    assert capsys.readouterr().out == ".\n"


def test_a_line_after_streamed_text_starts_on_its_own_line(capsys: pytest.CaptureFixture[str]) -> None:
    p = Printer(as_json=False)
    p.show("text", "Let me look")
    p.show("calls", "read")
    p.show("text", "It says alpha.")
    p.say("finishing 1 recovered run")
    got = capsys.readouterr()
    assert got.out == "Let me look\n→ calls: read\nIt says alpha.\n"
    assert got.err == "finishing 1 recovered run\n"


def test_an_answer_that_was_not_streamed_whole_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    p = Printer(as_json=False)
    p.show("text", "a leak <tool_call>")
    p.show("note", "Harness note, attempt 2")
    p.answer("a leak <tool_call>")  # streamed before the note line: printed again, whole, after it
    note = "↻ note: Harness note, attempt 2\n"
    assert capsys.readouterr().out == "a leak <tool_call>\n" + note + "a leak <tool_call>\n"


def test_with_json_everything_but_the_json_goes_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    p = Printer(as_json=True)
    p.show("text", "Four.")
    p.show("retry", "x")
    p.answer("Four.")
    got = capsys.readouterr()
    assert got.out == "" and got.err == "Four.\n⏳ retry: x\n"


def test_how_a_run_ended_is_said_once_in_words(capsys: pytest.CaptureFixture[str]) -> None:
    p = Printer(as_json=False)
    p.outcome(RunOutcome(Ending.ANSWERED, answer="Four.", calls=1))
    assert capsys.readouterr().err == "answered in 1 model call\n"  # a text answer: no tool round
    p.outcome(RunOutcome(Ending.ANSWERED, answer="Done.", calls=4, rounds=2, retries=1))
    assert capsys.readouterr().err == "answered in 4 model calls: 2 tool rounds, 1 retry\n"
    p.outcome(RunOutcome(Ending.ABORTED, code="aborted", message="Ctrl-C", calls=1))
    assert capsys.readouterr().err == "aborted: Ctrl-C, after 1 model call\n"  # one line, not two


def test_a_count_says_its_noun_in_the_plural_unless_it_is_one() -> None:
    assert [counted(n, "line") for n in (0, 1, 2)] == ["0 lines", "1 line", "2 lines"]
    assert counted(1, "retry", "retries") == "1 retry" and counted(3, "retry", "retries") == "3 retries"


def test_seconds_read_as_a_person_reads_them() -> None:
    assert [seconds(s) for s in (0.05, 0.3, 0.4012, 4.0, 9.5, 12.4, 300.0)] == [
        "0.05 s", "0.3 s", "0.4 s", "4 s", "9.5 s", "12 s", "300 s",
    ]  # fmt: skip


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def wait_of(p: Printer, seconds: list[int]) -> None:
    for n in seconds:
        p.show("memory", f"memory: 1 line pending, {n} s to the deadline", {"wait": "memory", "pending": 1})
    p.show("memory", "memory: the settle deadline passed; the turn goes on with 1 line shown cut", {})
    p.show("waited", "", {"wait": "memory"})


def test_a_settle_wait_is_one_line_updated_in_place_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    out = Terminal()
    monkeypatch.setattr("sys.stdout", out)
    p = Printer(as_json=False)
    wait_of(p, [20, 19, 18])
    p.show("text", "Hello")
    got = re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue())  # the styles out
    assert got.count("\r\x1b[2K") == 3 and got.count(" pending, ") == 3  # each over the last
    before, _, after = got.partition("18 s to the deadline")
    assert "\n" not in before and after.startswith("\n◷ memory: the settle deadline passed")
    assert got.count(SETTLE_WAY_OUT) == 1 and got.endswith("\nHello")


def test_a_settle_wait_into_a_pipe_is_a_line_at_its_start_and_its_end(
    capsys: pytest.CaptureFixture[str],
) -> None:
    p = Printer(as_json=False)
    wait_of(p, [20, 19, 18])
    wait_of(p, [20, 19])  # a second wait: its lines, the way out not again
    out = capsys.readouterr().out
    assert out.count(" pending, ") == 2 and "19 s to the deadline" not in out
    assert out.count("settle deadline passed") == 2 and out.count(SETTLE_WAY_OUT) == 1


def test_with_the_status_line_a_settle_wait_is_in_it_and_its_end_says_the_way_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out, err = Terminal(), Terminal()
    monkeypatch.setattr("sys.stdout", out)
    monkeypatch.setattr("sys.stderr", err)
    p = Printer(as_json=False)
    wait = {"wait": "memory", "pending": 1, "deadline": time.time() + 20}
    p.event(event("memory", "memory: 1 line pending, 20 s to the deadline", run="s/0001", data=wait))
    assert "working · run 1 · memory: 1 line pending, " in err.getvalue() and " pending" not in out.getvalue()
    p.event(
        event(
            "memory",
            "memory: the settle deadline passed; the turn goes on with 1 line shown cut",
            run="s/0001",
        )
    )
    p.event(event("waited", "", run="s/0001", data={"wait": "memory"}))
    p.outcome(RunOutcome(Ending.ABORTED))
    shown = re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue())
    assert "settle deadline passed" in shown and shown.count(SETTLE_WAY_OUT) == 1
    e = err.getvalue()  # the status line erased before the outcome's line, never drawn after it
    assert e.rfind("working ·") < e.rfind("\r\x1b[2K") < e.index("aborted")
    assert "working" not in e[e.index("aborted") :]


def test_each_outcome_is_told_with_its_session_its_run_and_its_duration() -> None:
    """The command line's view times each run from its start on its clock; a run that never
    started is told with the view's session, no run, and the time since the last outcome."""
    now = [100.0]
    out = io.StringIO()
    view = RunView(Stream(out), "s1", clock=lambda: now[0])
    now[0] += 5.0  # the store loads: not the run's
    view.started("s1/0001", "hi")
    now[0] += 1.25
    view.ended("s1/0001", RunOutcome(Ending.ANSWERED, answer="ok"))
    now[0] += 0.5
    view.refused("a session at work elsewhere")
    told = [e for e in map(json.loads, out.getvalue().splitlines()) if e["type"] == "outcome"]
    keys = ("session_id", "run_id", "duration_ms", "total_cost_usd")
    assert [tuple(t[k] for k in keys) for t in told] == [
        ("s1", "s1/0001", 1250, 0.0),
        ("s1", None, 500, 0.0),
    ]
