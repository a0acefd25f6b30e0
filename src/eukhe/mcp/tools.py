"""An MCP server's tools as eukhe tools: named `mcp__<server>__<tool>`, their schemas as
the server gave them (checked first), their results cut to the tools' bounds with the
cut said, and every way a call can end said with its cause."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from eukhe.json_types import JsonMapping, JsonObject, JsonValue
from eukhe.mcp.client import Answer, ToolInfo
from eukhe.mcp.live import Got, RunningServer
from eukhe.rules.mcp import End
from eukhe.tools.base import Context, Result

PREFIX = "mcp__"
NAME_MAX = 64
RESULT_MAX = 50_000
"""Characters of one result the model reads; the rest is cut, and the cut said."""
TOOLS_MAX = 128
"""Tools of one server offered at most: a server that lists more has the rest left out, and said."""
DESCRIPTION_MAX = 2_000
"""Characters of a tool's description the model reads; the rest is cut."""
SCHEMA_MAX = 20_000
"""Characters of a tool's schema, as JSON, offered at most: a larger one is refused (every request
carries it)."""
SCHEMA_TYPES = frozenset({"object", "string", "integer", "number", "boolean", "array", "null"})


def tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>`: at most 64 characters of [A-Za-z0-9_-], others made `_`."""
    raw = f"{PREFIX}{server}__{tool}"
    return re.sub(r"[^A-Za-z0-9_-]", "_", raw)[:NAME_MAX]


SCHEMA_DEPTH = 32
"""Levels of nested schemas checked at most; a deeper one is refused."""


def schema_error(schema: JsonValue, where: str = "inputSchema", depth: int = 0) -> str | None:
    """Why a tool's input schema cannot be offered (None: it can): an object schema whose
    every `type` is one JSON Schema knows, its `properties` an object, its `required` a
    list of names, its `items` a schema, its `enum` a list and its bounds numbers: every
    keyword `tools.base.validate` reads has the shape it reads, so no server's schema can
    break a call's check."""
    if not isinstance(schema, Mapping):
        return f"{where} is not an object"
    if depth > SCHEMA_DEPTH:
        return f"{where.split('.')[0]} is nested deeper than {SCHEMA_DEPTH} levels"
    kind = schema.get("type", "object")
    kinds = [kind] if isinstance(kind, str) else kind
    if not isinstance(kinds, list) or not all(isinstance(k, str) and k in SCHEMA_TYPES for k in kinds):
        return f"{where}.type={json.dumps(kind)[:60]} is not a JSON Schema type"
    props = schema.get("properties", {})
    if not isinstance(props, Mapping):
        return f"{where}.properties is not an object"
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return f"{where}.required is not a list of names"
    for name, sub in props.items():
        if why := schema_error(sub, f"{where}.properties.{name}", depth + 1):
            return why
    if "items" in schema and (why := schema_error(schema["items"], f"{where}.items", depth + 1)):
        return why
    if "enum" in schema and not isinstance(schema["enum"], list):
        return f"{where}.enum is not a list"
    for bound in ("minimum", "maximum"):
        v = schema.get(bound)
        if bound in schema and (isinstance(v, bool) or not isinstance(v, int | float)):
            return f"{where}.{bound}={json.dumps(v)[:60]} is not a number"
    return None


def cut(text: str, limit: int = RESULT_MAX, what: str = "the result") -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… [cut: {len(text) - limit} more characters of {what}]"


def said(server: RunningServer, end: End, got: Got) -> Result:
    """A call's end as the model reads it."""
    name, cfg = server.cfg.name, server.cfg
    if end is End.RESULT and isinstance(got, Answer):  # its structured content, when alone, is its text
        return Result(cut(got.text), got.is_error)
    if end is End.ERROR:
        return Result(f"MCP server '{name}' answered with an error: {got}", True)
    if end is End.TIMEOUT:
        took = f"took longer than {cfg.tool_ms} ms (mcp.toolTimeoutMs)"
        return Result(f"the call to MCP server '{name}' {took}; it was cancelled", True)
    if end is End.ABORTED:
        return Result(f"the call to MCP server '{name}' was aborted", True)
    if end is End.DIED:
        return Result(f"MCP server '{name}' died during the call: {got}", True)
    if end is End.CLOSED:
        return Result(f"MCP server '{name}' was closed during the call", True)
    return Result(f"MCP server '{name}' is not available: {got or 'it failed to start'}", True)


@dataclass
class McpTool:
    """One tool of one server."""

    server: RunningServer
    info: ToolInfo
    name: str
    description: str = ""
    schema: JsonMapping = field(default_factory=dict)
    replay_safe: bool = False  # only a home server's readOnlyHint is believed

    async def run(self, args: JsonObject, ctx: Context) -> Result:
        end, got = await self.server.call(self.info.name, args, ctx.cancel, ctx.progressed)
        return said(self.server, end, got)


def tools_of(server: RunningServer) -> tuple[list[McpTool], list[str]]:
    """The server's tools as eukhe offers them, and a line for each it refused (a bad
    schema); collisions between servers are the caller's (`Servers.offered`)."""
    out: list[McpTool] = []
    refused: list[str] = []
    listed = server.listed
    if listed is None:
        return out, refused
    seen: set[str] = set()
    if len(listed.tools) > TOOLS_MAX:
        left = len(listed.tools) - TOOLS_MAX
        refused.append(
            f"MCP server '{server.cfg.name}': {left} of its tools not offered: {TOOLS_MAX} at most"
        )
    for info in listed.tools[:TOOLS_MAX]:
        name = tool_name(server.cfg.name, info.name)
        why = schema_error(info.schema)  # first: its depth is checked before anything walks it
        try:
            size = 0 if why else len(json.dumps(info.schema, default=str))
        except (RecursionError, ValueError):  # nested deep under a keyword the check does not walk
            why, size = "its schema cannot be written as JSON", 0
        if size > SCHEMA_MAX:
            why = f"its schema has {size} characters, over {SCHEMA_MAX}"
        if why:
            refused.append(f"MCP server '{server.cfg.name}': tool '{info.name}' not offered: {why}")
            continue
        if name in seen:
            refused.append(
                f"MCP server '{server.cfg.name}': tool '{info.name}' not offered: its name {name} is taken"
            )
            continue
        seen.add(name)
        schema = dict(info.schema)
        schema.setdefault("type", "object")
        trusted = info.read_only and server.cfg.from_home
        desc = (
            cut(info.description, DESCRIPTION_MAX, "the description")
            or f"{info.name}, a tool of MCP server {server.cfg.name}"
        )
        out.append(McpTool(server, info, name, desc, schema, trusted))
    return out, refused
