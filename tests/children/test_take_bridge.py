"""The bridge of H5.4 at the parent: the runtime's takes against `rules.child`'s model of
them (`laws.child_take`), line for line, over generated scenarios.

The runtime is the real thing but for the workflow engine: the run's `Delivery`, a
real `RunLoop` (its round ends take through the delivery), and the parents' inbox
in a real store (`Reports`, SQLite). The engine is played by `Journal`, which records
each effect's result in order and hands it back on replay, as DBOS does; a crash is
raised inside a take's step after its store transaction committed and before the step
is recorded, and the run is then made again from the journal, the way a restarted
process replays its workflow. (The same windows with real DBOS and real process kills
are in test_crash_windows.py.)

Each scenario is a history the model's own `inputs` allow: messages arriving and
withdrawn before, during and after the run's rounds and continuations, round ends,
answers, looks, and crashes between a take and its step. The run under test is a
root session's (depth 0: no looks; what comes after its answer waits for its next run)
or a child's at depth 1 or 2 (whose answered conversation goes on with its children's
reports); the delivery code is the same at every depth, only the ids change.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

from eukhe.ai.reply import Done, Reply, Stop, ToolCall
from eukhe.ai.request import Message, Request, Tool
from eukhe.events import ShowEvent
from eukhe.json_types import JsonObject
from eukhe.laws import child_take as law
from eukhe.laws.child_take import TAKES, DCfg, In, Op, Sys
from eukhe.memory.access import Memory
from eukhe.run.delivery import Delivery
from eukhe.run.loop import RunLoop
from eukhe.run.spec import RunSpec
from eukhe.store.reports import Reports

T = TypeVar("T")
STRUCTURE = (Op.START, Op.ROUND, Op.ANSWER, Op.LOOK, Op.CRASH)
WEIGHTS = {Op.ARRIVE: 3.0, Op.WITHDRAW: 0.5}  # more messages than withdrawals: more to place


class Crash(Exception):
    """The process died between a take's commit and its step's record."""


@dataclass
class Journal:
    """The recorded results of a run's effects, in order (what DBOS keeps of a workflow)."""

    done: list[tuple[str, Any]] = field(default_factory=list)


@dataclass
class Recorded:
    """A run's effects against its journal: a recorded step gives its result again; the
    first unrecorded one runs and is recorded, unless it raises."""

    journal: Journal
    at: int = 0

    async def step(self, name: str, work: Callable[[], Awaitable[T]]) -> T:
        if self.at < len(self.journal.done):
            was, result = self.journal.done[self.at]
            assert was == name, f"replay diverged at step {self.at}: {was} recorded, {name} made"
            self.at += 1
            return result  # type: ignore[no-any-return]
        result = await work()
        self.journal.done.append((name, result))
        self.at += 1
        return result

    async def now(self) -> float:
        return 0.0

    async def sleep(self, seconds: float) -> None:
        return None

    async def tool(
        self, call: ToolCall, replay_safe: bool, work: Callable[[], Awaitable[tuple[str, bool]]]
    ) -> Any:
        return await self.step("tool", work)

    async def append(self, message: Message) -> None:
        async def message_() -> Message:
            return message

        await self.step("message", message_)


@dataclass
class Scenario:
    """A history of the model's inputs, played by the runtime as it reaches each point."""

    cfg: DCfg
    history: list[In]
    run: str  # the run's id: a root's, or a child's at depth 1 or 2
    session: str
    left: list[In] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)  # what the runtime did, as the model says it

    def __post_init__(self) -> None:
        self.left = list(self.history)

    def rid(self, i: int) -> str:
        return f"{self.session}:c{i:02d}:report:0"

    def arrivals(self, reports: Reports) -> None:
        """The messages that arrive (and are withdrawn) before the runtime's next point."""
        while self.left and self.left[0].op in (Op.ARRIVE, Op.WITHDRAW):
            x = self.left.pop(0)
            n = len(reports.all(self.session))
            if x.op is Op.ARRIVE:
                reports.submit(self.rid(n), self.session, f"c{n:02d}", f"report {n:02d}")
            else:
                reports.withdraw(self.rid(x.id))

    def next_structural(self) -> In | None:
        return next((x for x in self.left if x.op in STRUCTURE), None)

    def pop(self, op: Op) -> In:
        """The next structural input, which the runtime's point says must be `op` (a
        crash of that kind of take counts)."""
        i, x = next((i, x) for i, x in enumerate(self.left) if x.op in STRUCTURE)
        kind = x.lost if x.op is Op.CRASH else x.op
        assert kind is op, f"the runtime made a {op.value} where the model's history has {x}"
        return self.left.pop(i)


