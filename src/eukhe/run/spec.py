"""What a session's runs are made of: the settings in effect, the model (checked before
any run), the skills offered and the prompt templates; and the spec of one run
(`RunSpec`), the input of its durable workflow. `eukhe run` makes one run of it, the
interactive agent many."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from eukhe.admission import limits_from
from eukhe.ai.image import Image, ImageError, refusal, takes_images
from eukhe.ai.listed import LOOK, looking
from eukhe.ai.models import Route, parse_name, resolve
from eukhe.children.tools import MERGE_CHILD, PROGRESS, SPAWN, STOP_CHILD
from eukhe.children.worktree import Worktree
from eukhe.errors import Code, EukheError
from eukhe.json_types import JsonMapping, JsonObject
from eukhe.mcp.tools import PREFIX as MCP_PREFIX
from eukhe.memory.tool import DATE, ZOOM
from eukhe.rules import pinned, todo
from eukhe.rules.instructed import Taken
from eukhe.rules.todo import Task
from eukhe.run.deadline import Deadline
from eukhe.run.mentions import Attached, attach, with_images
from eukhe.settings import home, loaded, run_settings
from eukhe.settings.keys import INSTRUCTIONS_BYTES
from eukhe.settings.load import Taken as Configuration
from eukhe.settings.load import value
from eukhe.settings.permissions import in_force
from eukhe.settings.run import Price, Settings
from eukhe.skills import (
    Agent,
    Instructions,
    ResourceSnapshot,
    expand,
    get_resource_snapshot,
    invoke_skill,
    load_instructions,
    system_prompt_section,
)
from eukhe.tools import BUILTIN
from eukhe.tools.ipython import IPYTHON
from eukhe.tools.jobs import JOB_KILL, JOB_OUTPUT
from eukhe.tools.plan import EXIT_PLAN_TOOL
from eukhe.tools.todo import TODO

NO_MODEL = (
    "no model configured: pass --model provider/model "
    "(e.g. --model openai/gpt-4.1 with OPENAI_API_KEY set, "
    "or --model vllm/NAME --base-url http://127.0.0.1:8000/v1), "
    'or set "model" in {settings}'
)
"""What a session with no model says; `settings`: the home's settings file in effect."""


TOOLS = (
    *BUILTIN,
    IPYTHON.name,
    ZOOM.name,
    DATE.name,
    SPAWN.name,
    STOP_CHILD.name,
    MERGE_CHILD.name,
    PROGRESS.name,
    EXIT_PLAN_TOOL.name,
    TODO.name,
    JOB_OUTPUT.name,
    JOB_KILL.name,
)
"""The name of every tool of eukhe's own a run may offer (some only where they apply: the
chat's to a session's runs, `progress` to a subagent, `exit_plan` where plan mode may be on,
`todo` to a root run); an MCP server's are `mcp__<server>__<tool>`."""


class ToolsError(EukheError, ValueError):
    """`--tools` names a tool eukhe does not have."""

    code = Code.INPUT


def chosen_tools(names: str) -> tuple[str, ...]:
    """`--tools read,grep`: the tools a run may offer, by name, in the order given (an empty
    value: none). A name that is neither eukhe's nor an MCP server's is a ToolsError."""
    chosen = tuple(dict.fromkeys(n.strip() for n in names.split(",") if n.strip()))
    unknown = [n for n in chosen if n not in TOOLS and not n.startswith(MCP_PREFIX)]
    if unknown:
        raise ToolsError(
            f"--tools: no tool is named {', '.join(map(repr, unknown))}; eukhe's are "
            f"{', '.join(TOOLS)}, and an MCP server's are {MCP_PREFIX}<server>__<tool>"
        )
    return chosen


STEPS = 4
"""The layout of a run's recorded steps: 2 has a `permit` step before each tool call; 3
records no `message` step, the messages riding on the step after them (`Carried`); 4 fires
the user's hooks, the answers of UserPromptSubmit and Stop hooks each a `hook` step of its
own (`run.hook_events`). A run
replays its steps as they were recorded under its own layout. One that began under 1
(eukhe 0.1) had no `permit` step: it resumes through the permission gate all the same, the
decision riding in each call's own first step (`run.workflow.RecordedEffects`), and a call 0.1
recorded replays as it ran."""


