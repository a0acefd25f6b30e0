"""Subagents as DBOS workflows, the durable side of `eukhe.children`: the child's
task (`eukhe.child.task`: its parent's watch of it, then its report, on
`children.watch`), and what a parent's run holds of its children (`Children`). The
child's run itself (`eukhe.child.run`, a child workflow of its parent's run, one
level deeper) is a run like any other (`run.workflow`).

Ids: the n-th child its parent run spawns is `<parent run>.c<n>`, and its task
`<parent run>.c<n>.task`; both are started with those ids from the parent's
workflow, so a replay starts nothing twice. Names shown to the model and the
user: `c<run>.<n>`.

A child starts from the view of the chat at its spawn (its parent's system prompt)
and logs nothing into the chat. One spawned with `isolation: "worktree"` (or as an agent whose
frontmatter says so) works in a git worktree of its own (`children.worktree`), made by a recorded
step of its parent's workflow; its task ends that worktree once, as a recorded step, and its
report tells what it left (its branch, commits and diff) once. A child spawned as an agent the user defined
(`rules.agent`) has that agent's prompt after its parent's, the tools it names of those
its parent's run offers, and its model, resolved as `/model` resolves one. Its model
requests are session requests (H3: only the compactor's yield), so its parent's next turn
never preempts it mid-stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from dbos import DBOS

from eukhe import fault_injection
from eukhe.ai.models import ModelError, resolve
from eukhe.children.ledger import Ledger
from eukhe.children.tools import SpawnError
from eukhe.children.watch import Seen, Watcher
from eukhe.children.worktree import Worktree, WorktreeError, end_worktree, merge_branch, worktree_of
from eukhe.ids import name_of
from eukhe.json_types import JsonMapping, JsonObject
from eukhe.rules import agent as agent_rule
from eukhe.rules import child
from eukhe.rules.child import Abort, Fate, Mode, Reading, Task
from eukhe.run.context import ProcessContext, process
from eukhe.run.spec import Parent, RunSpec
from eukhe.run.steps import Steps
from eukhe.skills import Agent
from eukhe.store.reports import Reports
from eukhe.store.session_runs import CHILD_TASK, IN_FLIGHT
from eukhe.tools.base import Spawned

ABORT_TOPIC = "abort"  # a parent's cancel or delete of a child, sent to the child's task
ENDED_WAIT = 30.0
"""Seconds a child's task waits for its stopped run to end before it ends its worktree."""


def task_id(child_id: str) -> str:
    return f"{child_id}.task"


class PlanMode(Protocol):
    """Whether a run is in plan mode now: its gate's (`run.permit.Gate.planning`)."""

    @property
    def planning(self) -> bool: ...


