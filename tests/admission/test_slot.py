"""The live controller: slots taken, waited for, preempted, timed out, cancelled;
limits from settings; and its decisions come from the rule."""

from __future__ import annotations

import asyncio

import pytest

from eukhe.admission import (
    DEFAULT_QUEUE_LIMIT,
    UNLIMITED,
    Controller,
    Preempted,
    Queued,
    QueueFull,
    Registry,
    Slot,
    SlotTimeout,
    limits_from,
    run_in_slot,
)
from eukhe.laws import admission as laws
from eukhe.rules import admission as rule
from eukhe.settings.load import SettingsError
from tests.admission.helpers import run, settle

NOTHING = dict(
    held_interactive=0, held_background=0, waiting_interactive=0, waiting_background=0, preempted=0
)


def idle(c: Controller) -> bool:
    s = c.statistics()
    return all(getattr(s, k) == v for k, v in NOTHING.items()) and not rule.tickets(c.state)


async def hold(slot: Slot, until: asyncio.Event, log: list[str], name: str) -> None:
    async with slot:
        log.append(f"{name} in")
        await until.wait()
    log.append(f"{name} out")


def test_a_free_slot_is_taken_at_once_and_passed_to_the_oldest_waiter() -> None:
    async def go() -> None:
        c = Controller("vllm", 1, 5)
        log: list[str] = []
        done = {n: asyncio.Event() for n in "abc"}
        a = asyncio.create_task(hold(c.slot(interactive=True), done["a"], log, "a"))
        await settle()
        b_slot, c_slot = c.slot(interactive=True), c.slot(interactive=True)
        b = asyncio.create_task(hold(b_slot, done["b"], log, "b"))
        await settle()
        cc = asyncio.create_task(hold(c_slot, done["c"], log, "c"))
        await settle()
        assert log == ["a in"] and c.statistics().waiting_interactive == 2
        done["a"].set()
        await settle()
        assert log == ["a in", "a out", "b in"] and b_slot.queued
        done["b"].set()
        done["c"].set()
        await asyncio.gather(a, b, cc)
        assert idle(c)

    run(go())


def test_a_waiting_slot_is_told_its_place_and_what_holds_it_up_and_a_slot_taken_at_once_nothing() -> None:
    async def go() -> None:
        c = Controller("vllm", 2, 5)
        told: dict[str, list[Queued]] = {n: [] for n in "abcde"}
        log: list[str] = []
        done = {n: asyncio.Event() for n in "abcde"}

        def start(name: str, interactive: bool = True) -> asyncio.Task[None]:
            slot = c.slot(interactive=interactive, on_queued=told[name].append)
            return asyncio.create_task(hold(slot, done[name], log, name))

        tasks = [start("a"), start("b")]
        await settle()
        tasks += [start("c"), start("d"), start("e", interactive=False)]
        await settle()
        assert told["a"] == told["b"] == []  # taken at once: told nothing
        assert told["c"] == [Queued("vllm", "interactive", 1, "2 session requests hold its 2 slots")]
        assert told["d"] == [Queued("vllm", "interactive", 2, "2 session requests hold its 2 slots")]
        assert told["d"][0].text == (
            "waiting for a slot of provider vllm: 2nd in the session queue; "
            "2 session requests hold its 2 slots"
        )
        yields = "background work yields to session requests: 2 hold a slot and 2 wait"
        assert told["e"] == [Queued("vllm", "background", 1, yields)]
        done["a"].set()
        await settle()
        assert log == ["a in", "b in", "a out", "c in"]
        assert told["c"][1:] == []  # granted: told nothing more
        assert told["d"][1:] == [Queued("vllm", "interactive", 1, "2 session requests hold its 2 slots")]
        assert told["e"][1:] == [
            Queued(
                "vllm",
                "background",
                1,
                "background work yields to session requests: 2 hold a slot and 1 waits",
            )
        ]
        for e in done.values():
            e.set()
        await asyncio.gather(*tasks)
        assert idle(c) and c._told == {}

    run(go())


def test_a_session_request_preempts_a_background_holder_and_takes_its_slot_at_once() -> None:
    async def go() -> None:
        c = Controller("vllm", 1, 5)
        background = c.slot(interactive=False)
        never = asyncio.Event()
        task = asyncio.create_task(hold(background, never, [], "merge"))
        await settle()
        async with c.slot(interactive=True) as turn:
            assert not turn.queued and background.preempted
            assert c.statistics().held_interactive == 1 and c.statistics().held_background == 0
            with pytest.raises(
                Preempted, match=r"^provider 'vllm': background request \(ticket 0\) preempted"
            ):
                await task
            assert task.cancelling() == 0  # the controller's cancel was taken back
        assert idle(c)

    run(go())


