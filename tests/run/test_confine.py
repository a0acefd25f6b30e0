"""The boundary of every file tool, as attacks (issue 40): the model reads neither eukhe's home
nor the user's secret places (finding 6), writes no `.git` (finding 5), and a link flipped
while it writes lands nothing outside the workspace (finding 3); and the runtime's
decisions come from `rules.confine` (the tie).

The attacks run the real gate and the real tools in this process (`run.permit.Gate`, whose
`opened` is what each tool asks on the object it holds); the first is also a real `eukhe run`
against the faux model."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from eukhe.ai.faux import FauxServer, parse
from eukhe.ai.reply import ToolCall
from eukhe.rules import confine
from eukhe.rules.access import Cfg, Decision, Kind, Mode, Policy, Rule, Source, Verdict, Why
from eukhe.rules.confine import Reach
from eukhe.rules.permission import PermissionState
from eukhe.run.permit import Gate
from eukhe.tools import BUILTIN, Context, call
from tests.proc import eukhe, messages, sessions

KEY = "PRIVATE-KEY-0123456789-MARKER"
BEARER = "bearer-token-0123456789-MARKER"


@dataclass(frozen=True)
class World:
    project: Path
    home: Path  # eukhe's
    user: Path  # the user's home, with its secret places


@pytest.fixture
def world(tmp_path: Path) -> World:
    user = tmp_path / "user"
    (user / ".ssh").mkdir(parents=True)
    (user / ".ssh" / "id_ed25519").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY}\n")
    (user / ".aws").mkdir()
    (user / ".aws" / "credentials").write_text(f"[default]\naws_secret_access_key = {KEY}\n")
    home = tmp_path / "home"
    home.mkdir()
    servers = {"api": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": BEARER}}}
    (home / "settings.json").write_text(json.dumps({"mcpServers": servers}))
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("notes\n")
    return World(project, home, user)


def gate(w: World, cfg: Cfg | None = None) -> Gate:
    cfg = cfg or Cfg(Mode.WORKSPACE_WRITE, Policy.ON_REQUEST, person=False, sandbox=True)
    return Gate(PermissionState(cfg), w.project, w.home, user=w.user)


def tool(g: Gate, name: str, **arguments: Any) -> tuple[bool, str]:
    """A call as a run makes it: the gate's permit, then the tool, which asks the gate again on
    what it opened. (ran, its result)"""

    async def go() -> tuple[bool, str]:
        c = ToolCall("1", name, json.dumps(arguments), arguments)
        permit = await g.permit(c)
        if not permit.runs:
            return False, permit.result
        got = await call(BUILTIN, name, arguments, Context(g.workspace, reach=g.opened))
        return True, got.content

    return asyncio.run(go())


READS = [
    ("read", {"path": "{home}/settings.json"}),
    ("read", {"path": "{user}/.ssh/id_ed25519"}),
    ("read", {"path": "{user}/.aws/credentials"}),
    ("read", {"path": "key"}),  # a link in the project to ~/.ssh/id_ed25519
    ("read", {"path": "h/settings.json"}),  # a link in the project to the home
    ("ls", {"path": "{home}"}),
    ("ls", {"path": "{user}/.ssh"}),
    ("ls", {"path": "h"}),
    ("grep", {"pattern": "MARKER", "path": "{home}"}),
    ("grep", {"pattern": "MARKER", "path": "{user}/.ssh"}),
    ("grep", {"pattern": "MARKER", "path": "key"}),
    ("glob", {"pattern": "*", "path": "{user}/.ssh"}),
]


def _planted(w: World) -> None:
    (w.project / "key").symlink_to(w.user / ".ssh" / "id_ed25519")
    (w.project / "h").symlink_to(w.home)


def _fill(args: dict[str, Any], w: World) -> dict[str, Any]:
    return {k: v.format(home=w.home, user=w.user) for k, v in args.items()}


@pytest.mark.parametrize(("name", "args"), READS)
def test_no_tool_reads_the_home_or_a_secret_place_whatever_the_rules_and_the_mode(
    world: World, name: str, args: dict[str, Any]
) -> None:
    """Finding 6: `read <home>/settings.json` returned an MCP server's bearer header, and
    `read ~/.ssh/id_ed25519` the key. In full access (from settings, not the command line)
    and with a project's rule that allows every read, neither comes back."""
    _planted(world)
    rules = (Rule(Kind.ALLOW, "Read", None, Source.PROJECT), Rule(Kind.ALLOW, "Read", "/**", Source.PROJECT))
    for cfg in (
        Cfg(Mode.WORKSPACE_WRITE, Policy.ON_REQUEST, person=False, sandbox=True),
        Cfg(Mode.FULL, Policy.ON_REQUEST, person=True, sandbox=True, rules=rules),
    ):
        ran, got = tool(gate(world, cfg), name, **_fill(args, world))
        assert KEY not in got and BEARER not in got, got
        assert "id_ed25519" not in got or not ran or "may not be touched" in got, got


