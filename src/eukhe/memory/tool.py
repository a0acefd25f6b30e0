"""`zoom` and `date`: the model's way into the chat behind its view."""

from __future__ import annotations

from typing import ClassVar

from eukhe.json_types import JsonObject
from eukhe.memory import prompts
from eukhe.tools.base import Context, Result

__all__ = ["DATE", "ZOOM", "Date", "Zoom"]

_ID = {"type": "integer", "minimum": 0, "description": "A message id: the id of id+n in the view."}


class Zoom:
    name = "zoom"
    description = prompts.ZOOM_TOOL
    schema: ClassVar[JsonObject] = {
        "type": "object",
        "properties": {"id": _ID, "n": {"type": "integer", "minimum": 1, "description": "The n of id+n."}},
        "required": ["id", "n"],
        "additionalProperties": False,
    }
    replay_safe = True

    async def run(self, args: JsonObject, ctx: Context) -> Result:
        if ctx.chat is None:
            return Result("zoom: this run has no chat memory", True)
        got = await ctx.chat.zoom(args["id"], args["n"])
        if got is None:
            total = await ctx.chat.total()
            return Result(
                f"zoom: {args['id']}+{args['n']} is no line of the chat: n is a power of 2, id a multiple "
                f"of n, and id + n at most {total} (the messages so far)",
                True,
            )
        return Result(got)


class Date:
    name = "date"
    description = prompts.DATE_TOOL
    schema: ClassVar[JsonObject] = {
        "type": "object",
        "properties": {"id": _ID},
        "required": ["id"],
        "additionalProperties": False,
    }
    replay_safe = True

    async def run(self, args: JsonObject, ctx: Context) -> Result:
        if ctx.chat is None:
            return Result("date: this run has no chat memory", True)
        date = await ctx.chat.date(args["id"])
        if date is None:
            return Result(f"date: no message {args['id']} in the chat", True)
        return Result(date)


ZOOM = Zoom()
DATE = Date()