def test_a_cancel_from_elsewhere_stays_a_cancel_even_when_preempted() -> None:
    async def go() -> None:
        c = Controller("vllm", 1, 5)
        background = c.slot(interactive=False)
        task = asyncio.create_task(hold(background, asyncio.Event(), [], "merge"))
        await settle()
        task.cancel()  # the user aborts the merge ...
        async with c.slot(interactive=True):  # ... as a turn preempts it
            with pytest.raises(asyncio.CancelledError):
                await task
        assert background.preempted and idle(c)

    run(go())


def test_a_body_that_swallows_the_preemption_ends_normally_and_knows() -> None:
    async def body(slot: Slot) -> str:
        async with slot:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                return "kept what it had"
        return "unreachable"

    async def go() -> None:
        c = Controller("vllm", 1, 5)
        background = c.slot(interactive=False)
        task = asyncio.create_task(body(background))
        await settle()
        async with c.slot(interactive=True):
            assert await task == "kept what it had"
        assert background.preempted and idle(c)

    run(go())


def test_cancelling_a_waiter_ends_its_ticket() -> None:
    async def go() -> None:
        c = Controller("vllm", 1, 5)
        release = asyncio.Event()
        holder = asyncio.create_task(hold(c.slot(interactive=True), release, [], "a"))
        await settle()
        waiter = asyncio.create_task(hold(c.slot(interactive=True), asyncio.Event(), [], "b"))
        await settle()
        assert c.statistics().waiting_interactive == 1
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert c.statistics().waiting_interactive == 0
        release.set()
        await holder
        assert idle(c)

    run(go())


def test_a_granted_waiter_cancelled_before_it_runs_passes_the_slot_on() -> None:
    async def go() -> None:
        c = Controller("vllm", 1, 5)
        log: list[str] = []
        first = c.slot(interactive=True)
        await first.__aenter__()
        b = asyncio.create_task(hold(c.slot(interactive=True), asyncio.Event(), log, "b"))
        release_c = asyncio.Event()
        cc = asyncio.create_task(hold(c.slot(interactive=True), release_c, log, "c"))
        await settle()
        await first.__aexit__(None, None, None)  # b is granted ...
        assert rule.status(c.state, 1) is rule.Status.GRANTED
        b.cancel()  # ... and cancelled before it collects the grant
        with pytest.raises(asyncio.CancelledError):
            await b
        await settle()
        assert log == ["c in"]
        release_c.set()
        await cc
        assert idle(c)

    run(go())


def test_the_deadline_ends_a_wait() -> None:
    async def go() -> None:
        c = Controller("vllm", 1, 5)
        loop = asyncio.get_running_loop()
        async with c.slot(interactive=True):
            late = c.slot(interactive=True, deadline=loop.time() + 0.05)
            with pytest.raises(
                SlotTimeout,
                match=r"^provider 'vllm': no interactive slot by the deadline \(0\.\d\d s waited, "
                r"providers\.vllm\.concurrency=1\): the request was not sent$",
            ):
                async with late:
                    pass
            assert c.statistics().waiting_interactive == 0
        assert idle(c)

    run(go())


def test_a_full_queue_is_a_retryable_error_naming_provider_and_limit() -> None:
    async def go() -> None:
        c = Controller("llamacpp", 1, 0)
        async with c.slot(interactive=True):
            with pytest.raises(QueueFull) as e:
                async with c.slot(interactive=False):
                    pass
        assert e.value.retryable
        assert str(e.value) == (
            "provider 'llamacpp': the background queue is full (providers.llamacpp.queueLimit=0): "
            "the request was not sent; retry when a request of 'llamacpp' ends, "
            "or raise providers.llamacpp.queueLimit"
        )
        assert idle(c)

    run(go())


def test_a_slot_is_entered_once() -> None:
    async def go() -> None:
        c = Controller("vllm", 1, 5)
        s = c.slot(interactive=True)
        async with s:
            pass
        with pytest.raises(RuntimeError, match=r"^a Slot is entered once"):
            async with s:
                pass

    run(go())


