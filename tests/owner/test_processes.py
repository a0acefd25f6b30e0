"""The owner with real `eukhe` processes as its clients, as two terminals would use
it: admission shared across processes (H3), the root-turn lease (H6.2)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from eukhe.ai.faux import FauxServer, parse
from eukhe.client import protocol
from eukhe.client.client import alive, read_info
from eukhe.client.handoff import OWNER_FORK
from eukhe.store.codec import Codec
from tests.proc import DEADLINE, Reader, env, eukhe, owner_log, start, until

ONE_SLOT = {"providers": {"vllm": {"concurrency": 1}}}


@pytest.fixture(autouse=True)
def _real_owners(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """These tests are about the owner's own process, as a user's first run starts it
    (`python -P -m eukhe.owner`): none is forked by the tests' template."""
    monkeypatch.setenv(OWNER_FORK, "")
    yield


def run_args(server: FauxServer, prompt: str, *more: str) -> list[str]:
    return ["run", "--model", "vllm/m", "--base-url", server.url, *more, prompt]


def settings(home: Path, value: dict[str, object]) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(json.dumps(value), encoding="utf-8")


def python(code: str, home: Path, *args: str, cwd: Path) -> subprocess.Popen[str]:
    """Another process of the home, running `code` (a client of its owner)."""
    return subprocess.Popen(
        [sys.executable, "-c", code, str(home), *args],
        cwd=cwd,
        env=env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


COMPACTOR = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path
    from eukhe.ai.models import provider_for, resolve
    from eukhe.ai.request import Message, Request
    from eukhe.memory.compactor import asker
    from eukhe.client.admission import RemoteRegistry

    async def main():
        home, url = Path(sys.argv[1]), sys.argv[2]
        registry = RemoteRegistry(home)
        registry.configure(json.loads((home / "settings.json").read_text()))
        route = resolve("vllm/m", {}, url, None)
        ask = asker(provider_for(route), registry)
        reply = await ask(Request(model="m", messages=[Message(role="user", content="summarise: build")]))
        print("compactor:", reply.all_text if reply.failure is None else reply.failure.message, flush=True)

    asyncio.run(main())
    """
)


def test_a_session_turn_in_a_terminal_preempts_a_compactor_request_of_another_process(tmp_path: Path) -> None:
    """H3 across processes, on a one-slot provider: a compactor request (background)
    of one process streams; a terminal's `eukhe run` asks the same provider; the
    owner preempts the compactor, the turn is answered first, and the compactor asks
    again and gets its line after."""
    home = tmp_path / "home"
    settings(home, ONE_SLOT)
    script = [
        {"when": "summarise", "text": "slow " * 600, "chunks": 600, "delay": 0.05},  # thirty seconds
        {"when": "hello", "text": "turn answered"},
        {"when": "summarise", "text": "the line"},
    ]
    with FauxServer(parse(script)) as server:
        compactor = python(COMPACTOR, home, server.url, cwd=tmp_path)
        r = Reader(compactor)
        try:
            until("the compactor's request", lambda: len(server.seen) >= 1)
            began = time.monotonic()
            done = eukhe(*run_args(server, "hello"), cwd=tmp_path, home=home)
            took = time.monotonic() - began
            assert done.returncode == 0, done.stderr
            assert done.stdout == "turn answered\n"
            until("the compactor's line", lambda: any(x.startswith("compactor:") for x in r.out))
        finally:
            if compactor.poll() is None:
                compactor.kill()
            compactor.wait(timeout=DEADLINE)
    assert r.to_end().out == ["compactor: the line\n"], (r.out, r.err)
    first, turn, again = server.seen[:3]
    assert "summarise" in json.dumps(first.body) and first.hung_up  # preempted mid-stream
    assert "hello" in json.dumps(turn.body)
    assert "summarise" in json.dumps(again.body)
    assert took < 25, took  # the turn never waited for the thirty-second compactor stream


def test_a_second_terminal_waits_for_the_lease_and_takes_it_when_the_first_finishes(tmp_path: Path) -> None:
    """Two terminals, two sessions: the second's turn waits for the first's, says for
    whose turn it waits and how to end the wait, and runs once the first has ended."""
    home = tmp_path / "home"
    script = [
        # long enough for the second process to start and ask, however slow its start
        {"when": "one", "text": "first " + "f " * 150, "chunks": 150, "delay": 0.1},  # its own line
        {"when": "two", "text": "second done"},
    ]
    with FauxServer(parse(script)) as server:
        first = start(*run_args(server, "one", "--session", "s-one"), cwd=tmp_path, home=home)
        until("the first turn's request", lambda: len(server.seen) >= 1)
        second = start(*run_args(server, "two", "--session", "s-two"), cwd=tmp_path, home=home)
        r1, r2 = Reader(first), Reader(second)
        try:
            until(
                "the second turn's wait", lambda: any("waiting for the root-turn lease" in x for x in r2.err)
            )
            line = next(x for x in r2.err if "waiting for the root-turn lease" in x)
            assert "session s-one, run s-one/" in line and "Ctrl-C ends this wait" in line
            assert len(server.seen) == 1  # nothing of the second turn went out yet
            assert first.wait(timeout=DEADLINE) == 0 and second.wait(timeout=DEADLINE) == 0
        finally:
            for p in (first, second):
                if p.poll() is None:
                    p.kill()
    assert "first" in "".join(r1.to_end().out)
    assert "second done\n" in r2.to_end().out
    assert [str(s.body["messages"][-1]["content"]) for s in server.seen] == ["one", "two"]


def test_a_turn_that_waits_for_the_lease_streams_the_wait_with_its_holder_and_its_end(tmp_path: Path) -> None:
    """`eukhe run --events` of a turn that waits for another terminal's: a "lease" event
    whose wait names the holder (its session, run and since; no deadline), then
    "waited" for the lease once the holder's turn ends (Ctrl-C there), before the run
    starts."""
    home = tmp_path / "home"
    script = [
        {"when": "one", "text": "never", "stallAfter": 0, "stall": 3600},
        {"when": "two", "text": "second done"},
    ]
    with FauxServer(parse(script)) as server:
        first = start(*run_args(server, "one", "--session", "s-one"), cwd=tmp_path, home=home)
        until("the first turn's request", lambda: len(server.seen) >= 1)
        second = start(*run_args(server, "two", "--session", "s-two", "--events"), cwd=tmp_path, home=home)
        r2 = Reader(second)
        try:
            until("the second turn's wait", lambda: any('"type": "lease"' in x for x in r2.out))
            first.send_signal(signal.SIGINT)  # Ctrl-C in the first terminal: its turn ends aborted
            assert first.wait(timeout=DEADLINE) == 130
            assert second.wait(timeout=DEADLINE) == 0, r2.err
        finally:
            for p in (first, second):
                if p.poll() is None:
                    p.kill()
        until("the second's outcome", lambda: any('"type": "outcome"' in x for x in r2.out))
    events = [json.loads(x) for x in r2.out if x.strip()]
    kinds = [e["type"] for e in events]
    lease = events[kinds.index("lease")]
    assert lease["wait"] == "lease" and "deadline" not in lease
    assert "session s-one, run s-one/" in lease["text"] and "Ctrl-C ends this wait" in lease["text"]
    holder = lease["holder"]
    assert holder["session"] == "s-one" and holder["run"].startswith("s-one/")
    assert isinstance(holder["since"], float) and holder["since"] <= lease["at"]
    waited = kinds.index("waited", kinds.index("lease"))
    assert events[waited]["wait"] == "lease" and waited < kinds.index("run")
    assert events[-1]["answer"] == "second done"


def test_a_client_killed_in_its_turn_frees_the_lease_and_its_slot(tmp_path: Path) -> None:
    """SIGKILL the terminal that holds the lease and the provider's one slot: the next
    terminal's turn runs at once (its owner ended both with the connection)."""
    home = tmp_path / "home"
    settings(home, ONE_SLOT)
    script = [
        {"when": "one", "stallAfter": 1},  # holds its slot, silent, for an hour
        {"when": "two", "text": "second done"},
    ]
    with FauxServer(parse(script)) as server:
        first = start(*run_args(server, "one", "--session", "s-one"), cwd=tmp_path, home=home)
        until("the first turn's request", lambda: len(server.seen) >= 1)
        info = read_info(home)
        assert info is not None and alive(int(info["pid"]))
        first.kill()
        first.wait(timeout=DEADLINE)
        began = time.monotonic()
        done = eukhe(*run_args(server, "two", "--session", "s-two"), cwd=tmp_path, home=home)
        assert done.returncode == 0, done.stderr
        assert "second done" in done.stdout
        assert time.monotonic() - began < 15
        assert "waiting for the root-turn lease" not in done.stdout + done.stderr
    assert protocol.socket_path(home).exists()


HOLDER = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from eukhe.client.admission import RemoteRegistry

    async def main():
        registry = RemoteRegistry(Path(sys.argv[1]))
        registry.configure({"providers": {"vllm": {"concurrency": 1}}})
        async with registry.slot("vllm", interactive=True):
            print("held", flush=True)
            await asyncio.sleep(float(sys.argv[2]))
        print("released", flush=True)

    asyncio.run(main())
    """
)


def test_a_queue_longer_than_the_idle_deadline_is_not_a_stall(tmp_path: Path) -> None:
    """H6.3 across processes: another process holds the one slot (a session request)
    for 5 s; a terminal's turn with a 2 s idle deadline queues behind it at the owner,
    and answers with no stall, no retry and no note: its idle clock starts with the
    slot. (A 300 ms deadline was missed by the faux server's first chunk itself, in a
    busy worker, and a 1 s one once in a loaded make test: the claim is the same at
    twice the scale.)"""
    home = tmp_path / "home"
    settings(home, {**ONE_SLOT, "retry": {"provider": {"streamIdleTimeoutMs": 2000}}})
    holder = python(HOLDER, home, "5.0", cwd=tmp_path)
    r = Reader(holder)
    try:
        until("the holder's slot", lambda: r.out == ["held\n"])
        with FauxServer(parse([{"text": "after the queue"}])) as server:
            began = time.monotonic()
            done = eukhe(*run_args(server, "hello", "--json"), cwd=tmp_path, home=home)
            took = time.monotonic() - began
    finally:
        holder.wait(timeout=DEADLINE)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])
    assert (out["outcome"], out["answer"], out["retries"], out["notes"]) == (
        "answered",
        "after the queue",
        0,
        0,
    )
    assert len(server.seen) == 1 and took > 2.5  # it did queue, past its idle deadline
    assert r.to_end().out == ["held\n", "released\n"]


def test_a_client_killed_mid_run_loses_nothing_the_owner_finishes_its_run(tmp_path: Path) -> None:
    """SIGKILL a terminal in the middle of its run's stream: its owner sees the
    connection close with the run in flight, recovers it and runs it to its answer,
    with no `eukhe resume` and every message once."""
    from tests.proc import messages, sessions

    home = tmp_path / "home"
    script = [
        {"when": "cut", "text": "never whole " * 50, "chunks": 50, "delay": 0.2},  # ten seconds
        {"when": "cut", "text": "finished by the owner"},
    ]
    with FauxServer(parse(script)) as server:
        p = start(*run_args(server, "cut", "--session", "s-cut"), cwd=tmp_path, home=home)
        until("the run's request", lambda: len(server.seen) >= 1)
        info = read_info(home)
        assert info is not None
        p.kill()
        p.wait(timeout=DEADLINE)
        until("the owner's second request", lambda: len(server.seen) >= 2)

        def ended() -> bool:
            return any(s["id"] == "s-cut" and s["outcome"] == "answered" for s in sessions(tmp_path, home))

        until("the run's end", ended)
    assert alive(int(info["pid"]))  # the same owner did it
    said = [m for m in messages("s-cut", tmp_path, home) if m["role"] == "assistant"]
    assert [m["content"] for m in said] == ["finished by the owner"]
    assert "a client died with s-cut/" in protocol.log_path(home).read_text()


def test_a_run_the_owner_takes_up_is_run_by_the_owner_not_by_a_terminal_at_work(tmp_path: Path) -> None:
    """A dead client's run, put back on DBOS's recovery queue by the owner, is taken
    from it by the owner alone: a terminal whose own turn is under way at that moment
    never picks it up (it would end with its turn, and leave the run cut off again)."""
    from dbos import DBOSClient

    from tests.proc import sessions

    home = tmp_path / "home"
    script = [
        {"when": "cut", "text": "never whole " * 50, "chunks": 50, "delay": 0.2},  # killed in it
        {"when": "cut", "text": "finished by the owner"},
        {"when": "busy", "text": "busy " * 40, "chunks": 40, "delay": 0.2},  # eight seconds
    ]
    with FauxServer(parse(script)) as server:
        cut = start(*run_args(server, "cut", "--session", "s-cut"), cwd=tmp_path, home=home)
        until("the run's request", lambda: len(server.seen) >= 1)
        busy = start(*run_args(server, "busy", "--session", "s-busy"), cwd=tmp_path, home=home)
        r = Reader(busy)
        try:
            until("the busy turn's wait", lambda: any("waiting for the root-turn lease" in x for x in r.err))
            info = read_info(home)
            assert info is not None
            cut.kill()
            cut.wait(timeout=DEADLINE)
            assert busy.wait(timeout=DEADLINE) == 0, "".join(r.out)

            def ended() -> bool:
                rows = sessions(tmp_path, home)
                return any(x["id"] == "s-cut" and x["outcome"] == "answered" for x in rows)

            until("the cut run's end", ended)
        finally:
            for p in (cut, busy):
                if p.poll() is None:
                    p.kill()
    client = DBOSClient(system_database_url=f"sqlite:///{home / 'eukhe.sqlite'}", serializer=Codec())
    try:
        [w] = [w for w in client.list_workflows() if w.workflow_id.startswith("s-cut/")]
    finally:
        client.destroy()
    assert str(w.executor_id).split(":")[2] == str(info["pid"]), (w.executor_id, info)


def test_an_owner_whose_chat_asks_no_model_loads_no_provider_sdk(tmp_path: Path) -> None:
    """A run names its model to the owner, for the compactor; the owner makes that provider
    at the compactor's first request, not at once: its chat built no line with a model here,
    so the OpenAI SDK (0.3 s and 30 MB an owner) never loaded. Python's import trace, in the
    owner's log, says what it loaded."""
    with FauxServer(parse(["done"])) as server:
        done = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "hi",
            cwd=tmp_path, extra={"PYTHONPROFILEIMPORTTIME": "1"},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        stop = eukhe("shutdown", cwd=tmp_path)
        assert stop.returncode == 0, stop.stderr
    log = protocol.log_path(tmp_path / "home").read_text()
    loaded = {line.split("|")[-1].strip() for line in log.splitlines() if line.startswith("import time:")}
    assert "eukhe.owner.chat_host" in loaded  # the trace is there
    assert not {m for m in loaded if m.split(".")[0] in ("openai", "anthropic")}


def test_a_strangers_repository_cannot_put_its_own_eukhe_into_the_owner(tmp_path: Path) -> None:
    """The attack: a cloned repository holds an `eukhe/` package of its own. The first
    `eukhe run` in it starts the home's owner; had the owner started as `python -m
    eukhe.owner` in the project's folder, Python would have put that folder first on its
    path and run the stranger's package as the user, with no approval and no sandbox. The
    warm template the owner starts beside itself is kept from it the same way."""
    project, home = tmp_path / "clone", tmp_path / "home"
    pwned = tmp_path / "PWNED"
    (project / "eukhe" / "owner").mkdir(parents=True)
    (project / "eukhe" / "warm").mkdir(parents=True)
    names = ("__init__.py", "owner/__init__.py", "owner/__main__.py", "warm/__init__.py", "warm/__main__.py")
    for name in names:
        (project / "eukhe" / name).write_text(f"open({str(pwned)!r}, 'a').write({name!r} + '\\n')\n")
    warm = {"EUKHE_WARM": "1", "EUKHE_OWNER_IDLE_MS": "60000"}
    with FauxServer(parse([{"text": "done"}])) as server:
        done = eukhe(*run_args(server, "hi"), cwd=project, home=home, extra=warm)
    try:
        until("the warm template", lambda: protocol.warm_path(home).exists(), about=lambda: owner_log(home))
    finally:
        eukhe("shutdown", cwd=project, home=home)
    assert not pwned.exists(), f"the stranger's package ran in the owner: {pwned.read_text()}"
    assert done.returncode == 0, done.stderr
    assert "done" in done.stdout
