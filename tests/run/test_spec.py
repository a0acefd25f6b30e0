"""A run's spec is a frozen RunSpec, and a dict only at DBOS's boundary: what a store
holds (of this eukhe or an earlier one) reads back as the same run."""

from __future__ import annotations

import dataclasses

import pytest

from eukhe.run.deadline import Deadline
from eukhe.run.spec import Parent, RunSpec

FULL = RunSpec(
    model="vllm/m",
    cwd="/w",
    prompt="go",
    system="sys",
    base_url="http://127.0.0.1:1/v1",
    api="openai-chat",
    settings={"maxToolRounds": 3},
    sandbox="read-only",
    approval="never",
    steps=2,
    steers=True,
    deferred="15m",
    poll_seconds=0.5,
    session="s.c1",
    child=Parent("s/0001", "s", 1),
    claim="ab12",
    session_start="resume",
    deadline=Deadline(1764637855.5, 90.0),
    asked=1764637800.25,
)


def test_a_spec_comes_back_from_its_dict_as_it_was() -> None:
    assert RunSpec.of(FULL.json()) == FULL
    bare = RunSpec(model="m/x", cwd="/w")
    assert RunSpec.of(bare.json()) == bare


def test_the_dict_keeps_the_keys_every_store_holds() -> None:
    assert set(FULL.json()) == {
        "prompt", "system", "model", "baseUrl", "api", "cwd", "settings", "sandbox", "approval",
        "steps", "steers", "deferred", "pollSeconds", "session", "child", "claim", "sessionStart",
        "deadline", "askedAt",
    }  # fmt: skip
    assert FULL.json()["child"] == {"parent": "s/0001", "session": "s", "depth": 1}
    assert FULL.json()["deadline"] == {"at": 1764637855.5, "seconds": 90.0}


def test_a_dict_an_earlier_eukhe_wrote_reads_with_the_defaults() -> None:
    old = {"prompt": "hi", "model": "vllm/m", "baseUrl": None, "api": None, "cwd": "/w", "settings": {}}
    got = RunSpec.of({**old, "followup": True})  # a key no longer written is ignored
    assert (got.steps, got.steers, got.poll_seconds, got.session, got.child) == (1, False, 5.0, None, None)
    assert (got.deadline, got.asked) == (None, None)  # no deadline: a run of an earlier eukhe has none
    assert got.prompt == "hi" and got.system == ""


def test_a_spec_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        FULL.prompt = "other"  # type: ignore[misc]
