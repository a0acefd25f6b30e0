"""The user's hooks in a real `eukhe run` against the faux model (issue 42): real hook
scripts on disk, in both styles Claude Code's docs show (a shell script and a Python script),
in the home's settings as users write them. A PreToolUse guard that exits 2 or answers
`permissionDecision: deny` keeps the call from running and the model reads why; a guard that
crashes denies; a PostToolUse hook formats the file an edit wrote; UserPromptSubmit adds
context; a Stop hook keeps the run going until its condition holds, and one that always
blocks ends the run with its named failure at the cap; a project's hooks run only once the
folder is trusted."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from eukhe.ai.faux import FauxServer, parse
from tests.cli.test_run_compaction import compacted_run
from tests.proc import eukhe


def bash(command: str) -> dict[str, Any]:
    return {"calls": [{"name": "bash", "arguments": {"command": command}}]}


def script(tmp_path: Path, name: str, text: str) -> str:
    """A hook script on disk, executable; the command that runs it."""
    f = tmp_path / "hooks" / name
    f.parent.mkdir(exist_ok=True)
    f.write_text(text)
    f.chmod(0o755)
    return f"{sys.executable} {f}" if name.endswith(".py") else str(f)


def home_with(tmp_path: Path, hooks: dict[str, Any], **more: Any) -> Path:
    home = tmp_path / "home"
    home.mkdir(mode=0o700, exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"hooks": hooks, **more}))
    return home


def on(event: str, command: str, matcher: str | None = None, **hook: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"hooks": [{"type": "command", "command": command, **hook}]}
    return {event: [{"matcher": matcher, **entry} if matcher is not None else entry]}


def run(tmp_path: Path, home: Path, turns: list[dict[str, Any]], prompt: str = "go") -> tuple[Any, list[Any]]:
    """`eukhe run --json PROMPT` against `turns`: its process, and the requests the model got."""
    with FauxServer(parse(turns)) as server:
        done = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "--json", prompt, cwd=tmp_path, home=home
        )
        return done, [s.body for s in server.seen]


def outcome(done: Any) -> dict[str, Any]:
    return dict(json.loads(done.stdout.splitlines()[-1]))


def said_to_model(body: Any) -> str:
    return json.dumps(body["messages"], ensure_ascii=False)


GUARD_SH = """#!/bin/bash
# Claude Code's docs' shape: the payload on stdin, exit 2 with the reason on stderr blocks.
input=$(cat)
if echo "$input" | grep -q 'rm -rf'; then
  echo "Blocked: rm -rf is not allowed in this project" >&2
  exit 2
fi
exit 0
"""

GUARD_PY = """import json, sys
data = json.load(sys.stdin)
command = data["tool_input"].get("command", "")
if data["hook_event_name"] == "PreToolUse" and data["tool_name"] == "Bash" and "touch" in command:
    print(json.dumps({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "touching files is for the build, not the agent",
    }}))
