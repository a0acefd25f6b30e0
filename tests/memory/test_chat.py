"""The live chat: H2's regressions by their spec names over the faux server on
loopback (a one-slot provider where it matters), deadlines on a clock the test
moves; the log, the lines and the view as a turn sees them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from eukhe.admission import Registry
from eukhe.ai.faux import FauxServer, parse
from eukhe.ai.openai_chat import OpenAIChat
from eukhe.memory.access import Local, settle
from eukhe.memory.chat import Chat, settle_ended
from eukhe.memory.compactor import asker
from eukhe.memory.log import Entry, EntryKind
from eukhe.memory.tables import ChatStore
from eukhe.rules import compactor as rule
from eukhe.rules import queue as q
from eukhe.rules import view as v
from eukhe.rules.compactor import NODE
from eukhe.rules.queue import Node
from eukhe.waits import ManualClock

T = TypeVar("T")
LONG = "the deploy failed on the third host because the disk was full; " * 12  # over NODE


def entry(n: int, text: str, kind: EntryKind = EntryKind.USER) -> Entry:
    return Entry(f"t/{n}", kind, text, "2026-12-01T00:00:00Z")


async def until(
    what: str, ok: Callable[[], bool], clock: ManualClock | None = None, step: float = 0.0
) -> None:
    for _ in range(2000):
        if ok():
            return
        await asyncio.sleep(0.01)
        if clock is not None and step:
            clock.advance(step)
    raise AssertionError(f"waited for {what}")


def with_chat(
    tmp_path: Path, script: Any, body: Callable[[Chat, ManualClock, FauxServer], Awaitable[T]], **kw: Any
) -> T:
    clock = ManualClock()

    async def go(url: str, server: FauxServer) -> T:
        p = OpenAIChat("faux", base_url=url, timeout=60)
        registry = Registry(kw.pop("settings", {}))
        store = ChatStore(f"sqlite:///{tmp_path / 'eukhe.sqlite'}")
        chat = Chat(store, asker(p, registry), "faux", clock, **kw)
        try:
            return await body(chat, clock, server)
        finally:
            await chat.close()
            store.close()
            await p.close()

    with FauxServer(parse(script)) as server:
        return asyncio.run(go(server.url, server))


def test_short_messages_are_their_own_lines_and_the_view_renders_them(tmp_path: Path) -> None:
    async def body(chat: Chat, clock: ManualClock, server: FauxServer) -> None:
        chat.log([entry(0, "hello"), entry(1, "hi there", EntryKind.TALK), entry(1, "logged twice")])
        got = await chat.settled(clock.now() + 20)
        assert got.settled and got.pending == 0 and got.waited == 0
        assert got.text == "<chat>\n0+1|user: hello\n1+1|talk: hi there\n</chat>"
        assert len(server.seen) == 0  # no model call for a line that fits
        assert chat.zoom(0, 2) == "0+1|user: hello\n1+1|talk: hi there"
        assert chat.zoom(1, 1) == "talk: hi there" and chat.zoom(1, 2) is None and chat.zoom(0, 4) is None

    with_chat(tmp_path, ["unused"], body)


def test_a_long_message_is_compressed_by_the_model_and_the_turn_waits_for_it(tmp_path: Path) -> None:
    async def body(chat: Chat, clock: ManualClock, server: FauxServer) -> None:
        chat.log([entry(0, "short"), entry(1, LONG, EntryKind.ECHO)])
        shown: list[str] = []
        got = await chat.settled(clock.now() + 20, show=shown.append)
        assert got.settled and "1+1|The deploy failed: disk full on host 3." in got.text
        request = server.seen[0].body
        assert request["messages"][0]["role"] == "system"
        assert "<chat>\n0+1|user: short\n</chat>" in request["messages"][1]["content"]
        await until("the free merge of the two lines", lambda: chat.status().built == 3)
        assert chat.zoom(0, 2) == "0+1|user: short\n1+1|The deploy failed: disk full on host 3."

    with_chat(tmp_path, ["The deploy failed: disk full on host 3."], body)


def test_a_turn_gets_the_view_by_its_deadline_when_the_model_never_answers(tmp_path: Path) -> None:
    async def body(chat: Chat, clock: ManualClock, server: FauxServer) -> None:
        chat.log([entry(0, LONG)])
        shown: list[str] = []
        waiter = asyncio.ensure_future(chat.settled(clock.now() + 20, show=shown.append))
        await until("the call", lambda: len(server.seen) == 1)
        for _ in range(25):  # the clock moves 25 s; the model never answers
            clock.advance(1)
            await asyncio.sleep(0.01)
        got = await asyncio.wait_for(waiter, timeout=10)
        assert not got.settled and got.pending == 1 and got.waited == 20
        assert got.text == f"<chat>\n0+1|{rule.cut('user: ' + LONG, NODE)}\n</chat>"  # its input cut
        assert shown[0] == "memory: 1 line pending, 20 s to the deadline"
        assert shown[-1] == "memory: the settle deadline passed; the turn goes on with 1 line shown cut"
        assert [(r.l, r.i) for r in chat.status().running] == [(0, 0)]  # built on for the next turn
        assert chat.status().last_wait.ended == "deadline"  # type: ignore[union-attr]

    with_chat(tmp_path, [{"text": "never", "stallAfter": 0, "stall": 3600}], body)


def test_a_turns_wait_shows_its_lines_pending_and_its_deadline_and_ends_with_waited(tmp_path: Path) -> None:
    """The settle wait as the run's events (`memory.access.settle`): a "memory" event a
    second whose fields say what it waits for, the lines pending and its deadline (epoch
    seconds: now plus the seconds left on the chat's clock, which the test moves), the
    line of how it ended without them, then "waited". The texts are the plain lines'."""
    events: list[tuple[str, str, dict[str, Any]]] = []

    def show(kind: str, text: str, data: Any = None) -> None:
        events.append((kind, text, {**(data or {}), "shown": time.time()}))

    async def body(chat: Chat, clock: ManualClock, server: FauxServer) -> None:
        chat.log([entry(0, LONG)])
        waiter = asyncio.ensure_future(settle(Local(chat), 20_000, show))
        await until("the call", lambda: len(server.seen) == 1)
        for _ in range(25):  # the clock moves 25 s; the model never answers
            clock.advance(1)
            await asyncio.sleep(0.01)
        got = await asyncio.wait_for(waiter, timeout=10)
        assert not got.settled and got.pending == 1

    with_chat(tmp_path, [{"text": "never", "stallAfter": 0, "stall": 3600}], body)
    lines = [e for e in events if e[0] == "memory" and "wait" in e[2]]
    assert len(lines) >= 15 and events[: len(lines)] == lines  # a line a second, first
    assert lines[0][1] == "memory: 1 line pending, 20 s to the deadline"
    for _, text, data in lines:
        left = float(text.split(", ")[1].split(" s ")[0])  # the seconds the line says
        assert data["wait"] == "memory" and data["pending"] == 1
        assert abs(data["deadline"] - (data["shown"] + left)) <= 0.6, (text, data)
    assert events[len(lines)][:2] == ("memory", settle_ended(False, 1))
    assert "wait" not in events[len(lines)][2]
    assert [e[:2] for e in events[len(lines) + 1 :]] == [("waited", "")]
    assert events[-1][2]["wait"] == "memory"


def test_a_turn_that_needs_no_wait_shows_no_wait(tmp_path: Path) -> None:
    events: list[tuple[Any, ...]] = []

    async def body(chat: Chat, clock: ManualClock, server: FauxServer) -> None:
        chat.log([entry(0, "hello")])
        await until("its line, which needs no model", lambda: chat.unbuilt() == 0)
        got = await settle(Local(chat), 20_000, lambda *event: events.append(event))
        assert got.settled and events == []

    with_chat(tmp_path, ["unused"], body)


def test_a_waiting_turn_stops_a_merge_that_holds_the_slot(tmp_path: Path) -> None:
    """On a one-slot provider a merge's call hangs holding the slot; a turn then waits
    for a new message's line: the wait stops the merge, the needed call gets the slot."""
    merge_lines = "user: " + "m" * (NODE // 2)  # two of these do not fit together: a model merge

    async def body(chat: Chat, clock: ManualClock, server: FauxServer) -> None:
        chat.log([entry(0, merge_lines[6:]), entry(1, merge_lines[6:])])
        await until("the merge's call", lambda: len(server.seen) == 1)
        assert chat.queue.running and chat.queue.running[0].node == q.Node(1, 0)
        chat.log([entry(2, LONG)])  # needs the model too, but the one slot is held
        got = await asyncio.wait_for(chat.settled(clock.now() + 20), timeout=30)
        assert got.settled and "2+1|The third line." in got.text
        assert "Merge these two" in str(server.seen[0].body["messages"][-1]["content"])
        assert server.seen[0].hung_up  # the merge's call was stopped
        assert all(j.node != q.Node(1, 0) for j in chat.queue.running) or chat.status().built >= 3

    script = [{"text": "merged", "stallAfter": 0, "stall": 3600}, "The third line."]
    with_chat(tmp_path, script, body, settings={"providers": {"faux": {"concurrency": 1}}})


def test_a_reloaded_chat_keeps_its_lines_and_fits_the_same_budget(tmp_path: Path) -> None:
    """The lines are in the store; the view is folded again from them (not saved), so it
    fits the same budget, covering every message, with no model call made again."""

    async def body(chat: Chat, clock: ManualClock, server: FauxServer) -> int:
        chat.log([entry(i, f"message {i}") for i in range(40)])
        await chat.settled(clock.now() + 20)
        await until("the merges", lambda: chat.status().jobs == 0)  # they wait while a turn does
        assert len(chat.render().encode()) <= 400
        return chat.status().built

    built = with_chat(tmp_path, ["A merged line."], body, budget=400)

    async def again(chat: Chat, clock: ManualClock, server: FauxServer) -> None:
        text = chat.render()
        assert len(text.encode()) <= 400 and text.startswith("<chat>\n0+")
        assert text.endswith("user: message 39\n</chat>")  # every message, the last one last
        assert chat.status().built == built and chat.status().messages == 40
        assert (await chat.settled(clock.now() + 20)).settled and len(server.seen) == 0

    with_chat(tmp_path, ["unused"], again, budget=400)


def test_a_turn_whose_lines_are_built_waits_for_the_merge_that_fits_its_view(tmp_path: Path) -> None:
    """Two lines that are their own messages (no model), over the budget together; their
    merge needs the model, which takes its time: the turn waits for it (within the
    deadline), so its view fits the budget rather than going out over it."""
    half = "talk: " + "a line of its own that is long; " * 9  # ~300 bytes: two do not join in NODE

    async def body(chat: Chat, clock: ManualClock, server: FauxServer) -> None:
        chat.log([entry(0, half, EntryKind.TALK), entry(1, half, EntryKind.TALK)])
        await until("the two free lines", lambda: chat.is_built(Node(0, 0)) and chat.is_built(Node(0, 1)))
        assert chat.view.size > 400 and not chat.is_built(Node(1, 0))  # the merge is under way
        shown: list[str] = []
        got = await chat.settled(clock.now() + 20, show=shown.append)
        assert len(got.text.encode()) <= 400 and got.text == "<chat>\n0+2|A merged line.\n</chat>", got
        assert any("waiting for its merges" in line for line in shown)

    with_chat(tmp_path, [{"text": "A merged line.", "chunks": 4, "delay": 0.3}], body, budget=400)


def test_a_loaded_chat_starts_the_merges_another_process_left_and_its_turn_waits_for_them(
    tmp_path: Path,
) -> None:
    """Another process logged two messages and built their lines, then ended before
    their merge: this process's first turn starts that merge and waits for it, so its
    view fits the budget."""
    half = "talk: " + "a line of its own that is long; " * 9
    store = ChatStore(f"sqlite:///{tmp_path / 'eukhe.sqlite'}")
    store.append([entry(0, half, EntryKind.TALK), entry(1, half, EntryKind.TALK)])
    for i in (0, 1):
        store.save_line(0, i, half)
    store.close()

    async def body(chat: Chat, clock: ManualClock, server: FauxServer) -> None:
        got = await chat.settled(clock.now() + 20)
        assert got.text == "<chat>\n0+2|A merged line.\n</chat>", got

    with_chat(tmp_path, ["A merged line."], body, budget=400)


def test_a_new_process_goes_on_from_the_view_the_last_turn_pinned(tmp_path: Path) -> None:
    """The view a turn pinned is saved, so the next process's first turn sends it as its
    prefix (a new message is only added at its end) instead of a view folded anew."""
    seen: dict[str, str] = {}

    async def first(chat: Chat, clock: ManualClock, server: FauxServer) -> None:
        chat.log([entry(i, f"message {i}") for i in range(40)])
        seen["pinned"] = (await chat.settled(clock.now() + 20)).text

    with_chat(tmp_path, ["A merged line."], first, budget=400)

    async def second(chat: Chat, clock: ManualClock, server: FauxServer) -> None:
        assert chat.render() == seen["pinned"]
        chat.log([entry(40, "one more")])
        got = (await chat.settled(clock.now() + 20)).text
        assert got.startswith(seen["pinned"].removesuffix(v.CLOSE)) and got.endswith(
            "|user: one more\n</chat>"
        )

    with_chat(tmp_path, ["unused"], second, budget=10**6)


def test_a_saved_view_that_does_not_fit_the_log_is_not_used(tmp_path: Path) -> None:
    """A saved view that is garbage, does not tile, runs past the log or merges into a
    line that is not built: the chat folds its view from the log, and loses nothing."""
    failing = [{"error": {"status": 500, "body": {"error": {"message": "down"}}}}]

    async def four(chat: Chat, clock: ManualClock, server: FauxServer) -> None:
        chat.log([entry(i, LONG) for i in range(4)])  # lines that need the model, which fails

    with_chat(tmp_path, failing, four)

    async def body(chat: Chat, clock: ManualClock, server: FauxServer) -> None:
        assert chat.view.parts == tuple(Node(0, m) for m in range(4)) and chat.status().messages == 4

    bad = [
        (3, [(0, 0), (0, 2)]),  # a gap
        (99, [(0, m) for m in range(99)]),  # past the log
        (4, [(2, 0)]),  # a line never built
    ]
    for total, parts in bad:
        store = ChatStore(f"sqlite:///{tmp_path / 'eukhe.sqlite'}")
        store.save_view(total, parts)
        store.close()
        with_chat(tmp_path, failing, body)
    store = ChatStore(f"sqlite:///{tmp_path / 'eukhe.sqlite'}")
    with store._engine.begin() as c:  # a row some other writer broke
        c.exec_driver_sql("UPDATE eukhe_chat_view SET parts = 'not json'")
    store.close()
    with_chat(tmp_path, failing, body)


def test_ctrl_c_ends_a_turns_wait_for_its_view(tmp_path: Path) -> None:
    async def body(chat: Chat, clock: ManualClock, server: FauxServer) -> None:
        chat.log([entry(0, LONG)])
        cancel = asyncio.Event()
        waiter = asyncio.ensure_future(chat.settled(clock.now() + 20, cancel=cancel))
        await until("the call", lambda: len(server.seen) == 1)
        clock.advance(3)
        cancel.set()  # what Ctrl-C sets; the clock is not moved again
        got = await asyncio.wait_for(waiter, timeout=10)
        assert not got.settled and got.waited == 3

    with_chat(tmp_path, [{"text": "never", "stallAfter": 0, "stall": 3600}], body)
