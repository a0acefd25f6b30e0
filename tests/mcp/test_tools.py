"""A server's listing as eukhe offers it: names made safe and bounded, schemas checked,
and a hostile listing (too many tools, huge descriptions, huge or broken schemas) bounded,
each thing left out said."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
from pathlib import Path

import pytest

from eukhe.mcp.client import Listed, ToolInfo
from eukhe.mcp.config import ServerConfig, servers
from eukhe.mcp.live import RunningServer
from eukhe.mcp.servers import Servers
from eukhe.mcp.tools import DESCRIPTION_MAX, SCHEMA_MAX, TOOLS_MAX, tool_name, tools_of
from eukhe.rules import mcp
from eukhe.rules.permission import Call, Cfg, Kind, Mode, Policy, Rule, Source, Verdict, decide
from eukhe.tools.base import validate


def live(tools: list[ToolInfo], from_home: bool = True) -> RunningServer:
    cfg = ServerConfig("srv", "stdio", "x", (), {}, None, "", {}, 1000, 1000, Path("s.json"), from_home)
    s = RunningServer(cfg, os.environ)
    s.listed = Listed(tuple(tools), "")
    return s


def tool(name: str, schema: object = None, description: str = "d", read_only: bool = False) -> ToolInfo:
    return ToolInfo(name, description, schema if schema is not None else {"type": "object"}, read_only)  # type: ignore[arg-type]


def test_names_are_safe_and_at_most_64_characters() -> None:
    assert tool_name("my.server", "get time!") == "mcp__my_server__get_time_"
    assert len(tool_name("s", "x" * 100)) == 64


def test_a_hostile_listing_is_bounded_and_what_is_left_out_is_said() -> None:
    many = [tool(f"t{i}") for i in range(TOOLS_MAX + 5)]
    many[0] = tool("t0", description="y" * (DESCRIPTION_MAX * 10))
    many[1] = tool(
        "t1", {"type": "object", "properties": {"p": {"type": "string", "description": "z" * SCHEMA_MAX}}}
    )
    many[2] = tool("t2", {"type": "wat"})
    many[3] = tool("t3", ["not", "an", "object"])
    offered, refused = tools_of(live(many))
    assert len(offered) == TOOLS_MAX - 3
    assert refused[0] == f"MCP server 'srv': 5 of its tools not offered: {TOOLS_MAX} at most"
    assert refused[1].startswith("MCP server 'srv': tool 't1' not offered: its schema has ")
    assert (
        refused[2]
        == "MCP server 'srv': tool 't2' not offered: inputSchema.type=\"wat\" is not a JSON Schema type"
    )
    assert refused[3] == "MCP server 'srv': tool 't3' not offered: inputSchema is not an object"
    first = offered[0]
    assert len(first.description) < DESCRIPTION_MAX + 80 and first.description.endswith("of the description]")


def test_only_a_home_servers_read_only_hint_is_believed() -> None:
    [home_tool], _ = tools_of(live([tool("r", read_only=True)]))
    [project_tool], _ = tools_of(live([tool("r", read_only=True)], from_home=False))
    assert home_tool.replay_safe and not project_tool.replay_safe


def test_a_schema_that_would_break_the_arguments_check_is_refused() -> None:
    """Every keyword the check of a call's arguments reads has the shape it reads: a
    hostile schema is refused when listed, never a crash when the model calls it."""
    bad = {
        "b1": {"type": "object", "properties": {"n": {"type": "integer", "minimum": "5"}}},
        "b2": {"type": "object", "properties": {"xs": {"type": "array", "items": [{"type": "string"}]}}},
        "b3": {"type": "object", "properties": {"c": {"enum": "abc"}}},
        "b4": {"type": "object", "properties": {"n": {"type": "number", "maximum": True}}},
    }
    offered, refused = tools_of(live([tool(name, schema) for name, schema in bad.items()]))
    assert offered == []
    assert refused == [
        "MCP server 'srv': tool 'b1' not offered: inputSchema.properties.n.minimum=\"5\" is not a number",
        "MCP server 'srv': tool 'b2' not offered: inputSchema.properties.xs.items is not an object",
        "MCP server 'srv': tool 'b3' not offered: inputSchema.properties.c.enum is not a list",
        "MCP server 'srv': tool 'b4' not offered: inputSchema.properties.n.maximum=true is not a number",
    ]
    with pytest.raises(TypeError):  # what two of them would have done to a call's check
        validate(bad["b1"], {"n": 3})
    with pytest.raises(AttributeError):
        validate(bad["b2"], {"xs": ["a"]})


def test_a_schema_nested_past_the_bound_is_refused_not_a_recursion() -> None:
    deep: dict[str, object] = {"type": "object"}
    for _ in range(5_000):
        deep = {"type": "object", "properties": {"x": deep}}
    offered, refused = tools_of(live([tool("deep", deep)]))
    assert offered == [] and refused == [
        "MCP server 'srv': tool 'deep' not offered: inputSchema is nested deeper than 32 levels"
    ]


def test_a_rule_for_one_server_never_covers_another_named_to_slip_under_it(tmp_path: Path) -> None:
    """The attack: a server named `time__evil` would make tools `mcp__time__evil__*`, which a
    user's `mcp__time` rule (meant for the server `time`) matches. Its name loses the `__`."""
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "settings.json").write_text(
        json.dumps({"mcpServers": {"time__evil": {"command": "x"}, "time": {"command": "y"}}})
    )
    [evil, time], _ = servers(tmp_path, {"EUKHE_HOME": str(tmp_path / "home")})
    assert evil.name == "time_evil" and time.name == "time"
    rules = (Rule(Kind.ALLOW, "mcp__time", None, Source.HOME),)
    cfg = Cfg(Mode.WORKSPACE_WRITE, Policy.ON_REQUEST, person=False, sandbox=True, rules=rules)
    theirs = Call(tool_name(evil.name, "get_current_time"), writes=True)
    mine = Call(tool_name(time.name, "get_current_time"), writes=True)
    assert decide(cfg, mine).verdict is Verdict.ALLOW
    assert decide(cfg, theirs).verdict is Verdict.DENY  # asked, and no person here: denied


def test_the_runtime_does_what_the_model_says(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tie: swap the model's step or its gate, and the running code follows. With the real
    model a call to a server not started waits for it; with a model that fails every call at
    once, the call ends at once, failed; with a gate that offers nothing, nothing is offered."""

    def fail_calls(s: mcp.Server, x: mcp.Ev) -> mcp.Step:
        if x.kind is mcp.Kind.CALL:
            return mcp.Step(
                dataclasses.replace(s, next_call=s.next_call + 1), ((s.next_call, mcp.End.FAILED),)
            )
        return real(s, x)

    real = mcp.step
    monkeypatch.setattr(mcp, "step", fail_calls)
    server = live([tool("t")])
    end, _ = asyncio.run(asyncio.wait_for(server.call("t", {}), 5))
    assert end is mcp.End.FAILED
    monkeypatch.setattr(mcp, "offer", lambda s, waited, gate: mcp.Offer.NONE)
    servers = Servers([server.cfg], os.environ, None)
    servers.live[0].listed = server.listed
    tools, notices, _ = asyncio.run(servers.offered(0))
    assert tools == {} and notices == ["MCP server 'srv' is not offered: closed"]