sys.exit(0)
"""


def test_a_pre_tool_use_hook_that_exits_2_blocks_the_call_and_the_model_reads_why(tmp_path: Path) -> None:
    (tmp_path / "victim").write_text("keep me")
    home = home_with(tmp_path, on("PreToolUse", script(tmp_path, "guard.sh", GUARD_SH), "Bash"))
    done, seen = run(tmp_path, home, [{"results": 0, **bash("rm -rf victim")}, {"results": 1, "text": "ok"}])
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "victim").read_text() == "keep me"
    told = said_to_model(seen[-1])
    assert "a PreToolUse hook denied it: Blocked: rm -rf is not allowed in this project" in told, told
    [denial] = outcome(done)["denials"]
    assert denial["rule"] == "PreToolUse hook" and denial["tool"] == "bash"


def test_a_pre_tool_use_hook_that_answers_deny_in_json_blocks_the_call(tmp_path: Path) -> None:
    home = home_with(tmp_path, on("PreToolUse", script(tmp_path, "guard.py", GUARD_PY), "Bash|Write"))
    done, seen = run(tmp_path, home, [{"results": 0, **bash("touch made")}, {"results": 1, "text": "ok"}])
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "made").exists()
    assert "touching files is for the build, not the agent" in said_to_model(seen[-1])


def test_a_guard_that_crashes_denies_the_call_and_says_why(tmp_path: Path) -> None:
    """A guard whose command is missing (exit 127) fails closed: the call it guards does not run."""
    home = home_with(tmp_path, on("PreToolUse", "jq-that-is-not-installed -r .tool_input", "Bash"))
    done, seen = run(tmp_path, home, [{"results": 0, **bash("touch made")}, {"results": 1, "text": "ok"}])
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "made").exists()
    told = said_to_model(seen[-1])
    assert "the guard failed" in told and "exited 127" in told, told
    assert "PreToolUse hook `jq-that-is-not-installed -r .tool_input` exited 127" in done.stderr, done.stderr


def test_a_post_tool_use_hook_formats_the_file_an_edit_wrote(tmp_path: Path) -> None:
    formatter = script(
        tmp_path,
        "format.py",
        "import json, sys, pathlib\n"
        "data = json.load(sys.stdin)\n"
        "p = pathlib.Path(data['tool_input']['file_path'])\n"
        "p.write_text(p.read_text().upper())\n",
    )
    (tmp_path / "notes.txt").write_text("hello world\n")
    home = home_with(tmp_path, on("PostToolUse", formatter, "Edit|Write"))
    edit = {"name": "edit", "arguments": {"path": "notes.txt", "old_text": "world", "new_text": "there"}}
    done, _ = run(tmp_path, home, [{"results": 0, "calls": [edit]}, {"results": 1, "text": "edited"}])
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "notes.txt").read_text() == "HELLO THERE\n"


def test_a_user_prompt_submit_hook_adds_its_context_to_the_prompt(tmp_path: Path) -> None:
    context = script(tmp_path, "context.sh", "#!/bin/bash\necho 'The build is green as of today.'\n")
    home = home_with(tmp_path, on("UserPromptSubmit", context))
    done, seen = run(tmp_path, home, [{"results": 0, "text": "noted"}], prompt="how is the build?")
    assert done.returncode == 0, done.stderr
    told = said_to_model(seen[0])
    assert "how is the build?" in told and "The build is green as of today." in told, told


def test_a_user_prompt_submit_hooks_mention_attaches_nothing(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A hook's context is not what the person typed: an `@path` in it, to a file outside the
    project, stays text (issue 51)."""
    env_file = tmp_path_factory.mktemp("other") / "prod.env"
    env_file.write_text("DATABASE_PASSWORD=prod-secret-0123\n")
    context = script(tmp_path, "context.sh", f"#!/bin/bash\necho 'Deploy settings: @{env_file}'\n")
    home = home_with(tmp_path, on("UserPromptSubmit", context))
    done, seen = run(tmp_path, home, [{"results": 0, "text": "noted"}], prompt="deploy it")
    assert done.returncode == 0, done.stderr
    told = said_to_model(seen[0])
    assert f"Deploy settings: @{env_file}" in told and "prod-secret" not in json.dumps(seen), told


def test_a_user_prompt_submit_hook_that_blocks_ends_the_run_before_any_round(tmp_path: Path) -> None:
    block = script(tmp_path, "block.sh", "#!/bin/bash\necho 'no prompts about secrets' >&2\nexit 2\n")
    home = home_with(tmp_path, on("UserPromptSubmit", block))
    done, seen = run(tmp_path, home, [{"results": 0, "text": "never"}], prompt="print the secrets")
    assert done.returncode == 1 and seen == [], done.stderr
    out = outcome(done)
    assert out["error"] == {
        "kind": "hook_blocked",
        "message": "a UserPromptSubmit hook blocked the prompt: no prompts about secrets",
    }


def test_a_stop_hook_keeps_the_run_going_until_its_file_exists(tmp_path: Path) -> None:
    until = script(
        tmp_path,
        "until.sh",
        "#!/bin/bash\n"
        'if [ -f "$CLAUDE_PROJECT_DIR/done.txt" ]; then exit 0; fi\n'
        "echo 'write done.txt before you stop' >&2\n"
        "exit 2\n",
    )
    home = home_with(tmp_path, on("Stop", until))
    write = {"name": "write", "arguments": {"path": "done.txt", "content": "done\n"}}
    turns = [  # a reply with `results` is never used up: the first that fits answers
        {"results": 0, "when": "write done.txt before you stop", "calls": [write]},
        {"results": 0, "text": "finished"},
        {"results": 1, "text": "now it is written"},
    ]
    done, seen = run(tmp_path, home, turns)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "done.txt").exists() and outcome(done)["answer"] == "now it is written"
    assert len(seen) == 3


