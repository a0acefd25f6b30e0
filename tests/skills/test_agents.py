"""The subagents users define, as the loader finds them: Claude Code's files load as they
are, a bad one is said and skipped, an untrusted project's are not read, and no link
leads a definition out of the project or into a secret place; `/agents` lists them."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from eukhe.rules import agent as agent_rule
from eukhe.rules.agent import MAX_AGENTS, Problem, Verdict
from eukhe.run.spec import setup
from eukhe.settings.trust import record
from eukhe.skills import Agent, ResourceSnapshot, load_agents
from eukhe.ui import commands
from tests.skills.helpers import write

REVIEWER = """---
name: reviewer
description: Reviews code for quality and security. Use it right after code changes.
tools: Read, Grep, Glob, Bash
model: inherit
---

You review code. Start with `git diff`, then read what changed.

List what you found by severity, with the fix for each.
"""
"""A definition as Claude Code's documentation shows one."""


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    """A user (`HOME`) with a secret key and dotfiles, eukhe's home, and a project."""
    user = tmp_path / "user"
    # a secret shaped as a definition: read, it would load, and its body go to the model
    write(user / ".ssh" / "notes.md", "---\nname: leak\ndescription: d\n---\nPRIVATE KEY\n")
    write(user / "dotfiles" / "helper.md", "---\nname: helper\ndescription: helps\n---\nHelp.\n")
    home, proj = user / ".eukhe", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    monkeypatch.setenv("HOME", str(user))
    return SimpleNamespace(user=user, home=home, proj=proj)


def trusted(t: SimpleNamespace) -> None:
    record(t.home, t.proj, True)


def errors(got: object, path: Path) -> list[str]:
    return [d.error for d in got.diagnostics if d.path == str(path)]  # type: ignore[attr-defined]


def test_a_claude_code_definition_loads_as_it_is_written(tree: SimpleNamespace) -> None:
    trusted(tree)
    path = write(tree.proj / ".claude" / "agents" / "reviewer.md", REVIEWER)
    got = load_agents(tree.home, tree.proj)
    assert got.diagnostics == ()
    assert got.agents == (
        Agent(
            name="reviewer",
            description="Reviews code for quality and security. Use it right after code changes.",
            prompt=REVIEWER.split("---\n", 2)[2].strip(),
            path=str(path),
            source="project",
            tools=("read", "grep", "glob", "bash"),
            model=None,
        ),
    )
    assert Agent.of(got.agents[0].json()) == got.agents[0]  # as a run's spec carries it


def test_a_bad_definition_is_said_and_skipped_and_the_others_load(tree: SimpleNamespace) -> None:
    trusted(tree)
    agents = tree.proj / ".claude" / "agents"
    write(agents / "reviewer.md", REVIEWER)
    write(agents / "a-nameless.md", "---\ndescription: no name\n---\nBody.\n")
    write(agents / "b-yaml.md", "---\nname: b\ndescription: x. Examples:\n<example>\nuser: hi\n---\nBody.\n")
    write(agents / "c-tools.md", "---\nname: typo\ndescription: d\ntools: Read, Grpe\n---\nBody.\n")
    write(agents / "d-model.md", "---\nname: numbered\ndescription: d\nmodel: 4\n---\nBody.\n")
    write(agents / "e-binary.md", b"---\nname: bin\n\xff\xfe\n---\n")
    write(
        agents / "f-list.md",
        "---\nname: lister\ndescription: d\ntools: [Read, mcp__github__get_issue]\n---\nB\n",
    )
    write(agents / "g-deny.md", "---\nname: no-bash\ndescription: d\ndisallowedTools: Bash, Write\n---\nB\n")
    write(agents / "notes.txt", "not a definition")
    got = load_agents(tree.home, tree.proj)
    assert [a.name for a in got.agents] == ["lister", "no-bash", "reviewer"]
    assert got.agents[0].tools == ("read", "mcp__github__get_issue")
    assert (got.agents[1].tools, got.agents[1].denied) == (None, ("bash", "write"))
    assert errors(got, agents / "a-nameless.md") == [
        "agent without name: its frontmatter needs name: (lowercase letters and hyphens)"
    ]
    [yaml] = errors(got, agents / "b-yaml.md")
    assert yaml.startswith("invalid YAML frontmatter: line ")
    [tools] = errors(got, agents / "c-tools.md")
    assert tools.startswith(
        "invalid tools: no tool is named 'Grpe'; the names are Claude Code's (Bash, Read,"
    )
    assert errors(got, agents / "d-model.md") == [
        "invalid model: expected inherit, an alias or provider/model, got int"
    ]
    assert errors(got, agents / "e-binary.md") == ["unreadable file: not UTF-8 text (byte 14)"]
    assert len(got.diagnostics) == 5


