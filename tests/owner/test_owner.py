"""The owner and its clients over a real unix socket: reply deadlines on a clock the
test moves, admission shared across connections (grants, preemption, a dead
client's slots), the root-turn lease, status and shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import stat
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from eukhe.admission import Preempted
from eukhe.client import protocol
from eukhe.client.admission import RemoteRegistry
from eukhe.client.client import Client, OwnerError
from eukhe.client.lease import LeaseStopped, root_lease
from eukhe.client.protocol import RequestKind
from eukhe.owner.server import Owner
from eukhe.waits import ManualClock

ONE_SLOT = {"providers": {"p": {"concurrency": 1}}}


def test_every_request_to_a_remote_owner_but_the_lease_has_a_reply_deadline() -> None:
    """Every kind of request takes a side, with no default: the lease and an admission
    slot wait without a deadline (they end otherwise); the settled view has the
    settle deadline plus 30 s; an import 100 ms an item plus 30 s; every other 30 s."""
    unbounded = {RequestKind.LEASE, RequestKind.ADMIT}
    settle = {"settleMs": 20_000}
    items = {"entries": [{}] * 50}
    for kind in RequestKind:
        if kind in unbounded:
            assert protocol.reply_deadline(kind, {**settle, **items}) is None, kind
        elif kind is RequestKind.VIEW:
            assert protocol.reply_deadline(kind, settle) == 20.0 + 30.0
            assert protocol.reply_deadline(kind, {}) == 30.0
        elif kind is RequestKind.IMPORT:
            assert protocol.reply_deadline(kind, items) == pytest.approx(5.0 + 30.0)
            assert protocol.reply_deadline(kind, {}) == 30.0
        else:
            assert protocol.reply_deadline(kind, {**settle, **items}) == protocol.REPLY == 30.0, kind
    source = inspect.getsource(protocol.reply_deadline)
    assert "case _" not in source and "assert_never(kind)" in source


@pytest.fixture
def home() -> AsyncIterator[Path]:
    with tempfile.TemporaryDirectory(prefix="eukhe-owner-") as d:
        yield Path(d)


def test_a_stuck_owner_fails_the_request_at_its_reply_deadline(home: Path) -> None:
    """An owner that reads requests and never answers: the request fails at 30 s on
    the client's clock, with what it asked and how long it waited, not before."""

    async def go() -> None:
        heard: list[bytes] = []

        async def stuck(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            heard.append(await reader.readline())
            await asyncio.sleep(3600)

        path = home / "stuck.sock"
        server = await asyncio.start_unix_server(stuck, path=str(path))
        clock = ManualClock()
        reader, writer = await asyncio.open_unix_connection(str(path))
        client = Client(reader, writer, clock)
        ask = asyncio.ensure_future(client.request(RequestKind.STATUS))
        for _ in range(20):
            await asyncio.sleep(0)
        clock.advance(29.9)
        for _ in range(20):
            await asyncio.sleep(0)
        assert not ask.done() and heard and b'"status"' in heard[0]
        clock.advance(0.2)
        with pytest.raises(OwnerError, match="did not answer status within its reply deadline of 30 s"):
            await asyncio.wait_for(ask, 5)
        assert clock.sleepers == 0
        await client.close()
        server.close()

    asyncio.run(go())


@contextlib.asynccontextmanager
async def serving(home: Path, settings: dict[str, object] | None = None) -> AsyncIterator[Owner]:
    owner = Owner(home, settings, idle=3600)
    task = asyncio.ensure_future(owner.serve())
    path = protocol.socket_path(home)
    for _ in range(500):
        if path.exists():
            break
        await asyncio.sleep(0.01)
    try:
        yield owner
    finally:
        owner.stop()
        await asyncio.wait_for(task, 5)


async def settle() -> None:
    for _ in range(50):
        await asyncio.sleep(0.002)


def test_two_clients_share_a_one_slot_provider_and_a_dead_client_frees_its_slot(home: Path) -> None:
    async def go() -> None:
        async with serving(home, ONE_SLOT) as owner:
            a, b = RemoteRegistry(home), RemoteRegistry(home)
            a_conn = await a.client()
            entered = asyncio.Event()
            order: list[str] = []

            async def hold_a() -> None:
                async with a.slot("p", interactive=True):
                    order.append("a")
                    entered.set()
                    await asyncio.sleep(3600)

            holder = asyncio.ensure_future(hold_a())
            await asyncio.wait_for(entered.wait(), 5)

            async def wait_b() -> None:
                async with b.slot("p", interactive=True) as s:
                    assert s.queued
                    order.append("b")

            waiter = asyncio.ensure_future(wait_b())
            await settle()
            assert owner.status()["providers"]["p"] == {
                "held": 1,
                "queued": {"interactive": 1, "background": 0},
                "limit": 1,
            }
            assert not waiter.done()
            a_conn.writer.transport.abort()  # the client dies holding its slot
            await asyncio.wait_for(waiter, 5)
            assert order == ["a", "b"]
            holder.cancel()
            await b.close()

    asyncio.run(go())


def test_a_session_request_of_one_client_preempts_the_background_slot_of_another(home: Path) -> None:
    async def go() -> None:
        async with serving(home, ONE_SLOT):
            compactor, session = RemoteRegistry(home), RemoteRegistry(home)
            held = asyncio.Event()

            async def background() -> None:
                async with compactor.slot("p", interactive=False):
                    held.set()
                    await asyncio.sleep(3600)

            bg = asyncio.ensure_future(background())
            await asyncio.wait_for(held.wait(), 5)
            async with session.slot("p", interactive=True) as s:
                assert not s.queued  # the background slot was taken at once (H3.1)
            with pytest.raises(Preempted):
                await asyncio.wait_for(bg, 5)
            await compactor.close()
            await session.close()

    asyncio.run(go())


def test_the_lease_is_first_come_first_served_and_a_crashed_holder_frees_it(home: Path) -> None:
    async def go() -> None:
        async with serving(home) as owner:
            one, two, three = [await Client.connect(home, spawn=False) for _ in range(3)]
            shown: list[str] = []
            async with root_lease(one, "s1", "s1/1") as key:
                assert key == 0
                second = asyncio.ensure_future(_hold(two, "s2", "s2/1", shown))
                await settle()
                third = asyncio.ensure_future(_hold(three, "s3", "s3/1", []))
                await settle()
                status = owner.status()["lease"]
                assert status["holder"]["session"] == "s1"
                assert [w["session"] for w in status["waiters"]] == ["s2", "s3"]
                assert shown and "session s1, run s1/1 holds it" in shown[0] and "Ctrl-C" in shown[0]
                one.writer.transport.abort()  # the holder's process dies in its turn
                assert await asyncio.wait_for(second, 5) == 1
            await asyncio.wait_for(third, 5)
            await settle()
            assert owner.root_lease.holder == -1 and owner.root_lease.pending == 0
            for c in (two, three):
                await c.close()

    asyncio.run(go())


async def _hold(client: Client, session: str, run: str, shown: list[str]) -> int:
    async with root_lease(client, session, run, show=shown.append) as key:
        await asyncio.sleep(0.01)
        return key


def test_a_cancelled_lease_wait_leaves_nothing_at_the_owner(home: Path) -> None:
    async def go() -> None:
        async with serving(home) as owner:
            one, two = [await Client.connect(home, spawn=False) for _ in range(2)]
            cancel = asyncio.Event()
            async with root_lease(one, "s1", "r1"):
                waiting = asyncio.ensure_future(_hold_with(two, cancel))
                await settle()
                assert owner.root_lease.waiters == [1]
                cancel.set()
                with pytest.raises(LeaseStopped):
                    await asyncio.wait_for(waiting, 5)
                await settle()
                assert owner.root_lease.waiters == [] and owner.root_lease.pending == 0
            await settle()
            assert owner.root_lease.holder == -1  # released, and handed to no one stopped
            for c in (one, two):
                await c.close()

    asyncio.run(go())


async def _hold_with(client: Client, cancel: asyncio.Event) -> None:
    async with root_lease(client, "s2", "r2", cancel=cancel):
        raise AssertionError("a stopped wait never holds")


def test_status_and_shutdown_through_the_socket_and_the_socket_is_private(home: Path) -> None:
    async def go() -> None:
        owner = Owner(home, idle=3600)
        task = asyncio.ensure_future(owner.serve())
        while not protocol.socket_path(home).exists():
            await asyncio.sleep(0.01)
        mode = stat.S_IMODE(os.stat(protocol.socket_path(home)).st_mode)
        assert mode == 0o600
        client = await Client.connect(home, spawn=False)
        got = await client.request(RequestKind.STATUS)
        assert got["owner"]["pid"] == os.getpid()
        assert [c["pid"] for c in got["clients"]] == [os.getpid()]
        assert got["lease"] == {"holder": None, "waiters": []}
        await client.request(RequestKind.SHUTDOWN)
        await asyncio.wait_for(task, 5)
        assert not protocol.socket_path(home).exists()
        with pytest.raises(OwnerError, match="no owner listens"):
            await Client.connect(home, spawn=False)
        await client.close()

    asyncio.run(go())


def test_an_idle_owner_ends_and_frees_its_home(home: Path) -> None:
    async def go() -> None:
        owner = Owner(home, idle=0.05)
        await asyncio.wait_for(owner.serve(), 5)
        again = Owner(home, idle=0.05)
        again.claim()  # the lock was freed
        await again.close()

    asyncio.run(go())


def test_a_malformed_request_gets_an_error_and_the_connection_goes_on(home: Path) -> None:
    async def go() -> None:
        async with serving(home):
            reader, writer = await asyncio.open_unix_connection(str(protocol.socket_path(home)))
            writer.write(b"not json\n")
            writer.write(b'{"id": 1, "kind": "nope"}\n')
            writer.write(b'{"id": 2, "kind": "admit"}\n')
            writer.write(b'{"id": 3, "kind": "status"}\n')
            lines = [protocol.decode(await asyncio.wait_for(reader.readline(), 5)) for _ in range(4)]
            assert "not a JSON line" in lines[0]["error"]
            assert lines[1] == {"id": 1, "error": "unknown request kind 'nope'"}
            assert lines[2]["id"] == 2 and "malformed request" in lines[2]["error"]
            assert lines[3]["id"] == 3 and "owner" in lines[3]["ok"]
            writer.close()

    asyncio.run(go())


def test_the_first_client_starts_a_detached_owner_and_a_killed_owner_is_replaced(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real processes: clients that find no owner start one (two at once start one
    that wins the home); SIGKILL it, and the next client starts another."""
    import signal

    from eukhe.client.client import alive, read_info

    async def go() -> None:
        first, second = await asyncio.gather(Client.connect(home), Client.connect(home))
        pid = first.owner["pid"]
        assert pid == second.owner["pid"] != os.getpid()
        assert read_info(home) == {
            "pid": pid,
            "since": first.owner["since"],
            "socket": str(protocol.socket_path(home)),
        }
        os.kill(pid, signal.SIGKILL)
        await asyncio.wait_for(first.closed.wait(), 5)  # the connection's close ends every wait
        with pytest.raises(OwnerError, match=r"closed the connection|connection broke"):
            await first.request(RequestKind.STATUS)
        third = await Client.connect(home)
        assert third.owner["pid"] not in (pid, os.getpid())
        await third.request(RequestKind.SHUTDOWN)
        for c in (first, second, third):
            await c.close()
        for _ in range(500):
            if not alive(third.owner["pid"]) or not protocol.socket_path(home).exists():
                break
            await asyncio.sleep(0.01)
        assert not protocol.socket_path(home).exists()

    monkeypatch.setenv("EUKHE_OWNER_IDLE_MS", "2000")  # an owner left behind ends soon
    asyncio.run(go())


def test_a_failed_transform_fails_the_turn_and_sends_nothing_through_the_owner(home: Path) -> None:
    """The same turn whose slots come from the owner: a failing before_request hook
    fails it, nothing is sent, and no slot stays taken at the owner."""
    from eukhe.ai.faux import FauxServer, parse
    from eukhe.ai.openai_chat import OpenAIChat
    from eukhe.ai.request import Request
    from eukhe.run.loop import RunLoop
    from eukhe.settings.run import Settings
    from tests.run.test_generation import TOOLS, Runner

    async def broken(request: Request) -> Request:
        raise RuntimeError("the transform broke")

    async def go(url: str) -> tuple[object, dict[str, object]]:
        async with serving(home, {"providers": {"faux": {"concurrency": 1}}}) as owner:
            registry = RemoteRegistry(home)
            p = OpenAIChat("faux", base_url=url, timeout=20)
            try:
                g = RunLoop(p, "m", TOOLS, Runner(), Settings(), request_hooks=[broken], admission=registry)
                out = await g.run("go")
            finally:
                await p.close()
                await registry.close()
            await settle()
            return out, owner.status()

    with FauxServer(parse(["never sent"])) as server:
        out, status = asyncio.run(go(server.url))
    assert out.outcome == "failed" and server.seen == []  # type: ignore[attr-defined]
    assert out.message == "a before_request hook failed: RuntimeError: the transform broke"  # type: ignore[attr-defined]
    assert all(p["held"] == 0 for p in status["providers"].values())  # type: ignore[union-attr]


def test_a_dropped_wait_for_the_turn_file_leaves_nothing_behind(home: Path) -> None:
    """A new owner finds in the store a holder whose process still runs (its turn may
    still run): it grants no one the lease until that process is gone. A wait that is
    dropped meanwhile leaves nothing (no waiter, no grant kept), and the lease, once
    the old holder is gone, is free, handed to no one stopped, and taken at once."""
    import subprocess
    import sys

    from eukhe.owner.server import OLD
    from eukhe.store.lease_holder import Holder, LeaseHolderStore
    from eukhe.store.processes import started

    old = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    store = LeaseHolderStore(f"sqlite:///{home / 'eukhe.sqlite'}", "here")
    host = __import__("socket").gethostname()
    store.hold(Holder(host, old.pid, started(old.pid), "s-old", "s-old/1", 1.0))

    async def go() -> None:
        owner = Owner(home, idle=3600, lease_holders=store)
        task = asyncio.ensure_future(owner.serve())
        while not protocol.socket_path(home).exists():
            await asyncio.sleep(0.01)
        assert owner.root_lease.state.holder is not None and owner.root_lease.state.holder.origin == OLD
        client = await Client.connect(home, spawn=False)
        cancel, shown = asyncio.Event(), []
        waiting = asyncio.ensure_future(_hold_with_shown(client, cancel, shown))
        await settle()
        assert owner.root_lease.waiters == [1] and shown and "session s-old, run s-old/1 holds it" in shown[0]
        cancel.set()
        with pytest.raises(LeaseStopped):
            await asyncio.wait_for(waiting, 5)
        await settle()
        assert (
            owner.root_lease.waiters == [] and owner.root_lease.pending == 0
        )  # the dropped wait left nothing
        old.kill()
        old.wait()
        for _ in range(300):
            if owner.root_lease.holder == -1:
                break
            await asyncio.sleep(0.01)
        assert owner.root_lease.holder == -1 and store.holder() is None  # free, and handed to no one stopped
        async with root_lease(client, "s-new", "s-new/1") as key:
            assert store.holder() is not None and store.holder().run == "s-new/1"  # type: ignore[union-attr]
            assert key == 2
        await settle()
        assert store.holder() is None
        owner.stop()
        await asyncio.wait_for(task, 5)
        await client.close()

    try:
        asyncio.run(go())
    finally:
        old.kill()
        store.close()


async def _hold_with_shown(client: Client, cancel: asyncio.Event, shown: list[str]) -> None:
    async with root_lease(client, "s-two", "s-two/1", cancel=cancel, show=shown.append):
        raise AssertionError("a stopped wait never holds")


def test_a_holder_record_of_a_process_that_is_gone_is_cleared_at_start(home: Path) -> None:
    from eukhe.store.lease_holder import Holder, LeaseHolderStore

    store = LeaseHolderStore(f"sqlite:///{home / 'eukhe.sqlite'}", "here")
    store.hold(Holder(__import__("socket").gethostname(), 2**22 + 11, None, "s", "s/1", 1.0))

    async def go() -> None:
        async with serving(home) as owner:
            owner.lease_holders = store
            owner._adopt()
            assert owner.root_lease.holder == -1 and store.holder() is None
            client = await Client.connect(home, spawn=False)
            async with root_lease(client, "s2", "s2/1") as key:
                assert key == 0
            await client.close()

    asyncio.run(go())
    store.close()


def test_a_full_queue_at_the_owner_is_a_retryable_refusal_and_a_slot_wait_has_the_callers_deadline(
    home: Path,
) -> None:
    from eukhe.admission import AdmissionError, SlotTimeout

    async def go() -> None:
        async with serving(home, {"providers": {"p": {"concurrency": 1, "queueLimit": 0}}}):
            registry = RemoteRegistry(home)
            registry.configure({"providers": {"p": {"concurrency": 1, "queueLimit": 0}}})
            async with registry.slot("p", interactive=True):
                with pytest.raises(AdmissionError, match="queue is full") as full:
                    async with registry.slot("p", interactive=True):
                        raise AssertionError("a full queue grants nothing")
                assert full.value.retryable
            other = RemoteRegistry(home)
            other.configure({"providers": {"p": {"concurrency": 1, "queueLimit": 5}}})
            async with registry.slot("p", interactive=True):
                await other.client()
                await (await other.client()).request(
                    RequestKind.CONFIGURE, settings={"providers": {"p": {"concurrency": 1, "queueLimit": 5}}}
                )
                deadline = asyncio.get_running_loop().time() + 0.2
                with pytest.raises(SlotTimeout, match=r"providers\.p\.concurrency=1"):
                    async with other.slot("p", interactive=True, deadline=deadline):
                        raise AssertionError("the slot is held")
            await registry.close()
            await other.close()

    asyncio.run(go())


def test_a_settle_wait_through_the_owner_ends_at_once_on_the_runs_cancel(home: Path) -> None:
    """A turn's view through the owner waits for a line that cannot be built (no
    compactor model); the run's cancel ends the wait at once: the owner is told, and
    answers with the view as it is, the line shown cut, its progress said on the way."""
    from eukhe.client.remote_chat import Remote
    from eukhe.memory.log import Entry
    from eukhe.memory.log import EntryKind as LogKind

    async def go() -> None:
        async with serving(home) as owner:
            registry = RemoteRegistry(home)
            memory = Remote(registry.client, None, 128_000)
            assert (
                await memory.log([Entry("r/0", LogKind.TALK, "long " * 400, "2026-12-01T00:00:00+00:00")])
                == 1
            )
            assert await memory.total() == 1 and await memory.unbuilt() == 1
            cancel, shown = asyncio.Event(), []
            loop = asyncio.get_running_loop()
            loop.call_later(0.3, cancel.set)
            began = loop.time()
            got = await asyncio.wait_for(memory.settled(20_000, shown.append, cancel), 5)
            assert not got.settled and got.pending == 1 and loop.time() - began < 2.0
            assert got.text.startswith("<chat>") and "0+1|talk: long long" in got.text
            assert any("1 line pending" in x for x in shown), shown  # said over the socket
            assert "the wait was cancelled" in shown[-1], shown
            assert owner.status()["memory"]["messages"] == 1
            assert await memory.zoom(0, 1) == "talk: " + "long " * 400
            assert await memory.zoom(0, 2) is None and await memory.date(5) is None
            await registry.close()

    asyncio.run(go())


def test_a_run_with_more_text_than_a_line_of_the_wire_logs_it_all_in_order(home: Path) -> None:
    """A run's messages past what one line of the wire carries go in several requests,
    in order, every one logged once (a line past MAX_LINE would be a broken peer)."""
    from eukhe.client.remote_chat import BATCH, Remote, batches
    from eukhe.memory.log import Entry
    from eukhe.memory.log import EntryKind as LogKind

    entries = [
        Entry(f"r/{k}", LogKind.ECHO, f"{k} " + "é" * 15_000, "2026-12-01T00:00:00+00:00") for k in range(600)
    ]
    assert sum(len(e.text.encode()) for e in entries) > protocol.MAX_LINE  # more than one line holds
    cut = batches(entries)
    assert len(cut) >= 2 and [e for b in cut for e in b] == entries
    assert all(sum(len(e.text.encode()) for e in b) <= BATCH for b in cut)

    async def go() -> None:
        async with serving(home):
            registry = RemoteRegistry(home)
            memory = Remote(registry.client, None, 128_000)
            assert await memory.log(entries) == len(entries)
            assert await memory.log(entries) == len(entries)  # again: nothing twice
            assert await memory.total() == len(entries)
            assert (await memory.zoom(599, 1) or "").startswith("echo: 599 ")
            await registry.close()

    asyncio.run(go())


def test_a_client_that_finds_the_home_held_by_a_closing_owner_starts_the_next_one(home: Path) -> None:
    """An owner that is closing (its listener gone, its chat's jobs stopping) still holds
    the home's lock: the owner a client starts then finds the home taken and ends. The
    client starts another once the lock is free, and is answered: it does not wait out
    its start deadline on a socket no one will open."""
    import fcntl
    import time

    fd = os.open(protocol.lock_path(home), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)

    async def closing() -> float:
        """The closing owner ends once the owner the client started has found the home
        taken (however slow that start), and the lock is free; when."""
        log = protocol.log_path(home)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if log.exists() and "another owner holds" in log.read_text():
                break
            await asyncio.sleep(0.05)
        os.close(fd)
        return time.monotonic()

    async def go() -> None:
        freed = asyncio.ensure_future(closing())
        client = await asyncio.wait_for(Client.connect(home, spawn=True), 45)
        took = time.monotonic() - await freed
        assert client.owner["pid"] != os.getpid() and 0 <= took < 8.0, took  # not its start deadline
        await client.request(RequestKind.SHUTDOWN)
        await client.close()

    asyncio.run(go())
    assert "another owner holds" in protocol.log_path(home).read_text()


def test_a_request_that_waits_for_a_slot_at_the_owner_is_told_its_place_and_the_run_shows_it(
    home: Path,
) -> None:
    """Through the owner: a request that queues is told its place and what holds it up
    (an event of the owner, from its controller's state), again when its place changes,
    and nothing once granted; the run shows the wait ("slot", its fields) and its end
    ("waited") before its answer. A slot taken at once: no event, no wait shown."""
    from eukhe.admission import Queued
    from eukhe.ai.faux import FauxServer, parse
    from eukhe.ai.openai_chat import OpenAIChat
    from eukhe.run.loop import RunLoop

    one_slot = {"providers": {"faux": {"concurrency": 1}}}
    shown: list[tuple[str, str, dict[str, object]]] = []

    def show(kind: str, text: str, data: Any = None) -> None:
        shown.append((kind, text, dict(data or {})))

    async def no_tool(call: object) -> tuple[str, bool]:
        return "unused", True

    async def go(url: str) -> None:
        async with serving(home, one_slot):
            holder, other, runs = RemoteRegistry(home), RemoteRegistry(home), RemoteRegistry(home)
            told: list[Queued] = []
            release = asyncio.Event()
            held = asyncio.Event()

            async def hold() -> None:
                async with holder.slot("faux", interactive=True, on_queued=told.append):
                    held.set()
                    await release.wait()

            async def first() -> None:
                async with other.slot("faux", interactive=True, on_queued=told.append):
                    await asyncio.sleep(0.05)

            holding = asyncio.ensure_future(hold())
            await asyncio.wait_for(held.wait(), 5)
            assert told == []  # taken at once: no event
            before = asyncio.ensure_future(first())
            await settle()
            p = OpenAIChat("faux", base_url=url, timeout=30)
            g = RunLoop(p, "m", (), no_tool, admission=runs, show=show)  # type: ignore[arg-type]  # a RemoteRegistry
            try:
                run = asyncio.ensure_future(g.run("question"))
                for _ in range(500):
                    if any(kind == "slot" for kind, _, _ in shown):
                        break
                    await asyncio.sleep(0.01)
                assert not run.done() and not server.seen
                release.set()
                out = await asyncio.wait_for(run, 10)
            finally:
                await p.close()
            await asyncio.wait_for(asyncio.gather(holding, before), 5)
            assert out.answer == "the answer"
            assert told == [Queued("faux", "interactive", 1, "1 session request holds its slot")]
            for r in (holder, other, runs):
                await r.close()

    with FauxServer(parse([{"when": "question", "text": "the answer"}])) as server:
        asyncio.run(go(server.url))
    ahead = "1 session request holds its slot"
    fields = {"wait": "slot", "provider": "faux", "class": "interactive", "ahead": ahead}
    waited = {"wait": "slot"}
    waits = [(kind, text, data) for kind, text, data in shown if kind in ("slot", "text") or data == waited]
    assert waits == [
        (
            "slot",
            f"waiting for a slot of provider faux: 2nd in the session queue; {ahead}",
            {**fields, "place": 2},
        ),
        (
            "slot",
            f"waiting for a slot of provider faux: 1st in the session queue; {ahead}",
            {**fields, "place": 1},
        ),
        ("waited", "", waited),
        ("text", "the answer", {}),
    ]


def test_a_settle_wait_through_the_owner_shows_its_lines_pending_and_deadline_then_waited(
    home: Path,
) -> None:
    """A turn's settle wait through the owner, shown as the run's events: each progress
    line a "memory" event with the lines pending and its deadline (epoch seconds, made
    here from the seconds left the owner sends), how it ended a plain memory line, and
    "waited" last."""
    import time

    from eukhe.client.remote_chat import Remote
    from eukhe.memory.access import settle as settle_view
    from eukhe.memory.chat import settle_ended
    from eukhe.memory.log import Entry
    from eukhe.memory.log import EntryKind as LogKind

    events: list[tuple[str, str, dict[str, Any]]] = []

    def show(kind: str, text: str, data: Any = None) -> None:
        events.append((kind, text, dict(data or {})))

    async def go() -> None:
        async with serving(home):
            registry = RemoteRegistry(home)
            memory = Remote(registry.client, None, 128_000)
            await memory.log([Entry("r/0", LogKind.TALK, "long " * 400, "2026-12-01T00:00:00+00:00")])
            cancel = asyncio.Event()
            asyncio.get_running_loop().call_later(1.3, cancel.set)
            began = time.time()
            got = await asyncio.wait_for(settle_view(memory, 20_000, show, cancel), 5)
            assert not got.settled and got.pending == 1
            waits = [e for e in events if e[2].get("wait")]
            assert len(waits) >= 2 and events[0] == waits[0], events  # a line a second
            for kind, text, data in waits[:-1]:
                assert kind == "memory" and "1 line pending" in text and "to the deadline" in text
                assert data["wait"] == "memory" and data["pending"] == 1
                assert began + 17 < data["deadline"] <= time.time() + 20 + 0.1
            assert events[-2] == ("memory", settle_ended(True, 1), {})
            assert events[-1] == waits[-1] == ("waited", "", {"wait": "memory"})
            await registry.close()

    asyncio.run(go())


def test_a_lease_wait_shown_as_events_names_its_holder_and_ends_with_waited(home: Path) -> None:
    """The root-turn lease's wait as the run's events: "lease" with its holder (session,
    run, since; no deadline), then "waited" once the lease is held; a cancelled wait
    ends with "waited" too; a lease held at once shows nothing."""

    async def go() -> None:
        async with serving(home):
            one, two, three = [await Client.connect(home, spawn=False) for _ in range(3)]
            shown: list[tuple[str, str, dict[str, Any]]] = []
            stopped: list[tuple[str, str, dict[str, Any]]] = []

            def into(where: list[tuple[str, str, dict[str, Any]]]) -> Any:
                return lambda kind, text, data=None: where.append((kind, text, dict(data or {})))

            async with root_lease(one, "s1", "s1/1", events=into(shown)):
                assert shown == []  # held at once: no wait shown
                entered = asyncio.Event()

                async def second() -> None:
                    async with root_lease(two, "s2", "s2/1", events=into(shown)):
                        entered.set()

                waiting = asyncio.ensure_future(second())
                cancel = asyncio.Event()
                stopping = asyncio.ensure_future(
                    root_lease(three, "s3", "s3/1", cancel=cancel, events=into(stopped)).__aenter__()
                )
                await settle()
                assert not entered.is_set() and len(shown) == 1
                kind, text, data = shown[0]
                assert kind == "lease" and "session s1, run s1/1 holds it" in text and "Ctrl-C" in text
                assert data["wait"] == "lease" and "deadline" not in data
                holder = data["holder"]
                assert (holder["session"], holder["run"]) == ("s1", "s1/1")
                assert isinstance(holder["since"], float) and set(holder) == {"session", "run", "since"}
                cancel.set()
                with pytest.raises(LeaseStopped):
                    await asyncio.wait_for(stopping, 5)
                assert [k for k, _, _ in stopped] == ["lease", "waited"]
                assert stopped[-1] == ("waited", "", {"wait": "lease"})
            await asyncio.wait_for(waiting, 5)
            assert [k for k, _, _ in shown] == ["lease", "waited"]
            assert shown[-1] == ("waited", "", {"wait": "lease"})
            for c in (one, two, three):
                await c.close()

    asyncio.run(go())


def test_a_message_over_the_owners_line_is_refused_naming_the_limit_and_the_connection_stays(
    home: Path,
) -> None:
    """A request longer than the wire's line (16 MiB) fails by itself with why; before, the
    owner's reader dropped the connection and every request on it failed unexplained."""

    async def go() -> None:
        async with serving(home, ONE_SLOT) as owner:
            client = await RemoteRegistry(home).client()
            with pytest.raises(OwnerError) as raised:
                await client.request(RequestKind.STATUS, text="x" * protocol.MAX_LINE)
            said = str(raised.value)
            assert "over the owner's line of 16,777,216 bytes (16 MiB)" in said and said.startswith(
                "status: "
            )
            got = await client.request(RequestKind.STATUS)  # the same connection still serves
            assert "error" not in got and got["providers"] == owner.status()["providers"]

    asyncio.run(go())
