"""Durable runs (H4 round count, H4.7, H7.4): the real `eukhe run` process is killed
with SIGKILL, and the next start finishes its run with nothing lost and no unsafe
tool run twice."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from eukhe.ai.faux import FauxServer, parse
from eukhe.run import notes
from eukhe.store import session_runs as store_sessions
from eukhe.store.codec import Codec
from tests.proc import env, eukhe, kill, messages, owner_log, sessions, start, until
from tests.store.postgres import drop, fresh_database, url_of


def bash(command: str) -> dict[str, Any]:
    return {"calls": [{"name": "bash", "arguments": {"command": command}}]}


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def run_args(server: FauxServer, *more: str) -> list[str]:
    return ["run", "--model", "vllm/m", "--base-url", server.url, "--json", *more]


def test_answers_an_unsafe_tool_interrupted_after_intent_with_what_is_durable_only(tmp_path: Path) -> None:
    home, out = tmp_path / "home", tmp_path / "out.txt"
    script = [
        {"results": 0, **bash("echo one >> out.txt; sleep 30")},
        {"results": 1, "text": "done"},
    ]
    with FauxServer(parse(script)) as server:
        p = start(*run_args(server, "go"), cwd=tmp_path, home=home)
        until("the command to start", lambda: lines(out) == ["one"])
        kill(p)
        done = eukhe("resume", cwd=tmp_path, home=home)
    assert done.returncode == 0, done.stderr
    assert "resuming run" in done.stderr and "ended answered" in done.stderr
    assert lines(out) == ["one"]  # the unsafe call was not run again
    [row] = sessions(tmp_path, home)
    assert row["outcome"] == "answered"
    got = messages(row["id"], tmp_path, home)
    assert [m["role"] for m in got] == ["user", "assistant", "tool", "assistant"]
    assert got[2]["content"] == notes.interrupted("bash", restart=True) and got[2]["isError"]
    assert got[3]["content"] == "done"


def test_keeps_the_rounds_a_run_made_across_reopen(tmp_path: Path) -> None:
    """The cap counts the rounds made before the process died: a restarted run does
    not start counting again."""
    home = tmp_path / "home"
    (tmp_path / "a.txt").write_text("a\n")
    read = {"calls": [{"name": "read", "arguments": {"path": "a.txt"}}]}
    script = [{"results": n, **read, **({"chunks": 20, "delay": 0.15} if n == 2 else {})} for n in range(10)]
    with FauxServer(parse(script)) as server:
        p = start(*run_args(server, "--max-tool-rounds", "3", "go"), cwd=tmp_path, home=home)
        until("the third request", lambda: len(server.seen) >= 3)
        kill(p)
        done = eukhe("resume", cwd=tmp_path, home=home)
        sent = len(server.seen)
    assert done.returncode == 0, done.stderr
    assert "ended failed" in done.stderr and "maxToolRounds = 3" in done.stderr
    [w] = runs(home)
    assert sum(m.role == "tool" for m in logged(home, w.workflow_id)) == 3
    assert sent == 4  # three before the kill, the third again after it


CRASH_SCRIPT = [
    {"results": 0, "chunks": 8, "delay": 0.05, **bash("echo one >> out.txt; sleep 0.3")},
    {"results": 1, "chunks": 8, "delay": 0.05, **bash("echo two >> out.txt; sleep 0.3")},
    {"results": 2, "chunks": 8, "delay": 0.05, **bash("echo three >> out.txt; sleep 0.3")},
    {"results": 3, "text": "All three lines are written.", "chunks": 8, "delay": 0.05},
]


@pytest.mark.parametrize("after", [0.0, 0.6, 1.2, 1.8, 2.4, 3.0])
def test_a_run_killed_at_any_moment_ends_answered_with_every_message_once(
    tmp_path: Path, after: float
) -> None:
    """Killed `after` seconds past its first request (in a stream, in a bash call,
    between steps), taken up by the owner (the next run asks it to): answered, each
    message once, each line at most once."""
    home, out = tmp_path / "home", tmp_path / "out.txt"
    with FauxServer(parse(CRASH_SCRIPT)) as server:
        p = start(*run_args(server, "write three lines"), cwd=tmp_path, home=home)
        until("the first request", lambda: len(server.seen) >= 1)
        try:
            p.wait(timeout=after)
        except subprocess.TimeoutExpired:
            kill(p)
        other = tmp_path / "other"  # the next run works elsewhere: only the first one writes out.txt
        other.mkdir()
        done = eukhe(*run_args(server, "and now?"), cwd=other, home=home)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout.splitlines()[-1])["outcome"] == "answered"

        def first() -> list[Any]:
            return [w for w in runs(home) if w.input["args"][0]["prompt"] == "write three lines"]

        until("the first run's end", lambda: first()[0].output is not None, about=lambda: owner_log(home))
    [w] = first()
    assert w.output["outcome"] == "answered", done.stderr
    got = logged(home, w.workflow_id)
    assert [m.role for m in got] == ["user"] + ["assistant", "tool"] * 3 + ["assistant"]
    assert got[-1].content == "All three lines are written."
    for line in ("one", "two", "three"):
        assert lines(out).count(line) <= 1, lines(out)
    assert len(lines(out)) >= 2  # at most the call the kill cut is not run again


def test_two_workers_share_a_postgres_store_and_one_finishes_what_the_other_started(tmp_path: Path) -> None:
    name = fresh_database()
    url = url_of(name)
    try:
        homes = [tmp_path / "one", tmp_path / "two"]
        for h in homes:
            h.mkdir()
            (h / "settings.json").write_text(json.dumps({"durable": {"databaseUrl": url}}))
        out = tmp_path / "out.txt"
        script = [
            {"results": 0, **bash("echo one >> out.txt")},
            {"results": 1, "text": "done", "chunks": 20, "delay": 0.15},
        ]
        with FauxServer(parse(script)) as server:
            p = start(*run_args(server, "go"), cwd=tmp_path, home=homes[0])
            until("the second request", lambda: len(server.seen) >= 2)
            kill(p)
            done = eukhe("resume", cwd=tmp_path, home=homes[1])
            assert done.returncode == 0, done.stderr
            # the first home's owner takes it up when its client dies, or the second's
            # resume does: either way it is finished once, from the shared store
            until("the run's end", lambda: sessions(tmp_path, homes[0])[0]["outcome"] == "answered")
        assert not (homes[1] / "eukhe.sqlite").exists()  # the store is the Postgres database
        assert lines(out) == ["one"]
    finally:
        for h in homes:  # their owners use the database: they end before it is dropped
            eukhe("shutdown", cwd=tmp_path, home=h)
        drop(name)


def test_dbos_stays_out_of_sight_and_out_of_commands_that_run_no_work(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with FauxServer(parse(["fine"])) as server:
        done = eukhe(*run_args(server, "hi"), cwd=tmp_path, home=home)
    assert done.returncode == 0, done.stderr
    seen = (done.stdout + done.stderr).lower()
    assert "dbos" not in seen and "console" not in seen and "conductor" not in seen, seen
    assert "DBOS launched" in (home / "logs" / "dbos.log").read_text()
    probe = (
        "import sys\nfrom eukhe.cli.main import main\n"
        "for argv in (['--help'], ['laws', '--help'], ['demo', '--help'], ['faux', '--help']):\n"
        "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
        "print('DBOS-IMPORTED' if 'dbos' in sys.modules else 'DBOS-NOT-IMPORTED')\n"
    )
    argv = [sys.executable, "-c", probe]
    done = subprocess.run(argv, cwd=tmp_path, env=env(home), capture_output=True, text=True, timeout=120)
    assert done.stdout.strip().endswith("DBOS-NOT-IMPORTED"), done.stdout[-500:] + done.stderr[-2000:]


def test_a_poll_checkpoint_keeps_the_failures_in_a_row_across_a_kill(tmp_path: Path) -> None:
    """A deferred answer whose polls keep failing: a run killed after two failed polls
    and restarted polls the job as often in all as a run never killed (give or take
    the one poll the kill may cut), not as often again: its failures in a row, send
    time and deadline come back from the checkpoint."""
    settings = {"retry": {"maxRetries": 3, "baseDelayMs": 300}}
    script = [{"text": "late", "deferred": {"polls": 1, "pollErrors": 100}}]
    args = ["--api", "openai-responses", "--deferred", "15m", "--poll-interval", "0.05", "go"]

    def polls(server: FauxServer) -> int:
        return sum(s.method == "GET" for s in server.seen)

    homes = [tmp_path / "whole", tmp_path / "killed"]
    for h in homes:
        h.mkdir()
        (h / "settings.json").write_text(json.dumps(settings))
    with FauxServer(parse(script)) as server:
        done = eukhe(*run_args(server, *args), cwd=tmp_path, home=homes[0])
        whole = polls(server)
    assert done.returncode == 1 and "faux poll failure" in done.stderr, done.stderr
    assert whole == settings["retry"]["maxRetries"] + 1
    with FauxServer(parse(script)) as server:
        p = start(*run_args(server, *args), cwd=tmp_path, home=homes[1])
        until("two failed polls", lambda: polls(server) >= 2)
        kill(p)
        killed_at = time.time()
        done = eukhe("resume", cwd=tmp_path, home=homes[1])
        after = polls(server)
        cancelled = [s for s in server.seen if s.method == "POST" and s.path.endswith("/cancel")]
    assert done.returncode == 0, done.stderr
    assert "ended failed" in done.stderr and "faux poll failure" in done.stderr
    assert whole <= after <= whole + 1, (whole, after, done.stderr[:3000])
    assert len(cancelled) == 1  # the job is cancelled once the run gives up on it
    steps = recorded_steps(homes[1])
    assert [n for n, _ in steps].count("start") == 1  # the job was never sent again
    sent_at = next(v for n, v in steps if n == "clock")  # its send time, from which the deadline is counted
    assert sent_at < killed_at


def recorded_steps(home: Path) -> list[tuple[str, Any]]:
    """The (name, output) of every step of the store's one run."""
    [w] = runs(home)
    return steps(home, w.workflow_id)


