"""The H1 model of one compactor call and its node, and the settle measure of H2.2."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from eukhe.rules import compactor as c
from eukhe.rules.compactor import LIMITS, Act, End, Kind, Outcome, Pend, Reply


def text(n: int) -> Reply:
    return Reply(Kind.TEXT, n)


def test_the_constants_have_the_spec_values() -> None:
    assert (c.NODE, c.TRIES, c.FAILURES) == (512, 5, 3)
    assert (c.CALL_DEADLINE, c.RETRY) == (600_000, 10_000)
    assert LIMITS == c.Cfg(tries=5, node=512, failures=3)


def test_failed_replies_fail_and_empty_ones_give_the_input_cut() -> None:
    assert c.line_run(LIMITS, 900, [c.ERROR]).end is End.FAILED
    assert c.outcome(c.line_run(LIMITS, 900, [c.ERROR])) is Outcome.FAILED
    for empty in (c.EMPTY, c.read_reply("  \n"), c.read_reply(""), text(0)):
        line = c.line_run(LIMITS, 900, [empty, text(10)])
        assert (line.end, line.calls, line.size) == (End.INPUT, 1, 900)
        assert c.outcome(line) is Outcome.BUILT
        assert c.ended(LIMITS, line, "é" * 450, []) == "é" * 256


def test_a_model_call_past_its_deadline_fails() -> None:
    """The runtime reads a call past CALL_DEADLINE (slot wait and preemptions included)
    as an error reply: the call fails, even after over-long replies."""
    line = c.line_run(LIMITS, 900, [text(700), text(600), c.ERROR])
    assert (line.end, line.calls) == (End.FAILED, 3)
    assert c.ended(LIMITS, line, "x" * 900, ["a" * 700, "b" * 600]) is None


def test_over_long_lines_get_the_cut_and_the_shortest_cut_wins() -> None:
    line = c.line_run(LIMITS, 900, [text(530), text(520), text(519), text(518), text(517), text(1)])
    assert (line.end, line.calls, line.chosen, line.size) == (End.BEST, 5, 5, 517)
    replies = ["a" * 530, "b" * 520, "c" * 519, "d" * 518, "e" * 517]
    assert c.ended(LIMITS, line, "x", replies) == "e" * 512


def test_a_follow_up_not_shorter_ends_the_tries_with_the_best_reply() -> None:
    for second in (530, 531, 9000):
        line = c.line_run(LIMITS, 900, [text(530), text(second), text(3)])
        assert (line.end, line.calls, line.chosen, line.size) == (End.BEST, 2, 1, 530)
    line = c.line_run(LIMITS, 900, [text(600), text(550), text(560)])
    assert (line.calls, line.chosen, line.size) == (3, 2, 550)


def test_the_first_reply_that_fits_is_the_line() -> None:
    line = c.line_run(LIMITS, 900, [text(700), text(512), text(3)])
    assert (line.end, line.calls, line.chosen, line.size) == (End.FIT, 2, 2, 512)
    assert c.ended(LIMITS, line, "x", ["long" * 200, "  short  "]) == "short"


def test_an_empty_reply_still_gives_a_line_that_fits() -> None:
    line = c.line_run(LIMITS, 3000, [text(700), c.EMPTY])
    assert (line.end, line.calls) == (End.INPUT, 2)
    cut = c.ended(LIMITS, line, "🙂" * 750, ["x" * 700])
    assert cut == "🙂" * 128 and c.nbytes(cut) == 512


def test_malformed_sizes_fail_the_call_and_no_tries_give_the_input() -> None:
    assert c.line_open(LIMITS, -1).end is End.FAILED
    assert c.line_run(LIMITS, 10, [text(-5)]).end is End.FAILED
    line = c.line_open(c.Cfg(0, 512, 3), 10)
    assert (line.end, line.calls, line.size) == (End.INPUT, 0, 10)
    assert c.ended(LIMITS, c.line_run(LIMITS, 10, [text(5)]), "x", []) is None  # the reply is missing


def test_a_node_that_keeps_failing_is_built_from_its_input() -> None:
    p = c.pend_start(LIMITS)
    assert p == Pend(False, 2)
    acts = []
    for o in (Outcome.FAILED, Outcome.DISK, Outcome.STOPPED, Outcome.FAILED, Outcome.DISK, Outcome.FAILED):
        a = c.pend_after(LIMITS, p, o)
        acts.append(a.act)
        p = a.pend
    assert acts == [Act.RETRY, Act.RETRY, Act.REQUEUE, Act.RETRY, Act.RETRY, Act.CUT]
    assert p.made
    assert c.pend_after(LIMITS, p, Outcome.FAILED).act is Act.IGNORED


def test_the_failure_cap_reads_nothing() -> None:
    """The last failure builds the node from the failed call's input, which the runtime
    holds: the answer is CUT (save `cut(input, NODE)`), never a new read. A failed cut
    save is a disk failure: the node stays as it was, with no failure left."""
    last = Pend(False, 0)
    assert c.pend_after(LIMITS, last, Outcome.FAILED) == c.After(c.MADE, Act.CUT)
    assert c.pend_after(LIMITS, last, Outcome.DISK) == c.After(last, Act.RETRY)


def test_a_saved_line_builds_the_node_at_once() -> None:
    assert c.pend_after(LIMITS, Pend(False, 2), Outcome.BUILT) == c.After(c.MADE, Act.DONE)


def test_the_settle_measure_counts_failures_left_plus_one_per_pending_line() -> None:
    fresh = c.pend_start(LIMITS)
    assert c.measure([fresh] * 4) == c.FAILURES * 4
    assert c.measure([c.MADE, Pend(False, 0), Pend(False, 1)]) == 3
    assert c.settled([c.MADE, c.MADE]) and not c.settled([c.MADE, fresh])
    assert c.settle_hit(LIMITS, [fresh], 5, Outcome.BUILT) == (fresh,)


@given(st.integers(0, 6), st.lists(st.tuples(st.integers(0, 5), st.sampled_from(list(Outcome))), max_size=80))
def test_a_view_settles_after_at_most_its_measure_counted_outcomes(
    k: int, hits: list[tuple[int, Outcome]]
) -> None:
    view = (c.pend_start(LIMITS),) * k
    start = c.measure(view)
    counted = 0
    for line, o in hits:
        if line < k and not view[line].made and c.counted(o):
            counted += 1
        view = c.settle_hit(LIMITS, view, line, o)
        assert counted + c.measure(view) <= start
    assert counted < start or c.settled(view)


# ---------------------------------------------------------------- cut


@given(st.text(), st.integers(-3, 40))
def test_cut_keeps_the_longest_prefix_within_the_limit_at_a_character_boundary(s: str, limit: int) -> None:
    out = c.cut(s, limit)
    assert s.startswith(out)
    assert c.nbytes(out) <= max(limit, 0)
    if len(out) < len(s):
        assert c.nbytes(s[: len(out) + 1]) > limit
    low, high = c.cut_bounds(c.nbytes(s), limit)
    assert low <= c.nbytes(out) <= high


@given(st.text(min_size=1), st.integers(c.WIDEST, 600))
def test_a_non_empty_text_cut_to_at_least_the_widest_character_is_never_empty(s: str, limit: int) -> None:
    assert 1 <= c.nbytes(c.cut(s, limit)) <= limit


def test_cut_takes_lone_surrogates() -> None:
    assert c.cut("a\ud800b", 4) == "a\ud800"
    assert c.nbytes("\ud800") == 3


@given(
    st.lists(st.one_of(st.text(max_size=700), st.just("")), min_size=1, max_size=7),
    st.text(max_size=900),
)
def test_every_line_the_runtime_saves_fits(replies: list[str], input_text: str) -> None:
    """Driven as the runtime drives it: the sizes it sends, the texts it keeps."""
    line = c.line_run(LIMITS, c.nbytes(input_text), [c.read_reply(r) for r in replies])
    out = c.ended(LIMITS, line, input_text, replies)
    assert line.calls <= c.TRIES
    if line.end is End.LIVE or line.end is End.FAILED:
        assert out is None
    else:
        assert out is not None and c.nbytes(out) <= c.NODE
        if input_text:
            assert c.nbytes(out) >= 1


def test_a_short_input_is_its_own_line_and_a_long_one_needs_the_model() -> None:
    from eukhe.rules.compactor import LIMITS, NODE, free_line, joined, labelled

    assert free_line(LIMITS, labelled("user", "hi")) == "user: hi"
    edge = labelled("echo", "x" * (NODE - 6))
    assert free_line(LIMITS, edge) == edge and free_line(LIMITS, edge + "x") is None
    assert free_line(LIMITS, "") is None
    half = "y" * (NODE // 2)
    assert free_line(LIMITS, joined(half, half[1:])) == f"{half}\n{half[1:]}"
    assert free_line(LIMITS, joined(half, half)) is None  # one byte over: the model merges them
