"""The H7.1/H7.2 model: which model runs a summarizer pass, and when its row is shown."""

from __future__ import annotations

import dataclasses

import pytest

from eukhe.rules import aux_fallback
from eukhe.rules.aux_fallback import CHECKS, NONE_SHOWN, Ask, Purpose, Reason, Shown
from eukhe.run.auxiliary import AuxiliaryRoute, Choice

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


# ---------------------------------------------------------------- the route a session runs

SESSION = "openai/gpt-4.1"
AUX = "anthropic/claude-haiku"
ENV = {"OPENAI_API_KEY": "sk-session-0123456789", "ANTHROPIC_API_KEY": "sk-aux-0123456789"}


def routed(
    settings: dict[str, object], env: dict[str, str] = ENV, **kw: object
) -> tuple[AuxiliaryRoute, list[str]]:
    rows: list[str] = []
    r = AuxiliaryRoute(
        SESSION, settings, env=env, show=lambda kind, text: rows.append(f"{kind}: {text}"), **kw
    )  # type: ignore[arg-type]
    return r, rows


def test_an_unused_auxiliary_model_shows_a_notice_once() -> None:
    settings = {"auxiliaryModel": AUX, "models": {AUX: {"contextWindow": 2000}, SESSION: {}}}
    route, rows = routed(settings)
    assert route.choose(Purpose.COMPACTION, 1000) == Choice(AUX, True, Reason.NONE, None)
    first = route.choose(Purpose.COMPACTION, 5000)
    assert first == Choice(SESSION, False, Reason.TOO_SMALL, first.notice)
    assert first.notice == (
        "auxiliaryModel anthropic/claude-haiku is not used for compaction: its context window is too small "
        "for the request. The session model openai/gpt-4.1 runs it."
    )
    assert route.choose(Purpose.COMPACTION, 5000).notice is None  # once per session
    assert route.choose(Purpose.COMPACTION, 1000).auxiliary
    assert route.choose(Purpose.COMPACTION, 9000).notice is None
    summary = route.choose(Purpose.BRANCH_SUMMARY, 5000)  # another purpose: a new row
    assert summary.model == SESSION and summary.notice is not None and "for branch summary:" in summary.notice
    assert rows == [f"notice: {first.notice}", f"notice: {summary.notice}"]
    reopened, again = routed(settings)  # a reopened session shows it once again
    assert reopened.choose(Purpose.COMPACTION, 5000).notice == first.notice and len(again) == 1


def test_a_new_reason_is_a_new_row() -> None:
    settings: dict[str, object] = {"auxiliaryModel": AUX, "models": {AUX: {"contextWindow": 10}}}
    route, rows = routed(settings)
    route.choose(Purpose.COMPACTION, 50)
    route.settings = {**settings, "allowedModels": ["openai/*"]}
    route.choose(Purpose.COMPACTION, 50)
    route.choose(Purpose.COMPACTION, 50)
    assert [r.split(": ", 2)[2] for r in rows] == [
        "its context window is too small for the request. The session model openai/gpt-4.1 runs it.",
        "allowedModels does not include it. The session model openai/gpt-4.1 runs it.",
    ]


def test_unset_or_the_session_model_is_silent() -> None:
    for settings in ({}, {"auxiliaryModel": SESSION, "allowedModels": ["nothing/*"]}):
        route, rows = routed(settings)
        assert route.choose(Purpose.COMPACTION, 10**9) == Choice(SESSION, False, Reason.NONE, None)
        assert rows == []


def test_each_reason_at_its_place_in_the_order() -> None:
    models = {AUX: {"contextWindow": 100}}
    cases: list[tuple[dict[str, object], dict[str, str], list[str] | None, Reason]] = [
        ({"allowedModels": ["openai/gpt-4.1"], "models": "unreadable"}, {}, [], Reason.NOT_ALLOWED),
        ({"models": ["not", "an", "object"]}, {}, [], Reason.LIST_UNREADABLE),
        ({"models": {"anthropic/other": {}}}, {}, [], Reason.NO_MODEL),
        ({"models": models}, {"OPENAI_API_KEY": "k"}, [], Reason.NO_KEY),
        ({"models": models}, ENV, [SESSION], Reason.NOT_IN_SESSION),
        ({"models": models}, ENV, None, Reason.TOO_SMALL),
    ]
    for settings, env, session_models, reason in cases:
        route, _ = routed({"auxiliaryModel": AUX, **settings}, env, session_models=session_models)
        assert route.choose(Purpose.COMPACTION, 500).reason is reason, reason


def test_checks_stop_at_the_first_that_fails() -> None:
    reads: list[int] = []

    def available() -> dict[str, int | None]:
        reads.append(1)
        return {AUX: None}

    route, _ = routed({"auxiliaryModel": AUX, "allowedModels": [SESSION]}, available=available)
    assert route.choose(Purpose.COMPACTION, 5).reason is Reason.NOT_ALLOWED
    assert reads == []  # the list is not read once an earlier check failed


@pytest.mark.parametrize("key", ["sk-PLANTED0123456789abcdefXYZ", "x9Q2-planted-secret-77"])
def test_a_row_never_holds_credentials(key: str) -> None:
    """The key planted in every field: the selector, the session model, allowedModels,
    providers, models, the session model list and the environment."""
    env = {"ANTHROPIC_API_KEY": key, "OPENAI_API_KEY": key, "OTHER": key}
    settings = {
        "auxiliaryModel": f"anthropic/{key}",
        "allowedModels": [key, f"*{key}*"],
        "providers": {"anthropic": {"baseUrl": f"https://h/?key={key}", "apiKeyEnv": "ANTHROPIC_API_KEY"}},
        "models": {f"anthropic/{key}": {"contextWindow": 1}, key: {}},
    }
    rows = []
    for session_models in (None, [key]):
        for bad in ({}, {"allowedModels": ["none"]}, {"models": key}, {"models": {key: {}}}):
            rows_seen: list[str] = []
            route = AuxiliaryRoute(
                f"openai/{key}",
                {**settings, **bad},
                env=env,
                session_models=session_models,
                show=lambda kind, text, seen=rows_seen: seen.append(text),
            )
            for purpose in Purpose:
                c = route.choose(purpose, 10)
                rows += [c.notice or "", *rows_seen]
    assert len({r for r in rows if r}) >= 4
    for row in rows:
        assert key not in row and key[3:15] not in row, row


def test_the_route_asks_the_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tie: another rule, another route (the runtime decides nothing itself)."""
    route, rows = routed({"auxiliaryModel": AUX, "allowedModels": ["none"]})
    monkeypatch.setattr(aux_fallback, "decide", lambda s, a: aux_fallback.Route(True, Reason.NONE, False, s))
    assert route.choose(Purpose.COMPACTION, 5) == Choice(AUX, True, Reason.NONE, None) and rows == []
