"""A loop plugin of this project's own (tests/fixtures/loop-marketplace), in the style of Claude
Code's: its Stop hook reads the transcript's last assistant message (Claude Code's JSONL) and
blocks the stop, asking to go on, until the promise appears. It is installed through `eukhe
plugin add` from a local marketplace folder, and runs from its copy in the home."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from eukhe.ai.faux import FauxServer, parse
from tests.proc import eukhe

MARKET = Path(__file__).resolve().parents[1] / "fixtures" / "loop-marketplace"
PROMISE = "<promise>DONE</promise>"


def installed(tmp_path: Path, **settings: Any) -> tuple[Path, Path, Path]:
    """A home with the loop plugin added from a copy of the marketplace folder; the home, a
    project, and the plugin's folder in the home."""
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir(mode=0o700)
    project.mkdir()
    (home / "settings.json").write_text(json.dumps(settings))
    market = shutil.copytree(MARKET, tmp_path / "market")
    done = eukhe("plugin", "add", str(market), cwd=project, home=home)
    assert done.returncode == 0, done.stderr
    assert "loop@eukhe-examples" in done.stdout
    return home, project, home / "plugins" / "cache" / "eukhe-examples" / "loop"


def line(kind: str, text: str, n: int) -> str:
    """One message of a Claude Code transcript."""
    message = {"role": kind, "content": [{"type": "text", "text": text}]}
    return json.dumps(
        {
            "type": kind,
            "uuid": f"u{n}",
            "parentUuid": f"u{n - 1}" if n else None,
            "sessionId": "s",
            "message": message,
        }
    )


def stop(root: Path, transcript: Path) -> dict[str, Any]:
    payload = {
        "hook_event_name": "Stop",
        "session_id": "s",
        "transcript_path": str(transcript),
        "cwd": str(root),
        "stop_hook_active": False,
    }
    done = subprocess.run(
        ["python3", str(root / "hooks" / "stop.py")],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else {}


def test_the_loop_hook_blocks_until_the_last_answer_holds_its_promise(tmp_path: Path) -> None:
    _, _, root = installed(tmp_path)
    t = tmp_path / "t.jsonl"
    t.write_text(
        "\n".join([line("user", "[loop] fix the build", 0), line("assistant", "step one", 1)]) + "\n"
    )
    assert stop(root, t)["decision"] == "block"
    t.write_text(t.read_text() + line("assistant", f"fixed {PROMISE}", 2) + "\n")
    assert stop(root, t) == {}
    t.write_text("\n".join([line("user", "just a question", 0), line("assistant", "an answer", 1)]) + "\n")
    assert stop(root, t) == {}  # not a loop's session


def run(home: Path, project: Path, turns: list[dict[str, Any]]) -> tuple[Any, int]:
    with FauxServer(parse(turns)) as server:
        done = eukhe(
            "run",
            "--model",
            "vllm/m",
            "--base-url",
            server.url,
            "--json",
            "/loop fix the build",
            cwd=project,
            home=home,
        )
        return done, len(server.seen)


def test_a_run_loops_until_its_promise_appears_in_the_transcript(tmp_path: Path) -> None:
    home, project, _ = installed(tmp_path)
    done, requests = run(
        home, project, [{"text": "step one"}, {"text": "step two"}, {"text": f"all fixed {PROMISE}"}]
    )
    assert done.returncode == 0, done.stderr
    assert requests == 3
    assert json.loads(done.stdout.splitlines()[-1])["answer"] == f"all fixed {PROMISE}"


def test_a_loop_without_its_promise_ends_at_the_stop_cap(tmp_path: Path) -> None:
    home, project, _ = installed(tmp_path, hookLimits={"maxStopBlocks": 2})
    done, requests = run(home, project, [{"results": 0, "text": "still at it"}])
    assert done.returncode == 1, done.stderr
    assert requests == 3  # the first answer, then two blocked stops
    assert json.loads(done.stdout.splitlines()[-1])["error"]["kind"] == "stop_hook_limit"