@dataclass
class Children:
    """The subagents of one run, as its tools see them, made whole by `run.assemble`. `spec`:
    the run's spec; `depth`: the run's own depth (the root's is 0). Its `ledger` (the run's work,
    which its parent's polls read) is made with it: its children's tokens and its kernel's output
    (`jobs`) count in it."""

    spec: RunSpec
    run: str
    session: str
    depth: int
    max_depth: int
    stall_ms: int
    steps: Steps  # its workflow's: a child's run and task started through it
    jobs: Callable[[], int] = lambda: 0  # its kernel's output bytes (`LazyKernel.output_bytes`)
    # the ledgers of the child runs this process runs (`ProcessContext.children`): their tokens
    ledgers: Mapping[str, Ledger] = field(default_factory=dict)
    system: str = ""  # the run's system prompt: the view of the chat it pinned (a child starts from it)
    settings: JsonMapping = field(default_factory=dict)  # in force: an agent's model resolves in them
    offered: tuple[str, ...] = ()  # the tools the run offers: a defined agent's are some of them
    mode: PlanMode | None = None  # its gate: a subagent starts in the mode its parent is in; None: default
    spawned: list[str] = field(default_factory=list)  # child ids, in spawn order
    last: dict[str, int] = field(default_factory=dict)  # each child's last token read here
    ledger: Ledger = field(init=False)

    def __post_init__(self) -> None:
        self.ledger = Ledger(children=self.tokens, jobs=self.jobs)

    def tokens(self) -> int:
        """Its children's tokens: a child this process runs gives its token now; one that
        ended (or runs elsewhere) keeps the last one read, so the sum never goes back."""

        here = self.ledgers
        for cid in self.spawned:
            if cid in here:
                self.last[cid] = int(here[cid].token())
        return sum(self.last.values())

    @property
    def may_spawn(self) -> bool:
        return self.depth < self.max_depth

    @property
    def workspace(self) -> str:
        """Where this run works: its worktree, or its project."""
        return self.spec.worktree.path if self.spec.worktree is not None else self.spec.cwd

    async def spawn(
        self, prompt: str, model: str | None, agent: Agent | None = None, isolation: str | None = None
    ) -> Spawned:
        """Start a child and its task (in the run's workflow, not in a step: DBOS
        records both starts, and a replay starts neither again); `agent`: the defined agent
        it runs as; `isolation`: "worktree" or "none" (None: the agent's own, else none).
        SpawnError: the agent's model cannot be used, or the worktree asked for cannot be made
        (nothing is started)."""
        system, tools = self.system, self.spec.tools
        if agent is not None:
            model = model or self.agent_model(agent)
            tools = agent_rule.tools_for(agent.tools, agent.denied, self.offered)
            system = agent_system(self.system, agent)
        asked = isolation is not None
        isolated = (
            isolation if asked else (agent.isolation if agent is not None else "")
        ) == agent_rule.ISOLATION
        cid = f"{self.run}.c{len(self.spawned) + 1}"
        wt: Worktree | None = None
        note = ""
        if isolated:
            made = await self.steps.worktree(cid, self.workspace)
            if "error" in made and asked:
                raise SpawnError(str(made["error"]))
            if "error" in made:  # only its agent's default asked: it runs without, and says so
                note = f"it runs in your checkout, without the worktree its agent asks for: {made['error']}"
            else:
                wt = Worktree.of(made)
                system = "\n\n".join(p for p in (system, wt.prompt()) if p)
        self.spawned.append(cid)
        spec = dataclasses.replace(
            self.spec,
            session=cid,
            prompt=prompt,
            system=system,
            tools=tools,
            model=model or self.spec.model,
            child=Parent(self.run, self.session, self.depth + 1),
            deferred=None,
            claim=None,
            asked=None,  # its start takes every report that waits for it (its deadline is its parent's)
            session_start=None,  # a subagent's run starts no session: its end is a SubagentStop
            agent_type=agent.name if agent is not None else None,  # its SubagentStart/Stop hooks' subject
            permission_mode="plan" if self.mode is not None and self.mode.planning else "default",
            worktree=wt or self.spec.worktree,  # without one of its own, it works where its parent does
        )
        if model and model.partition("/")[0] != self.spec.model.partition("/")[0]:
            # another provider: its own endpoint, from the settings
            spec = dataclasses.replace(spec, base_url=None, api=None)
        watch: JsonObject = {
            "child": cid,
            "name": name_of(cid),
            "session": self.session,
            "stallMs": self.stall_ms,
        }
        if wt is not None:  # its task ends it, once
            watch["worktree"] = wt.json()
        await self.steps.start_child(cid, spec, watch)
        return Spawned(cid, wt.branch if wt is not None else "", note)

    def agent_model(self, agent: Agent) -> str:
        """The model a defined agent runs on (`rules.agent.model_for`), its route checked
        as `/model` checks one: on its parent's provider with its parent's `--base-url` and
        `--api`. SpawnError: no route, with why."""
        parent = self.spec.model
        chosen = agent_rule.model_for(agent.model, parent, configured(self.settings))
        which = f"agent {agent.name!r} ({agent.path})"
        if chosen != parent:
            same = chosen.partition("/")[0] == parent.partition("/")[0]
            over = (self.spec.base_url, self.spec.api) if same else (None, None)
            try:
                resolve(chosen, self.settings, *over)
            except ModelError as e:
                raise SpawnError(f"{which}: {e}") from None
        return chosen

    def agent_fallback(self, agent: Agent) -> str:
        """What the spawn says of a defined agent's model that fell back to its parent's
        (`rules.agent.fallback`; "" when none did)."""
        parent = self.spec.model
        chosen = agent_rule.model_for(agent.model, parent, configured(self.settings))
        return agent_rule.fallback(agent.model, chosen, parent)

    def note(self, text: str) -> bool:
        return self.ledger.note(text)

    async def stop(self, cid: str, how: Abort) -> None:
        await DBOS.send_async(task_id(cid), how.value, topic=ABORT_TOPIC)

    async def merge(self, branch: str) -> str:
        """A subagent's branch merged into where this run works (`children.worktree.merge_branch`: the
        gate asked first). WorktreeError: why not, the checkout as it was."""
        return await merge_branch(Path(self.workspace), branch)


