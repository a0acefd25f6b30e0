"""A run's outcome goes typed from its workflow to the screen and the exit code: the printer
(here the event stream, behind the command line's `RunView`) is given a `RunOutcome`, never
its JSON, which is made only where DBOS records it and where `--json` and `--events` print
it. A `--timeout` failure is one such outcome, and so is one an earlier eukhe recorded."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from eukhe.ai.faux import FauxServer, parse
from eukhe.cli.printer import RunView, Stream, exit_code
from eukhe.run import workflow
from eukhe.run.deadline import TIMEOUT, Deadline
from eukhe.run.outcome import Ending, RunOutcome
from eukhe.run.runtime import Runtime
from eukhe.run.spec import STEPS, RunSpec
from eukhe.store import durable
from eukhe.store.durable import Store
from tests.store.test_store_safety import ANSWERED, FIXTURE, in_a_home

SLOW = {"text": "one two three four five six seven eight nine ten", "chunks": 20, "delay": 0.5}


class Kept(Stream):
    """The event stream, keeping what each run's end gives it."""

    def __init__(self) -> None:
        self.text = io.StringIO()
        super().__init__(self.text)
        self.given: list[object] = []

    def outcome(self, out: RunOutcome) -> None:
        self.given.append(out)
        super().outcome(out)

    def last(self) -> dict[str, object]:
        got: dict[str, object] = json.loads(self.text.getvalue().splitlines()[-1])
        return got


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home whose store is a copy of eukhe 0.1.0's (tests/fixtures/stores)."""
    home, _, _ = in_a_home(FIXTURE, tmp_path)
    monkeypatch.setenv("EUKHE_HOME", str(home))
    return home


@pytest.fixture
def opened(home: Path) -> Iterator[tuple[Runtime, RunView, Kept]]:
    """The durable runtime in this process over `home`'s store, its sink the command line's
    view of session `s` over the kept event stream."""
    stream = Kept()
    view = RunView(stream, "s")
    store: Store = durable.open_store(home, {}, recovers=False)  # its run in flight is left
    try:
        here = workflow.begin(workflow.ProcessContext(chat_url=store.url, sink=view))
        yield Runtime(home, store, here), view, stream
    finally:
        workflow.begin(workflow.ProcessContext())
        store.close()


def test_a_timed_out_run_reaches_the_printer_and_the_exit_code_as_one_typed_outcome(
    opened: tuple[Runtime, RunView, Kept], tmp_path: Path
) -> None:
    runtime, view, stream = opened
    with FauxServer(parse([{"when": "count", **SLOW}])) as server:
        deadline = Deadline.after(2, time.time())
        spec = RunSpec(prompt="count", model="vllm/m", base_url=server.url, cwd=str(tmp_path), steps=STEPS)
        spec = dataclasses.replace(spec, deadline=deadline)
        asyncio.run(runtime.drive(spec, "s", by_owner=False))
    [out] = stream.given
    assert isinstance(out, RunOutcome), type(out)
    assert (out.outcome, out.code, out.message) == (Ending.FAILED, TIMEOUT, "timed out after 2 seconds")
    assert view.code == exit_code(out) == 124
    last = stream.last()  # the event stream's outcome, its JSON as DBOS recorded it
    assert last["type"] == "outcome" and last["outcome"] == "failed", last
    assert last["error"] == {"kind": TIMEOUT, "message": "timed out after 2 seconds"}


def test_an_outcome_an_earlier_eukhe_recorded_reads_back_typed(opened: tuple[Runtime, RunView, Kept]) -> None:
    runtime, view, stream = opened
    out = asyncio.run(runtime.result(f"{ANSWERED}/0001"))  # eukhe 0.1.0's: no calls, usage, denials
    assert isinstance(out, RunOutcome)
    assert (out.outcome, out.answer, out.rounds, out.code) == (Ending.ANSWERED, "It says alpha.", 1, None)
    view.ended(f"{ANSWERED}/0001", out)
    [given] = stream.given  # the same outcome, told with its session and run
    assert isinstance(given, RunOutcome) and view.code == exit_code(out) == 0
    assert (given.session, given.run) == (ANSWERED, f"{ANSWERED}/0001")
    assert dataclasses.replace(given, session=None, run=None, duration_ms=None) == out
    last = stream.last()
    assert (last["outcome"], last["answer"], last["error"]) == ("answered", "It says alpha.", None)
    assert last["rounds"] == 1 and last["session_id"] == ANSWERED and last["total_cost_usd"] == 0.0