def test_a_stop_hook_that_always_blocks_ends_the_run_with_its_failure_at_the_cap(tmp_path: Path) -> None:
    never = script(tmp_path, "never.sh", "#!/bin/bash\necho 'keep going' >&2\nexit 2\n")
    home = home_with(tmp_path, on("Stop", never), hookLimits={"maxStopBlocks": 3})
    done, seen = run(tmp_path, home, [{"results": 0, "text": "finished"}])
    assert done.returncode == 1, done.stderr
    assert len(seen) == 4  # the first answer, then one a block, three blocks in all
    assert outcome(done)["error"] == {
        "kind": "stop_hook_limit",
        "message": "the Stop hooks blocked the run's end 3 times (hookLimits.maxStopBlocks): keep going",
    }


def test_a_projects_hooks_run_only_once_the_folder_is_trusted(tmp_path: Path) -> None:
    project = tmp_path / "repo"
    (project / ".claude").mkdir(parents=True)
    marker = tmp_path / "ran"
    hook = {"type": "command", "command": f"touch {marker}"}
    (project / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [hook]}]}})
    )
    home = tmp_path / "home"
    turns = [{"results": 0, "text": "hi"}]
    with FauxServer(parse(turns)) as server:
        args = ("run", "--model", "vllm/m", "--base-url", server.url, "hello")
        untrusted = eukhe(*args, cwd=project, home=home)
        assert untrusted.returncode == 0, untrusted.stderr
        assert not marker.exists()
        shown = untrusted.stdout + untrusted.stderr
        assert ".claude/settings.json: hooks is ignored: this folder is not trusted" in shown, shown
        trusted = eukhe("trust", str(project), cwd=project, home=home)
        assert trusted.returncode == 0, trusted.stderr
        again = eukhe(*args, cwd=project, home=home)
    assert again.returncode == 0, again.stderr
    assert marker.exists()


def test_a_crash_between_a_guards_answer_and_its_record_does_not_run_the_guard_again(tmp_path: Path) -> None:
    """The run dies just after its PreToolUse guard answered (kept in the store), before the
    step that decides the call is recorded; resumed, it reads the answer: the guard ran once,
    and the call it allowed ran."""
    asked = tmp_path / "asked"
    guard = script(tmp_path, "count.sh", f"#!/bin/bash\ncat > /dev/null\necho asked >> {asked}\nexit 0\n")
    home = home_with(tmp_path, on("PreToolUse", guard, "Bash"))
    marker = tmp_path / "crashed"
    crash = {"EUKHE_CRASH_AT": f"hook_answered:{marker}"}
    turns = [{"results": 0, **bash("touch made")}, {"results": 1, "text": "made it"}]
    with FauxServer(parse(turns)) as server:
        args = ("run", "--model", "vllm/m", "--base-url", server.url, "go")
        crashed = eukhe(*args, cwd=tmp_path, home=home, extra=crash)
        assert crashed.returncode != 0 and marker.exists(), crashed.stderr
        assert asked.read_text() == "asked\n" and not (tmp_path / "made").exists()
        resumed = eukhe("resume", cwd=tmp_path, home=home, extra=crash)
        assert resumed.returncode == 0, resumed.stderr
        listed = eukhe("sessions", "--json", cwd=tmp_path, home=home)
    assert [s["outcome"] for s in json.loads(listed.stdout)["sessions"]] == ["answered"], listed.stdout
    assert asked.read_text() == "asked\n"  # once, across the crash
    assert (tmp_path / "made").exists()
    # the session's transcript, written on both sides of the crash, holds each message once, in order
    [transcript] = (home / "transcripts").iterdir()
    got = [json.loads(line) for line in transcript.read_text().splitlines()]
    kinds = [(g["type"], [b["type"] for b in g["message"]["content"]]) for g in got[1:]]
    assert got[0]["message"]["content"] == "go" and len({g["uuid"] for g in got}) == len(got), got
    assert kinds == [("assistant", ["tool_use"]), ("user", ["tool_result"]), ("assistant", ["text"])], kinds
    assert [g["parentUuid"] for g in got] == [None, *(g["uuid"] for g in got[:-1])]


