"""MCP servers as tools (issue 27): which servers are configured (`config`, Claude Code's
shape), one start of one server on the `mcp` SDK (`client`), and their tools offered
to a run. Nothing is imported here: the SDK loads only with `eukhe.mcp.client`."""
