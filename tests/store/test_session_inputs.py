"""Where a session ran, read from its shown runs (`store.session_runs.inputs`): every input, the
last first, so a face can go back past one it cannot read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eukhe.store import session_runs


@dataclass
class Shown:
    input: Any


def test_every_input_comes_the_last_first_and_a_run_without_one_is_passed_over() -> None:
    shown = [
        Shown({"args": [{"model": "vllm/old"}]}),
        Shown(None),
        Shown({"args": [{"model": "vllm/new", "baseUrl": "http://127.0.0.1:1"}]}),
        Shown({"args": ["not a spec"]}),
    ]
    assert list(session_runs.inputs(shown)) == [
        {"model": "vllm/new", "baseUrl": "http://127.0.0.1:1"},
        {"model": "vllm/old"},
    ]
    assert session_runs.last_input(shown) == {"model": "vllm/new", "baseUrl": "http://127.0.0.1:1"}
    assert session_runs.last_input([Shown(None)]) is None
