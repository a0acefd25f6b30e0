"""JSON as eukhe reads and writes it: settings.json and `.mcp.json`, the owner's wire, the
store's rows and a run's spec as stored, MCP's JSON-RPC, the faux model's bodies. A value
there is what `json.loads` gives, so its type is `Any`, here and only here, for that reason:
each is checked where it is read (`settings.load.value`, `RunSpec.of`, `protocol.decode`,
`mcp.config`), never trusted by its type."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

JsonObject: TypeAlias = dict[str, Any]
"""A JSON object, its values as read (or as they will be written)."""

JsonMapping: TypeAlias = Mapping[str, Any]
"""A JSON object that is only read."""

JsonValue: TypeAlias = Any
"""A JSON value as read: an object, an array, a string, a number, a boolean or null; what
it is, is asked of it (`isinstance`) where it is used."""