def test_the_loader_asks_the_rule(tree: SimpleNamespace, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tie: a rule that loads nothing, and the loader loads nothing and says why."""
    trusted(tree)
    path = write(tree.proj / ".claude" / "agents" / "reviewer.md", REVIEWER)
    monkeypatch.setattr(agent_rule, "check", lambda lim, s: Verdict(False, (Problem.NO_DESCRIPTION,)))
    got = load_agents(tree.home, tree.proj)
    assert got.agents == ()
    assert errors(got, path) == [
        "agent without description: its frontmatter needs description: (when to use it)"
    ]


def test_an_untrusted_projects_agents_are_not_read(tree: SimpleNamespace) -> None:
    claude = tree.proj / ".claude" / "agents"
    write(claude / "reviewer.md", REVIEWER)
    write(tree.home / "agents" / "mine.md", "---\nname: mine\ndescription: my own\n---\nMine.\n")
    got = load_agents(tree.home, tree.proj)
    assert [(a.name, a.source) for a in got.agents] == [("mine", "user")]
    assert errors(got, claude) == [
        "not loaded: this folder is not trusted, and its agents would give the model their prompts and "
        f"tools. To load them, run `eukhe trust {tree.proj}` (see `eukhe trust --help`)"
    ]
    record(tree.home, tree.proj, False)  # refused: the same
    assert [a.name for a in load_agents(tree.home, tree.proj).agents] == ["mine"]


def test_a_link_never_leads_a_definition_out_of_the_project_or_to_a_secret(tree: SimpleNamespace) -> None:
    """The attack: a repository whose agent is a link to the user's key (or to a file of theirs
    outside it) would put the key into the model's prompt once spawned."""
    trusted(tree)
    agents = tree.proj / ".claude" / "agents"
    agents.mkdir(parents=True)
    os.symlink(tree.user / ".ssh" / "notes.md", agents / "key.md")
    os.symlink(tree.user / "dotfiles" / "helper.md", agents / "helper.md")
    write(tree.user / "elsewhere" / "x.md", REVIEWER)
    (tree.proj / ".eukhe").mkdir()
    os.symlink(tree.user / "elsewhere", tree.proj / ".eukhe" / "agents")  # the folder itself leads out
    (tree.home / "agents").mkdir()
    os.symlink(tree.user / ".ssh" / "notes.md", tree.home / "agents" / "key.md")
    got = load_agents(tree.home, tree.proj)
    assert got.agents == ()
    assert not any("PRIVATE" in a.prompt for a in got.agents)
    key = str(tree.user / ".ssh" / "notes.md")
    assert errors(got, agents / "key.md") == [
        "unreadable file: it is a link to one of the user's secret places, which eukhe never reads for a "
        f"prompt (to {key})"
    ]
    assert errors(got, agents / "helper.md") == [
        "unreadable file: it is a link that leads outside the project "
        f"(to {tree.user / 'dotfiles' / 'helper.md'})"
    ]
    assert errors(got, tree.proj / ".eukhe" / "agents") == [
        f"unreadable entry: it is a link that leads outside the project (to {tree.user / 'elsewhere'})"
    ]
    [home_key] = errors(got, tree.home / "agents" / "key.md")  # the home's may lead out, never to a secret
    assert "secret places" in home_key


def test_a_projects_agent_wins_over_the_users_and_the_loser_is_said(tree: SimpleNamespace) -> None:
    trusted(tree)
    ours = write(tree.proj / ".claude" / "agents" / "reviewer.md", REVIEWER)
    mine = write(tree.home / "agents" / "reviewer.md", REVIEWER.replace("You review", "I review"))
    got = load_agents(tree.home, tree.proj)
    assert [(a.name, a.path) for a in got.agents] == [("reviewer", str(ours))]
    assert errors(got, mine) == [f"agent losing a name collision: 'reviewer' was loaded first from {ours}"]


def test_slash_agents_reads_them_again_and_lists_them_with_what_did_not_load(
    tree: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EUKHE_HOME", str(tree.home))
    trusted(tree)
    made = dataclasses.replace(
        setup(tree.proj, "vllm/m", "http://127.0.0.1:9/v1"), snapshot=ResourceSnapshot((), (), {})
    )
    s = SimpleNamespace(made=made, cwd=tree.proj)
    assert asyncio.run(commands.COMMANDS["agents"].run(s, "")) == [  # type: ignore[arg-type]
        "no agents are defined (.claude/agents/*.md, .eukhe/agents/*.md, <home>/agents/*.md)"
    ]
    path = write(tree.proj / ".claude" / "agents" / "reviewer.md", REVIEWER)
    bad = write(tree.home / "agents" / "bad.md", "no frontmatter at all\n")
    got = asyncio.run(commands.COMMANDS["agents"].run(s, ""))  # type: ignore[arg-type]
    assert got == [
        "reviewer: Reviews code for quality and security. Use it right after code changes.",
        f"  tools: read, grep, glob, bash · model: inherit · project: {path}",
        f"not loaded: {bad}: agent without name: its frontmatter needs name: (lowercase letters and hyphens)",
        f"not loaded: {bad}: agent without description: its frontmatter needs description: (when to use it)",
    ]
    assert [a.name for a in s.made.snapshot.agents] == ["reviewer"]  # the next runs take them


def test_what_a_session_carries_is_bounded(tree: SimpleNamespace) -> None:
    folder = tree.home / "agents"
    for i in range(MAX_AGENTS + 1):
        write(folder / f"a{i:03}.md", f"---\nname: a{i}\ndescription: d\n---\nPrompt {i}.\n")
    got = load_agents(tree.home)
    assert len(got.agents) == MAX_AGENTS
    assert [d.path for d in got.diagnostics] == [str(folder / f"a{MAX_AGENTS:03}.md")]
    assert got.diagnostics[0].error.startswith(f"not loaded: the agents before it make {MAX_AGENTS} agents")
