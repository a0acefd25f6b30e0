"""A process's runs through their handles (`run.handles`): a run's end reaches whoever waits
for it on their own loop, an abort reaches a run's loop from any thread and only a run begun
here, Ctrl-C aborts only the user's own runs, and a loop that has closed is told nothing."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from eukhe.run.context import ProcessContext
from eukhe.run.handles import RunTable, call_soon


class RunLoopThread:
    """A loop of its own in a thread, as DBOS runs the workflows: where a run begins."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, work: object) -> object:
        assert asyncio.iscoroutine(work)
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(timeout=5)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)
        self.loop.close()


@pytest.fixture
def elsewhere() -> Iterator[RunLoopThread]:
    t = RunLoopThread()
    yield t
    if not t.loop.is_closed():
        t.close()


def test_a_runs_end_reaches_its_waiter_on_the_waiters_own_loop(elsewhere: RunLoopThread) -> None:
    runs = RunTable()

    async def begin() -> asyncio.Event:
        cancel = asyncio.Event()
        runs.begin("s/0001", cancel)
        return cancel

    async def wait() -> bool:
        told = runs.handle("s/0001").ending()  # the face waits before the run has begun
        elsewhere.run(begin())
        assert not told.is_set()
        threading.Thread(target=runs.end, args=("s/0001",)).start()  # the run returns, on its own thread
        await asyncio.wait_for(told.wait(), timeout=5)
        return runs.get("s/0001") is None

    assert asyncio.run(wait())  # told, and gone from the table


def test_a_waiter_of_a_run_that_has_ended_is_told_at_once() -> None:
    runs = RunTable()

    async def wait() -> bool:
        handle = runs.handle("s/0001")
        runs.end("s/0001")
        return handle.ending().is_set()

    assert asyncio.run(wait())


def test_an_abort_reaches_a_run_begun_here_from_another_thread_and_nothing_else(
    elsewhere: RunLoopThread,
) -> None:
    runs = RunTable()
    cancel = asyncio.Event()

    async def begin() -> None:
        runs.begin("s/0001", cancel)

    elsewhere.run(begin())
    runs.handle("s/0002")  # awaited here, run elsewhere: nothing here to abort
    assert runs.abort("s/0001") and not runs.abort("s/0002") and not runs.abort("s/0003")

    async def aborted() -> bool:
        await asyncio.wait_for(cancel.wait(), timeout=5)
        return cancel.is_set()

    assert elsewhere.run(aborted())


def test_a_waiter_that_leaves_takes_only_a_handle_that_never_began_with_it(elsewhere: RunLoopThread) -> None:
    runs = RunTable()

    async def begin() -> None:
        runs.begin("s/0001", asyncio.Event())

    elsewhere.run(begin())
    runs.handle("s/0002")
    runs.forget("s/0001")
    runs.forget("s/0002")
    assert runs.get("s/0001") is not None and runs.get("s/0002") is None


def test_ctrl_c_aborts_the_users_own_runs_and_leaves_the_recovered_ones(elsewhere: RunLoopThread) -> None:
    here = ProcessContext()
    own, recovered = asyncio.Event(), asyncio.Event()
    here.runs.open("s/0001")

    async def begin() -> None:
        here.runs.begin("s/0001", own)
        here.runs.begin("t/0004", recovered)

    elsewhere.run(begin())
    here.interrupt()

    async def after() -> tuple[bool, bool]:
        await asyncio.wait_for(own.wait(), timeout=5)
        await asyncio.sleep(0.05)
        return own.is_set(), recovered.is_set()

    assert elsewhere.run(after()) == (True, False)


def test_a_loop_that_has_closed_is_told_nothing(elsewhere: RunLoopThread) -> None:
    elsewhere.close()
    told: list[int] = []
    call_soon(elsewhere.loop, told.append, 1)  # its run has ended: no error, nothing runs
    assert told == []
