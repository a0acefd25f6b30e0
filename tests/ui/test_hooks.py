"""The user's hooks in the interactive agent (the real `eukhe` in tmux, the faux model): the
session's first run fires SessionStart (`startup`), a running hook shows on the status line
with its countdown, and leaving the agent fires SessionEnd (`prompt_input_exit`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from eukhe.ai.faux import FauxServer, parse
from tests.ui.term import Term, faux_home, needs_tmux

pytestmark = needs_tmux


def test_the_agent_fires_session_start_shows_a_running_hook_and_fires_session_end_as_it_is_left(
    tmp_path: Path,
) -> None:
    started, ended = tmp_path / "started.json", tmp_path / "ended.json"
    hooks = {
        "SessionStart": [{"hooks": [{"type": "command", "command": f"cat > {started}"}]}],
        # long enough to be seen running; it ends by itself, well before its timeout
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [{"type": "command", "command": "sleep 1.5", "timeout": 30}],
            }
        ],
        "SessionEnd": [{"hooks": [{"type": "command", "command": f"cat > {ended}"}]}],
    }
    script = [
        {"results": 0, "calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]},
        {"results": 1, "text": "Said hi."},
    ]
    home = tmp_path / "home"
    with FauxServer(parse(script)) as server, Term(tmp_path, home) as t:
        faux_home(home, server.url, {"hooks": hooks})
        t.ready()
        t.send("say hi")
        t.until(
            "the hook's countdown",
            lambda s: bool(re.search(r"PreToolUse Bash: 1 hook: running, ended in \d+ s at the latest", s)),
        )
        t.until("Said hi.")
        t.until("idle", lambda s: bool(re.search(r"ready · session \d", t.screen())))
        t.keys("C-c")
        t.until("Ctrl-C again to exit")
        t.keys("C-c")
        t.until("[eukhe exited] 0")
    first = json.loads(started.read_text())
    assert first["hook_event_name"] == "SessionStart" and first["source"] == "startup"
    last = json.loads(ended.read_text())
    assert last["hook_event_name"] == "SessionEnd" and last["reason"] == "prompt_input_exit"
    assert last["session_id"] == first["session_id"]