def test_a_secret_place_opens_to_the_homes_own_rule_naming_it_or_the_flag(world: World) -> None:
    """The user's secret places only where a rule of the home's own settings names that very
    place, or the person chose danger-full-access on the command line."""
    path = str(world.user / ".ssh" / "id_ed25519")
    named = Rule(Kind.ALLOW, "Read", f"{world.user}/.ssh/**", Source.HOME)
    home_rule = Cfg(Mode.WORKSPACE_WRITE, Policy.ON_REQUEST, person=False, sandbox=True, rules=(named,))
    flag = Cfg(Mode.FULL, Policy.ON_REQUEST, person=False, sandbox=True, flag_full=True)
    for cfg in (home_rule, flag):
        ran, got = tool(gate(world, cfg), "read", path=path)
        assert ran and KEY in got, got


def test_a_read_outside_the_workspace_asks_and_headless_names_the_rule_to_add(world: World) -> None:
    outside = world.user / "notes.txt"
    outside.write_text("outside\n")
    ran, got = tool(gate(world), "read", path=str(outside))
    assert not ran
    assert got == (
        f"Tool read was not run: permission denied: no person can answer an ask here; it reads outside "
        f"the workspace: allow it with a rule in permissions.allow: Read({outside}), or run it in the "
        "interactive agent, which asks."
    )
    rule = Rule(Kind.ALLOW, "Read", str(outside), Source.HOME)
    cfg = Cfg(Mode.WORKSPACE_WRITE, Policy.ON_REQUEST, person=False, sandbox=True, rules=(rule,))
    assert tool(gate(world, cfg), "read", path=str(outside)) == (True, "1\toutside")


def test_the_run_reads_no_secret_and_says_why(world: World, tmp_path: Path) -> None:
    """Finding 6 through a real `eukhe run`: what the model asked for never reaches it, the store
    or the output, and each result says why."""
    _planted(world)
    script: list[Any] = [{"calls": [{"name": n, "arguments": _fill(a, world)}]} for n, a in READS] + ["done"]
    with FauxServer(parse(script)) as server:
        done = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "--json", "look around",
            cwd=world.project, home=world.home, extra={"HOME": str(world.user)},
        )  # fmt: skip
        sent = [json.dumps(r.body) for r in server.seen]
    assert done.returncode == 0, done.stderr
    for text in (*sent, done.stdout, done.stderr):
        assert KEY not in text and BEARER not in text, text[:2000]
    [row] = sessions(world.project, world.home)
    results = [
        str(m["content"]) for m in messages(row["id"], world.project, world.home) if m["role"] == "tool"
    ]
    assert len(results) == len(READS)
    for r in results:
        assert "was not run: permission denied" in r or "may not be touched" in r, r