def test_run_in_slot_asks_again_after_a_preemption() -> None:
    async def go() -> None:
        reg = Registry({"providers": {"vllm": {"concurrency": 1}}})
        loop = asyncio.get_running_loop()
        tickets: list[int] = []

        async def merge(slot: Slot) -> str:
            tickets.append(slot.ticket)
            await asyncio.sleep(0.05)
            return "merged"

        task = asyncio.create_task(
            run_in_slot(merge, "vllm", interactive=False, deadline=loop.time() + 5, registry=reg)
        )
        await settle()
        async with reg.slot("vllm", interactive=True) as turn:
            assert not turn.queued
            await settle()
            assert reg.statistics("vllm").waiting_background == 1  # asked again, waits behind the turn
        assert await task == "merged" and tickets == [0, 2]
        assert idle(reg.controller("vllm"))

    run(go())


def test_run_in_slot_gives_up_on_a_preemption_past_its_deadline() -> None:
    async def go() -> None:
        reg = Registry({"providers": {"vllm": {"concurrency": 1}}})
        loop = asyncio.get_running_loop()

        async def merge(slot: Slot) -> str:
            await asyncio.sleep(5)
            return "merged"

        task = asyncio.create_task(
            run_in_slot(merge, "vllm", interactive=False, deadline=loop.time() + 0.02, registry=reg)
        )
        await asyncio.sleep(0.05)
        async with reg.slot("vllm", interactive=True):
            with pytest.raises(Preempted):
                await task
        assert idle(reg.controller("vllm"))

    run(go())


def test_limits_come_from_the_providers_settings() -> None:
    settings = {"providers": {"vllm": {"concurrency": 2, "queueLimit": 3}, "ollama": {"concurrency": 0}}}
    assert (limits_from(settings, "vllm").concurrency, limits_from(settings, "vllm").queue_limit) == (2, 3)
    assert limits_from(settings, "ollama").concurrency == UNLIMITED
    assert limits_from({}, "openai").queue_limit == DEFAULT_QUEUE_LIMIT
    reg = Registry(settings)
    assert (reg.statistics("vllm").limit, reg.statistics("vllm").queue_limit) == (2, 3)
    for bad, key in (({"concurrency": -1}, "concurrency=-1"), ({"queueLimit": True}, "queueLimit=True")):
        with pytest.raises(
            SettingsError, match=rf"^setting providers\.vllm\.{key}: expected a whole number >= 0$"
        ):
            limits_from({"providers": {"vllm": bad}}, "vllm")
    with pytest.raises(SettingsError, match=r"^setting providers=\[\]: expected an object"):
        limits_from({"providers": []}, "vllm")


def test_new_settings_drain_a_lowered_limit_and_grant_at_once_on_a_raised_one() -> None:
    async def go() -> None:
        reg = Registry({"providers": {"vllm": {"concurrency": 2}}})
        release = asyncio.Event()
        holders = [
            asyncio.create_task(hold(reg.slot("vllm", interactive=True), release, [], "h")) for _ in range(2)
        ]
        await settle()
        reg.configure({"providers": {"vllm": {"concurrency": 1}}})
        stats = reg.statistics("vllm")
        assert (stats.limit, stats.held_interactive) == (1, 2)  # nothing taken away
        log: list[str] = []
        waiters = [
            asyncio.create_task(hold(reg.slot("vllm", interactive=True), release, log, "w")) for _ in range(2)
        ]
        await settle()
        with pytest.raises(SettingsError):
            reg.configure({"providers": {"vllm": {"concurrency": "two"}}})
        assert reg.statistics("vllm").limit == 1  # a bad value changes nothing
        reg.configure({"providers": {"vllm": {"concurrency": 4}}})
        await settle()
        assert log == ["w in", "w in"]
        release.set()
        await asyncio.gather(*holders, *waiters)
        assert idle(reg.controller("vllm"))

    run(go())


def test_the_runtime_takes_its_decisions_from_the_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """Swap the model's step for a break of it: the controller follows the break."""

    async def merge_stopped() -> bool:
        c = Controller("vllm", 1, 5)
        merge = c.slot(interactive=False)
        task = asyncio.create_task(hold(merge, asyncio.Event(), [], "merge"))
        await settle()
        async with c.slot(interactive=True):
            await settle()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return merge.preempted

    assert run(merge_stopped()) is True
    broken = next(m for m in laws.MUTANTS if m.name == "no preemption")
    monkeypatch.setattr(rule, "step", broken.model.step)
    assert run(merge_stopped()) is False
