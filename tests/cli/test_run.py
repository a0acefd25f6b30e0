"""`eukhe run` as a user runs it: real processes, real HTTP (`eukhe demo`: tests/cli/test_demo.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from eukhe.ai.faux import FauxServer, parse
from tests.proc import eukhe


def test_run_without_a_model_says_what_to_set(tmp_path: Path) -> None:
    done = eukhe("run", "hello", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("eukhe run: no model configured: pass --model provider/model")
    # the home's own file, wherever EUKHE_HOME puts it (not ~/.eukhe/settings.json)
    assert done.stderr.rstrip().endswith(f'or set "model" in {tmp_path / "home" / "settings.json"}')


def test_run_against_a_server_with_a_tool_call_and_json(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    script = [{"calls": [{"name": "read", "arguments": {"path": "a.txt"}}]}, "It says alpha."]
    with FauxServer(parse(script)) as server:
        done = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "--json", "read a.txt", cwd=tmp_path
        )
        sent = server.seen[1].body["messages"]
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1])["answer"] == "It says alpha."
    assert any(m.get("role") == "tool" and "alpha" in m.get("content", "") for m in sent)


def test_a_failed_run_exits_1_with_its_cause(tmp_path: Path) -> None:
    with FauxServer(parse([{"error": {"status": 401, "body": {"error": {"message": "bad key"}}}}])) as server:
        done = eukhe("run", "--model", "vllm/m", "--base-url", server.url, "--json", "x", cwd=tmp_path)
    assert done.returncode == 1
    last = json.loads(done.stdout.strip().splitlines()[-1])
    assert last["outcome"] == "failed" and last["error"]["kind"] == "model_error"
    assert "HTTP 401" in last["error"]["message"]


def test_a_malformed_settings_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "settings.json").write_text("{oops}")
    done = eukhe("run", "--model", "vllm/m", "x", cwd=tmp_path)
    assert done.returncode == 2 and "settings.json, line 1 column 2: not valid JSON" in done.stderr


def test_run_offers_the_skills_shows_each_that_fails_and_expands_a_template(tmp_path: Path) -> None:
    skills = tmp_path / ".eukhe" / "skills"
    (skills / "pdf-tools").mkdir(parents=True)
    (skills / "pdf-tools" / "SKILL.md").write_text("---\ndescription: Fill PDF forms.\n---\nSteps.\n")
    (skills / "broken").mkdir()
    (skills / "broken" / "SKILL.md").write_text("---\nname: broken\n---\nno description\n")
    prompts = tmp_path / ".eukhe" / "prompts"
    prompts.mkdir()
    (prompts / "review.md").write_text("Review $1 carefully.\n")
    with FauxServer(parse(["ok"])) as server:
        done = eukhe("run", "--model", "vllm/m", "--base-url", server.url, "/review main.py", cwd=tmp_path)
        sent = server.seen[0].body["messages"]
    assert done.returncode == 0, done.stderr
    assert sent[0]["role"] == "system" and "<name>pdf-tools</name>" in sent[0]["content"]
    assert "broken" not in sent[0]["content"]
    assert sent[-1] == {"role": "user", "content": "Review main.py carefully.\n"}
    shown = done.stdout + done.stderr
    assert str(skills / "broken" / "SKILL.md") in shown and "without description" in shown


def test_a_malformed_concurrency_is_refused_before_any_run(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "settings.json").write_text(json.dumps({"providers": {"vllm": {"concurrency": -1}}}))
    done = eukhe("run", "--model", "vllm/m", "--base-url", "http://127.0.0.1:9/v1", "x", cwd=tmp_path)
    assert done.returncode == 2
    f = tmp_path / "home" / "settings.json"
    assert f"setting providers.vllm.concurrency=-1 in {f}: expected a whole number >= 0" in done.stderr


def test_a_server_asking_for_a_wait_past_the_cap_fails_the_run_at_once(tmp_path: Path) -> None:
    """Retry-After: 3600 against the default 60 s cap: the run fails now, as model_error
    with the reason, rather than sleep for an hour that looks like a hang."""
    import time

    script = [{"error": {"status": 429, "body": {"error": {"message": "slow down"}}, "retryAfter": 3600}}]
    with FauxServer(parse(script)) as server:
        began = time.monotonic()
        done = eukhe("run", "--model", "vllm/m", "--base-url", server.url, "--json", "x", cwd=tmp_path)
        took = time.monotonic() - began
        asked = len(server.seen)
    assert took < 60, took
    assert done.returncode == 1, done.stderr
    last = json.loads(done.stdout.strip().splitlines()[-1])
    assert last["outcome"] == "failed" and last["error"]["kind"] == "model_error"
    assert last["error"]["message"].startswith(
        "the provider asked to wait 3600 s before a retry, "
        "longer than retry.provider.maxRetryDelayMs (60 s): "
    )
    assert "HTTP 429" in last["error"]["message"] and last["retries"] == 0
    assert asked == 1  # never resent


def test_a_models_output_limit_from_settings_goes_as_max_tokens(tmp_path: Path) -> None:
    (tmp_path / ".eukhe").mkdir()
    (tmp_path / ".eukhe" / "settings.json").write_text('{"models": {"vllm/m": {"maxOutputTokens": 7}}}')
    with FauxServer(parse(["Short."])) as server:
        done = eukhe("run", "--model", "vllm/m", "--base-url", server.url, "x", cwd=tmp_path)
        sent = server.seen[0].body
    assert done.returncode == 0, done.stderr
    assert sent["max_tokens"] == 7


def test_a_malformed_output_limit_is_refused_before_any_run(tmp_path: Path) -> None:
    (tmp_path / ".eukhe").mkdir()
    (tmp_path / ".eukhe" / "settings.json").write_text('{"models": {"vllm/m": {"maxOutputTokens": "7"}}}')
    done = eukhe("run", "--model", "vllm/m", "--base-url", "http://127.0.0.1:9/v1", "x", cwd=tmp_path)
    assert done.returncode == 2
    f = tmp_path / ".eukhe" / "settings.json"
    assert f"setting models.vllm/m.maxOutputTokens='7' in {f}: expected a whole number >= 0" in done.stderr


def test_the_answer_streams_as_it_arrives(tmp_path: Path) -> None:
    """The first piece of the answer is on stdout while the rest is still coming."""
    import threading
    import time

    script = [{"text": "one two three four five six", "chunks": 6, "delay": 0.5}]
    with FauxServer(parse(script)) as server:
        p = subprocess.Popen(
            [sys.executable, "-m", "eukhe", "run", "--model", "vllm/m", "--base-url", server.url, "count"],
            cwd=tmp_path,
            env={**os.environ, "EUKHE_HOME": str(tmp_path / "home")},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        first: list[float] = []
        out: list[bytes] = []

        def read() -> None:
            assert p.stdout is not None
            while piece := p.stdout.read1(64):  # type: ignore[attr-defined]
                first.append(time.monotonic())
                out.append(piece)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        p.wait(timeout=60)
        ended = time.monotonic()
        reader.join(timeout=10)
        assert p.stderr is not None
        err = p.stderr.read().decode()
    assert p.returncode == 0, err
    assert b"".join(out) == b"one two three four five six\n"  # once, whole
    assert ended - first[0] >= 1.5, (ended - first[0], err)  # five pieces, 0.5 s apart, still to come


def _recorded(name: str) -> dict[str, Any]:
    from tests.ai.replay import recording

    return recording(name)


def test_a_run_whose_output_the_servers_parser_keeps_rejecting_ends_with_its_cause(tmp_path: Path) -> None:
    """llama.cpp's recorded HTTP 500 for output its tool-call parser rejects, replayed
    through the faux server to every request: two rejected notes, each a new request,
    then the run fails with the server's cause, never a traceback."""
    body = json.loads(_recorded("llamacpp_tool_parse_error_500.json")["sse"])
    with FauxServer(parse({"replies": [{"error": {"status": 500, "body": body}}], "then": "last"})) as server:
        args = ("run", "--model", "llamacpp/smollm2", "--base-url", server.url, "--json", "x")
        done = eukhe(*args, cwd=tmp_path)
        notes_sent = [str(s.body["messages"][-1]["content"])[:35] for s in server.seen[1:]]
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    last = json.loads(done.stdout.strip().splitlines()[-1])
    assert last["outcome"] == "failed" and last["error"]["kind"] == "model_error" and last["notes"] == 2
    assert "does not match the expected peg-native format" in last["error"]["message"]
    assert "after 2 rejected notes in a row" in last["error"]["message"]
    assert notes_sent == ["Harness note, attempt 2: your previ", "Harness note, attempt 3: your previ"]