def _git(project: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project / ".git" / "config"


def test_write_and_edit_never_change_a_git_folder_without_a_person(world: World) -> None:
    """Finding 5: `write` and `edit` added `core.fsmonitor` to `.git/config` with no ask under the
    default policy; the user's next `git status` ran it. Now each asks a person: headless, it is
    denied, whatever the rules allow; a new `.git` in a subfolder likewise."""
    config = _git(world.project)
    before = config.read_text()
    everything = (Rule(Kind.ALLOW, "Edit", None, Source.HOME), Rule(Kind.ALLOW, "Edit", "/**", Source.HOME))
    cfg = Cfg(Mode.WORKSPACE_WRITE, Policy.ON_REQUEST, person=False, sandbox=True, rules=everything)
    for g in (gate(world), gate(world, cfg)):
        ran, got = tool(
            g,
            "edit",
            path=".git/config",
            old_text="[core]",
            new_text="[core]\n\tfsmonitor = touch /tmp/pwned",
        )
        assert not ran and "it writes inside a .git folder, which only a person may allow" in got, got
        ran, got = tool(g, "write", path=".git/hooks/pre-commit", content="#!/bin/sh\ntouch /tmp/pwned\n")
        assert not ran, got
        ran, got = tool(
            g, "write", path="sub/.git/config", content="[core]\n\tfsmonitor = touch /tmp/pwned\n"
        )
        assert not ran, got
        ran, got = tool(g, "write", path=".mcp.json", content='{"mcpServers": {}}')
        assert not ran and "it touches eukhe's own files" in got, got
    assert config.read_text() == before
    assert not (world.project / ".git" / "hooks" / "pre-commit").exists()
    assert not (world.project / "sub").exists() and not (world.project / ".mcp.json").exists()


def test_a_git_folder_reached_through_a_link_is_decided_on_what_it_is(world: World) -> None:
    """A project's `cfg -> .git/config`: the write lands on `.git/config`, so it is decided as one."""
    config = _git(world.project)
    before = config.read_text()
    (world.project / "cfg").symlink_to(".git/config")
    ran, got = tool(gate(world), "write", path="cfg", content="[core]\n\tfsmonitor = x\n")
    assert not ran and ".git folder" in got, got
    assert config.read_text() == before


def racing(w: World) -> tuple[Path, Path]:
    """A folder inside and one outside, each with e0.txt..e199.txt, and `a` in the project linked
    to the inside one."""
    inside = w.project / "real"
    outside = w.user / "victim"
    for folder in (inside, outside):
        folder.mkdir()
        for i in range(200):
            (folder / f"e{i}.txt").write_text("old\n")
    (w.project / "a").symlink_to(inside)
    return inside, outside


@contextlib.contextmanager
def flipping(link: Path, inside: Path, outside: Path) -> Iterator[None]:
    """A thread that flips `link` between a folder inside and one outside, as fast as it can,
    each flip one rename (the link always exists)."""
    stop = threading.Event()

    def flip() -> None:
        tmp = link.with_name(link.name + ".tmp")
        while not stop.is_set():
            for target in (inside, outside):
                with contextlib.suppress(OSError):
                    tmp.unlink()
                os.symlink(target, tmp)
                os.replace(tmp, link)

    t = threading.Thread(target=flip, daemon=True)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join(10)


def test_a_link_flipped_during_200_writes_and_200_edits_lands_nothing_outside(world: World) -> None:
    """Finding 3 and the issue's race: a link in the project flips between a folder inside and one
    outside while 200 `write` and 200 `edit` calls run through the gate; nothing lands outside
    (the path was resolved at permit time and again at write time, and 10 of 40 landed outside)."""
    inside, outside = racing(world)
    link = world.project / "a"
    g = gate(world)
    wrote = edited = 0
    with flipping(link, inside, outside):
        for i in range(200):
            ran, got = tool(g, "write", path=f"a/pwn{i}.txt", content="pwned\n")
            wrote += ran and got.startswith("created")
            ran, got = tool(g, "edit", path=f"a/e{i}.txt", old_text="old", new_text="pwned")
            edited += ran and got.startswith("edited")
    assert sorted(p.name for p in outside.iterdir() if p.name.startswith("pwn")) == []
    assert all((outside / f"e{i}.txt").read_text() == "old\n" for i in range(200))
    assert not any(p.name.endswith(".tmp") for p in outside.iterdir())
    assert wrote + edited > 0  # the link led inside part of the time: those calls went through


def test_the_tools_ask_the_rule_tie(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """Swapping `rules.confine.decide` changes what a tool may touch: the decisions come from the
    rule, at permit time and at open time alike."""
    path = str(world.user / ".ssh" / "id_ed25519")
    ran, got = tool(gate(world), "read", path=path)
    assert not ran and KEY not in got

    def open_all(cfg: Cfg, r: Reach) -> Decision:
        return Decision(Verdict.ALLOW, Why.INSIDE)

    monkeypatch.setattr(confine, "decide", open_all)
    ran, got = tool(gate(world), "read", path=path)
    assert ran and KEY in got, got

    def shut_all(cfg: Cfg, r: Reach) -> Decision:
        return Decision(Verdict.DENY, Why.HOME)

    monkeypatch.setattr(confine, "decide", shut_all)
    ran, got = tool(gate(world), "read", path="notes.txt")
    assert not ran, got

    # at open time too: a gate whose permit allowed, asked again on the object, denies
    async def opened_only() -> str:
        return (
            await call(
                BUILTIN, "read", {"path": "notes.txt"}, Context(world.project, reach=gate(world).opened)
            )
        ).content

    assert asyncio.run(opened_only()).startswith("not read: 'notes.txt' may not be touched")


FLIPPER = """
import os, threading
def flip():
    while True:
        for target in ({inside!r}, {outside!r}):
            try:
                os.unlink('a.tmp')
            except OSError:
                pass
            os.symlink(target, 'a.tmp')
            os.replace('a.tmp', 'a')
threading.Thread(target=flip, daemon=True).start()
print('flipping')
"""


def test_a_cell_flipping_a_link_through_a_real_run_lands_nothing_outside(world: World) -> None:
    """The issue's race as a run makes it: the model's first cell (in the sandboxed kernel) starts a
    thread that flips `a` between a folder inside and one outside, then 200 `write` and 200 `edit`
    calls go through `a`; nothing lands outside."""
    inside, outside = racing(world)
    cell = FLIPPER.format(inside=str(inside), outside=str(outside))
    script: list[Any] = [{"calls": [{"name": "ipython", "arguments": {"code": cell}}]}]
    for r in range(10):  # 40 calls a round
        calls = []
        for i in range(r * 20, r * 20 + 20):
            calls.append({"name": "write", "arguments": {"path": f"a/pwn{i}.txt", "content": "pwned\n"}})
            calls.append(
                {"name": "edit", "arguments": {"path": f"a/e{i}.txt", "old_text": "old", "new_text": "x"}}
            )
        script.append({"calls": calls})
    script.append("done")
    with FauxServer(parse(script)) as server:
        done = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "--json", "--max-tool-rounds", "20", "go",
            cwd=world.project, home=world.home, extra={"HOME": str(world.user)}, timeout=300,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [row] = sessions(world.project, world.home)
    results = [
        str(m["content"]) for m in messages(row["id"], world.project, world.home) if m["role"] == "tool"
    ]
    assert results[0].startswith("flipping"), results[0]
    assert len(results) == 401
    # the race was live: some calls found the link inside, some found it outside and were refused
    assert any(r.startswith(("created", "edited")) for r in results[1:]), results[1:5]
    assert any("may not be touched" in r or "permission denied" in r for r in results[1:]), results[1:5]
    assert sorted(p.name for p in outside.iterdir() if not p.name.startswith("e")) == []
    assert all((outside / f"e{i}.txt").read_text() == "old\n" for i in range(200))
