"""A session's transcript in Claude Code's format (issue 55): what the hooks that read
`transcript_path` find there. Written as eukhe's Claude Code import reads it (the round trip
gives back every message), one chain of `parentUuid`s, private, redacted, and append-only
across a crash: a run opened again writes only what comes after its last line. In a real
`eukhe run`: a Stop hook in the style of Claude Code's loop plugin (its last assistant line
found with `grep '"role":"assistant"'`, its text with `jq`) keeps the run going until its
promise is in the transcript, and the copy it makes holds every message of the session."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

from eukhe.ai.reply import ToolCall
from eukhe.ai.request import Message
from eukhe.hooks.transcript import Transcript, path_of
from eukhe.memory.imports import read_session
from eukhe.settings.secrets import Redaction
from tests.hooks.test_run_hooks import home_with, outcome, run, script

CALL = ToolCall("toolu_1", "edit", "", {"path": "a.txt", "old_text": "a", "new_text": "b"})
SESSION = [
    Message("user", "fix a.txt"),
    Message("assistant", "I will edit it.", (CALL,)),
    Message("tool", "edited 'a.txt': replaced line 1 with 1 line", call_id="toolu_1"),
    Message("assistant", "a.txt now says b."),
    Message("user", "and the tests?"),
    Message("assistant", "", is_error=True),  # a reply that failed: no answer
    Message("assistant", "They pass."),
]


def lines(f: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in f.read_text().splitlines()]


def written(tmp_path: Path, messages: list[Message], run: str = "r-1", **more: Any) -> Transcript:
    t = Transcript(path_of(tmp_path, "s-1"), "s-1", run, tmp_path, "vllm/m", **more)
    for m in messages:
        assert t.append(m) is None
    return t


def test_the_transcript_is_what_claude_codes_import_reads_and_gives_back_every_message(
    tmp_path: Path,
) -> None:
    t = written(tmp_path, SESSION)
    assert t.path == tmp_path / "transcripts" / "s-1.jsonl"
    report = read_session(t.path)
    assert report.format is not None and report.format.name == "claude-code", report
    assert [(i.kind, i.text) for i in report.items] == [
        ("user", "fix a.txt"),
        ("talk", "a.txt now says b."),
        ("user", "and the tests?"),
        ("talk", "They pass."),
    ]
    got = lines(t.path)
    assert [g["parentUuid"] for g in got] == [None, *(g["uuid"] for g in got[:-1])]  # one chain
    assert {g["sessionId"] for g in got} == {"s-1"} and all(g["cwd"] == str(tmp_path) for g in got)
    use = got[1]["message"]["content"][1]
    claude = {"file_path": str(tmp_path / "a.txt"), "old_string": "a", "new_string": "b"}
    given = {**(CALL.arguments or {}), **claude}
    assert use == {"type": "tool_use", "id": "toolu_1", "name": "Edit", "input": given}
    assert got[1]["type"] == "assistant"
    result = got[2]["message"]["content"][0]
    assert got[2]["type"] == "user" and result["type"] == "tool_result" and result["tool_use_id"] == "toolu_1"
    assert got[5]["isApiErrorMessage"] is True
    assert '"role":"assistant"' in t.path.read_text()  # as Claude Code writes it: hooks grep for it


def test_it_is_private_and_redacted(tmp_path: Path) -> None:
    t = written(tmp_path, [Message("user", "my key is sk-secret-123")], redact=Redaction(("sk-secret-123",)))
    assert "sk-secret-123" not in t.path.read_text()
    assert stat.S_IMODE(t.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(t.path.parent.stat().st_mode) == 0o700


def test_a_run_opened_again_after_a_crash_writes_only_what_comes_after_its_last_line(tmp_path: Path) -> None:
    """Its loop makes its messages again, in the same order: the ones the file holds are not
    written twice, the chain goes on, and the next run of the session goes on from there."""
    first = written(tmp_path, SESSION[:3])
    written(tmp_path, SESSION)  # the same run, in a new process: its first three are there
    written(tmp_path, [Message("user", "next"), Message("assistant", "ok")], run="r-2")
    got = lines(first.path)
    assert len(got) == len(SESSION) + 2
    assert len({g["uuid"] for g in got}) == len(got)
    assert [g["parentUuid"] for g in got] == [None, *(g["uuid"] for g in got[:-1])]


def test_a_line_cut_by_a_crash_is_ended_and_the_next_lines_are_whole(tmp_path: Path) -> None:
    f = path_of(tmp_path, "s-1")
    f.parent.mkdir(mode=0o700)
    f.write_text('{"type":"user","uuid":"x","message":{"role":"us')
    f.chmod(0o600)
    written(tmp_path, SESSION[:2])
    raw = f.read_text().splitlines()
    assert len(raw) == 3 and [json.loads(x)["type"] for x in raw[1:]] == ["user", "assistant"]
    assert [i.text for i in read_session(f).items] == ["fix a.txt", "I will edit it."]


def test_a_file_that_cannot_be_written_is_said_once_and_nothing_more_is_tried(tmp_path: Path) -> None:
    (tmp_path / "transcripts").write_text("a file where the folder goes")
    t = Transcript(path_of(tmp_path, "s-1"), "s-1", "r-1", tmp_path)
    said = t.append(SESSION[0])
    assert said is not None and "transcript" in said and "cannot be written" in said, said
    assert t.append(SESSION[1]) is None


LOOP = """#!/bin/bash
# a loop in the style of Claude Code's: the last assistant line of the transcript, its text
input=$(cat)
transcript=$(echo "$input" | jq -r '.transcript_path')
cp "$transcript" "$(dirname "$0")/copy.jsonl"
last=$(grep '"role":"assistant"' "$transcript" | tail -1)
text=$(echo "$last" | jq -r '.message.content | map(select(.type == "text")) | map(.text) | join("\\n")')
if echo "$text" | grep -q '<promise>DONE</promise>'; then
  exit 0