def test_the_event_stream_carries_each_hooks_wait_its_end_and_its_failure(tmp_path: Path) -> None:
    home = home_with(tmp_path, on("PreToolUse", "exit 7", "Bash", timeout=5))
    turns = [{"results": 0, **bash("touch made")}, {"results": 1, "text": "ok"}]
    with FauxServer(parse(turns)) as server:
        args = ("run", "--model", "vllm/m", "--base-url", server.url, "--events", "go")
        done = eukhe(*args, cwd=tmp_path, home=home)
    assert done.returncode == 0, done.stderr
    got = [json.loads(line) for line in done.stdout.splitlines()]
    hooks = [e for e in got if e["type"] == "hook" or (e["type"] == "waited" and e.get("wait") == "hook")]
    started, waited, failed, ended = hooks  # the wait ends as the hooks do, then what they said
    assert started["wait"] == "hook" and 0 < started["deadline"] - started["at"] <= 7.5, started
    assert failed["state"] == "failed" and failed["text"] == "PreToolUse hook `exit 7` exited 7", failed
    assert waited["type"] == "waited"
    assert ended["state"] == "ended" and ended["verdict"] == "deny", ended


SESSION_START_PY = """import json, sys
data = json.load(sys.stdin)
with open(sys.argv[1], "a") as f:
    f.write(json.dumps(data) + "\\n")
print("Context from SessionStart: the build is green on " + data["source"])
"""


def test_session_start_adds_its_context_to_a_new_sessions_run_and_says_resume_for_one_continued(
    tmp_path: Path,
) -> None:
    """A new session's run fires SessionStart with source `startup`, its stdout the model's
    context; a run of the same session continued (`--session`) fires it with `resume`, and a
    `startup` matcher does not take that."""
    said = tmp_path / "starts.jsonl"
    starting = script(tmp_path, "start.py", SESSION_START_PY)
    only_new = tmp_path / "only-new"
    hooks = {
        "SessionStart": [
            {"hooks": [{"type": "command", "command": f"{starting} {said}"}]},
            {"matcher": "startup", "hooks": [{"type": "command", "command": f"touch {only_new}"}]},
        ]
    }
    home = home_with(tmp_path, hooks)
    done, seen = run(tmp_path, home, [{"results": 0, "text": "hi"}], prompt="hello")
    assert done.returncode == 0, done.stderr
    assert "Context from SessionStart: the build is green on startup" in said_to_model(seen[0])
    [first] = [json.loads(line) for line in said.read_text().splitlines()]
    assert first["hook_event_name"] == "SessionStart" and first["source"] == "startup"
    assert only_new.exists()
    only_new.unlink()
    with FauxServer(parse([{"results": 0, "text": "again"}])) as server:
        args = (
            "run",
            "--model",
            "vllm/m",
            "--base-url",
            server.url,
            "--session",
            first["session_id"],
            "more",
        )
        again = eukhe(*args, cwd=tmp_path, home=home)
    assert again.returncode == 0, again.stderr
    second = json.loads(said.read_text().splitlines()[1])
    assert second["source"] == "resume" and second["session_id"] == first["session_id"]
    assert not only_new.exists()


def test_session_end_fires_once_the_run_has_answered_and_before_its_outcome_is_said(tmp_path: Path) -> None:
    said = tmp_path / "ended.json"
    home = home_with(tmp_path, on("SessionEnd", f"cat > {said}; echo 'bye' >&2; exit 1"))
    with FauxServer(parse([{"results": 0, "text": "hi"}])) as server:
        args = ("run", "--model", "vllm/m", "--base-url", server.url, "--events", "go")
        done = eukhe(*args, cwd=tmp_path, home=home)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[-1]["type"] == "outcome" and events[-1]["outcome"] == "answered", events[-1]
    failed = [e["text"] for e in events if e["type"] == "hook" and e.get("state") == "failed"]
    assert len(failed) == 1 and failed[0].startswith("SessionEnd hook `cat > "), failed
    assert failed[0].endswith("` exited 1: bye"), failed
    got = json.loads(said.read_text())
    assert got["hook_event_name"] == "SessionEnd" and got["reason"] == "other"
    assert got["run_id"].endswith("/0001") and got["session_id"] == got["run_id"].rpartition("/")[0]


