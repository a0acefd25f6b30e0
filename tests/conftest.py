"""What every test shares: owners that `eukhe` processes of a test start end soon
after their last client (their homes are the tests' temp dirs), not 30 s later; the
polls of background waits short (`eukhe.timing`), so no test waits out a real second
for a change that came; and a run store opened in the test's own process (`store`)."""

from __future__ import annotations

import gc
import json
import signal
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from eukhe.client.handoff import OWNER_FORK
from eukhe.timing import VARIABLE
from tests import forks
from tests.sinks import Kept

pytest_plugins = ("tests.cost",)  # `--cost-log FILE`: each test's CPU-seconds (tests/cost.py)

POLLS = {
    "report_poll": 0.1,
    "report_poll_max": 0.5,
    "children_poll": 0.1,
    "children_poll_max": 0.5,
    "child_poll": 0.1,
    "idle_poll": 0.2,
    "elect_poll": 0.25,
    "drain_poll": 0.1,
    "turn_poll": 0.1,
    "agent_child_poll": 0.2,
}
"""Every test's polls, and those of the eukhe processes it starts (which inherit them)."""


@pytest.hookimpl(wrapper=True)
def pytest_collection() -> Generator[None, object, object]:
    """Collection imports every test module, and with them most of eukhe and its libraries (some
    9 CPU-seconds a pytest worker, four workers a suite): the cyclic collector, which walked the
    objects those imports make again and again, waits till it is done, and then leaves them out
    of its later walks for good (`gc.freeze`), as eukhe's warm template does with its own."""
    gc.disable()
    try:
        return (yield)
    finally:
        gc.freeze()
        gc.enable()


@pytest.fixture(autouse=True, scope="session")
def _owners_end_soon() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EUKHE_OWNER_IDLE_MS", "3000")
        # no warm template beside each test's owner: it imports all of eukhe again (about a
        # CPU-second) for a home whose few runs seldom use it; tests/cli/test_handoff.py asks for one
        mp.setenv("EUKHE_WARM", "0")
        # each test's owner forked by the worker's template (tests/forks.py), its imports done
        # (a third of a CPU-second each, some 220 owners a suite); tests/owner/test_owner_fork.py
        # shows both ways, and a test that starts its own Python's processes gets real ones
        mp.setenv(OWNER_FORK, forks.socket_path())
        mp.setenv(VARIABLE, json.dumps(POLLS))
        yield


@pytest.fixture(autouse=True, scope="session")
def _ctrl_c_as_at_a_terminal() -> Iterator[None]:
    """The processes a test starts take Ctrl-C as a terminal's foreground job does. A suite
    started in the background of a script (`make test &`, a runner's shell) has SIGINT
    ignored, and by POSIX it stays ignored in every process started from there: a handed
    run's client, started deaf to it, rightly stays so, and its Ctrl-C test waited 60 s."""
    was = signal.getsignal(signal.SIGINT)
    if was == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, was)


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """DBOS launched in this process on a fresh home's store, with this process's `ProcessContext`."""
    from eukhe.run import workflow
    from eukhe.store import durable

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("EUKHE_HOME", str(home))
    s = durable.open_store(home, {})
    workflow.begin(workflow.ProcessContext(chat_url=s.url))
    try:
        yield s
    finally:
        workflow.begin(workflow.ProcessContext())
        s.close()


@pytest.fixture
def durable_runtime(store: Any, tmp_path: Path) -> Any:
    """The durable runtime over `store`, its process's lines kept (`tests.sinks.Kept`, as
    `runtime.process.sink`)."""
    from eukhe.run import workflow
    from eukhe.run.runtime import Runtime

    return Runtime(
        tmp_path / "home", store, workflow.begin(workflow.ProcessContext(chat_url=store.url, sink=Kept()))
    )


@pytest.fixture
def runtime() -> Iterator[Path]:
    """A short folder of the test's own for a kernel's files: its IPC sockets' paths must fit
    a socket's 107 bytes, which pytest's own folders (their run counter grows) may not."""
    import shutil
    import tempfile

    d = Path(tempfile.mkdtemp(prefix="ekr-", dir="/tmp"))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)