class Model:
    """The provider: a tool call where the history has a round end next, an answer where
    it has an answer."""

    name = "bridge"

    def __init__(self, sc: Scenario) -> None:
        self.sc = sc

    async def stream(self, request: Request) -> Any:
        x = self.sc.next_structural()
        if x is not None and x.op is Op.ANSWER:
            self.sc.pop(Op.ANSWER)
            self.sc.lines.append("answer")
            yield Done(Reply(text=("done",), stop=Stop.STOP))
            return
        call = ToolCall("c", "work", "{}", {})
        yield Done(Reply(calls=(call,), stop=Stop.TOOL_USE))

    async def close(self) -> None:
        return None


@dataclass
class Bridged:
    """The run's workflow steps (`run.steps.Steps`) over the scenario: each take and look a
    recorded step of the journal, its waits none."""

    sc: Scenario
    reports: Reports
    fx: Recorded

    async def take(self, key: str, steers: bool, followups: bool) -> list[str]:
        sc, reports = self.sc, self.reports

        async def live() -> list[str]:
            sc.arrivals(reports)
            x = sc.pop(Op.START if key == "start" else Op.LOOK if key.startswith("look") else Op.ROUND)
            got = [r.text for r in reports.take(sc.session, f"{sc.run}#{key}", steers, followups)]
            entered = [int(t.split()[1]) for t in got]
            if x.op is Op.CRASH:
                sc.lines.append(f"{key}: lost")
                raise Crash(key)
            sc.lines.append(f"{key}: {entered}")
            return got

        return list(await self.fx.step("reports", live))

    async def working(self, children: Sequence[str]) -> bool:
        async def look_again() -> bool:
            return self.sc.next_structural() is not None

        return bool(await self.fx.step("children", look_again))

    async def sleep(self, seconds: float) -> None:
        return None

    async def view(
        self, chat: Memory, settle_ms: int, show: ShowEvent, cancel: asyncio.Event, pinned: int
    ) -> str:
        raise AssertionError("no view is pinned here")

    async def start_child(self, cid: str, spec: RunSpec, watch: JsonObject) -> None:
        raise AssertionError("no child is started here")


async def play(sc: Scenario, reports: Reports) -> list[Message]:
    """The run, made again from its journal after every crash, until it ends; its
    transcript."""
    journal = Journal()
    while True:
        fx = Recorded(journal)

        delivery = Delivery(Bridged(sc, reports, fx))
        tools = (Tool("work", "work", {"type": "object", "properties": {}}),)

        async def run_tool(call: ToolCall) -> tuple[str, bool]:
            return "ok", False

        g = RunLoop(Model(sc), "m", tools, run_tool, effects=fx, inbox=delivery)
        try:
            placed = await delivery.start()
            out = await g.run("go", [Message("user", t) for t in placed])
            if ".c" in sc.run.rpartition("/")[2]:  # a child: it goes on with its children's reports
                out = await delivery.until_reported(g, out, asyncio.Event())
        except Crash:
            continue
        sc.arrivals(reports)  # what arrives after the run's end waits for the next run
        assert sc.left == [], f"the runtime ended with the model's history left: {sc.left}"
        return list(out.transcript)


def modelled(sc: Scenario) -> tuple[list[str], Sys]:
    """What the model does on the scenario's history: the same lines, and its state."""
    s, lines = law.start(law.MODEL, sc.cfg), []
    for x in sc.history:
        t = law.nxt(law.MODEL, sc.cfg, s, x)
        if x.op is Op.CRASH:
            lines.append(f"{law.lost_key(law.MODEL, t)}: lost")
        elif x.op is Op.ANSWER:
            lines.append("answer")
        elif x.op in TAKES:
            lines.append(f"{t.keys[-1]}: {list(t.transcript[len(s.transcript) :])}")
        s = t
    return lines, s


