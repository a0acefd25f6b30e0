"""The work ledger at run time against the model (H5.2): the bridge over generated
transcripts, and a looping child that keeps its token."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from eukhe.ai.reply import ToolCall
from eukhe.ai.request import Message
from eukhe.children.ledger import Ledger

NAMES = ("bash", "read", "edit")
ARGS = ('{"command": "ls"}', '{"path": "a.txt"}', '{"path": "b.txt"}')
RESULTS = ("ok", "3 files", "no such file")
WORDS = ("", "let me look", "I will try again", "thinking it over")


@st.composite
def transcripts(draw: st.DrawFn) -> list[Message]:
    """Rounds of calls (fresh call ids each time, drawn from few names, arguments and
    results, so repeats are common) between words: an answer, a retry's text."""
    out: list[Message] = []
    n = 0
    for _ in range(draw(st.integers(0, 60))):
        if draw(st.booleans()):
            out.append(Message("assistant", draw(st.sampled_from(WORDS))))  # words are no work
            continue
        calls = []
        for _ in range(draw(st.integers(1, 3))):
            n += 1
            name, raw = draw(st.sampled_from(NAMES)), draw(st.sampled_from(ARGS))
            calls.append(ToolCall(f"call_{n}", name, raw, json.loads(raw)))
        out.append(Message("assistant", draw(st.sampled_from(WORDS)), calls=tuple(calls)))
        for c in calls:
            out.append(
                Message("tool", draw(st.sampled_from(RESULTS)), call_id=c.id, is_error=draw(st.booleans()))
            )
    return out


def model_work(transcript: list[Message]) -> int:
    """What H5.2 counts, written out: the distinct acts, a call and its result by name,
    arguments, result text and error flag; call ids and words count nothing."""
    calls = {c.id: (c.name, c.raw) for m in transcript for c in m.calls}
    return len(
        {(*calls[m.call_id], m.content, m.is_error) for m in transcript if m.role == "tool" and m.call_id}
    )


@settings(max_examples=200, deadline=None, derandomize=True)
@given(transcripts())
def test_the_progress_check_equals_the_model(transcript: list[Message]) -> None:
    """The bridge (the spec's `the_rust_progress_check_equals_the_bend_model`): the
    runtime ledger, fed each message of a transcript as the run writes it, gives the
    model's work, and its token moves on a message exactly when the work does."""
    g = Ledger()
    seen: list[int] = []
    for i, m in enumerate(transcript):
        before = g.token()
        g.message(m)
        assert (g.token() != before) == (model_work(transcript[: i + 1]) != model_work(transcript[:i]))
        seen.append(g.token())
    assert g.token() == model_work(transcript)
    assert seen == sorted(seen)  # it never goes back


def test_a_looping_child_keeps_its_progress_token() -> None:
    """The same call with the same result, round after round (new call ids, new words,
    a progress note given again): the token stays where the first round put it."""
    g = Ledger()
    tokens = []
    for n in range(20):
        c = ToolCall(f"call_{n}", "bash", '{"command": "make"}', {"command": "make"})
        g.message(Message("assistant", f"attempt {n}", calls=(c,)))
        g.message(Message("tool", "make: *** [all] Error 1", call_id=c.id, is_error=True))
        g.note("still building")
        tokens.append(g.token())
    assert tokens == [2] * 20  # one act, one note
    g.note("the build passes now")
    assert g.token() == 3


def test_a_childs_token_counts_its_own_children_and_its_kernel_jobs() -> None:
    kids, jobs = [0], [0]
    g = Ledger(children=lambda: kids[0], jobs=lambda: jobs[0])
    assert g.token() == 0
    jobs[0] = 512  # a job printing
    assert g.token() == 512
    kids[0] = 3  # a busy child of its own
    assert g.token() == 515


def test_a_calls_progress_is_new_work_only_when_it_rises() -> None:
    """An MCP server that repeats or lowers its progress keeps a child's token; each strict
    rise moves it once, per call (H5.2: progress is new work, not events)."""
    g = Ledger()
    seen = [g.progressed("mcp:time:1:0", v) for v in (0.0, 0.0, 1.0, 0.5, 1.0, 2.0, float("nan"))]
    assert seen == [True, False, True, False, False, True, False]
    assert g.token() == 3
    assert g.progressed("mcp:time:1:1", 0.0)  # another call's progress is its own
    assert g.token() == 4
