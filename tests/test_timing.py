"""The polls of background waits: their defaults, a test's shorter ones from the
environment (never longer, never below SHORTEST), and a clear error for a bad value.
No settings key sets them: `eukhe.timing` is in the ground row of tests/test_layers.py,
below settings, so it cannot read them."""

from __future__ import annotations

import json

import pytest

from eukhe.timing import DEFAULT, SHORTEST, VARIABLE, Timing, timing


def test_the_defaults_hold_with_nothing_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(VARIABLE, raising=False)
    assert timing() == Timing() == DEFAULT
    assert DEFAULT.report_poll == 1.0 and DEFAULT.report_poll_max == 10.0
    assert DEFAULT.children_poll_max < 3.0  # below ABORT_GRACE: an aborted child ends within it


def test_a_test_shortens_a_poll_and_can_neither_lengthen_one_nor_make_it_a_busy_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(VARIABLE, json.dumps({"report_poll": 0.1, "idle_poll": 60, "drain_poll": 0}))
    got = timing()
    assert got.report_poll == 0.1
    assert got.idle_poll == DEFAULT.idle_poll  # asked for 60 s: held to the default
    assert got.drain_poll == SHORTEST  # asked for 0: a busy loop is never made
    assert got.elect_poll == DEFAULT.elect_poll  # not named: its default


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("{", "is not JSON"),
        ("[1]", "is not a JSON object"),
        ('{"report_pol": 0.1}', "no poll is called 'report_pol'"),
        ('{"report_poll": "fast"}', "report_poll is not a number of seconds: 'fast'"),
        ('{"report_poll": true}', "report_poll is not a number of seconds: True"),
        ('{"report_poll": NaN}', "report_poll is not a number of seconds"),
    ],
)
def test_a_bad_value_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, value: str, says: str) -> None:
    monkeypatch.setenv(VARIABLE, value)
    with pytest.raises(ValueError, match=f"{VARIABLE}.*{says}".replace("(", r"\(").replace("[", r"\[")):
        timing()
