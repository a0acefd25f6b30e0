"""Sessions: `eukhe run --session` continues one, `eukhe sessions` lists them,
`eukhe session show` prints one."""

from __future__ import annotations

import json
from pathlib import Path

from eukhe.ai.faux import FauxServer, parse
from tests.proc import eukhe, messages, sessions


def test_a_session_is_continued_listed_and_shown(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert eukhe("sessions", cwd=tmp_path, home=home).stdout.startswith("no sessions yet")
    script = [
        {"thinking": "hmm"},  # no answer: a failed message, kept out of the next run's context
        {"when": "Harness note", "text": "Noted: alpha."},
        {"when": "what was it", "text": "It was alpha."},
    ]
    with FauxServer(parse(script)) as server:
        base = ["run", "--model", "vllm/m", "--base-url", server.url, "--json"]
        first = eukhe(*base, "remember alpha", cwd=tmp_path, home=home)
        assert first.returncode == 0, first.stderr
        [row] = sessions(tmp_path, home)
        second = eukhe(*base, "--session", row["id"], "what was it?", cwd=tmp_path, home=home)
        sent = server.seen[-1].body["messages"]
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout.splitlines()[-1])["answer"] == "It was alpha."
    # the earlier run reaches the next as the chat's view, pinned at the end of the system
    # prompt; the failed reply stays out (it is the harness's text, not the model's)
    assert [m["role"] for m in sent] == ["system", "user"] and sent[1]["content"] == "what was it?"
    assert sent[0]["content"].endswith("<chat>\n0+1|user: remember alpha\n1+1|talk: Noted: alpha.\n</chat>")
    [row] = sessions(tmp_path, home)
    assert row["runs"] == 2 and row["lastPrompt"] == "what was it?" and row["outcome"] == "answered"
    got = messages(row["id"], tmp_path, home)
    assert [(m["role"], m["isError"]) for m in got] == [
        ("user", False),
        ("assistant", True),  # the failed reply stays in the transcript, out of the context
        ("assistant", False),
        ("user", False),
        ("assistant", False),
    ]
    from eukhe.store.session_runs import messages_of
    from tests.store.test_durable import recorded, runs

    second = max(runs(home), key=lambda w: w.workflow_id)
    found = recorded(home, second.workflow_id)
    carried = [(s["function_name"], [m.role for m in messages_of([s])]) for s in found]
    # the pinned view, the subagents' reports waiting for the session (none), the reply with
    # the prompt riding on it, the chat's log with the answer: no step is a message's own
    assert carried == [("view", []), ("reports", []), ("model", ["user"]), ("log", ["assistant"])], carried
    listed = eukhe("sessions", cwd=tmp_path, home=home).stdout
    assert row["id"] in listed and "2 runs" in listed and "answered" in listed
    shown = eukhe("session", "show", row["id"], cwd=tmp_path, home=home).stdout
    assert "── run " + row["id"] + "/0001 (answered)" in shown and "assistant (failed):" in shown


def test_a_session_that_does_not_exist_or_cannot_be_named_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with FauxServer(parse(["hi"])) as server:
        assert (
            eukhe(
                "run", "--model", "vllm/m", "--base-url", server.url, "x", cwd=tmp_path, home=home
            ).returncode
            == 0
        )
        bad = eukhe(
            "run",
            "--model",
            "vllm/m",
            "--base-url",
            server.url,
            "--session",
            "a b",
            "x",
            cwd=tmp_path,
            home=home,
        )
    assert bad.returncode == 2 and "session id 'a b'" in bad.stderr
    missing = eukhe("session", "show", "nope", cwd=tmp_path, home=home)
    assert missing.returncode == 1 and "no session 'nope'" in missing.stderr


def test_a_store_url_that_is_not_a_string_is_a_clear_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"durable": {"databaseUrl": 5}}))
    done = eukhe(
        "run", "--model", "vllm/m", "--base-url", "http://127.0.0.1:9/v1", "x", cwd=tmp_path, home=home
    )
    assert done.returncode == 2 and "durable.databaseUrl=5" in done.stderr


def test_a_store_that_is_not_a_database_is_a_clear_error_and_is_left_as_it_was(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    junk = bytes(range(256)) * 20
    (home / "eukhe.sqlite").write_bytes(junk)
    for args in (["run", "--model", "vllm/m", "--base-url", "http://127.0.0.1:9/v1", "x"], ["sessions"]):
        done = eukhe(*args, cwd=tmp_path, home=home)
        assert done.returncode == 2, done.stderr
        assert done.stderr.strip().endswith("file is not a database"), done.stderr
        assert "Traceback" not in done.stderr and "http" not in done.stderr.replace("http://127.0.0.1:9", "")
    assert (home / "eukhe.sqlite").read_bytes() == junk
