"""MCP servers as tools (issue 27): which servers are configured (`config`, Claude Code's
shape), one start of one server on the `mcp` SDK (`client`), and their tools offered
to a run. Nothing is imported here: the SDK loads only with `eukhe.mcp.client`."""

from typing import TYPE_CHECKING

# Named, not loaded: the mcp SDK loads only with `servers` and `trial`.
if TYPE_CHECKING:
    from eukhe.mcp import check
    from eukhe.mcp.config import KEY, ServerConfig, entries, entry, gate_ms, home_file, safe_name, servers
    from eukhe.mcp.servers import Servers
    from eukhe.mcp.tools import PREFIX
    from eukhe.mcp.trial import Row

__all__ = [
    "KEY",
    "PREFIX",
    "Row",
    "ServerConfig",
    "Servers",
    "check",
    "entries",
    "entry",
    "gate_ms",
    "home_file",
    "safe_name",
    "servers",
]