def test_pre_compact_fires_with_its_trigger_before_a_run_compacts_and_the_run_goes_on(tmp_path: Path) -> None:
    """PreCompact before the compaction, PostCompact after it with the view the run goes on from."""
    said, after = tmp_path / "compacting.json", tmp_path / "compacted.json"
    hook = {"type": "command", "command": f"cat > {said}; echo 'saved the plan' >&2; exit 2"}
    post = {"type": "command", "command": f"cat > {after}"}
    hooks = {"PreCompact": [{"matcher": "auto", "hooks": [hook]}], "PostCompact": [{"hooks": [post]}]}
    done, _ = compacted_run(tmp_path, {"hooks": hooks})
    got = json.loads(said.read_text())
    assert got["hook_event_name"] == "PreCompact" and got["trigger"] == "auto"
    assert json.loads(done.stdout)["outcome"] == "answered"  # its exit 2 blocks nothing: its stderr is shown
    assert "saved the plan" in done.stderr
    compacted = json.loads(after.read_text())
    assert compacted["hook_event_name"] == "PostCompact" and compacted["trigger"] == "auto"
    assert compacted["compact_summary"] and compacted["transcript_path"] == got["transcript_path"]


def test_a_sessions_hooks_fire_once_each_and_a_subagents_end_is_a_subagent_stop(tmp_path: Path) -> None:
    """A run that spawns a subagent, then the run its report starts: SessionStart once (the
    session's first run, not the subagent's nor the follow-up's), SubagentStop once with the
    subagent's answer, Stop for each root run, and SessionEnd once, after them all."""
    said = tmp_path / "events"
    said.mkdir()
    keep = f"cat > {said}/$(date +%s%N)-$$"  # a file each: a subagent's hooks run beside its parent's
    events = ("SessionStart", "SubagentStart", "SubagentStop", "Stop", "SessionEnd")
    hooks: dict[str, Any] = {e: [{"hooks": [{"type": "command", "command": keep}]}] for e in events}
    context = {
        "hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "count in French"}
    }
    hooks["SubagentStart"][0]["hooks"].append({"type": "command", "command": f"echo '{json.dumps(context)}'"})
    home = home_with(tmp_path, hooks)
    turns = [
        {"when": "count to two", "results": 0, "text": "one, two"},
        {"when": "[child-exited", "results": 0, "text": "my child counted"},
        {"when": "go", "results": 0, "calls": [{"name": "spawn", "arguments": {"task": "count to two"}}]},
        {"when": "go", "results": 1, "text": "spawned it"},
    ]
    done, _ = run(tmp_path, home, turns)
    assert done.returncode == 0, done.stderr
    got = [json.loads(f.read_text()) for f in sorted(said.iterdir(), key=lambda f: int(f.name.split("-")[0]))]
    names = [g["hook_event_name"] for g in got]
    assert names[0] == "SessionStart" and names[-1] == "SessionEnd", names
    assert sorted(names) == sorted(
        ["SessionStart", "SubagentStart", "SubagentStop", "Stop", "Stop", "SessionEnd"]
    ), names
    assert names.index("SubagentStart") < names.index("SubagentStop")
    [child] = [g for g in got if g["hook_event_name"] == "SubagentStop"]
    assert child["last_assistant_message"] == "one, two" and child["stop_hook_active"] is False
    [start] = [g for g in got if g["hook_event_name"] == "SubagentStart"]
    assert (
        start["agent_id"] == child["agent_id"]
        and start["agent_type"] == child["agent_type"] == "general-purpose"
    )
    # a subagent's events name its parent's transcript, and SubagentStop its own, which holds its messages
    [root] = {g["transcript_path"] for g in got if g["hook_event_name"] == "Stop"}
    assert start["transcript_path"] == child["transcript_path"] == root
    own = [json.loads(line) for line in Path(child["agent_transcript_path"]).read_text().splitlines()]
    assert own[0]["message"]["content"].startswith("count to two") and own[0]["isSidechain"] is True
    assert "count in French" in own[0]["message"]["content"]  # SubagentStart's context joins its prompt
    assert own[-1]["message"]["content"] == [{"type": "text", "text": "one, two"}]


def test_stop_failure_fires_when_the_model_fails_the_run_and_stop_does_not(tmp_path: Path) -> None:
    said = tmp_path / "failed.json"
    hooks = {**on("StopFailure", f"cat > {said}"), **on("Stop", f"touch {tmp_path / 'stopped'}")}
    home = home_with(tmp_path, hooks)
    done, _ = run(tmp_path, home, [{"error": {"status": 401, "body": {"error": {"message": "bad key"}}}}])
    assert done.returncode == 1, done.stderr
    got = json.loads(said.read_text())
    assert got["hook_event_name"] == "StopFailure" and got["error"] == "authentication_failed", got
    assert "bad key" in got["error_details"] and got["last_assistant_message"] == ""
    assert not (tmp_path / "stopped").exists()
