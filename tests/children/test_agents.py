"""A subagent the user defined, spawned by name: its run offers only the tools it names of
its parent's, under the same rules, with its prompt after eukhe's own and its model
resolved as `/model` resolves one; a model that cannot be used is the spawn call's error."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from eukhe.ai.faux import FauxServer, parse
from eukhe.children.tools import SPAWN
from eukhe.rules import agent as agent_rule
from eukhe.rules.agent import LISTED
from eukhe.run import children
from eukhe.run.spec import RunSpec
from eukhe.settings.trust import record
from eukhe.skills import Agent
from eukhe.tools import Context
from tests.proc import eukhe
from tests.skills.helpers import write
from tests.skills.test_agents import REVIEWER
from tests.steps import Kept

PARENT = ("read", "write", "edit", "bash", "grep", "glob", "ls", "ipython", "spawn", "stop_child")
"""The tools a root run offers."""


def agent(name: str = "reviewer", **kw: Any) -> Agent:
    made = {
        "description": "reviews",
        "prompt": "You review code.",
        "path": f"/p/{name}.md",
        "source": "project",
    }
    return Agent(name=name, **{**made, **kw})


def spawned(
    a: Agent, offered: tuple[str, ...] = PARENT, settings: dict[str, Any] | None = None, **args: str
) -> tuple[Any, list[RunSpec]]:
    """Spawn `a` from a root run that offers `offered`: the call's result, and each child's spec."""
    steps = Kept()
    spec = RunSpec(model="vllm/m", cwd=".", base_url="http://127.0.0.1:9/v1", agents=(a,))
    kids = children.Children(
        spec, "s/0001", "s", 0, 2, 0, steps, system="eukhe's own", settings=settings or {}, offered=offered
    )
    tool = SPAWN.offering(spec.agents)
    got = asyncio.run(
        tool.run({"task": "review it", "agent": a.name, **args}, Context(Path("."), children=kids))
    )
    return got, steps.started


def test_a_defined_agent_runs_with_its_tools_of_its_parents_its_prompt_and_its_parents_model() -> None:
    got, [child] = spawned(agent(tools=("read", "grep", "glob", "bash")))
    assert not got.is_error, got.content
    assert child.tools == ("read", "bash", "grep", "glob")  # in the order its parent offers them
    assert child.system == (
        "eukhe's own\n\nYou are the agent 'reviewer' the user defined in /p/reviewer.md. Its instructions:"
        "\n\nYou review code."
    )
    assert (child.model, child.base_url, child.prompt) == ("vllm/m", "http://127.0.0.1:9/v1", "review it")
    assert RunSpec.of(child.json()) == child and child.agents  # as its workflow takes it, agents and all
    _, [narrow] = spawned(agent(tools=("read", "grep", "bash")), offered=("read", "ls"))  # `--tools read,ls`
    assert narrow.tools == ("read",)  # it never widens what its parent offers
    _, [inherits] = spawned(agent(denied=("bash", "ipython")))
    assert inherits.tools == ("read", "write", "edit", "grep", "glob", "ls", "spawn", "stop_child")


def test_its_model_is_resolved_as_slash_model_does_and_one_that_cannot_be_is_the_calls_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    got, started = spawned(agent(model="nosuch/x"))
    assert got.is_error and started == []
    assert got.content.startswith(
        "spawn: agent 'reviewer' (/p/reviewer.md): model 'nosuch/x': unknown provider"
    )
    got, [child] = spawned(agent(model="sonnet"))  # an alias no configured model is of: the parent's
    assert not got.is_error and child.model == "vllm/m", got.content
    assert got.content.endswith(
        "; agent 'reviewer': its model 'sonnet' names no configured model (model, auxiliaryModel, models, "
        "allowedModels): it runs on yours, vllm/m"
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    settings = {"models": {"anthropic/claude-haiku-4-5": {}}}
    _, [child] = spawned(agent(model="haiku"), settings=settings)
    assert (child.model, child.base_url) == (
        "anthropic/claude-haiku-4-5",
        None,
    )  # its provider's own endpoint
    _, [child] = spawned(agent(model="haiku"), settings=settings, model="vllm/other")  # the call's, over it
    assert child.model == "vllm/other"
    got, started = spawned(agent(), agent="nobody")
    assert (got.content, started) == ("spawn: no agent 'nobody' (the agents: reviewer)", [])


def test_the_runtime_asks_the_rule_for_an_agents_tools_and_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tie: swap `rules.agent`'s answers and the child's spec changes with them."""
    monkeypatch.setattr(agent_rule, "tools_for", lambda named, denied, offered: ("ls",))
    monkeypatch.setattr(agent_rule, "model_for", lambda value, parent, configured: "vllm/tied")
    _, [child] = spawned(agent(tools=("read",)))
    assert (child.tools, child.model) == (("ls",), "vllm/tied")