def history(rng: random.Random, cfg: DCfg, root: bool) -> list[In]:
    """A walk of the model's inputs that ends where the runtime's run ends: answered, no
    take lost, and, for a child, its last look found nothing (it then finds none of its
    children at work, and ends)."""
    for _ in range(1000):
        s, out, empty_look = law.start(law.MODEL, cfg), [], False
        for _ in range(60):
            done = s.answered and s.lost not in TAKES and (root or empty_look)
            if done and rng.random() < 0.3:
                tail = [In(Op.ARRIVE)] if rng.random() < 0.3 and len(s.inbox) < cfg.reports else []
                return out + tail
            xs = law.inputs(cfg, s)
            if root:  # a root run makes no looks: what comes after its answer waits for its next run
                xs = [x for x in xs if Op.LOOK not in (x.op, x.lost if x.op is Op.CRASH else None)]
            elif s.answered and s.lost not in TAKES:  # a child that answered looks next
                xs = [x for x in xs if x.op in (Op.ARRIVE, Op.WITHDRAW, Op.LOOK, Op.CRASH)]
            if not xs:
                break
            x = rng.choices(xs, [WEIGHTS.get(x.op, 1.0) for x in xs])[0]
            t = law.nxt(law.MODEL, cfg, s, x)
            if x.op in STRUCTURE:
                empty_look = x.op is Op.LOOK and t.transcript == s.transcript
            s = t
            out.append(x)
    raise AssertionError(f"no complete history under {cfg}")


def scenarios() -> list[tuple[int, int]]:
    return [(seed, depth) for seed in range(40) for depth in (0, 1, 2)]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path: Path = tmp_path_factory.mktemp("bridge") / "reports.sqlite"
    reports = Reports(f"sqlite:///{path}")
    yield reports
    reports.close()


@pytest.mark.parametrize(("seed", "depth"), scenarios())
def test_the_runtimes_takes_are_the_models(store: Reports, seed: int, depth: int) -> None:
    rng = random.Random(seed * 3 + depth)
    cfg = DCfg(
        reports=rng.randint(1, 5),
        conversations=6,
        rounds=rng.randint(1, 3),
        looks=12,
        crashes=rng.randint(0, 3),
    )
    root = depth == 0
    session = f"b{seed}-{depth}"
    run = f"{session}/0001" + "".join(f".c{k + 1}" for k in range(depth))
    sc = Scenario(cfg, history(rng, cfg, root), run, session)
    transcript = asyncio.run(play(sc, store))
    want, s = modelled(sc)
    assert sc.lines == want, f"history {sc.history}"
    entered = [
        int(m.content.split()[1]) for m in transcript if m.role == "user" and m.content.startswith("report")
    ]
    assert entered == list(s.transcript), f"history {sc.history}"
    inbox = [(r.fate, r.id) for r in store.all(session)]
    assert [f for f, _ in inbox] == [h.fate for h in s.inbox], f"history {sc.history}"
    takers = store_takers(store, session)
    assert takers == [f"{run}#{h.taker}" if h.taker else None for h in s.inbox], f"history {sc.history}"


def store_takers(reports: Reports, session: str) -> list[str | None]:
    import sqlalchemy as sa

    from eukhe.store.reports import _reports

    with reports._engine.begin() as c:
        rows = c.execute(
            sa.select(_reports.c.taker)
            .where(_reports.c.session == session)
            .order_by(_reports.c.at, _reports.c.id)
        ).all()
    return [r[0] for r in rows]


def test_the_bridge_sees_the_per_conversation_keys_of_issue_22(store: Reports, monkeypatch: Any) -> None:
    """The bridge can fail: with the round-end key counted per conversation (the bug),
    a continuation's round end takes an earlier conversation's report again."""
    from eukhe.rules import child

    real = child.key
    monkeypatch.setattr(child, "key", lambda p: f"r{p.n}" if p.at is child.At.ROUND else real(p))
    cfg = DCfg(reports=2, conversations=3, rounds=2, looks=3, crashes=0)
    arrive, go = In(Op.ARRIVE), [In(Op.START)]
    steps = [
        *go,
        arrive,
        In(Op.ROUND),
        In(Op.ANSWER),
        arrive,
        In(Op.LOOK),
        In(Op.ROUND),
        In(Op.ANSWER),
        In(Op.LOOK),
    ]
    sc = Scenario(cfg, steps, "k/0001.c1", "k")
    transcript = asyncio.run(play(sc, store))
    entered = [m.content for m in transcript if m.content.startswith("report")]
    assert entered == ["report 00", "report 01", "report 00"]
