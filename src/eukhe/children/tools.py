"""The tools of subagents: `spawn`, `stop_child` and `merge_child` for a parent, `progress` for
a child."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from eukhe.errors import Code, EukheError
from eukhe.humanize import clipped
from eukhe.ids import name_of
from eukhe.json_types import JsonMapping, JsonObject
from eukhe.rules.agent import ISOLATION, LISTED, LISTED_DESCRIPTION
from eukhe.rules.child import Abort
from eukhe.skills import Agent
from eukhe.tools.base import Context, Result, Subagents

ISOLATIONS = ("none", ISOLATION)
"""`spawn`'s `isolation`: none (its parent's checkout), or a git worktree of its own."""


def _children(ctx: Context) -> Subagents:
    if ctx.children is None:
        raise RuntimeError("this run offers no subagents")
    return ctx.children


@dataclass(frozen=True)
class Spawn:
    """`spawn`; `agents`: the subagents users define, which it starts by name (`offering`)."""

    agents: tuple[Agent, ...] = ()
    name: ClassVar[str] = "spawn"
    replay_safe: ClassVar[bool] = True  # started under an id of its own: a replay starts nothing again

    def offering(self, agents: tuple[Agent, ...]) -> Spawn:
        """The tool of a run whose spec carries these agents."""
        return Spawn(agents)

    @property
    def description(self) -> str:
        own = (
            "Start a subagent on a task of its own. It runs beside you with the same tools, from the "
            "same view of the chat, and does not see this conversation: write the task in full. "
            "Its report comes back to you as a user message beginning with [child-...], once, when it "
            "ends; you go on meanwhile. Several may run at once."
        )
        if not self.agents:
            return own
        return (
            f"{own} To start one of the agents the user defined, name it (agent): it runs with its "
            "own instructions, tools and model."
        )

    @property
    def schema(self) -> JsonMapping:
        properties: JsonObject = {
            "task": {"type": "string", "description": "What the subagent is to do, in full."},
            "model": {"type": "string", "description": "provider/model to run it on (default: yours)."},
            "isolation": {
                "type": "string",
                "enum": list(ISOLATIONS),
                "description": (
                    "worktree: it works in a git worktree of its own, on a branch of its own, and "
                    "cannot write your checkout; its report names its branch, commits and diff, and "
                    "merge_child takes them. none: it works in your checkout. Default: none, or the "
                    "agent's own."
                ),
            },
        }
        if self.agents:
            properties["agent"] = {"type": "string", "description": agents_offered(self.agents)}
        return {
            "type": "object",
            "properties": properties,
            "required": ["task"],
            "additionalProperties": False,
        }

    async def run(self, args: JsonObject, ctx: Context) -> Result:
        kids = _children(ctx)
        if not kids.may_spawn:
            return Result(f"spawn: this run is at the subagent depth limit ({kids.max_depth})", True)
        task = str(args["task"]).strip()
        if not task:
            return Result("spawn: the task is empty", True)
        name = str(args.get("agent") or "").strip()
        chosen = next((a for a in self.agents if a.name == name), None)
        if name and chosen is None:
            known = ", ".join(a.name for a in self.agents) or "none is defined"
            return Result(f"spawn: no agent {name!r} (the agents: {known})", True)
        isolation = args.get("isolation")
        try:
            got = await kids.spawn(
                task, args.get("model") or None, chosen, str(isolation) if isolation else None
            )
        except SpawnError as e:
            return Result(f"spawn: {e}", True)
        cid = got.id
        fell = kids.agent_fallback(chosen) if chosen is not None and not args.get("model") else ""
        return Result(
            f"spawned child {name_of(cid)} (run {cid}); its report arrives as a message when it ends"
            + (f"; it works in a worktree of its own on branch {got.branch}" if got.branch else "")
            + (f"; {got.note}" if got.note else "")
            + (f"; agent {chosen.name!r}: {fell}" if chosen is not None and fell else "")
        )


class SpawnError(EukheError, ValueError):
    """A subagent that cannot be started as asked: a defined agent's model cannot be used, or
    the worktree it asked for cannot be made (not a git repository, no commit yet)."""

    code = Code.MODEL


def agents_offered(agents: tuple[Agent, ...]) -> str:
    """The `agent` argument's description: the first `LISTED` agents by name and description
    (each cut), the rest by name: bounded whatever the user defined."""
    lines = ["The name of an agent the user defined, to run this task as it (omit for a plain subagent):"]
    lines += [
        f"- {a.name}: {clipped(' '.join(a.description.split()), LISTED_DESCRIPTION)}" for a in agents[:LISTED]
    ]
    if len(agents) > LISTED:
        lines.append(f"and {', '.join(a.name for a in agents[LISTED:])}")
    return "\n".join(lines)


@dataclass(frozen=True)
class StopChild:
    name: ClassVar[str] = "stop_child"
    description: ClassVar[str] = (
        "End a subagent you spawned. how=cancel: it stops and owes no report (this result is the "
        "answer); how=delete: it stops and reports back as cancelled."
    )
    schema: ClassVar[JsonMapping] = {
        "type": "object",
        "properties": {
            "child": {"type": "string", "description": "Its name, as spawn gave it (e.g. c1.2)."},
            "how": {"type": "string", "enum": ["cancel", "delete"]},
        },
        "required": ["child", "how"],
        "additionalProperties": False,
    }
    replay_safe: ClassVar[bool] = True  # a message under the task's own topic: a second stop changes nothing

    async def run(self, args: JsonObject, ctx: Context) -> Result:
        kids = _children(ctx)
        mine = {name_of(cid): cid for cid in kids.spawned}
        cid = mine.get(str(args["child"]))
        if cid is None:
            known = ", ".join(mine) or "none"
            return Result(f"stop_child: no child {args['child']!r} of this run (its children: {known})", True)
        how = Abort(args["how"])
        await kids.stop(cid, how)
        if how is Abort.CANCEL:
            return Result(f"child {args['child']} cancelled: it stops, and reports nothing")
        return Result(f"child {args['child']} deleted: it stops, and reports back as cancelled")


@dataclass(frozen=True)
class MergeChild:
    name: ClassVar[str] = "merge_child"
    description: ClassVar[str] = (
        "Merge a subagent's branch (as its report names it, eukhe/...) into your checkout: its "
        "commits come into your HEAD, index and files. A person is asked first, as for any write "
        "to .git. On conflicts the merge is aborted, your checkout is as it was, and the files "
        "that conflict are named."
    )
    schema: ClassVar[JsonMapping] = {
        "type": "object",
        "properties": {
            "branch": {"type": "string", "description": "The subagent's branch, as its report names it."}
        },
        "required": ["branch"],
        "additionalProperties": False,
    }
    replay_safe: ClassVar[bool] = False  # a merge changes the checkout: a replay never merges again

    async def run(self, args: JsonObject, ctx: Context) -> Result:
        branch = str(args["branch"]).strip()
        if not branch:
            return Result("merge_child: the branch is empty", True)
        try:
            return Result(await _children(ctx).merge(branch))
        except EukheError as e:
            return Result(str(e), True)


@dataclass(frozen=True)
class Progress:
    name: ClassVar[str] = "progress"
    description: ClassVar[str] = (
        "Tell your parent you are making progress without a tool call: a short note of what is new. "
        "Only a note you have not given before counts; a subagent that shows no progress for a "
        "long while is stopped."
    )
    schema: ClassVar[JsonMapping] = {
        "type": "object",
        "properties": {"note": {"type": "string", "description": "What is new since your last note."}},
        "required": ["note"],
        "additionalProperties": False,
    }
    replay_safe: ClassVar[bool] = True

    async def run(self, args: JsonObject, ctx: Context) -> Result:
        note = str(args["note"]).strip()
        if not note:
            return Result("progress: the note is empty", True)
        if _children(ctx).note(note):
            return Result("noted")
        return Result("progress: you gave this note before; only a new note counts as progress", True)


SPAWN = Spawn()
STOP_CHILD = StopChild()
MERGE_CHILD = MergeChild()
PROGRESS = Progress()