def configured(settings: JsonMapping) -> list[str]:
    """The models the settings name, in order: `model`, `auxiliaryModel`, `models`,
    `allowedModels` (a bare model name in an agent's file is looked up among them)."""
    models, allowed = settings.get("models"), settings.get("allowedModels")
    found = [settings.get("model"), settings.get("auxiliaryModel")]
    found += list(models) if isinstance(models, Mapping) else []
    found += allowed if isinstance(allowed, list) else []
    return list(dict.fromkeys(m for m in found if isinstance(m, str) and m))


def agent_system(base: str, agent: Agent) -> str:
    """A defined agent's system prompt: its parent's, then the agent's own (its file's body)."""
    head = f"You are the agent {agent.name!r} the user defined in {agent.path}. Its instructions:"
    return "\n\n".join(p for p in (base, head, agent.prompt) if p)


# ---------------------------------------------------------------- reading a child


async def read(cid: str, ledgers: Mapping[str, Ledger]) -> Seen:
    """One poll of a child: how its run ended, or its token when this process runs it.
    A run in flight elsewhere (another process, or queued for recovery) cannot be read:
    a failed poll, as is any error of the store. No such run: its worker is gone."""

    try:
        st = await DBOS.get_workflow_status_async(cid)
    except Exception as e:
        return Seen(Reading.FAILED, detail=f"{type(e).__name__}: {e}")
    if st is None:
        return Seen(Reading.GONE)
    if st.status not in IN_FLIGHT:
        out = st.output if isinstance(st.output, dict) else {}
        if st.status == "SUCCESS" and out.get("outcome") == "answered":
            return Seen(Reading.ANSWERED, detail=str(out.get("answer") or ""))
        error = (out.get("error") or {}).get("message") if out else None
        why = error or (str(st.error) if st.error else st.status.lower())
        return Seen(Reading.ERRORED, detail=f"{out.get('outcome') or st.status.lower()}: {why}")
    ledger = ledgers.get(cid)
    if ledger is None:
        return Seen(Reading.FAILED, detail=f"run {cid} is {st.status.lower()} in another process")
    return Seen(Reading.TOKEN, ledger.token())


async def stop_run(cid: str, here: ProcessContext) -> None:
    """Stop a child's run: its cancel, when this process runs it (it ends aborted within
    its grace, its kernel and jobs with it); else DBOS's cancel, which the process that
    runs it obeys at its next step. Its session (transcript) is kept."""

    if here.runs.abort(cid):
        return
    with contextlib.suppress(Exception):
        await DBOS.cancel_workflow_async(cid)


