"""`exit_plan`: in plan mode, the model hands its plan to the person.

The tool itself does nothing: the permission gate asks the person about it every time
(`rules.permission.planned`), and what their answer does is the rule's: a yes ends plan
mode, and this tool then tells the model to carry the plan out; a no keeps plan mode, and
the model gets the person's reason instead. Where nobody can answer, it is not run: the
run ends with the plan as its answer."""

from __future__ import annotations

from typing import ClassVar

from eukhe.json_types import JsonObject
from eukhe.rules.permission import EXIT_PLAN
from eukhe.tools.base import Context, Result

__all__ = ["APPROVED", "EXIT_PLAN_TOOL", "ExitPlan"]

APPROVED = (
    "The person approved your plan: plan mode is over, and the tools that write and run are yours "
    "again as the permission rules allow. Carry out the plan now."
)
"""The result of an approved plan."""


class ExitPlan:
    name = EXIT_PLAN
    description = (
        "Only in plan mode (where every tool that writes or runs code is denied): hand your plan to "
        "the person once you have looked around with read, grep, glob and ls. They are asked to "
        "approve it: a yes ends plan mode and you carry the plan out; a no keeps plan mode, and you "
        "get their reason to change the plan. Where no person can answer, the run ends with the plan "
        "as its answer."
    )
    schema: ClassVar[JsonObject] = {
        "type": "object",
        "properties": {
            "plan": {
                "type": "string",
                "description": "The plan, as Markdown: the steps, the files each changes.",
            }
        },
        "required": ["plan"],
        "additionalProperties": False,
    }
    replay_safe = True  # it changes nothing: the person's answer, recorded with the call, did

    async def run(self, args: JsonObject, ctx: Context) -> Result:
        return Result(APPROVED)


EXIT_PLAN_TOOL = ExitPlan()
