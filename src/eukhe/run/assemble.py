"""A run's parts, built once (`assemble`), as pi builds a session in one factory: its
settings, route and secrets resolved (`configured`: its `RunConfig`), then its provider, chat memory,
subagents, sandbox, permission gate, tools' context, MCP servers, kernel and tools
(`RunParts`), each typed by what it is.

They are made in the order a run has always made them: what it shows, and what it waits
for, come in the same order, so a replay meets the same steps. The durable steps taken on
the way (the pinned view) and the child workflows a subagent starts are the workflow's,
asked through its one interface (`run.steps.Steps`): this module records nothing itself."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shlex
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from eukhe.admission import Slots
from eukhe.ai.effort import effort_refusal
from eukhe.ai.models import ModelError, Route, provider_for, resolve
from eukhe.ai.provider import Provider
from eukhe.ai.request import Message
from eukhe.children.ledger import Ledger, with_ledger
from eukhe.children.tools import MERGE_CHILD, PROGRESS, SPAWN, STOP_CHILD
from eukhe.client.client import OwnerError
from eukhe.errors import Code, EukheError
from eukhe.events import ShowEvent
from eukhe.hooks.config import load as load_hooks
from eukhe.hooks.transcript import Transcript
from eukhe.hooks.transcript import path_of as transcript_path
from eukhe.ids import name_of
from eukhe.jobs.holder import Scope
from eukhe.json_types import JsonMapping, JsonObject
from eukhe.mcp.config import gate_ms
from eukhe.mcp.config import servers as mcp_servers
from eukhe.memory import run_memory
from eukhe.memory.access import Memory, settle
from eukhe.memory.compactor import request_tokens
from eukhe.memory.log import now
from eukhe.memory.tool import DATE, ZOOM
from eukhe.rules import fetch as fetch_rule
from eukhe.rules import hook as hook_rule
from eukhe.rules import pinned
from eukhe.rules.aux_fallback import Purpose
from eukhe.rules.permission import PermissionState
from eukhe.rules.pinned import Pins
from eukhe.run import notes, tasks
from eukhe.run.auxiliary import AuxiliaryRoute
from eukhe.run.children import Children
from eukhe.run.code_paths import code_paths
from eukhe.run.context import ProcessContext
from eukhe.run.effects import Effects
from eukhe.run.handles import RunHandle
from eukhe.run.hook_events import FIRST_LAYOUT, RunHooks
from eukhe.run.kernel import LazyKernel
from eukhe.run.loop import Compact, Inbox, RunLoop
from eukhe.run.outcome import Ending, RunOutcome
from eukhe.run.permit import Gate
from eukhe.run.secrets import Secrets, secrets
from eukhe.run.spec import RunSpec
from eukhe.run.steps import Steps
from eukhe.run.tool_runner import runner, scanner, tool_specs
from eukhe.sandbox.bwrap import Sandbox
from eukhe.sandbox.session import for_run
from eukhe.settings import SettingsError, child_settings, fetch_settings, home, load, memory_settings
from eukhe.settings.approvals import approve
from eukhe.settings.load import ChildSettings, MemorySettings, Taken
from eukhe.settings.permissions import InForce, in_force
from eukhe.settings.run import Settings
from eukhe.store.hook_answers import HookAnswerError
from eukhe.tools import BUILTIN, Context, Tool
from eukhe.tools.ipython import IPYTHON
from eukhe.tools.jobs import JOB_KILL, JOB_OUTPUT
from eukhe.tools.plan import EXIT_PLAN_TOOL
from eukhe.tools.todo import TODO
from eukhe.tools.web import WebFetch

if TYPE_CHECKING:  # its SDK loads only for a run with servers (`_servers`)
    from eukhe.mcp.servers import Servers


class Unassembled(EukheError):
    """A run whose parts could not be made: `outcome` is its failure as the run returns it,
    with the code of what failed (its settings, its model's route, its chat)."""

    def __init__(self, outcome: RunOutcome) -> None:
        super().__init__(outcome.message)
        self.outcome = outcome


@dataclass(frozen=True)
class RunConfig:
    """The run's settings: what it reads from its spec and its configuration, once, before it
    makes anything (the session's own setup, made as a face opens it, is
    `run.spec.SessionSetup`)."""

    cwd: Path
    run_settings: Settings  # the spec's own: rounds, retries, effort, price
    loaded: JsonObject  # the settings in force (`settings.load`)
    route: Route  # where its model is served
    memory_settings: MemorySettings  # the view's budget and the settle wait
    child_settings: ChildSettings  # its subagents' depth and stall, the tools' blocking budget
    secrets: Secrets  # the tools' environment, and every secret value known
    fetch: fetch_rule.Cfg = field(default_factory=fetch_rule.Cfg)  # a web fetch's bounds (`webFetch.*`)
    # its configuration, taken once (`settings.load.Taken`): every loader of the run reads it, never
    # the disk again; a subagent's is its parent's, and so is what its session's SessionEnd reads
    taken: Taken = field(default_factory=Taken)


@dataclass(frozen=True)
class RunParts:
    """A run's parts, each made once. `system`: its system prompt (the pinned view, then its
    MCP servers' instructions); `compact`: its compaction into the chat (None: no chat)."""

    spec: RunSpec
    config: RunConfig
    provider: Provider
    chat: Memory | None  # None: a subagent's run (it logs nothing), or a process with no chat
    ledger: Ledger
    children: Children
    sandbox: Sandbox
    gate: Gate
    context: Context
    system: str
    compact: Compact | None
    servers: Servers | None  # None: none configured
    kernel: LazyKernel
    tools: dict[str, Tool]
    show: ShowEvent  # (kind, text, data=None): the run's events
    hooks: RunHooks | None  # the user's hooks (`run.hook_events`); None: none, or a run begun before them
    transcript: Transcript | None = None  # its session's, in Claude Code's format (`hooks.transcript`)

    def loop(
        self,
        effects: Effects,
        inbox: Inbox,
        admission: Slots,
        image_data: Mapping[str, bytes],
    ) -> RunLoop:
        """The run's loop over its parts: `effects`, the workflow's recorded steps; `inbox`,
        what waits for it at a round end; `admission`, where its requests take their slots."""
        spec = self.spec
        return RunLoop(
            self.provider,
            self.config.route.model,
            tool_specs(self.tools),
            runner(self.tools, self.context),
            self.config.run_settings,
            scan=scanner(),
            show=self.show,
            cancel=self.context.cancel,
            effects=with_ledger(effects, self.ledger),
            background=spec.deferred is not None,
            window=spec.deferred,
            poll_interval=spec.poll_seconds,
            system=self.system,
            interactive=True,  # every run's requests are session requests (H3.1: only the compactor's yield)
            replay_safe=frozenset(name for name, t in self.tools.items() if getattr(t, "replay_safe", False)),
            compact=self.compact,
            admission=admission,
            inbox=inbox,
            redact=self.config.secrets.redact,
            # a 0.1 run's too: its records replay, the rest is asked (`run.workflow.RecordedEffects`)
            gate=self.gate,
            image_data=image_data,
            user_hooks=self.hooks,
            transcript=self.transcript,
        )


def taken(spec: RunSpec, run_id: str, here: ProcessContext) -> Taken:
    """The run's configuration: a subagent's is the one its session's run took, in this process
    (what a model wrote on disk since never reaches it); a session's run takes it now, and its
    subagents and SessionEnd hooks read it after. A subagent taken up in another process after
    a crash takes it as its run took it then: from the disk, as it is."""
    if spec.child and spec.child.session in here.configs:
        return here.configs[spec.child.session]
    got = Taken.take(Path(spec.cwd))
    if not spec.child:
        here.configs[spec.session or run_id] = got
    return got


def configured(spec: RunSpec, here: ProcessContext, run_id: str) -> RunConfig:
    """The run's settings, its model's route and its secrets, read once from its configuration
    (`taken`); `here`'s admission registry takes the provider's slots from them. Unassembled: a
    setting or a route that does not hold."""
    cwd = Path(spec.cwd)
    run_settings = spec.run_settings()
    config = taken(spec, run_id, here)
    try:
        loaded = load(cwd, taken=config)
        here.admission.configure(loaded)  # this provider's slots: providers.<name>.concurrency, queueLimit
        route = resolve(spec.model, loaded, spec.base_url, spec.api)
    except (ModelError, SettingsError) as e:
        raise Unassembled(_failed(e)) from e
    try:
        memory = memory_settings(loaded)
        children = child_settings(loaded)
        bounds = fetch_settings(loaded)
        kept = secrets(loaded, cwd=cwd, taken=config)  # the tools' environment and every secret value known
    except SettingsError as e:
        raise Unassembled(_failed(e)) from e
    return RunConfig(
        cwd,
        run_settings,
        loaded,
        route,
        memory_settings=memory,
        child_settings=children,
        secrets=kept,
        fetch=bounds,
        taken=config,
    )


@contextlib.asynccontextmanager
async def assemble(
    spec: RunSpec, handle: RunHandle, here: ProcessContext, steps: Steps
) -> AsyncIterator[RunParts]:
    """The run's parts, made once, each whole (nothing is assigned to one after it is made), in
    this order: its settings (`RunConfig`), provider, chat, sandbox (in the mode in force) and
    hooks, kernel, pinned view (its workflow's step, through `steps`), MCP servers (its
    parent's, else its own, started) and the tools they offer, gate, tools, subagents and the
    tools' context. On exit its servers are let go (the last run to hold them closes them).
    Unassembled, before anything is let go: a part that cannot be made, and why. `handle`: the
    run's, begun (its cancel); its gate and servers go into it, for a person's mode change and
    its subagents."""
    run_id, cancel = handle.run, handle.cancel
    base = configured(spec, here, run_id)
    cwd, memory, limits = base.cwd, base.memory_settings, base.child_settings
    provider: Provider = provider_for(base.route, redact=base.secrets.redact)  # no body it sends holds one
    compactor = functools.partial(_compactor, spec, base.loaded, base.route, memory.view_bytes)
    parent = spec.child  # a child's run starts from the view at its spawn, and logs nothing
    chat = None if parent else here.memory(compactor, memory.view_bytes)
    session = spec.session or run_id
    confined = await _confined(spec, run_id, cancel, here, base, steps)
    sandbox, hooks = confined.sandbox, confined.hooks
    work = workspace(spec, cwd)  # a subagent's worktree, else the project
    kernel = LazyKernel(work, limits.budget_ms, base.secrets.env, sandbox)  # made on its first cell
    system, compact = spec.system, None
    if chat is not None:  # the turn starts from the settled view, pinned for the whole run
        system, compact = await _pinned_system(spec, run_id, here, base, chat, steps, cancel, hooks)
    viewed = pinned.unpinned(system, Pins(spec.tasks))  # its subagents start from the view, not its list
    parent_run = here.runs.get(parent.run) if parent else None
    shared = parent_run.servers if parent_run else None  # a subagent shares its parent's servers
    try:  # else its own, started now; the first request waits for them the startup gate at most
        given = here.editors.get(session, {})  # an editor's own servers (`eukhe acp`), never stored
        servers = (
            shared.share()
            if shared
            else _servers(cwd, functools.partial(here.show, run_id), given, base.taken)
        )
    except SettingsError as e:
        raise Unassembled(_failed(e)) from e
    try:
        offered, reads, system = await _offered(run_id, here, base, servers, cancel, system)
        gate = _gate(spec, run_id, cancel, here, base, confined, reads)
        handle.assembled(gate, servers)  # a person's mode change reaches its gate; its subagents, its servers
        depth = parent.depth if parent else 0
        tools = _tools(spec, base, chat, depth < limits.max_depth, gate, offered)
        children = Children(
            spec,
            run_id,
            session,
            depth,
            limits.max_depth,
            limits.stall_ms,
            steps,
            jobs=kernel.output_bytes,  # its kernel's output is its work too; it dies with the run
            ledgers=here.children,
            system=viewed,
            settings=base.loaded,  # a defined agent's model is resolved in them
            offered=tuple(tools),  # a defined agent's tools are some of these (`rules.agent.tools_for`)
            mode=gate,  # a subagent of a run in plan mode plans too
        )
        context = Context(
            cwd=work,
            chat=chat,
            cancel=cancel,
            kernel=kernel,
            children=children,
            env=base.secrets.env,
            # a running call's progress that rises is new work (H5.2)
            progressed=children.ledger.progressed,
            readable=gate.readable,
            sandbox=sandbox,
            reach=gate.opened,
            hidden=base.secrets.redact.values,
            todo=None if parent else tasks.shown(functools.partial(here.show, run_id), base.secrets.redact),
            # a session's root runs share its jobs; a subagent's are its own, ended as it reports
            jobs=Scope(here.jobs, run_id if parent else session, session, run_id, limits.job_lifetime_s),
        )
        yield RunParts(
            spec=spec,
            config=base,
            provider=provider,
            chat=chat,
            ledger=children.ledger,
            children=children,
            sandbox=sandbox,
            gate=gate,
            context=context,
            system=system,
            compact=compact,
            servers=servers,
            kernel=kernel,
            tools=tools,
            show=functools.partial(here.show, run_id),
            hooks=hooks,
            transcript=Transcript(
                transcript_path(home(), session),
                session,
                run_id,
                cwd,
                base.route.model,
                sidechain=parent is not None,
                redact=base.secrets.redact,
            ),
        )
    finally:
        handle.released()
        if servers is not None:  # the last run to let go closes them, each within its bound
            await servers.release()


def workspace(spec: RunSpec, cwd: Path) -> Path:
    """Where a run works: a subagent's worktree (`RunSpec.worktree`), else its project."""
    return Path(spec.worktree.path) if spec.worktree is not None else cwd


def _hooks(
    spec: RunSpec,
    run_id: str,
    cancel: asyncio.Event,
    here: ProcessContext,
    base: RunConfig,
    steps: Steps,
    rights: InForce,
) -> RunHooks | None:
    """The run's hooks (`hooks.config`: the home's, a trusted project's): None for a run begun
    under a step layout before them (it replays what it recorded), or with none in effect.
    What a project's `.claude/` held back is said (its `.eukhe/settings.json`'s, the settings'
    own notice says); a guard's entry that cannot be read fails the run, never lets it go
    unguarded. Their payloads name the session's transcript (a subagent's: its parent's, and
    its own beside it) and the permission mode in force as the run's gate has it now."""
    if spec.steps < FIRST_LAYOUT:
        return None
    try:
        got = load_hooks(base.cwd, os.environ, base.taken)
    except SettingsError as e:
        raise Unassembled(_failed(e)) from e
    for line in got.notices:
        if ".claude" in line:
            here.show(run_id, "notice", line)
    if not got.hooks.matchers:
        return None
    show = functools.partial(here.show, run_id)
    session = spec.session or run_id
    try:  # kept by the run's steps
        answers = here.hook_answers()
    except HookAnswerError as e:  # no table to keep their answers in: they run unrecorded, said
        here.show(run_id, "hook", f"the hooks' answers cannot be kept: {e}", {"state": "failed"})
        answers = None

    def mode() -> str:  # as the gate has it now (a person may turn plan mode on), else as the run began
        handle = here.runs.get(run_id)
        gate = handle.running.gate if handle is not None and handle.running is not None else None
        if gate is not None:
            cfg = gate.session.cfg
            return hook_rule.permission_mode(cfg.plan, cfg.mode.value, cfg.policy.value)
        return hook_rule.permission_mode(rights.plan, rights.mode.value, rights.policy.value)

    own = str(transcript_path(home(), session))
    return RunHooks(
        got.hooks,
        session,
        run_id,
        base.cwd,
        base.secrets.env,
        cancel,
        show,
        spec.child is not None,
        answers=answers,
        redact=base.secrets.redact,
        steps=steps,  # their answers kept by the recorded step they fire in
        transcript=str(transcript_path(home(), spec.child.session)) if spec.child else own,
        agent_transcript=own if spec.child else "",
        agent_type=spec.agent_type or "general-purpose",
        model=base.route.model,
        mode=mode,
    )


def session_hooks(
    cwd: Path, session: str, run_id: str, here: ProcessContext, cancel: asyncio.Event
) -> RunHooks | None:
    """A session's hooks outside its runs (SessionEnd), as its runs' are made, from the
    configuration its last run here took (never the disk again: a file written during the
    run is not read), shown as run `run_id`'s (its last): no step keeps their answers. None:
    none in effect, or settings that cannot be read (said)."""
    config = here.configs.get(session) or Taken.take(cwd)
    try:
        kept = secrets(load(cwd, taken=config), cwd=cwd, taken=config)
        got = load_hooks(cwd, os.environ, config)
        rights = in_force(cwd, taken=config)  # its mode as the settings say (a face's flags are its runs')
    except SettingsError as e:
        here.show(run_id, "hook", f"the session's hooks could not be read: {e}", {"state": "failed"})
        return None
    if not got.hooks.matchers:
        return None
    show = functools.partial(here.show, run_id)
    transcript = str(transcript_path(home(), session))
    said = hook_rule.permission_mode(rights.plan, rights.mode.value, rights.policy.value)
    return RunHooks(
        got.hooks,
        session,
        run_id,
        cwd,
        kept.env,
        cancel,
        show,
        redact=kept.redact,
        transcript=transcript,
        mode=lambda: said,
    )


def _failed(e: ModelError | SettingsError) -> RunOutcome:
    return RunOutcome(Ending.FAILED, code=e.code.kind, message=str(e))


@dataclass(frozen=True)
class Confined:
    """Where a run's calls run and what they may do, before its gate is made: the permissions
    in force, what it loads as code, its sandbox, its hooks."""

    rights: InForce
    code: tuple[str, ...]
    sandbox: Sandbox
    hooks: RunHooks | None


async def _confined(
    spec: RunSpec, run_id: str, cancel: asyncio.Event, here: ProcessContext, base: RunConfig, steps: Steps
) -> Confined:
    """Where the run's calls run and what they may do: the rules in force, the mode, the
    policy, the ask's deadline; its sandbox; what it says of them once; its hooks."""
    try:
        rights = in_force(
            base.cwd,
            sandbox=spec.sandbox,
            approval=spec.approval,
            permission_mode=spec.permission_mode,
            taken=base.taken,
        )
    except SettingsError as e:
        raise Unassembled(_failed(e)) from e
    # what it loads as code beyond the registry's names (git's hooks folder, the skills it names,
    # the files its hooks and MCP servers run)
    commands = _commands(base, here.editors.get(spec.session or run_id, {}))
    code = await asyncio.to_thread(code_paths, base.cwd, base.loaded, commands)
    try:  # where its bash and kernel run (in the mode in force), made once: the probe blocks, so off the loop
        made = functools.partial(
            for_run,
            user_home=Path.home(),
            temp=Path(tempfile.gettempdir()),
            flag=rights.mode.value,
            watched=tuple(map(Path, code)),
        )
        session = spec.session or run_id
        sandbox = await asyncio.to_thread(made, base.loaded, workspace(spec, base.cwd), home(), session)
    except SettingsError as e:
        raise Unassembled(_failed(e)) from e
    if spec.worktree is not None:  # its worktree and what its commits write; its parent's checkout read-only
        wt = spec.worktree
        sandbox = sandbox.showing(*wt.shown).binding(*wt.writable).sealing(*wt.sealed)
    refused = effort_refusal(base.route.api, base.run_settings.reasoning_effort)
    if refused is not None:  # the effort is not sent; the interactive agent shows this once a session
        here.show(run_id, "effort", refused)
    if (unavailable := sandbox.notice()) is not None:  # said once; each refused call says it again
        here.show(run_id, "sandbox", unavailable)
    # a session run in the home folder says so once, as the session starts
    if spec.session_start is not None and (in_home := sandbox.in_home(Path.home())) is not None:
        here.show(run_id, "sandbox", in_home)
    hooks = _hooks(spec, run_id, cancel, here, base, steps, rights)
    return Confined(rights, tuple(code), sandbox, hooks)


def _gate(
    spec: RunSpec,
    run_id: str,
    cancel: asyncio.Event,
    here: ProcessContext,
    base: RunConfig,
    confined: Confined,
    reads: frozenset[str],
) -> Gate:
    """The run's permission gate, made whole: the rules, mode and policy in force, who answers
    its asks, its hooks, and the MCP tools that only read (`reads`: their servers say so)."""
    rights, sandbox = confined.rights, confined.sandbox
    asker = here.asker  # a person answers asks only where the interactive agent is
    gate = Gate(
        PermissionState(rights.cfg(person=asker is not None, sandbox=sandbox.unavailable is None)),
        workspace(spec, base.cwd),
        home(),
        asker,
        timeout=rights.ask_timeout_ms / 1000,
        cancel=cancel,
        writable=sandbox.writable,
        approve=functools.partial(approve, home(), base.cwd),
        show=functools.partial(here.show, run_id),
        label=name_of(run_id) if spec.child else "",
        run=run_id,
        code=confined.code,
        hooks=confined.hooks,
        reads=reads,
        # a subagent's worktree lies in the home; its parent's checkout is read-only to it
        fenced=(Path(spec.worktree.checkout),) if spec.worktree is not None else (),
    )
    if rights.plan:  # said once, as its faces show it
        gate.show_mode("as its parent" if spec.child else "")
    return gate


def _commands(base: RunConfig, editor: JsonMapping) -> list[str]:
    """What the run's configuration runs outside any sandbox: its hooks' commands and its MCP
    servers' (an editor's too). One that cannot be read names nothing here: the run says why
    where it loads it."""
    out: list[str] = []
    with contextlib.suppress(SettingsError):
        hooks = load_hooks(base.cwd, os.environ, base.taken).hooks
        out += [h.command for m in hooks.matchers for h in m.hooks]
    with contextlib.suppress(SettingsError):
        configs, _ = mcp_servers(base.cwd, os.environ, editor, base.taken)
        out += [shlex.join([c.command, *c.args]) for c in configs if c.command]
    return out


async def _pinned_system(
    spec: RunSpec,
    run_id: str,
    here: ProcessContext,
    base: RunConfig,
    chat: Memory,
    steps: Steps,
    cancel: asyncio.Event,
    hooks: RunHooks | None,
) -> tuple[str, Compact]:
    """The run's system prompt from the settled view its workflow pins, and its compaction into
    the chat (its PreCompact hooks first). Unassembled: the owner holds the chat and did not
    answer."""
    session, memory = spec.session or run_id, base.memory_settings
    show = functools.partial(here.show, run_id)  # the wait's events, and how it ended
    aux = here.route(session, spec.model, base.loaded)
    notice = functools.partial(_notice, chat, aux, memory, functools.partial(here.show, run_id, "notice"))
    pins = Pins(spec.tasks)  # at its start, the session's list (its prompt is its first message)
    try:
        await notice()
        view = await steps.view(chat, memory.settle_ms, show, cancel, pinned.size(pins))
    except OwnerError as e:  # the turn fails with why
        failed = RunOutcome(Ending.FAILED, code=Code.CHAT.kind, message=f"the chat memory: {e}")
        raise Unassembled(failed) from e
    compact = functools.partial(_compact, chat, run_id, spec, memory.settle_ms, show, notice, cancel, hooks)
    return run_memory.system(spec.system, pinned.attach(view, pins)), compact


async def _offered(
    run_id: str,
    here: ProcessContext,
    base: RunConfig,
    servers: Servers | None,
    cancel: asyncio.Event,
    system: str,
) -> tuple[dict[str, Tool], frozenset[str], str]:
    """Its MCP servers' ready or cached tools (after the startup gate at most, or its abort),
    what they say shown; those that only read (their servers say so: the gate lets them read);
    and its system prompt with their instructions."""
    if servers is None:
        return {}, frozenset(), system
    offered, said, section = await servers.offered(gate_ms(base.loaded), cancel)
    for line in said:
        here.show(run_id, "notice", line)
    reads = frozenset(name for name, t in offered.items() if t.replay_safe)
    return dict(offered), reads, f"{system}\n\n{section}" if section else system


def _tools(
    spec: RunSpec, base: RunConfig, chat: Memory | None, may_spawn: bool, gate: Gate, offered: dict[str, Tool]
) -> dict[str, Tool]:
    """The tools the run offers: the built-in ones, the chat's, the subagents', the kernel's,
    `web_fetch` (with the run's bounds, and its gate's word on which hosts a rule names), its
    MCP servers' (`offered`), then only those `--tools` names."""
    tools: dict[str, Tool] = {**BUILTIN, **({ZOOM.name: ZOOM, DATE.name: DATE} if chat is not None else {})}
    if may_spawn:
        tools |= {
            SPAWN.name: SPAWN.offering(spec.agents),
            STOP_CHILD.name: STOP_CHILD,
            MERGE_CHILD.name: MERGE_CHILD,
        }
    if spec.child:
        tools[PROGRESS.name] = PROGRESS
    tools[IPYTHON.name] = IPYTHON
    tools |= {JOB_OUTPUT.name: JOB_OUTPUT, JOB_KILL.name: JOB_KILL}
    tools[WebFetch.name] = WebFetch(base.fetch, gate.names_host)
    if gate.session.cfg.plan or gate.ask is not None:  # in plan mode, or where a person may turn it on
        tools[EXIT_PLAN_TOOL.name] = EXIT_PLAN_TOOL
    if not spec.child:
        tools[TODO.name] = TODO
    tools |= offered
    if spec.tools is not None:  # `--tools`: only these are offered, to its subagents too
        tools = {name: tool for name, tool in tools.items() if name in spec.tools}
    return tools


def _servers(
    cwd: Path, show: Callable[[str, str], None], editor: JsonMapping, taken: Taken
) -> Servers | None:
    """The run's MCP servers (the configured ones and an editor's, from its configuration),
    started; None when there are none. The SDK loads here only: its import takes most of a
    second."""
    configs, said = mcp_servers(cwd, os.environ, editor, taken)
    for line in said:
        show("notice", line)
    if not configs:
        return None
    from eukhe.mcp.servers import Servers

    servers = Servers(configs, os.environ, home() / "mcp", show=show)
    servers.start()
    return servers


def _compactor(spec: RunSpec, settings: JsonMapping, session: Route, budget: int) -> Route:
    """The compactor's route: `auxiliaryModel` when it can run the compaction pass,
    else the session model's (H7.1). A model on the session's provider takes the same
    `--base-url` and `--api`."""
    choice = AuxiliaryRoute(spec.model, settings).choose(Purpose.COMPACTION, request_tokens(budget))
    if choice.auxiliary:
        same = choice.model.partition("/")[0] == spec.model.partition("/")[0]
        over = (spec.base_url, spec.api) if same else (None, None)
        with contextlib.suppress(ModelError):  # checked by the route: the session model then
            return resolve(choice.model, settings, *over)
    return session


async def _notice(
    chat: Memory, route: AuxiliaryRoute, memory: MemorySettings, show: Callable[[str], None]
) -> None:
    """The compaction pass's row, shown in the session whose turn waits on the
    compactor (H7.2): once per session, purpose, selector and reason."""
    if await chat.unbuilt():
        choice = route.choose(Purpose.COMPACTION, request_tokens(memory.view_bytes))
        if choice.notice:
            show(choice.notice)


async def _compact(
    chat: Memory,
    run: str,
    spec: RunSpec,
    settle_ms: int,
    show: ShowEvent,
    notice: Callable[[], Awaitable[None]],
    cancel: asyncio.Event,
    hooks: RunHooks | None,
    transcript: Sequence[Message],
) -> dict[str, str]:
    """A compaction inside the run (H4): its PreCompact hooks (`auto`: the run's context is
    full; what they say is shown, they block nothing), its messages so far into the chat,
    then a newer settled view (its PostCompact hooks given it) with the pins after it
    (`rules.pinned`: the list the run holds now, from its whole transcript, and the person's
    last request), which the run pins as its new system prompt, and the note it goes on
    from. The loop runs it as one durable step, so a replay goes on from the same view byte
    for byte."""
    if hooks is not None:
        await hooks.pre_compact("auto")
    pins = tasks.pins(spec, transcript)
    try:
        await chat.log(run_memory.entries(run, transcript, now()))
        await notice()
        got = await settle(chat, settle_ms, show, cancel, pinned.size(pins))
    except Exception as e:  # the store, or the owner that holds the chat: the phase fails with why
        return {"error": f"the chat could not take the run's messages and give a new view: {e}"}
    if hooks is not None:  # the view the run goes on from, as Claude Code's summary
        await hooks.post_compact("auto", str(got.text))
    system = run_memory.system(spec.system, pinned.attach(str(got.text), pins))
    return {"system": system, "note": notes.compacted_pinned()} if pins.request else {"system": system}
