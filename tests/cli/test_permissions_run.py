"""Permissions in a real headless `eukhe run` against the faux model: a denied call never
runs and the model gets why; an ask with nobody to answer is a denial at once that says
how to allow the call, and the run goes on and ends; the events and the JSON carry the
denials, and the last line counts them."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from eukhe.ai.faux import FauxServer, parse
from eukhe.rules.permission import Why
from tests.proc import eukhe


def bash(command: str) -> dict[str, Any]:
    return {"calls": [{"name": "bash", "arguments": {"command": command}}]}


def home_with(tmp_path: Path, settings: dict[str, Any]) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps(settings))
    return home


def test_a_denied_command_never_runs_and_the_run_says_so_everywhere(tmp_path: Path) -> None:
    (tmp_path / "victim").write_text("keep me")
    home = home_with(tmp_path, {"permissions": {"deny": ["Bash(rm *)"]}})
    script = [{"results": 0, **bash("ls && /bin/rm -rf victim")}, {"results": 1, "text": "tried"}]
    with FauxServer(parse(script)) as server:
        args = ["run", "--model", "vllm/m", "--base-url", server.url]
        done = eukhe(*args, "--json", "clean up", cwd=tmp_path, home=home)
        events = eukhe(*args, "--events", "clean up", cwd=tmp_path, home=home)
    assert (tmp_path / "victim").read_text() == "keep me"
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])
    [denial] = out["denials"]
    assert (
        denial["tool"] == "bash"
        and denial["cause"] == "a deny rule matches it"
        and denial["rule"] == "Bash(rm *)"
    )
    assert done.stderr.rstrip().endswith("answered in 2 model calls: 1 tool round, 1 denial · 20 in · 20 out")
    got = [json.loads(line) for line in events.stdout.splitlines()]
    [seen] = [e for e in got if e["type"] == "denied"]
    assert seen["rule"] == "Bash(rm *)" and seen["text"].startswith(
        "Tool bash was not run: permission denied:"
    )


def test_an_ask_with_nobody_to_answer_is_denied_at_once_and_the_run_ends(tmp_path: Path) -> None:
    home = home_with(tmp_path, {"permissions": {"ask": ["Bash(touch *)"]}})
    script = [{"results": 0, **bash("touch made")}, {"results": 1, "text": "could not"}]
    with FauxServer(parse(script)) as server:
        began = time.monotonic()
        done = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "--json", "go", cwd=tmp_path, home=home
        )
        took = time.monotonic() - began
        sent = server.seen[-1].body["messages"]
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "made").exists()
    assert took < 60  # not the 5 minutes of permissions.askTimeoutMs
    [result] = [m["content"] for m in sent if m["role"] == "tool"]
    assert result.startswith("Tool bash was not run: permission denied: no person can answer an ask here")
    assert "allow it with a rule in permissions.allow" in result


def test_the_never_policy_and_a_read_only_sandbox_deny_a_write(tmp_path: Path) -> None:
    write = {"calls": [{"name": "write", "arguments": {"path": "new.txt", "content": "x"}}]}
    script = [{"results": 0, **write}, {"results": 1, "text": "no"}]
    home = home_with(tmp_path, {})
    with FauxServer(parse(script)) as server:
        done = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "--json", "--sandbox", "read-only",
            "--approval", "never", "go", cwd=tmp_path, home=home,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "new.txt").exists()
    [denial] = json.loads(done.stdout.splitlines()[-1])["denials"]
    assert denial["cause"] == "the approval policy is never"


def test_plan_mode_denies_write_edit_and_bash_and_the_plan_is_the_headless_runs_answer(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    plan = "# Plan\n\n1. Write new.txt.\n2. Change a.txt to say new."
    tries = [
        {"name": "write", "arguments": {"path": "new.txt", "content": "x\n"}},
        {"name": "edit", "arguments": {"path": "a.txt", "old_text": "old", "new_text": "new"}},
        {"name": "bash", "arguments": {"command": "ls > listed.txt"}},
        {"name": "read", "arguments": {"path": "a.txt"}},
    ]
    script = [
        {"results": 0, "calls": tries},
        {"results": 4, "calls": [{"name": "exit_plan", "arguments": {"plan": plan}}]},
        {"results": 5, "text": "never asked: the run ended with the plan"},
    ]
    with FauxServer(parse(script)) as server:
        done = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "--json", "--permission-mode", "plan",
            "change the files", cwd=tmp_path, home=home_with(tmp_path, {}),
        )  # fmt: skip
        seen = [r for r in server.seen if r.body.get("tools")]  # the run's, not the chat compactor's
    assert done.returncode == 0, done.stderr
    assert len(seen) == 2  # the plan ended the run: no request after it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "home"]
    assert (tmp_path / "a.txt").read_text() == "old\n"
    out = json.loads(done.stdout.splitlines()[-1])
    assert (out["outcome"], out["answer"], out["calls"]) == ("answered", plan, 2)
    assert [(d["tool"], d["cause"]) for d in out["denials"]] == [
        (t, Why.PLAN.value) for t in ("write", "edit", "bash")
    ]
    write, edit, bash_, read = [m["content"] for m in seen[1].body["messages"] if m["role"] == "tool"]
    for tool, result in (("write", write), ("edit", edit), ("bash", bash_)):
        assert result.startswith(f"Tool {tool} was not run: permission denied: plan mode is on"), result
        assert "call exit_plan with your plan" in result
    assert read.strip().endswith("old")  # a read keeps its usual decision
    assert "exit_plan" in {t["function"]["name"] for t in seen[0].body["tools"]}
