"""The H7.1/H7.2 model: which model runs a summarizer pass, and when its row is shown."""

from __future__ import annotations

import dataclasses

import pytest

from eukhe.rules import aux_fallback
from eukhe.rules.aux_fallback import CHECKS, NONE_SHOWN, Ask, Reason, Shown

USABLE = Ask(
    given=True, same=False, allowed=True, listed=True, named=True, keyed=True, offered=True, fits=True
)
FIELD = {
    Reason.NOT_ALLOWED: "allowed",
    Reason.LIST_UNREADABLE: "listed",
    Reason.NO_MODEL: "named",
    Reason.NO_KEY: "keyed",
    Reason.NOT_IN_SESSION: "offered",
    Reason.TOO_SMALL: "fits",
}


def failing(*reasons: Reason) -> Ask:
    return dataclasses.replace(USABLE, **{FIELD[r]: False for r in reasons})


def test_the_reasons_have_the_spec_s_words_in_the_spec_s_order() -> None:
    assert [r.value for r in CHECKS] == [
        "allowedModels does not include it",
        "the available-models list is unreadable",
        "no model with a configured key has this name",
        "API key not found",
        "the session model list does not include it",
        "its context window is too small for the request",
    ]


@pytest.mark.parametrize("i", range(len(CHECKS)))
def test_the_first_failing_check_is_the_reason(i: int) -> None:
    assert aux_fallback.gate(failing(*CHECKS[i:])) is CHECKS[i]
    route = aux_fallback.decide(NONE_SHOWN, failing(*CHECKS[i:]))
    assert (route.auxiliary, route.reason, route.notice) == (False, CHECKS[i], True)


def test_a_usable_auxiliary_model_runs_silently() -> None:
    route = aux_fallback.decide(NONE_SHOWN, USABLE)
    assert (route.auxiliary, route.reason, route.notice, route.shown) == (
        True,
        Reason.NONE,
        False,
        NONE_SHOWN,
    )


@pytest.mark.parametrize("ask", [dataclasses.replace(failing(*CHECKS), given=False), failing(*CHECKS)])
def test_unset_or_the_session_model_runs_the_session_model_silently(ask: Ask) -> None:
    if ask.given:
        ask = dataclasses.replace(ask, same=True)
    shown = Shown(True, False, True, False, True, False)
    route = aux_fallback.decide(shown, ask)
    assert (route.auxiliary, route.reason, route.notice, route.shown) == (False, Reason.NONE, False, shown)


def test_each_reason_is_shown_once_and_a_new_one_is_a_new_row() -> None:
    s = NONE_SHOWN
    rows = []
    for ask in (
        failing(Reason.NO_KEY),
        failing(Reason.NO_KEY),
        failing(Reason.TOO_SMALL),
        failing(Reason.NO_KEY),
    ):
        route = aux_fallback.decide(s, ask)
        rows.append(route.notice)
        s = route.shown
    assert rows == [True, False, True, False]
    assert aux_fallback.decide(NONE_SHOWN, failing(Reason.NO_KEY)).notice  # a reopened session