fi
jq -n '{decision: "block", reason: "Loop: not done yet"}'
"""


def test_a_stop_hook_loops_on_the_transcripts_last_answer_and_copies_every_message(tmp_path: Path) -> None:
    loop = script(tmp_path, "loop.sh", LOOP)
    post = tmp_path / "post.json"
    hooks = {
        "Stop": [{"hooks": [{"type": "command", "command": loop}]}],
        "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": f"cat > {post}"}]}],
    }
    home = home_with(tmp_path, hooks)
    turns = [
        {"when": "Loop: not done yet", "results": 1, "text": "<promise>DONE</promise>"},
        {"results": 0, "calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]},
        {"results": 1, "text": "working on it"},
    ]
    done, seen = run(tmp_path, home, turns)
    assert done.returncode == 0, done.stderr
    assert outcome(done)["answer"] == "<promise>DONE</promise>" and len(seen) == 3
    copy = tmp_path / "hooks" / "copy.jsonl"
    report = read_session(copy)
    assert [(i.kind, i.text) for i in report.items] == [
        ("user", "go"),
        ("talk", "working on it"),
        ("user", "Loop: not done yet"),
        ("talk", "<promise>DONE</promise>"),
    ], report
    got = lines(copy)
    [use] = [
        b for g in got for b in g["message"]["content"] if isinstance(b, dict) and b["type"] == "tool_use"
    ]
    [result] = [
        b for g in got for b in g["message"]["content"] if isinstance(b, dict) and b["type"] == "tool_result"
    ]
    said = json.loads(post.read_text())
    assert use["name"] == "Bash" and result["tool_use_id"] == use["id"] == said["tool_use_id"]
    assert said["tool_response"]["stdout"] == "hi" and said["permission_mode"] in ("acceptEdits", "dontAsk")
    where = Path(said["transcript_path"])
    assert where.parent == home / "transcripts" and stat.S_IMODE(where.stat().st_mode) == 0o600
    assert len(lines(where)) == len(got)  # the copy was made at the last Stop: the whole session
