"""The task list survives compaction with a real small model (SmolLM2-135M-Instruct on a
real llama.cpp server): a session's first run writes its list (the faux model, which calls
`todo` as scripted; the small model seldom calls a tool); its next run, on the real model,
goes on long enough to compact (a Stop hook keeps it going once, with a context window
so small that its second turn is past the threshold), and every request it sends holds
the list, the one after its compaction the person's request too. What is asserted is what
the model was sent (a recording proxy between eukhe and the server): what the small
model answers is not scripted."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from eukhe.ai.faux import FauxServer, parse
from tests import forks
from tests.llama.proxy import Recorder
from tests.llama.server import LlamaServer

# every test of the real model on one worker of make test's two: one server of each kind a run
pytestmark = pytest.mark.xdist_group("llama")

ITEMS = [
    {"text": "count the lines of notes.txt", "state": "in_progress"},
    {"text": "say the count", "state": "pending"},
]
LISTED = "- [in progress] count the lines of notes.txt\n- [pending] say the count"
PROMPT = "How many lines does notes.txt have?"
ONCE = (  # blocks the run's first end, lets the second go (Claude Code's advice: read stop_hook_active)
    "python3 -c 'import json,sys; d=json.load(sys.stdin); "
    'sys.exit(0 if d["stop_hook_active"] else (print("go on", file=sys.stderr) or 2))\''
)
SETTINGS = {
    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": ONCE}]}]},
    # a tiny window: the first turn is past the threshold with nothing to move, the second moves
    # its first answer into the chat; replies of a few tokens keep it cheap
    "models": {"llamacpp/smollm2": {"contextWindow": 400, "maxOutputTokens": 12}},
}


def run(cwd: Path, *args: str) -> Any:
    env = {**os.environ, "EUKHE_HOME": str(cwd / "home")}
    done = forks.run(["run", *args], cwd, env, 240)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return done


def test_a_run_on_the_real_model_that_compacts_still_sees_its_list(
    llama: LlamaServer, tmp_path: Path
) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "settings.json").write_text(json.dumps(SETTINGS))
    (tmp_path / "notes.txt").write_text("one\ntwo\nthree\n")
    script = [
        {"results": 0, "calls": [{"name": "todo", "arguments": {"items": ITEMS}}]},
        {"results": 1, "text": "Planned."},
    ]
    with FauxServer(parse(script)) as faux:
        first = run(tmp_path, "--model", "vllm/m", "--base-url", faux.url, "--events", "plan: " + PROMPT)
    session = next(
        json.loads(ln)["run"] for ln in first.stdout.splitlines() if json.loads(ln)["run"]
    ).rpartition("/")[0]
    with Recorder(llama.base_url) as proxy:
        done = run(
            tmp_path, "--session", session, "--model", "llamacpp/smollm2", "--base-url", proxy.base_url,
            "--tools", "read", "--json", PROMPT,
        )  # fmt: skip
        sent = [b for b in proxy.bodies if isinstance(b, dict) and "messages" in b]
    last = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"{len(sent)} requests; {last['outcome']}: {last['answer'][:80]!r}")  # for the record (-s)
    assert "compact: the context passed the compaction threshold" in done.stderr, done.stderr[-3000:]
    systems = [str(b["messages"][0]["content"]) for b in sent]
    compacted = [k for k, b in enumerate(sent) if "Harness note" in str(b["messages"][-1]["content"])]
    assert compacted, [b["messages"][-1] for b in sent]  # it went on after its compaction
    for s in systems:  # its list in every request, its start's too
        assert LISTED in s[s.rindex("</chat>") :], s[-800:]
    for k in compacted:  # and the person's request in every one after the compaction
        assert f"word for word:\n{PROMPT}\n</request>" in systems[k]