def test_a_run_whose_stream_carries_the_parse_error_event_ends_with_its_cause(tmp_path: Path) -> None:
    """The same failure as an error event inside a 200 stream, as recorded."""
    from tests.ai.replay import serve

    r = _recorded("llamacpp_tool_parse_error_stream.json")
    seen: list[dict[str, Any]] = []
    with serve(r["status"], r["headers"], r["sse"].encode(), seen=seen) as url:
        done = eukhe("run", "--model", "llamacpp/smollm2", "--base-url", url, "--json", "x", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    last = json.loads(done.stdout.strip().splitlines()[-1])
    assert last["outcome"] == "failed" and last["notes"] == 2 and last["retries"] == 0
    assert "does not match the expected peg-native format" in last["error"]["message"]
    asked = [s for s in seen if s["path"].endswith("/chat/completions")]  # not the look at /models
    assert len(asked) == 3, [s["path"] for s in seen]


def test_a_new_sessions_line_comes_before_the_store_loads_and_once(tmp_path: Path) -> None:
    """The first line of `eukhe run` in a new session says the session and its run before DBOS
    and the run's machinery load (half a second): the imports Python reports on stderr come
    after it, and the driver does not say it again."""
    with FauxServer(parse(["done"])) as server:
        argv = [sys.executable, "-X", "importtime", "-m", "eukhe", "run", "--model", "vllm/m"]
        done = subprocess.run(
            [*argv, "--base-url", server.url, "hi"],
            cwd=tmp_path,
            env={**os.environ, "EUKHE_HOME": str(tmp_path / "home")},
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stderr.splitlines()
    said = [n for n, line in enumerate(lines) if line.startswith("session ") and line.endswith(", run 1")]
    assert len(said) == 1, [line for line in lines if not line.startswith("import time:")]
    dbos = [
        n
        for n, line in enumerate(lines)
        if line.startswith("import time:") and line.split("|")[-1].strip() == "dbos"
    ]
    assert dbos and said[0] < dbos[0]


def test_a_session_continued_runs_on_the_model_and_server_it_ran_with(tmp_path: Path) -> None:
    """`eukhe run --session ID "next"` with no other flag answers from the session's own model,
    server and API, as the agent's `eukhe --session ID` does (it refused, asking for --model)."""
    with FauxServer(parse(["first answer", "second answer"])) as server:
        first = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "--session", "s1", "hi", cwd=tmp_path
        )
        assert first.returncode == 0, first.stderr
        done = eukhe("run", "--session", "s1", "--json", "next", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert len(server.seen) == 2 and server.seen[1].body["model"] == "m"
    last = json.loads(done.stdout.strip().splitlines()[-1])
    assert (last["outcome"], last["answer"]) == ("answered", "second answer")
    flagged = eukhe(
        "run",
        "--session",
        "s1",
        "--model",
        "vllm/other",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "x",
        cwd=tmp_path,
    )
    assert flagged.returncode != 0  # the flags say otherwise: the session's server is not used
    unknown = eukhe("run", "--session", "never-ran", "hi", cwd=tmp_path)
    assert unknown.returncode == 2 and "no model configured" in unknown.stderr, unknown.stderr


def test_a_script_goes_on_with_the_session_its_json_names(tmp_path: Path) -> None:
    """`eukhe run --json` ends with the session and run it started, how long it took and what
    it cost (Claude Code's names); `eukhe run --session <session_id>` goes on with that session,
    its run seeing the first's messages, and the last line of `--events` says the same four."""
    with FauxServer(parse(["The word is heron.", "You said heron."])) as server:
        url = ["--model", "vllm/m", "--base-url", server.url]
        first = eukhe("run", *url, "--json", "remember the word heron", cwd=tmp_path)
        assert first.returncode == 0, first.stderr
        told = json.loads(first.stdout.strip().splitlines()[-1])
        session = told["session_id"]
        then = eukhe("run", "--session", session, "--events", "which word?", cwd=tmp_path)
        sent = json.dumps(server.seen[1].body["messages"])
    assert then.returncode == 0, then.stderr
    assert (told["outcome"], told["answer"]) == ("answered", "The word is heron.")
    assert told["run_id"] == f"{session}/0001"
    assert session in first.stderr  # the session its first line named
    assert isinstance(told["duration_ms"], int) and 0 < told["duration_ms"] < 120_000
    assert told["total_cost_usd"] == 0.0  # the faux model has no price
    assert "remember the word heron" in sent and "The word is heron." in sent  # the first run's messages
    last = json.loads(then.stdout.strip().splitlines()[-1])
    assert (last["type"], last["answer"]) == ("outcome", "You said heron.")
    assert (last["session_id"], last["run_id"]) == (session, f"{session}/0002")
    assert isinstance(last["duration_ms"], int) and last["total_cost_usd"] == 0.0


def test_tools_offers_only_the_tools_named_and_an_unknown_name_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    script = [{"calls": [{"name": "read", "arguments": {"path": "a.txt"}}]}, "It says alpha.", "Hello."]
    with FauxServer(parse(script)) as server:
        url = ["--model", "vllm/m", "--base-url", server.url]
        done = eukhe("run", *url, "--tools", "read, grep", "--json", "read a.txt", cwd=tmp_path)
        offered = [t["function"]["name"] for t in server.seen[0].body["tools"]]
        bare = eukhe("run", *url, "--tools", "", "--json", "hello", cwd=tmp_path)
        none = server.seen[2].body
    assert done.returncode == 0, done.stderr
    assert offered == ["read", "grep"]  # not bash, write, edit, spawn...
    assert json.loads(done.stdout.strip().splitlines()[-1])["answer"] == "It says alpha."
    assert bare.returncode == 0, bare.stderr
    assert not none.get("tools")  # an empty list: no tool offered
    wrong = eukhe("run", "--model", "vllm/m", "--tools", "read,shell", "x", cwd=tmp_path)
    assert wrong.returncode == 2
    assert wrong.stderr.startswith("eukhe run: --tools: no tool is named 'shell'; eukhe's are read, grep,")


def test_a_tool_not_offered_is_not_run_when_the_model_calls_it_anyway(tmp_path: Path) -> None:
    """The attack: `--tools read`, and a hostile model calls `write` and `bash` all the same.
    Neither runs; each call's result says so."""
    calls = [
        {"name": "write", "arguments": {"path": "planted.txt", "content": "x"}, "id": "w"},
        {"name": "bash", "arguments": {"command": "touch bashed.txt"}, "id": "b"},
    ]
    with FauxServer(parse([{"calls": calls}, "Done."])) as server:
        done = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "--tools", "read",
            "--sandbox", "danger-full-access", "--approval", "never", "--json", "go",
            cwd=tmp_path,
        )  # fmt: skip
        results = [m for m in server.seen[1].body["messages"] if m.get("role") == "tool"]
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "planted.txt").exists() and not (tmp_path / "bashed.txt").exists()
    assert len(results) == 2 and all("write" in r["content"] or "bash" in r["content"] for r in results), (
        results
    )