@dataclass(frozen=True)
class Parent:
    """A child's run's parent: its run and session, and the child's depth (1: a child of a
    root run)."""

    run: str
    session: str
    depth: int

    def json(self) -> JsonObject:
        return {"parent": self.run, "session": self.session, "depth": self.depth}


@dataclass(frozen=True)
class RunSpec:
    """One run as its durable workflow takes it. A dict only at DBOS's boundary (`json`,
    `of`): its camelCase keys are in every store, so they never change, and a key an
    earlier eukhe did not write reads as its default (a run of 0.1 has no `steps`)."""

    model: str
    cwd: str
    prompt: str | None = None  # None: a follow-up run, whose prompt is what waits for it
    system: str = ""
    base_url: str | None = None
    api: str | None = None
    settings: JsonMapping = field(default_factory=dict)  # the run settings, as a dict
    sandbox: str | None = None  # None: the settings' (`settings.permissions.in_force`)
    approval: str | None = None
    # "plan" or "default" (`--permission-mode`, a face's mode change); None: the settings'
    permission_mode: str | None = None
    steps: int = 1  # the layout of its recorded steps (`STEPS`)
    steers: bool = False  # an interactive session's: its user may steer the run
    deferred: str | None = None  # a deferred answer's window (15m, 1h, 24h)
    poll_seconds: float = 5.0
    session: str | None = None  # None: its run's id
    child: Parent | None = None  # a subagent's run
    claim: str | None = None  # its start's own mark (`run.runtime.start`)
    images: tuple[Image, ...] = ()  # the prompt's attached images, by reference
    tools: tuple[str, ...] | None = None  # `--tools`: the only tools it offers, by name; None: all
    agents: tuple[Agent, ...] = ()  # the subagents users define, which its `spawn` starts by name
    agent_type: str | None = None  # a subagent's agent (its name), as its SubagentStart/Stop hooks get it
    # the first run a face starts in a session: "startup" (a new one) or "resume" (one opened
    # again), its SessionStart hooks' source; None: any other run
    session_start: str | None = None
    # `--timeout`: when the invocation ends at the latest, absolute, so that whoever executes the
    # run (this process, or the owner after a crash) honours it; its subagents' and follow-ups' too
    deadline: Deadline | None = None
    # when it was asked for (epoch seconds, `run.runtime.start`): its start takes only the user's
    # messages queued by then (`run.workflow`)
    asked: float | None = None
    # the session's task list when it started, and the person's last request when its prompt is
    # not theirs (a follow-up): what its views pin (`rules.pinned`, `Sessions.pins`)
    tasks: tuple[Task, ...] = ()
    request: str = ""
    # its instruction files' digests as it started, and their records then (`run.instructed`:
    # taken by its start, so a replay compares with the same; a subagent's are its parent's, the
    # parent's start its own); None: begun by an earlier eukhe
    instructions: Taken | None = None
    # a subagent's git worktree (`isolation: "worktree"`): where it works, its sandbox and its
    # tools bound to it, its parent's checkout read-only; `cwd` stays the project, whose
    # configuration it runs with. None: it works in `cwd`
    worktree: Worktree | None = None
    # their bytes, until `run.runtime.start` keeps them in the store's image table: never in the
    # workflow's input (`json` leaves them out), so a store holds each image once
    image_data: Mapping[str, bytes] = field(default_factory=dict, compare=False, repr=False)

    def json(self) -> JsonObject:
        out: JsonObject = {
            "prompt": self.prompt,
            "system": self.system,
            "model": self.model,
            "baseUrl": self.base_url,
            "api": self.api,
            "cwd": self.cwd,
            "settings": dict(self.settings),
            "sandbox": self.sandbox,
            "approval": self.approval,
            "steps": self.steps,
        }
        if self.steers:
            out["steers"] = True
        if self.deferred is not None or self.poll_seconds != 5.0:
            out |= {"deferred": self.deferred, "pollSeconds": self.poll_seconds}
        if self.session is not None:
            out["session"] = self.session
        if self.child is not None:
            out["child"] = self.child.json()
        if self.claim is not None:
            out["claim"] = self.claim
        if self.images:
            out["images"] = [i.json() for i in self.images]
        if self.tools is not None:
            out["tools"] = list(self.tools)
        if self.agents:
            out["agents"] = [a.json() for a in self.agents]
        if self.session_start is not None:
            out["sessionStart"] = self.session_start
        if self.agent_type is not None:
            out["agentType"] = self.agent_type
        if self.permission_mode is not None:
            out["permissionMode"] = self.permission_mode
        if self.deadline is not None:
            out["deadline"] = self.deadline.json()
        if self.asked is not None:
            out["askedAt"] = self.asked
        if self.tasks:
            out["tasks"] = todo.json_of(self.tasks)
        if self.request:
            out["request"] = self.request
        if self.instructions is not None:
            out["instructions"] = self.instructions.json()
        if self.worktree is not None:
            out["worktree"] = self.worktree.json()
        return out

    @classmethod
    def of(cls, spec: JsonMapping) -> RunSpec:
        """A workflow's input as a store holds it, of this eukhe or an earlier one."""
        child = spec.get("child")
        return cls(
            model=str(spec["model"]),
            cwd=str(spec["cwd"]),
            prompt=None if spec.get("prompt") is None else str(spec["prompt"]),
            system=str(spec.get("system") or ""),
            base_url=spec.get("baseUrl"),
            api=spec.get("api"),
            settings=dict(spec.get("settings") or {}),
            sandbox=spec.get("sandbox"),
            approval=spec.get("approval"),
            permission_mode=None if spec.get("permissionMode") is None else str(spec["permissionMode"]),
            steps=int(spec.get("steps") or 1),
            steers=bool(spec.get("steers")),
            deferred=spec.get("deferred"),
            poll_seconds=float(spec.get("pollSeconds") or 5.0),
            session=None if spec.get("session") is None else str(spec["session"]),
            child=Parent(str(child["parent"]), str(child["session"]), int(child["depth"])) if child else None,
            claim=spec.get("claim"),
            images=tuple(Image.of(i) for i in spec.get("images") or ()),
            tools=None if spec.get("tools") is None else tuple(map(str, spec["tools"])),
            agents=tuple(Agent.of(a) for a in spec.get("agents") or ()),
            session_start=None if spec.get("sessionStart") is None else str(spec["sessionStart"]),
            agent_type=None if spec.get("agentType") is None else str(spec["agentType"]),
            deadline=Deadline.of(spec["deadline"]) if isinstance(spec.get("deadline"), Mapping) else None,
            asked=float(spec["askedAt"]) if isinstance(spec.get("askedAt"), int | float) else None,
            tasks=todo.of_json(spec.get("tasks")),
            request=str(spec.get("request") or ""),
            instructions=Taken.of(spec.get("instructions")),
            worktree=Worktree.of(spec["worktree"]) if isinstance(spec.get("worktree"), Mapping) else None,
        )

    def last_request(self) -> str:
        """The person's last request while it runs (`rules.pinned.asked`): its prompt, or for
        a follow-up the one before."""
        return pinned.asked(self.request, self.prompt)

    def run_settings(self) -> Settings:
        """Its run settings; a key this eukhe does not know is dropped."""
        known = {f.name for f in dataclasses.fields(Settings)}
        got = {k: v for k, v in self.settings.items() if k in known}
        if isinstance(got.get("price"), dict):  # the spec is JSON: the price comes back as its object
            got["price"] = Price(**got["price"])
        return Settings(**got)


