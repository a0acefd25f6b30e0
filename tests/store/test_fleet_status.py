"""`eukhe status --fleet` (issue 53): the hosts sharing the home's Postgres store, each
executor's lease as the store holds it (its last beat, its lock, gone or live by the fleet's
rule), in 80 columns and as JSON; on SQLite, one machine and no fleet."""

from __future__ import annotations

import json
from pathlib import Path

import sqlalchemy as sa

from eukhe.rules.fleet import LEASE_TTL_S
from eukhe.store.executor_lease import TABLE, ExecutorLease
from eukhe.store.urls import engine_url
from tests.proc import eukhe
from tests.store.postgres import drop, fresh_database, url_of

A = "eukhe:host-a:101:1"
B = "eukhe:host-b:202:2"
GONE = "eukhe:host-c:303:3"


def test_on_sqlite_there_is_no_fleet(tmp_path: Path) -> None:
    done = eukhe("status", "--fleet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stdout.split())
    assert said.startswith("no fleet: the store at sqlite:///") and "is this machine's" in said
    got = json.loads(eukhe("status", "--fleet", "--json", cwd=tmp_path).stdout)
    assert got["fleet"] is False and got["hosts"] == []


def test_each_host_its_executors_and_their_leases_live_or_gone(tmp_path: Path) -> None:
    name = fresh_database()
    url = url_of(name)
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"durable": {"databaseUrl": url}}))
    leases = [ExecutorLease(url, e, e.split(":")[1], int(e.split(":")[2]), e.split(":")[3]) for e in (A, B)]
    engine = sa.create_engine(engine_url(url))
    try:
        with engine.begin() as conn:  # a host that died: its row's last beat past the lease's time
            conn.execute(
                sa.text(
                    f"INSERT INTO {TABLE} (executor, host, pid, started, backend, beat_at, began_at) "
                    "VALUES (:e, 'host-c', 303, '3', 0, now() - make_interval(secs => :old), now())"
                ),
                {"e": GONE, "old": LEASE_TTL_S + 5},
            )
        done = eukhe("status", "--fleet", "--json", cwd=tmp_path, home=home)
        assert done.returncode == 0, done.stderr
        got = json.loads(done.stdout)
        assert got["fleet"] is True and got["store"].endswith(name)
        hosts = {h["host"]: h["executors"] for h in got["hosts"]}
        assert set(hosts) == {"host-a", "host-b", "host-c"}
        a, c = hosts["host-a"][0], hosts["host-c"][0]
        assert (a["executor"], a["pid"], a["lock_held"], a["gone"]) == (A, 101, True, False)
        assert a["beat_age_s"] < LEASE_TTL_S
        assert (c["executor"], c["lock_held"], c["gone"]) == (GONE, False, True)
        assert c["beat_age_s"] > LEASE_TTL_S
        shown = eukhe("status", "--fleet", cwd=tmp_path, home=home, extra={"COLUMNS": "80"})
        assert shown.returncode == 0, shown.stderr
        lines = shown.stdout.splitlines()
        assert all(len(line) <= 80 for line in lines), lines
        text = " ".join(shown.stdout.split())
        assert text.startswith(f"fleet on {got['store']}: 3 hosts, 3 executors, 0 runs in flight")
        assert f"{A}: pid 101, up " in text and "lock held; live" in text
        assert f"{GONE}: pid 303, up " in text and "lock free; gone: its runs go to the next watch" in text
    finally:
        for lease in leases:
            lease.close()
        engine.dispose()
        drop(name)
