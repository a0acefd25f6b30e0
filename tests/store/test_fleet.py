"""The fleet (issue 53): two hosts (each its own host name, `unshare --uts`) with a home
each on one Postgres store. Host A dies in the middle of a run, or is cut off from the
store while it lives; host B's owner takes the run up within the bound and it ends,
each step recorded once."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from eukhe.ai.faux import FauxServer, parse
from eukhe.client.handoff import OWNER_FORK
from eukhe.client.protocol import log_path
from eukhe.owner.fleet_watch import START_S
from eukhe.rules.fleet import BEAT_S, FENCE_S, TAKE_BOUND_S
from eukhe.store.session_runs import WORKFLOW
from tests.proc import DEADLINE, eukhe, until
from tests.store.postgres import drop, fresh_database, url_of

pytestmark = pytest.mark.xdist_group("postgres-heavy")  # many connections: never beside the others


def _round(n: int) -> dict[str, Any]:
    call = {"name": "bash", "arguments": {"command": f"echo {n} >> out.txt; sleep 1"}}
    return {"results": n, "calls": [call]}


def _slow(gate: Path) -> list[dict[str, Any]]:
    """Five rounds, each a slow bash call: a kill or a cut falls in the middle of the run.
    Its last answer waits for `gate` to exist: the taker's status is looked at before."""
    last = {"results": 5, "text": "five lines written", "stallAfter": 0, "stallUntil": str(gate)}
    return [*(_round(n) for n in range(5)), last]


def _hosts_allowed() -> None:
    if shutil.which("unshare") is None:
        pytest.skip("no `unshare` here: hosts are simulated with their own host names")
    done = subprocess.run(["unshare", "--uts", "sh", "-c", "hostname eukhe-probe"], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"`unshare --uts` is not allowed here (it needs root): {done.stderr.decode().strip()}")


def _home(path: Path, url: str) -> Path:
    path.mkdir()
    (path / "settings.json").write_text(json.dumps({"durable": {"databaseUrl": url}}))
    return path