class NoModel(EukheError, ValueError):
    """No model is named: by the command line, nor by the settings."""

    code = Code.MODEL

    def __init__(self, settings: Path) -> None:
        super().__init__(NO_MODEL.format(settings=settings))


class InstructionsChanged(NamedTuple):
    """The instruction files, read again and changed: as they are now, and the line that says so."""

    instructions: Instructions
    said: str


@dataclass(frozen=True)
class SessionSetup:
    """A session's runs as its configuration and the project make them, read once as it opens
    (`setup`, from the configuration taken once: `settings.load.Taken`), with the face's
    choices for them. Frozen: a change (a person's mode change, `/model`, `/agents`, the
    instruction files read again) is a new one (`dataclasses.replace`). What each run reads
    of its own settings, as it starts, is the run's (`run.assemble.RunConfig`)."""

    cwd: Path
    settings: JsonObject
    model: str
    base_url: str | None
    api: str | None
    run: Settings
    snapshot: ResourceSnapshot  # skills, templates, agents, and each that failed
    notices: tuple[str, ...] = ()  # the project's keys an untrusted folder ignores (`settings.trust`)
    sandbox: str | None = None  # --sandbox: the user's mode for these runs, over the settings
    approval: str | None = None  # --approval: the user's policy for these runs, over the settings
    # --permission-mode, or the person's mode change (Shift+Tab): "plan" or "default", over the settings
    permission_mode: str | None = None
    plan_default: bool = False  # plan mode as the settings have it when the session opens
    steers: bool = False  # the interactive agent's runs: the user may steer them
    deferred: str | None = None  # --deferred: each run asks for a deferred answer in this window
    poll_seconds: float = 5.0
    instructions: Instructions = field(default_factory=Instructions)  # AGENTS.md, CLAUDE.md: once a session
    # the instruction files (by `skills.instruction_key`) the person chose to start without
    withheld: frozenset[str] = frozenset()
    route_api: str = ""  # the API the model is served with (openai-chat, openai-responses, anthropic)
    route: Route | None = None  # where the model is served
    tools: tuple[str, ...] | None = None  # --tools: the only tools its runs offer; None: all
    deadline: Deadline | None = None  # --timeout: when its runs end at the latest

    @property
    def planning(self) -> bool:
        """Whether its next run starts in plan mode."""
        return self.permission_mode == "plan" if self.permission_mode else self.plan_default

    def unlisted(self, timeout: float = LOOK) -> Callable[[], str | None]:
        """The look at whether a local server lists the model (`ai.listed`), begun now and
        given `timeout` seconds in all: the callable returned gives its line, or None."""
        return looking(self.route, timeout) if self.route is not None else lambda: None

    @property
    def system(self) -> str:
        parts = (self.instructions.section, system_prompt_section(self.snapshot.skills))
        return "\n\n".join(p for p in parts if p)

    def instructions_changed(self) -> InstructionsChanged | None:
        """The instruction files read again (the interactive agent, before each turn): when
        they changed, as they are now (the session takes them: they enter the system prompt
        at this turn) and the line that says so; None: unchanged."""
        now = read_instructions(self.cwd, self.settings, self.withheld)
        if now.section == self.instructions.section:
            return None
        files = ", ".join(str(p.path) for p in now.parts) or "none now"
        return InstructionsChanged(now, f"the instruction files changed ({files}): they enter at this turn")

    def diagnostics(self) -> list[tuple[str, str]]:
        """Each skill, template and agent that did not load, as ("skill" | "prompt" |
        "agent", "path: error"), then each instruction file that was not, as ("instruction
        file", "path: not loaded: why"): a face says them as the session starts (a
        repository's `AGENTS.md` that links out of it is refused, and the person sees where
        it led)."""
        return [
            (kind[:-1], f"{d.path}: {d.error}")
            for kind in ("skills", "prompts", "agents")
            for d in self.snapshot.diagnostics.get(kind, ())
        ] + [
            ("instruction file", f"{p.path}: not loaded: {p.problem}")
            for p in self.instructions.parts
            if p.problem
        ]

    def expand(self, prompt: str) -> str:
        """`/name args` through its template; `/skill:name args` with the skill's text."""
        return invoke_skill(prompt, self.snapshot.skills) or expand(prompt, self.snapshot.prompts) or prompt

    def attach(
        self,
        prompt: str,
        typed: str,
        images: Sequence[str] = (),
        pictures: Sequence[tuple[str, bytes]] = (),
        given: str = "",
    ) -> Attached:
        """The expanded prompt with the files that the person's own `@path` mentions (in
        `typed`, not in a template's text) name attached after it, and the images they name
        (`images`: `eukhe run --image`) or give (`pictures`: an editor's, by name and bytes).
        `given`: what came with the prompt that the person did not type (piped input, an
        editor's resources): its mentions attach only inside the project (`run.mentions`).
        Images for a model that takes none are an ImageError, before any request."""
        got = with_images(
            attach(prompt, self.cwd, typed=typed, given=given), list(images), self.cwd, pictures
        )
        provider, model = parse_name(self.model)
        if got.images and not takes_images(provider, model, self.settings):
            raise ImageError(refusal(provider, model))
        return got

    def spec(self, prompt: str | None, attached: Attached | None = None) -> RunSpec:
        """One run of the session (`run.workflow.run_workflow_body`); `attached`: the images
        its prompt attaches."""
        return RunSpec(
            images=attached.images if attached else (),
            image_data=attached.image_data if attached else {},
            model=self.model,
            cwd=str(self.cwd),
            prompt=prompt,
            system=self.system,
            base_url=self.base_url,
            api=self.api,
            settings=dataclasses.asdict(self.run),
            sandbox=self.sandbox,
            approval=self.approval,
            permission_mode=self.permission_mode,
            steps=STEPS,
            steers=self.steers,
            deferred=self.deferred,
            poll_seconds=self.poll_seconds,
            tools=self.tools,
            agents=self.snapshot.agents,
            deadline=self.deadline,
        )


