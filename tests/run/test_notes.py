"""Every note and message, pinned to the spec's text."""

from __future__ import annotations

from eukhe.ai.reply import ToolCall
from eukhe.run import notes


def test_truncated_calls() -> None:
    assert notes.truncated("write", 8192) == (
        "Tool write was not run: the reply hit the 8192-token output limit, so its arguments may be cut. "
        "Make the call again with complete arguments. For large content, write a minimal version first, "
        "then extend it with edits."
    )
    assert "hit the output limit, so" in notes.truncated("write", None)


def test_no_answer_and_the_length_cap() -> None:
    assert notes.no_answer("stop", 42) == (
        "The model gave no answer: its reply (stop reason stop) has no text and no tool call, "
        "only 42 characters of thinking"
    )
    assert notes.length_gave_up(7) == (
        "The model gave no answer: its reply (stop reason length) has no text and no tool call, only 7 "
        "characters of thinking. The model hit the output limit while it was still reasoning after 3 length "
        "notes in a row: use a different model or raise the model's max output tokens."
    )


def test_the_repetition_note_is_the_spec_example() -> None:
    assert notes.repeating(2, "- r/Bitcoin", 1) == (
        'Harness note, attempt 2: your previous reply repeated the line "- r/Bitcoin" until it was cut. '
        "Give the answer again; never list the same item twice."
    )
    assert 'a cycle of 3 lines ending with the line "c"' in notes.repeating(3, "c", 3)


def test_the_length_leak_and_redirect_notes() -> None:
    assert notes.length(2, 1, 4096) == (
        "Harness note, attempt 2: your previous reply hit the 4096-token output limit while it was still "
        "reasoning. It gave no text and no tool call, so the harness discarded it with every tool call that it "
        "planned. If you plan the whole task again in your reasoning, you hit the same limit. Reason only about "
        "the next step, then call its tool. For a large answer (a file, a document, a long text), write a "
        "minimal working version first, then extend it with more edits in later turns. Length note 1 of 3."
    )
    assert notes.leak(3, 2, "hermes", "tool 'grep' is not offered") == (
        "Harness note, attempt 3: your previous reply wrote a tool call as hermes markup in its text, and the "
        "harness could not read it (tool 'grep' is not offered). No tool ran. Make the call again through the "
        "tool-calling interface, with its arguments as one JSON object that agrees with the schema of the tool. "
        "Do not write a tool call as text. If you need no tool, give the answer as plain text. Leak note 2 of 2."
    )
    calls = [
        ToolCall("1", "read", "", {"path": "a", "i": "why"}),
        ToolCall("2", "write", "", {"x": "y" * 900}),
    ]
    text = notes.redirect(4, 1, 5, calls)
    assert text.startswith(
        "Harness note, attempt 4: you made the same tool calls 5 times in a row, and they gave the same results "
        'each time: read {"path":"a"}; write {"x":"yyy'
    )
    assert text.endswith(
        "The harness did not run them again. Do not make these calls with these arguments again in this turn. "
        "Use different arguments, use a different tool, or give your answer with what you found. "
        "Redirect note 1 of 2."
    )
    assert len(notes.listed(calls[1:])) == len("write ") + 400


def test_run_errors() -> None:
    assert notes.repeat_gave_up(["read", "grep"], 5) == (
        "The model made the same tool calls (read, grep) with the same results 5 times in a row, after 2 "
        "redirect notes; the harness did not run them again."
    )
    assert notes.not_ready(86400) == (
        "The model's deferred response was not ready by its deadline, 86400 s after the request"
    )
    assert "maxToolRounds = 250" in notes.run_limit(250)
    assert notes.wait_too_long(3_600_000, 60_000, "x: HTTP 429") == (
        "the provider asked to wait 3600 s before a retry, longer than retry.provider.maxRetryDelayMs (60 s): "
        "x: HTTP 429"
    )
    assert notes.wait_too_long(2500, 1500, "c").startswith("the provider asked to wait 2.5 s before")


def test_the_rejected_output_note_and_its_cap() -> None:
    cause = "llamacpp: HTTP 500 (rejected): the model produced output that does not match"
    assert notes.rejected(2, 1, cause) == (
        "Harness note, attempt 2: your previous reply began a tool call that the server's tool-call parser "
        f"could not read, so the server discarded the reply and no tool ran ({cause}). Make the call again "
        "through the tool-calling interface, with its arguments as one JSON object that agrees with the schema "
        "of the tool. If you need no tool, give the answer as plain text. Rejected note 1 of 2."
    )
    assert notes.rejected_gave_up(cause) == (
        f"{cause}. The server's tool-call parser rejected the model's output after 2 rejected notes in a row: "
        "use a different model, or serve it with a chat template whose tool-call format it follows."
    )