def _on(
    host: str, home: Path, cwd: Path, *argv: str, log: Path | None = None, **extra: str
) -> subprocess.Popen[str]:
    """`argv` (a Python module and its arguments) as a process of host `host`: its own
    host name, in a session of its own, its home `home`; its output to `log` if given."""
    env = {**os.environ, "EUKHE_HOME": str(home), OWNER_FORK: "", "EUKHE_WARM": "0", **extra}
    return subprocess.Popen(
        ["unshare", "--uts", "sh", "-c", f'hostname {host} && exec "$@"', "sh", sys.executable, "-m", *argv],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE if log is None else log.open("a"),
        stderr=subprocess.PIPE if log is None else subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _machine(root: int) -> list[int]:
    """Every process in the same host-name namespace as `root`: the simulated machine."""
    try:
        ns = os.readlink(f"/proc/{root}/ns/uts")
    except OSError:
        return []
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if os.readlink(entry / "ns" / "uts") == ns:
                    found.append(int(entry.name))
    return found


def _power_off(root: int) -> None:
    """Host A loses power: every process of it killed at once (its owner's too)."""
    for _ in range(20):
        procs = _machine(root)
        if not procs:
            return
        for pid in procs:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


class Store:
    """The test's own look at the shared store (psycopg, autocommit)."""

    def __init__(self, name: str) -> None:
        import psycopg

        self.conn = psycopg.connect(url_of(name), autocommit=True, connect_timeout=5)

    def one(self, sql: str, *args: Any) -> Any:
        row = self.conn.execute(sql, args).fetchone()
        return None if row is None else row[0]

    def run(self) -> tuple[str, str, str | None] | None:
        """The root run's workflow: its id, status and executor."""
        row = self.conn.execute(
            "SELECT workflow_uuid, status, executor_id FROM dbos.workflow_status "
            "WHERE name = %s ORDER BY created_at LIMIT 1",
            (WORKFLOW,),
        ).fetchone()
        return None if row is None else (str(row[0]), str(row[1]), row[2])

    def steps(self, wid: str) -> tuple[int, int]:
        """The run's recorded steps, and how many distinct places (function ids) they hold."""
        row = self.conn.execute(
            "SELECT count(*), count(DISTINCT function_id) FROM dbos.operation_outputs "
            "WHERE workflow_uuid = %s",
            (wid,),
        ).fetchone()
        assert row is not None
        return int(row[0]), int(row[1])

    def cut(self, host: str) -> int:
        """Every connection of `host`'s processes ended (a partition)."""
        return int(
            self.one(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() "  # another test's hosts are not this one's
                "AND (application_name LIKE %s OR application_name LIKE %s)",
                f"eukhe:{host}:%",
                f"eukhe-watch:{host}:%",
            )
        )


@pytest.fixture
def fleet(tmp_path: Path) -> Any:
    _hosts_allowed()
    name = fresh_database()
    procs: list[subprocess.Popen[str]] = []
    try:
        yield name, procs
    finally:
        for p in procs:
            _power_off(p.pid)
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                p.kill()
                p.communicate(timeout=DEADLINE)
        drop(name)


def _start(
    tmp_path: Path, name: str, procs: list[subprocess.Popen[str]], server: FauxServer, survivors: list[str]
) -> Path:
    """Each survivor host's owner, up for the whole test (an owner ends idle a while after its
    last client), its output in `owner-HOST.log`; then host A's run. A's home."""
    url = url_of(name)
    for host in survivors:
        home, log = _home(tmp_path / host, url), tmp_path / f"owner-{host}.log"
        procs.append(_on(host, home, tmp_path, "eukhe.owner", log=log, EUKHE_OWNER_IDLE_MS="600000"))
    a = _home(tmp_path / "hostA", url)
    run = ["eukhe", "run", "--model", "vllm/m", "--base-url", server.url, "--json", "write five lines"]
    procs.append(_on("hostA", a, tmp_path, *run))
    return a


def _log(tmp_path: Path, *hosts: str) -> str:
    """What the hosts' owners said (host A's started by its client, the others by the test)."""
    said = []
    for host in hosts:
        path = log_path(tmp_path / host) if host == "hostA" else tmp_path / f"owner-{host}.log"
        said.append(f"{host}: " + (path.read_text(errors="replace")[-3000:] if path.exists() else "(no log)"))
    return "\n".join(said)


def _taken_and_ended(
    db: Store, tmp_path: Path, survivors: list[str], since: float, victim: str | None = None
) -> tuple[str, float, str]:
    """Wait for a survivor to take the run (its executor one of theirs) within the bound,
    then for its end (its last answer let go: `gate`); the run's id, how long the take
    took and which host took it."""
    taken: list[tuple[float, str]] = []
    decided: list[float] = []

    def by_survivor() -> bool:
        row = "SELECT count(*) FROM eukhe_executors WHERE executor = %s"
        held = victim is not None and db.one(row, victim)
        if victim is not None and not decided and not held:
            decided.append(time.monotonic() - since)  # a taker found its lease gone and cut it
        got = db.run()
        host = (got[2] or "").split(":")[1] if got is not None and got[2] else ""
        if host in survivors:
            taken.append((time.monotonic() - since, host))
            return True
        return False

    about = lambda: _log(tmp_path, *survivors)  # noqa: E731
    until("a survivor to take the run", by_survivor, deadline=TAKE_BOUND_S + START_S + 10, about=about)
    took, host = taken[0]
    if victim is not None:  # the rule's bound: the taker's decision (its watch found the lease gone)
        assert decided and decided[0] <= TAKE_BOUND_S, f"{victim} cut {decided} s after the kill"
        # while it runs there, the taker's status says where it comes from
        done = eukhe("status", "--json", cwd=tmp_path, home=tmp_path / host)
        got = {r["run"]: r.get("taken", "") for r in json.loads(done.stdout)["runs"]}
        assert any("taken up from host hostA's executor" in t for t in got.values()), done.stdout
    (tmp_path / "gate").touch()
    until("the run's end", lambda: (db.run() or ("", "", None))[1] == "SUCCESS", about=about)
    wid = (db.run() or ("", "", None))[0]
    return wid, took, host


def test_a_run_whose_host_dies_is_taken_by_another_host_within_the_bound(tmp_path: Path, fleet: Any) -> None:
    """Two survivors watch: one of them takes the run, which runs once."""
    name, procs = fleet
    survivors = ["hostB", "hostC"]
    gate = tmp_path / "gate"
    with FauxServer(parse(_slow(gate))) as server:
        _start(tmp_path, name, procs, server, survivors)
        db = Store(name)
        until("the run's third round", lambda: len(server.seen) >= 3, about=lambda: _log(tmp_path, "hostA"))
        time.sleep(0.4)  # inside the third round's bash call
        victim = (db.run() or ("", "", None))[2]
        assert victim is not None and victim.startswith("eukhe:hostA:"), victim
        _power_off(procs[-1].pid)
        killed = time.monotonic()
        wid, took, host = _taken_and_ended(db, tmp_path, survivors, killed, victim)
    bound = TAKE_BOUND_S + START_S  # the rule's, and the taker's start
    assert took <= bound, f"at work on {host} {took:.1f} s after the kill (bound {bound} s)"
    recorded, places = db.steps(wid)
    assert recorded == places, "a step recorded twice"
    lines = (tmp_path / "out.txt").read_text().splitlines()
    assert all(lines.count(str(n)) <= 1 for n in range(5)), lines  # the cut call is not run again
    assert {"3", "4"} <= set(lines)  # the rounds after the kill ran on the survivor
    log = _log(tmp_path, host)
    assert f"resuming run {wid}, taken up from host hostA's executor eukhe:hostA:" in log, log


def test_a_host_cut_off_from_the_store_stops_and_another_takes_its_run(tmp_path: Path, fleet: Any) -> None:
    name, procs = fleet
    gate = tmp_path / "gate"
    gate.touch()  # no wait at its end
    with FauxServer(parse(_slow(gate))) as server:
        _start(tmp_path, name, procs, server, ["hostB"])
        a = procs[-1]
        db = Store(name)
        until("the run's second round", lambda: len(server.seen) >= 2, about=lambda: _log(tmp_path, "hostA"))
        cut_at = time.monotonic()
        stopped: list[float] = []

        def partitioned() -> bool:  # host A stays cut off from the store while it lives
            db.cut("hostA")
            if not stopped and a.poll() is not None:
                stopped.append(time.monotonic() - cut_at)
            got = db.run()
            return got is not None and (got[2] or "").startswith("eukhe:hostB:")

        about = lambda: _log(tmp_path, "hostA", "hostB")  # noqa: E731
        until("host B to take the run", partitioned, deadline=TAKE_BOUND_S + START_S + 10, about=about)
        assert stopped, "host A's run went on although cut off from the store"
        _, err = a.communicate(timeout=DEADLINE)
        wid, _, _ = _taken_and_ended(db, tmp_path, ["hostB"], cut_at)
    assert a.returncode == 75, err
    assert "this process lost its lease on the shared store" in err, err
    assert stopped[0] < FENCE_S + BEAT_S + 2, f"host A stopped {stopped[0]:.1f} s after the cut"
    recorded, places = db.steps(wid)
    assert recorded == places, "a step recorded twice"
    lines = (tmp_path / "out.txt").read_text().splitlines()
    assert all(lines.count(str(n)) <= 1 for n in range(5)), lines


@pytest.fixture
def database() -> Any:
    name = fresh_database()
    try:
        yield name
    finally:
        drop(name)


def test_a_lease_is_held_while_it_beats_and_freed_at_close(database: str) -> None:
    """In one process, no host simulated: the row and the lock while it lives, neither after."""
    from eukhe.store.executor_lease import ExecutorLease, Fleet, gone_on

    url = url_of(database)
    me = "eukhe:hostT:1:1"
    lease = ExecutorLease(url, me, "hostT", 1, "1")
    watcher = Fleet(url, "eukhe-watch:test:1")
    try:
        assert lease.may_record()
        assert gone_on(watcher, [me]) == {}  # its row beats and its lock is held
        assert set(gone_on(watcher, ["eukhe:old:2:2"])) == {"eukhe:old:2:2"}  # no row, no lock: gone
        db = Store(database)
        # another host's executor whose beats stopped 11 s ago and whose lock is free: gone
        db.conn.execute(
            "INSERT INTO eukhe_executors VALUES ('eukhe:hostX:3:3', 'hostX', 3, '3', 0, "
            "now() - interval '11 seconds', now() - interval '1 minute')"
        )
        # and one whose last beat is 2 s old: not yet, however its lock looks from here
        db.conn.execute(
            "INSERT INTO eukhe_executors VALUES ('eukhe:hostY:4:4', 'hostY', 4, '4', 0, "
            "now() - interval '2 seconds', now() - interval '1 minute')"
        )
        got = gone_on(watcher, ["eukhe:hostX:3:3", "eukhe:hostY:4:4"])
        assert list(got) == ["eukhe:hostX:3:3"] and "gone since" in got["eukhe:hostX:3:3"], got
        assert watcher.prune(["eukhe:hostX:3:3"]) == []  # a run in flight: its row stays, for the taker
        assert watcher.prune([]) == ["eukhe:hostX:3:3"]  # none: the row of a gone executor goes
        assert db.one("SELECT count(*) FROM eukhe_executors") == 2  # the live ones stay
        assert db.cut("hostT") == 1  # its lease's connection, ended as a partition would
        lease.beat()
        assert not lease.may_record() and lease.state.lost, lease.why
    finally:
        lease.close()
    assert db.one("SELECT count(*) FROM eukhe_executors WHERE executor = %s", me) == 1  # lost: left
    lease = ExecutorLease(url, me, "hostT", 1, "1")  # the same name again (a test's): held anew
    lease.close()
    assert db.one("SELECT count(*) FROM eukhe_executors WHERE executor = %s", me) == 0  # closed: gone
    assert set(gone_on(watcher, [me])) == {me}
    watcher.close()
    db.conn.close()
