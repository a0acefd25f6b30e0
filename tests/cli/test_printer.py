"""What a run shows: lines, and the model's text as it streams, each written once."""

from __future__ import annotations

import pytest

from eukhe.cli.printer import Printer


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