def runs(home: Path) -> list[Any]:
    """Every run in the store, read as `eukhe sessions` reads it (in this process: faster)."""
    from dbos import DBOSClient

    client = DBOSClient(system_database_url=f"sqlite:///{home / 'eukhe.sqlite'}", serializer=Codec())
    try:
        return list(client.list_workflows())
    finally:
        client.destroy()


def recorded(home: Path, run: str) -> list[dict[str, Any]]:
    """Every step of one run as the store holds it, in order."""
    from dbos import DBOSClient

    client = DBOSClient(system_database_url=f"sqlite:///{home / 'eukhe.sqlite'}", serializer=Codec())
    try:
        return sorted(client.list_workflow_steps(run), key=lambda s: s["function_id"])
    finally:
        client.destroy()


def steps(home: Path, run: str) -> list[tuple[str, Any]]:
    """The (name, value) of every step of one run, in order (the messages riding on it aside)."""
    return [(s["function_name"], store_sessions.value_of(s["output"])) for s in recorded(home, run)]


def logged(home: Path, run: str) -> list[Any]:
    """One run's messages, read from its steps as its transcript is."""
    return store_sessions.messages_of(recorded(home, run))


def test_ctrl_c_aborts_a_durable_run_cleanly_and_it_stays_aborted(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with FauxServer(parse([{"text": "slow answer", "chunks": 50, "delay": 1.0}])) as server:
        p = start(*run_args(server, "go"), cwd=tmp_path, home=home)
        until("the request", lambda: len(server.seen) >= 1)
        p.send_signal(signal.SIGINT)
        code = p.wait(timeout=30)
        assert p.stdout is not None
        last = json.loads(p.stdout.read().splitlines()[-1])
        kill(p)
        again = eukhe("resume", cwd=tmp_path, home=home)
    assert code == 130 and last["outcome"] == "aborted"
    assert "resuming" not in again.stderr  # an aborted run has ended: nothing to finish
    [row] = sessions(tmp_path, home)
    assert row["outcome"] == "aborted"


def test_a_run_started_deaf_to_ctrl_c_stays_so_and_answers(tmp_path: Path) -> None:
    """A script's background job (`eukhe run ... &`) starts with SIGINT ignored, and by POSIX
    it stays so, as a handed run's client does: the script's Ctrl-C leaves the run to end
    answered. (Its run loop took SIGINT for its own, and the run ended aborted.)"""
    home = tmp_path / "home"
    with FauxServer(parse([{"text": "whole answer", "chunks": 20, "delay": 0.1}])) as server:
        p = subprocess.Popen(
            ["sh", "-c", 'trap "" INT; exec "$0" -m eukhe "$@"', sys.executable, *run_args(server, "go")],
            cwd=tmp_path,
            env=env(home),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        until("the request", lambda: len(server.seen) >= 1)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    last = json.loads(out.splitlines()[-1])
    assert (p.returncode, last["outcome"], last["answer"]) == (0, "answered", "whole answer"), err


def test_a_run_left_queued_for_recovery_is_finished_by_the_next_start(tmp_path: Path) -> None:
    """A process that re-enqueued a cut-off run and died before picking it up leaves
    it queued: the next start takes it in and finishes it."""
    from dbos import DBOSClient

    home = tmp_path / "home"
    script = [
        {"results": 0, **bash("echo one >> out.txt")},
        {"results": 1, "text": "done", "chunks": 20, "delay": 0.15},
    ]
    with FauxServer(parse(script)) as server:
        p = start(*run_args(server, "go"), cwd=tmp_path, home=home)
        until("the second request", lambda: len(server.seen) >= 2)
        kill(p)
        client = DBOSClient(system_database_url=f"sqlite:///{home / 'eukhe.sqlite'}", serializer=Codec())
        try:
            [w] = client.list_workflows()
            client.resume_workflow(w.workflow_id)  # queued, as a recovery leaves it
            assert client.list_workflows()[0].status == "ENQUEUED"
        finally:
            client.destroy()
        done = eukhe("resume", cwd=tmp_path, home=home)
    assert done.returncode == 0, done.stderr
    assert "resuming run" in done.stderr and "ended answered" in done.stderr
    [row] = sessions(tmp_path, home)
    assert row["outcome"] == "answered"
    assert lines(tmp_path / "out.txt") == ["one"]


def test_a_run_in_a_live_process_is_never_taken_over(tmp_path: Path) -> None:
    """Another start (here `eukhe resume`) leaves a run whose process lives alone: it
    is not run twice."""
    home = tmp_path / "home"
    with FauxServer(parse([{"text": "slow and single", "chunks": 20, "delay": 0.2}])) as server:
        p = start(*run_args(server, "go"), cwd=tmp_path, home=home)
        until("the request", lambda: len(server.seen) >= 1)
        other = eukhe("resume", cwd=tmp_path, home=home)
        code = p.wait(timeout=60)
        assert p.stdout is not None
        last = json.loads(p.stdout.read().splitlines()[-1])
        kill(p)
        seen = len(server.seen)
    assert other.returncode == 0 and "resuming" not in other.stderr, other.stderr
    assert code == 0 and last["answer"] == "slow and single"
    assert seen == 1


def test_a_recovered_run_and_a_new_one_share_a_one_slot_provider(tmp_path: Path) -> None:
    """The owner finishes the cut-off run while the next start runs its own: both ask
    the owner's admission controller for the provider's one slot, and both end."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"providers": {"vllm": {"concurrency": 1}}}))
    script = [
        {"when": "first", "text": "cut off", "chunks": 20, "delay": 0.2},
        {"when": "first", "text": "first done", "chunks": 5, "delay": 0.1},
        {"when": "second", "text": "second done", "chunks": 5, "delay": 0.1},
    ]
    with FauxServer(parse(script)) as server:
        p = start(*run_args(server, "first"), cwd=tmp_path, home=home)
        until("the first request", lambda: len(server.seen) >= 1)
        kill(p)
        done = eukhe(*run_args(server, "second"), cwd=tmp_path, home=home)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout.splitlines()[-1])["answer"] == "second done"
        until("the recovered run's end", lambda: all(w.output is not None for w in runs(home)))
    assert sorted(w.output["answer"] for w in runs(home)) == ["first done", "second done"]


def test_a_new_run_never_waits_behind_recovered_runs(tmp_path: Path) -> None:
    """A run cut off in a long stream is taken up by the home's owner, and goes back
    to its long work there; the next `eukhe run` of another session answers within
    seconds all the same and ends at once: it never finishes another session's run in
    the foreground. The owner does, with no `eukhe resume`: nothing is lost."""
    home = tmp_path / "home"
    slow = {"when": "first", "text": "slow " * 300, "chunks": 300, "delay": 1.0}  # five minutes
    again = {"when": "first", "text": "first " * 20, "chunks": 20, "delay": 0.25}  # five seconds
    script = [slow, again, {"when": "second", "text": "second done"}]
    with FauxServer(parse(script)) as server:
        p = start(*run_args(server, "first"), cwd=tmp_path, home=home)
        until("the first request", lambda: len(server.seen) >= 1)
        kill(p)
        began = time.monotonic()
        done = eukhe("run", "--model", "vllm/m", "--base-url", server.url, "second", cwd=tmp_path, home=home)
        took = time.monotonic() - began
        assert done.returncode == 0, done.stderr
        assert done.stdout == "second done\n", (done.stdout, done.stderr)
        assert took < 15, (took, done.stderr)
        until("the recovered run's end", lambda: all(w.output is not None for w in runs(home)))
    asked = [str(x.body["messages"][-1]["content"]) for x in server.seen]
    assert sorted(asked) == ["first", "first", "second"]  # back to its long work, once
    assert sorted(w.output["answer"] for w in runs(home)) == ["first " * 20, "second done"]