def test_the_spawn_tool_lists_the_agents_within_a_bound() -> None:
    many = tuple(agent(f"a{i}", description="x " * 2000) for i in range(64))
    tool = SPAWN.offering(many)
    listed = tool.schema["properties"]["agent"]["description"]
    assert "- a0: x x x" in listed and f"- a{LISTED - 1}: " in listed and f"- a{LISTED}: " not in listed
    assert f"a{LISTED}, " in listed and "a63" in listed
    assert len(listed) < 6000
    assert "agent" not in SPAWN.schema["properties"]  # none defined: the tool as it always was


def test_a_claude_code_reviewer_is_spawned_by_name_with_only_its_tools_under_the_same_rules(
    tmp_path: Path,
) -> None:
    """The real `eukhe run`: the model sees the reviewer in `spawn` and starts it by name; the
    child's request carries only its four tools and its prompt after eukhe's; its bash is
    under the user's rules (a deny holds); a malformed definition beside it is said."""
    home = tmp_path / "home"
    write(home / "settings.json", json.dumps({"permissions": {"deny": ["Bash(curl:*)"]}}))
    write(tmp_path / ".claude" / "agents" / "reviewer.md", REVIEWER)
    broken = write(tmp_path / ".claude" / "agents" / "broken.md", "---\nname: broken\n---\nNo description.\n")
    record(home, tmp_path, True)
    curl = {"name": "bash", "arguments": {"command": "curl https://example.com"}}
    spawn = {"name": "spawn", "arguments": {"task": "review the change", "agent": "reviewer"}}
    script = [
        {"when": "review the change", "results": 0, "calls": [curl]},
        {"when": "review the change", "results": 1, "text": "looks fine"},
        {"when": "[child-", "results": 0, "text": "the reviewer found nothing"},
        {"when": "go", "results": 0, "calls": [spawn]},
        {"when": "go", "results": 1, "text": "spawned"},
    ]  # fmt: skip
    with FauxServer(parse(script)) as server:
        done = eukhe("run", "--model", "vllm/m", "--base-url", server.url, "go", cwd=tmp_path, home=home)
        bodies = [s.body for s in server.seen if s.body]
    assert done.returncode == 0, done.stderr
    out = done.stdout + done.stderr
    assert f"agent {broken}: agent without description" in out
    assert "the reviewer found nothing" in out

    def last_user(body: dict[str, Any]) -> str:
        return str([m for m in body["messages"] if m["role"] == "user"][-1]["content"])

    def tools(body: dict[str, Any]) -> list[str]:
        return [t["function"]["name"] for t in body.get("tools") or []]

    parent = next(b for b in bodies if last_user(b) == "go")
    [offered] = [t["function"] for t in parent["tools"] if t["function"]["name"] == "spawn"]
    listed = offered["parameters"]["properties"]["agent"]["description"]
    assert "- reviewer: Reviews code for quality and security." in listed
    child = [b for b in bodies if last_user(b) == "review the change"]
    assert len(child) == 2
    assert all(tools(b) == ["read", "grep", "glob", "bash"] for b in child)
    system = child[0]["messages"][0]
    assert system["role"] == "system"
    assert str(system["content"]).endswith(REVIEWER.split("---\n", 2)[2].strip())
    assert "You are the agent 'reviewer' the user defined in " in system["content"]
    denied = [m for m in child[1]["messages"] if m["role"] == "tool"]
    assert len(denied) == 1 and "Bash(curl:*)" in str(denied[0]["content"]), denied