@dataclass
class DurablePort:
    """The task's port as recorded steps of its workflow: a restart replays them. `here`:
    the process the task runs in."""

    spec: JsonMapping
    here: ProcessContext

    @property
    def cid(self) -> str:
        return str(self.spec["child"])

    async def now(self) -> float:
        async def clock() -> float:
            return time.time()

        return float(await DBOS.run_step_async({"name": "clock"}, clock))

    async def pause(self, seconds: float) -> Abort | None:
        got = await DBOS.recv_async(ABORT_TOPIC, timeout_seconds=max(seconds, 0.0))
        if got is None:
            return None
        try:
            return Abort(got)
        except ValueError:
            return None

    async def read(self) -> Seen:
        async def poll() -> JsonObject:
            s = await read(self.cid, self.here.children)
            return {"reading": s.reading.value, "token": s.token, "detail": s.detail}

        got = await DBOS.run_step_async({"name": "poll"}, poll)
        return Seen(Reading(got["reading"]), int(got["token"]), str(got["detail"]))

    async def stop(self) -> None:
        async def stop() -> None:
            await stop_run(self.cid, self.here)

        await DBOS.run_step_async({"name": "stop"}, stop)

    def _reports(self) -> Reports:
        return self.here.reports()

    async def fate(self, rid: str) -> Fate:
        async def fate() -> str:
            return str((await asyncio.to_thread(self._reports().fate, rid)).value)

        return Fate(await DBOS.run_step_async({"name": "fate"}, fate))

    async def is_open(self) -> bool:
        async def is_open() -> bool:
            return bool(await asyncio.to_thread(self._reports().is_open, str(self.spec["session"])))

        return bool(await DBOS.run_step_async({"name": "open"}, is_open))

    async def submit(self, rid: str, text: str) -> Fate:
        async def submit() -> str:
            reports = self._reports()
            got = await asyncio.to_thread(reports.submit, rid, str(self.spec["session"]), self.cid, text)
            fault_injection.reached("submitted")  # in the inbox, the step not yet recorded
            return str(got.value)

        return Fate(await DBOS.run_step_async({"name": "submit"}, submit))

    def show(self, text: str) -> None:
        self.here.show(self.cid.rpartition(".c")[0], "child", text)

    async def publish(self, state: dict[str, object]) -> None:
        wt = worktree_of(self.spec)  # `eukhe status` names the branch it works on
        await DBOS.set_event_async("watch", {**state, "branch": wt.branch} if wt is not None else state)

    async def changes(self) -> str:
        wt = worktree_of(self.spec)
        if wt is None:
            return ""
        name = str(self.spec["name"])

        async def ended() -> str:
            await _ended(self.cid)  # a stopped run's last command ends before its worktree does
            try:
                return (await end_worktree(wt, name)).text()
            except WorktreeError as e:
                return f"Changes: its worktree {wt.path} on branch {wt.branch} is kept as it is: {e}."

        return str(await DBOS.run_step_async({"name": "changes"}, ended))


async def _ended(cid: str, wait: float = ENDED_WAIT) -> None:
    """Until the child's run is no longer in flight, `wait` seconds at most."""
    clock = time.monotonic()
    while time.monotonic() - clock < wait:
        try:
            st = await DBOS.get_workflow_status_async(cid)
        except Exception:
            return
        if st is None or st.status not in IN_FLIGHT:
            return
        await asyncio.sleep(0.2)


@DBOS.workflow(name=CHILD_TASK)
async def child_task(spec: JsonObject) -> JsonObject:
    """A child's task: watch it until it ends (or stalls, or cannot be reached), then
    deliver its report exactly once. `spec`: child, name, session (the parent's, where
    the report goes), stallMs, mode (report or silent)."""
    cfg = child.limits(int(spec.get("stallMs") or 0))
    mode = Mode(spec.get("mode") or Mode.REPORT.value)
    here, tid = process(), task_id(str(spec["child"]))  # DBOS calls the task by name: its process read here
    port = DurablePort(spec, here)
    port.show(f"child {spec['name']} started")
    await here.running(tid, str(spec["session"]), "started")  # its owner takes it up if this process dies
    try:
        w = Watcher(cfg, port, str(spec["child"]), str(spec["name"]), child.task(cfg, mode))
        t: Task = await w.run()
    finally:
        await here.running(tid, str(spec["session"]), "ended")
    return {"phase": t.phase.value, "owe": t.owe.value, "submissions": t.sub + 1}
