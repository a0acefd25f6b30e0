"""The tools of subagents: `spawn` and `stop_child` for a parent, `progress` for a child."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from eukhe.ids import name_of
from eukhe.json_types import JsonMapping, JsonObject
from eukhe.rules.child import Abort
from eukhe.tools.base import Context, Result


def _children(ctx: Context) -> Any:
    if ctx.children is None:
        raise RuntimeError("this run offers no subagents")
    return ctx.children


@dataclass(frozen=True)
class Spawn:
    name: ClassVar[str] = "spawn"
    description: ClassVar[str] = (
        "Start a subagent on a task of its own. It runs beside you with the same tools, from the "
        "same view of the chat, and does not see this conversation: write the task in full. "
        "Its report comes back to you as a user message beginning with [child-...], once, when it "
        "ends; you go on meanwhile. Several may run at once."
    )
    schema: ClassVar[JsonMapping] = {
        "type": "object",
        "properties": {
            "task": {"type": "string", "description": "What the subagent is to do, in full."},
            "model": {"type": "string", "description": "provider/model to run it on (default: yours)."},
        },
        "required": ["task"],
        "additionalProperties": False,
    }
    replay_safe: ClassVar[bool] = True  # started under an id of its own: a replay starts nothing again

    async def run(self, args: JsonObject, ctx: Context) -> Result:
        kids = _children(ctx)
        if not kids.may_spawn:
            return Result(f"spawn: this run is at the subagent depth limit ({kids.max_depth})", True)
        task = str(args["task"]).strip()
        if not task:
            return Result("spawn: the task is empty", True)
        cid = await kids.spawn(task, args.get("model") or None)
        return Result(
            f"spawned child {name_of(cid)} (run {cid}); its report arrives as a message when it ends"
        )


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
PROGRESS = Progress()
