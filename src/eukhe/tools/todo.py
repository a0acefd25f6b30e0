"""`todo`: the model keeps the session's task list by replacing it whole (Claude Code's
TodoWrite). The list is checked and bounded by `rules.todo`; an accepted one goes to the
run (`Context.todo`), which shows it, and is pinned in every view a compaction builds
(`rules.pinned`). It writes nothing on disk: the run's transcript keeps each call, and the
list is derived from them (`rules.todo.current`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from eukhe.json_types import JsonMapping, JsonObject
from eukhe.rules import todo as rule
from eukhe.tools.base import Context, Result


@dataclass(frozen=True)
class Todo:
    name: ClassVar[str] = "todo"
    description: ClassVar[str] = (
        "Keep your task list for this session: send the whole list each time (it replaces the one "
        "before), every item with its state: pending, in_progress or done. Use it for work of several "
        "steps: write the steps first, mark the one you start in_progress, and each done as soon as it "
        "is. The list stays in front of you when your context is compacted, and the person sees it. "
        f"At most {rule.MAX_ITEMS} items of {rule.ITEM_BYTES} bytes each; an empty list clears it."
    )
    schema: ClassVar[JsonMapping] = {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "description": "The whole task list, in order.",
                "items": {
                    "type": "object",
                    "properties": {
                        "text": {"type": "string", "description": "The task, in a few words."},
                        "state": {"type": "string", "enum": [s.value for s in rule.State]},
                    },
                    "required": ["text", "state"],
                },
            }
        },
        "required": ["items"],
        "additionalProperties": False,
    }
    replay_safe: ClassVar[bool] = True  # it writes nothing: a second run of the call is the same list

    async def run(self, args: JsonObject, ctx: Context) -> Result:
        got = rule.parse(args)
        if got.tasks is None:
            return Result(f"todo: {got.error}; the list is unchanged", True)
        if ctx.todo is not None:
            ctx.todo(got.tasks)
        if not got.tasks:
            return Result("The task list is now empty.")
        lines = "\n".join(rule.lines(got.tasks))
        return Result(f"The task list now ({rule.summary(got.tasks)}):\n{lines}")


TODO = Todo()