def read_instructions(
    cwd: Path, settings: JsonMapping, withheld: frozenset[str] = frozenset()
) -> Instructions:
    """The home's and the project's instruction files, within `context.instructionsBytes`,
    but those `withheld`."""
    budget = value(settings, "context.instructionsBytes", int, INSTRUCTIONS_BYTES)
    return load_instructions(home(), cwd, budget, withheld)


def setup(
    cwd: Path,
    model: str | None = None,
    base_url: str | None = None,
    api: str | None = None,
    sandbox: str | None = None,
    approval: str | None = None,
    effort: str | None = None,
    permission_mode: str | None = None,
    withheld: frozenset[str] = frozenset(),
    *,
    steers: bool = False,
) -> SessionSetup:
    """The session's setup, from its configuration taken once (`settings.load.Taken`); a model
    that cannot be used, or settings that cannot be read (permissions too, with the
    `--sandbox`, `--approval` and `--permission-mode` flags), fail here with their cause,
    before any run (SettingsError, ModelError, NoModel). `withheld`: the instruction files the
    person chose to start without; `steers`: its person may steer its runs."""
    taken = Configuration.take(cwd)
    got = loaded(cwd, taken=taken)
    settings = got.values
    name = model or settings.get("model")
    if not isinstance(name, str) or not name:
        raise NoModel(home() / "settings.json")
    route = resolve(name, settings, base_url, api)
    rs = run_settings(settings, name)
    if effort is not None:  # --effort or /effort, over models.<m>.reasoningEffort; "off": the model's own
        rs = dataclasses.replace(
            rs, reasoning_effort=None if effort.strip() in ("", "off") else effort.strip()
        )
    limits_from(settings, route.provider)  # and so do its admission limits
    # every rule, the mode, the policy, plan mode and the deadline read
    rights = in_force(cwd, None, sandbox, approval, permission_mode=permission_mode, taken=taken)
    return SessionSetup(
        cwd,
        settings,
        name,
        base_url,
        api,
        rs,
        get_resource_snapshot(cwd, settings=settings),
        notices=got.notices,
        sandbox=sandbox,
        approval=approval,
        permission_mode=permission_mode,
        plan_default=rights.plan,
        steers=steers,
        instructions=read_instructions(cwd, settings, withheld),
        withheld=withheld,
        route_api=route.api,
        route=route,
    )
