"""A run's outcome crosses DBOS's boundary once (`RunOutcome.of`): what the workflow
returned to the store is what every face reads back, whatever the store holds."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from eukhe.run.outcome import Ending, RunOutcome
from eukhe.run.usage import Tally
from eukhe.settings.run import Price

texts = st.text(max_size=30)
counts = st.integers(min_value=0, max_value=10**9)
outcomes = st.builds(
    RunOutcome,
    outcome=st.sampled_from(list(Ending)),
    answer=texts,
    code=st.none() | st.sampled_from(["run_limit", "model_error", "aborted"]),
    message=st.none() | texts,
    rounds=counts,
    notes=counts,
    retries=counts,
    cut=st.booleans(),
    denials=st.lists(st.dictionaries(st.sampled_from(["tool", "why"]), texts), max_size=3),
    usage=st.builds(Tally, input=counts, output=counts, cached=counts, reasoning=counts),
    price=st.none() | st.builds(Price, input=st.floats(0, 100), output=st.floats(0, 100), cached=st.none()),
    session=st.none() | texts,
    run=st.none() | texts,
    duration_ms=st.none() | counts,
)


@given(outcomes)
def test_an_outcome_read_back_from_the_store_is_the_one_the_run_returned(out: RunOutcome) -> None:
    recorded = out.json()
    assert RunOutcome.of(recorded).json() == recorded


def test_what_is_no_outcome_reads_back_as_a_failure_that_says_so() -> None:
    for stored in ({}, {"outcome": "won"}, {"outcome": None, "usage": "x", "error": 3}):
        got = RunOutcome.of(stored)
        assert got.outcome is Ending.FAILED and got.code == "run_error", got
        assert got.message is not None and got.message.startswith("a run ended without an outcome")


def test_an_outcome_of_an_earlier_eukhe_reads_with_what_it_holds() -> None:
    got = RunOutcome.of({"outcome": "answered", "answer": "hi", "usage": {"input": 3}})
    assert (got.outcome, got.answer, got.usage.input, got.usage.output, got.json()["calls"]) == (
        Ending.ANSWERED, "hi", 3, 0, 0,
    )  # fmt: skip
