"""A fleet on one Postgres store (issue 53): K hosts × N concurrent runs of M rounds, then
the same with random host kills.

    .venv/bin/python bench/fleet.py [--hosts K] [--runs N] [--rounds M] [--kills X] [--seed S] [--smoke]

On a fresh database of the Postgres at 127.0.0.1:5432 (user postgres, trust; made here,
dropped at the end; `EUKHE_TEST_POSTGRES_URL` names another server), against one faux
model server in this process (M-1 rounds of a `read` call, then the answer). Each host is
a home of its own whose settings name the database (`durable.databaseUrl`), with its owner
and its runner, both under the host's own host name (`unshare --uts`, as root; `nsenter`
puts the runner beside the owner). Without `unshare` it says so and every host has this
machine's name.

The runner is this file as `--runner`: one executor process of the home (a runtime as
`eukhe run` opens it, its lease on the store) that runs every run it is given at once.
Not N `eukhe run`s: those are a user's turns, which the home's root-turn lease (H6.2)
runs one at a time, so N of them in one home would measure a queue, not the store.

- `alone`: one run on Postgres, by itself;
- `sqlite`: N runs at once in one home on SQLite (one machine, no fleet);
- `fleet`: K×N runs at once, N on each host;
- `kills`: each host keeps N runs going while X times a random host loses power (SIGKILL
  to every process of it: its runner and its owner) and comes back a few seconds later
  (its owner started again, and its runner while kills are to come). The runs started,
  those in the store, ended and lost (0 expected), within a deadline: none left PENDING.

A round is the time between one run's consecutive model requests as the faux server sees
them (each run's prompt carries a marker): its model reply, its tool call and what the
store records of it. Prints rounds a second, p50 and p99 of a round, as ratios against
`alone` and `sqlite` measured in the same run; and, to see the bottleneck, the CPU-seconds
of Postgres, the owners, the runners, this process (the faux model) and the machine, the
owners' CPU while the fleet is idle, and the most connections Postgres held and whose.
Nothing here asserts a time; `--smoke` (2 hosts × 2 runs × 2 rounds, 1 kill) runs every
path once, and without a Postgres server it says so in one line and exits 0.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import resource
import secrets
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eukhe.ai.faux import FauxServer, parse
from eukhe.client import protocol
from eukhe.client.handoff import OWNER_FORK
from eukhe.rules.fleet import TAKE_BOUND_S
from eukhe.store.session_runs import WORKFLOW

POSTGRES = os.environ.get("EUKHE_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
START_S = 60.0
"""Seconds an owner may take to listen, and a runner to open its runtime."""
KILL_S = 10.0
"""Seconds a host's processes may take to be gone once killed."""
TICK = os.sysconf("SC_CLK_TCK")
MARK = re.compile(r"\[bench (\w+)\]")
UNSTARTED = "not started"
"""What a runner says of a run whose start failed (no run recorded)."""


def script(rounds: int) -> list[dict[str, Any]]:
    """M-1 rounds of a cheap tool call (a `read` of a small file, another each round: the
    same call again and again would be taken for a loop), then the answer."""

    def read(n: int) -> dict[str, Any]:
        return {"results": n, "calls": [{"name": "read", "arguments": {"path": f"f{n}.txt"}}]}

    return [*(read(n) for n in range(rounds - 1)), {"results": rounds - 1, "text": "done"}]


class Stamped(list[Any]):
    """The faux server's list of requests, each stamped as it comes with its run's marker."""

    def __init__(self) -> None:
        super().__init__()
        self.at: dict[str, list[float]] = {}
        self.lock = threading.Lock()

    def append(self, seen: Any) -> None:
        t = time.perf_counter()
        body = seen.body if isinstance(seen.body, dict) else {}
        for m in body.get("messages", []):
            if isinstance(m, dict) and m.get("role") == "user":
                found = MARK.search(str(m.get("content", "")))
                if found:
                    with self.lock:
                        self.at.setdefault(found.group(1), []).append(t)
                    break
        # the body is not kept: a long pass would hold every request's whole context


def rounds_of(at: dict[str, list[float]], marks: set[str]) -> list[float]:
    """Each run's rounds: the times between its consecutive model requests."""
    return [b - a for k in marks for a, b in zip(at.get(k, []), at.get(k, [])[1:], strict=False)]


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * q))] if xs else float("nan")


# --- Postgres -------------------------------------------------------------------------


def url_of(name: str) -> str:
    return POSTGRES.rsplit("/", 1)[0] + "/" + name


class Db:
    """The bench's own look at the store (psycopg, autocommit; its connection is
    thread-safe: the sampler and the kills share one)."""

    def __init__(self, url: str) -> None:
        import psycopg

        self.conn = psycopg.connect(url, autocommit=True, connect_timeout=5)
        self.conn.execute("SET statement_timeout = 10000")

    def one(self, sql: str, *args: Any) -> Any:
        row = self.conn.execute(sql, args).fetchone()
        return None if row is None else row[0]

    def runs(self, since_ms: int) -> dict[str, int]:
        """The root runs created since `since_ms` (epoch ms), by status."""
        rows = self.conn.execute(
            "SELECT status, count(*) FROM dbos.workflow_status "
            "WHERE name = %s AND created_at >= %s GROUP BY 1",
            (WORKFLOW, since_ms),
        ).fetchall()
        return {str(s): int(n) for s, n in rows}

    def close(self) -> None:
        self.conn.close()


def database() -> str | None:
    """A fresh database; None (with the reason printed) where no Postgres answers."""
    try:
        import psycopg
    except ImportError as e:
        print(f"bench/fleet.py: skipped: psycopg is not installed ({e})")
        return None
    try:
        conn = psycopg.connect(POSTGRES, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as e:
        why = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        print(f"bench/fleet.py: skipped: no Postgres server answers at {POSTGRES} ({why})")
        return None
    name = f"eukhe_bench_{secrets.token_hex(4)}"
    with conn:
        conn.execute(f"CREATE DATABASE {name}")
    return name


def drop(name: str) -> None:
    import psycopg

    with psycopg.connect(POSTGRES, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


class Connections(threading.Thread):
    """The most connections Postgres held (every database), sampled every 0.25 s, and
    whose they were then (by `application_name`, its pid and start cut off: an
    executor's `eukhe:HOST`, a watch's `eukhe-watch:HOST`)."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.db = Db(url)
        self.limit = int(self.db.one("SHOW max_connections"))
        self.most = 0
        self.whose: dict[str, int] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.25):
            with contextlib.suppress(Exception):
                rows = self.db.conn.execute(
                    "SELECT application_name, datname FROM pg_stat_activity "
                    "WHERE backend_type = 'client backend'"
                ).fetchall()
                if len(rows) > self.most:
                    self.most = len(rows)
                    whose: dict[str, int] = {}
                    for app, db in rows:
                        key = ":".join(str(app or "(unnamed)").split(":")[:2]) + f" on {db}"
                        whose[key] = whose.get(key, 0) + 1
                    self.whose = whose

    def reset(self) -> None:
        self.most = 0
        self.whose = {}

    def shown(self) -> str:
        top = sorted(self.whose.items(), key=lambda kv: -kv[1])[:6]
        return ", ".join(f"{n} {k}" for k, n in top)

    def close(self) -> None:
        self.stop.set()
        self.join(timeout=5)
        self.db.close()


# --- processes and their CPU ----------------------------------------------------------


def stat(pid: int) -> tuple[int, float, float] | None:
    """A process's parent, its own CPU-seconds, and its reaped children's."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    f = text[text.rindex(")") + 2 :].split()
    return int(f[1]), (int(f[11]) + int(f[12])) / TICK, (int(f[13]) + int(f[14])) / TICK


def procs() -> dict[int, tuple[int, float, float]]:
    out = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            got = stat(int(entry.name))
            if got is not None:
                out[int(entry.name)] = got
    return out


def tree(roots: set[int], table: dict[int, tuple[int, float, float]]) -> set[int]:
    """`roots` and every live descendant of them."""
    found, todo = set(), [r for r in roots if r in table]
    kids: dict[int, list[int]] = {}
    for pid, (parent, _, _) in table.items():
        kids.setdefault(parent, []).append(pid)
    while todo:
        p = todo.pop()
        if p not in found:
            found.add(p)
            todo += kids.get(p, [])
    return found


def cpu(pids: set[int], table: dict[int, tuple[int, float, float]]) -> float:
    """CPU-seconds of `pids`, with their reaped children's."""
    return sum(table[p][1] + table[p][2] for p in pids if p in table)


def postgres_cpu(table: dict[int, tuple[int, float, float]]) -> float:
    """The Postgres server's CPU-seconds: every process named postgres (the postmaster's
    reaped children, the backends that ended, counted in it)."""
    out = 0.0
    for pid in table:
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/comm").read_text().strip() == "postgres":
                out += table[pid][1] + table[pid][2]
    return out


def machine() -> float:
    """CPU-seconds this machine spent busy (every process's, every core's), from /proc/stat."""
    f = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(f[:8]) - f[3] - f[4]) / TICK  # all but idle and iowait (guest is in user)


def uts(pid: int) -> str | None:
    with contextlib.suppress(OSError):
        return os.readlink(f"/proc/{pid}/ns/uts")
    return None


def own_names() -> str:
    """'' where hosts get their own host name (`unshare --uts` allowed), else why not."""
    if shutil.which("unshare") is None or shutil.which("nsenter") is None:
        return "no `unshare`/`nsenter` here"
    done = subprocess.run(
        ["unshare", "--uts", "sh", "-c", "hostname eukhe-probe"], capture_output=True, timeout=30
    )
    if done.returncode != 0:
        return f"`unshare --uts` is not allowed here (it needs root): {done.stderr.decode().strip()}"
    return ""


# --- hosts ----------------------------------------------------------------------------


@dataclass
class Host:
    """One machine of the fleet: a home, its owner, and its runner (this file as
    `--runner`: one executor process that runs the host's runs at once)."""

    name: str
    home: Path
    named: bool  # its own host name (else this machine's)
    owner: subprocess.Popen[bytes] | None = None
    runner: subprocess.Popen[str] | None = None
    ns: str | None = None
    flight: set[str] = field(default_factory=set)  # the runs sent to its runner, not yet ended
    ended: dict[str, str] = field(default_factory=dict)  # a run's marker: its outcome, as the runner said
    lock: threading.Lock = field(default_factory=threading.Lock)
    up: bool = False

    def env(self, **extra: str) -> dict[str, str]:
        return {**os.environ, "EUKHE_HOME": str(self.home), OWNER_FORK: "", "EUKHE_WARM": "0", **extra}

    def start(self, log: Path, url: str, cwd: Path, runner: bool = True) -> None:
        """Its owner, up for the bench (it would end idle after a while with no client),
        then (`runner`) its runner beside it (under its host name); waited for until ready."""
        argv = [sys.executable, "-m", "eukhe.owner"]
        if self.named:
            argv = ["unshare", "--uts", "sh", "-c", f'hostname {self.name} && exec "$@"', "sh", *argv]
        self.owner = subprocess.Popen(
            argv,
            cwd=self.home,
            env=self.env(EUKHE_OWNER_IDLE_MS="36000000"),
            stdin=subprocess.DEVNULL,
            stdout=log.open("ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        end = time.monotonic() + START_S
        while not listens(protocol.socket_path(self.home)):
            self.alive(self.owner, "owner", log)
            if time.monotonic() > end:
                raise RuntimeError(f"{self.name}'s owner did not listen within {START_S} s: {tail(log)}")
            time.sleep(0.05)
        self.ns = uts(self.owner.pid) if self.named else None
        self.runner = None
        self.flight.clear()
        if runner:
            self.run_beside(log, url, cwd)
        self.up = True  # only now: given runs, and a host a kill may pick

    def run_beside(self, log: Path, url: str, cwd: Path) -> None:
        """Its runner, beside its owner."""
        assert self.owner is not None
        argv = [sys.executable, __file__, "--runner", url, "--cwd", str(cwd)]
        if self.named:
            argv = ["nsenter", "--target", str(self.owner.pid), "--uts", "--", *argv]
        self.runner = subprocess.Popen(
            argv,
            cwd=cwd,
            env=self.env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log.open("ab"),
            text=True,
            start_new_session=True,
        )
        assert self.runner.stdout is not None
        said, _, _ = select.select([self.runner.stdout], [], [], START_S)  # its runtime open: "ready"
        ready = self.runner.stdout.readline() if said else f"nothing within {START_S} s"
        if ready.strip() != "ready":
            self.alive(self.runner, "runner", log)
            raise RuntimeError(f"{self.name}'s runner said {ready!r}, not ready: {tail(log)}")
        threading.Thread(target=self.read, args=(self.runner,), daemon=True).start()

    def alive(self, p: subprocess.Popen[Any], what: str, log: Path) -> None:
        if p.poll() is not None:
            raise RuntimeError(f"{self.name}'s {what} exited {p.returncode}: {tail(log)}")

    def read(self, runner: subprocess.Popen[str]) -> None:
        """The runner's lines: `MARK OUTCOME`, one as each run ends."""
        assert runner.stdout is not None
        for line in runner.stdout:
            mark, _, outcome = line.strip().partition(" ")
            with self.lock:
                self.flight.discard(mark)
                self.ended[mark] = outcome

    def run(self, mark: str) -> None:
        """One marked run on this host, in its runner."""
        assert self.runner is not None and self.runner.stdin is not None
        with self.lock:
            self.flight.add(mark)
        self.runner.stdin.write(mark + "\n")
        self.runner.stdin.flush()

    def pids(self, table: dict[int, tuple[int, float, float]]) -> set[int]:
        """Every live process of this host: its owner's and its runner's trees, and, with a
        host name of its own, everything in its namespace."""
        roots = {p.pid for p in (self.owner, self.runner) if p is not None}
        found = tree(roots, table)
        if self.ns is not None:
            found |= {p for p in table if uts(p) == self.ns}
        return found

    def power_off(self) -> int:
        """Every process of the host killed at once, until none is left; how many."""
        killed: set[int] = set()
        end = time.monotonic() + KILL_S
        while True:
            left = {p for p in self.pids(procs()) - {os.getpid()} if stat(p) is not None}
            if not left:
                break
            if time.monotonic() > end:
                raise RuntimeError(
                    f"{self.name}: processes {sorted(left)} still live {KILL_S} s after SIGKILL"
                )
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            for p in (self.owner, self.runner):
                if p is not None:
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        p.wait(timeout=0.05)
            time.sleep(0.05)
        self.up = False
        return len(killed)


def listens(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX) as s:
        try:
            s.connect(str(path))
        except OSError:
            return False
    return True


def tail(log: Path) -> str:
    return log.read_text(errors="replace")[-2000:] if log.exists() else "(no log)"


# --- passes ---------------------------------------------------------------------------


@dataclass
class Pass:
    name: str
    runs: int
    rounds: int
    wall: float
    gaps: list[float]
    cpu: dict[str, float]
    connections: int = 0
    whose: str = ""
    on_postgres: bool = True
    failed: list[str] = field(default_factory=list)

    requests: int = 0  # the model requests its runs made: a round each

    @property
    def rate(self) -> float:
        """Rounds a second: its runs' rounds over the pass's time, from their starts to
        their last end."""
        return self.requests / self.wall

    def p(self, q: float) -> float:
        return pct(self.gaps, q)


class Bench:
    def __init__(self, tmp: Path, server: FauxServer, stamped: Stamped, named: bool, rounds: int) -> None:
        self.tmp, self.server, self.stamped, self.named = tmp, server, stamped, named
        self.cwd = tmp / "work"
        self.cwd.mkdir()
        for n in range(rounds):
            (self.cwd / f"f{n}.txt").write_text(f"line {n}\n")
        self.count = 0
        self.hosts: list[Host] = []
        self.conns: Connections | None = None

    def host(self, name: str, url: str | None) -> Host:
        home = self.tmp / name
        home.mkdir(mode=0o700)
        if url is not None:
            (home / "settings.json").write_text(json.dumps({"durable": {"databaseUrl": url}}))
        h = Host(name, home, self.named and url is not None)
        self.up(h)
        self.hosts.append(h)
        return h

    def up(self, h: Host, runner: bool = True) -> None:
        h.start(self.tmp / f"owner-{h.name}.log", self.server.url, self.cwd, runner)

    def start(self, h: Host) -> str:
        self.count += 1
        mark = f"r{self.count}"
        h.run(mark)
        return mark

    def cpu_now(self) -> dict[str, float]:
        table = procs()
        owners = {h.owner.pid for h in self.hosts if h.owner is not None}
        runners = {h.runner.pid for h in self.hosts if h.runner is not None}
        me = resource.getrusage(resource.RUSAGE_SELF)
        gone = resource.getrusage(resource.RUSAGE_CHILDREN)  # owners and runners killed and reaped
        return {
            "postgres": postgres_cpu(table),
            "owners": cpu(tree(owners, table), table),
            "runners": cpu(tree(runners, table), table),
            "killed": gone.ru_utime + gone.ru_stime,
            "bench": me.ru_utime + me.ru_stime,
            "machine": machine(),
        }

    def wait(self, hosts: list[Host], marks: list[str], deadline: float) -> list[str]:
        """Wait for the runs `marks` to end in their runners; those that did not answer, named."""
        end = time.monotonic() + deadline
        while any(m in h.flight for h in hosts for m in marks):
            if time.monotonic() > end:
                late = sorted(m for h in hosts for m in marks if m in h.flight)
                raise RuntimeError(f"runs {late} did not end within {deadline:.0f} s")
            for h in hosts:
                if h.up and h.runner is not None and h.runner.poll() is not None:
                    log = self.tmp / f"owner-{h.name}.log"
                    raise RuntimeError(f"{h.name}'s runner exited {h.runner.returncode}: {tail(log)}")
            time.sleep(0.02)
        return [
            f"run {m}: {h.ended[m]}" for h in hosts for m in marks if h.ended.get(m, "answered") != "answered"
        ]

    def measure(self, name: str, hosts: list[Host], n: int, rounds: int) -> Pass:
        """n runs on each of `hosts` at once, to their ends."""
        if self.conns is not None:
            self.conns.reset()
        before = self.cpu_now()
        t = time.perf_counter()
        marks = [self.start(h) for _ in range(n) for h in hosts]
        failed = self.wait(hosts, marks, 120 + 2.0 * rounds * len(marks))
        wall = time.perf_counter() - t
        after = self.cpu_now()
        got = Pass(name, len(marks), rounds, wall, rounds_of(self.stamped.at, set(marks)), {})
        got.requests = sum(len(self.stamped.at.get(m, [])) for m in marks)
        got.cpu = {k: after[k] - before[k] for k in after if after[k] - before[k] >= 0.05}
        got.connections = self.conns.most if self.conns is not None else 0
        got.whose = self.conns.shown() if self.conns is not None else ""
        got.failed = failed
        got.on_postgres = all((h.home / "settings.json").exists() for h in hosts)  # SQLite's: none
        return got

    def idle(self, settle: float, seconds: float) -> str:
        """What the fleet spends doing nothing: its owners (their watches, the chat's
        writer) and Postgres, a second, once `settle` seconds have let what the last runs
        started end (an owner imports the run's machinery once a run is in flight)."""
        time.sleep(settle)
        before = self.cpu_now()
        time.sleep(seconds)
        after = self.cpu_now()
        return ", ".join(
            f"{k} {(after[k] - before[k]) / seconds:.2f}" for k in ("owners", "postgres", "runners")
        )

    def close(self) -> None:
        for h in self.hosts:
            with contextlib.suppress(Exception):
                h.power_off()
        if self.conns is not None:
            self.conns.close()


@dataclass
class Kill:
    at: float
    host: str
    processes: int
    in_flight: int
    back: float = 0.0


class Back(threading.Thread):
    """A host brought back (`Bench.up`) beside the kills' loop; what failed, if it did."""

    def __init__(self, b: Bench, h: Host, runner: bool) -> None:
        super().__init__(daemon=True)
        self.b, self.h, self.runner = b, h, runner
        self.error: str | None = None
        self.start()

    def run(self) -> None:
        try:
            self.b.up(self.h, self.runner)
        except Exception as e:  # said by the loop, which tries again
            self.error = f"{type(e).__name__}: {e}"


def kills(b: Bench, hosts: list[Host], n: int, count: int, rnd: random.Random, db: Db, first: float) -> None:
    """Each host keeps n runs going while `count` random hosts lose power, each back a few
    seconds later (the first kill within `first` seconds); then every run started must end
    in the store."""
    since_ms = int(time.time() * 1000)
    t0 = time.perf_counter()
    before = b.cpu_now()
    mine: list[tuple[Host, str]] = []  # the runs started, and where
    done: list[Kill] = []
    down: dict[str, tuple[Host, float, Kill]] = {}  # a host down: when it comes back, its kill
    coming: dict[str, Back] = {}  # a host down whose owner (and runner) are starting
    next_kill = t0 + rnd.uniform(first / 3, first)
    deadline = t0 + 120 + count * 40
    while len(done) < count or down:
        now = time.perf_counter()
        if now > deadline:
            raise RuntimeError(
                f"the kills did not end within {deadline - t0:.0f} s ({len(done)} of {count} done)"
            )
        for h in hosts:  # keep n runs going on each live host
            while h.up and h.runner is not None and len(h.flight) < n and len(done) < count:
                mine.append((h, b.start(h)))
        for name, (h, at, k) in list(down.items()):
            if now >= at and name not in coming:  # brought back beside the loop: runs go on meanwhile
                coming[name] = Back(b, h, runner=len(done) < count)  # a runner only while kills are to come
            back = coming.get(name)
            if back is None or back.is_alive():
                continue
            del coming[name]
            if back.error is not None:  # the store full, say: tried again a little later
                h.power_off()
                down[name] = (h, time.perf_counter() + 2.0, k)
                why = [x for x in back.error.splitlines() if x.strip()][-1][-240:]
                print(f"  kill {done.index(k) + 1}: {h.name} could not come back, tried again in 2 s: {why}")
                continue
            k.back = time.perf_counter() - t0
            del down[name]
            ready = "its owner, its runner ready" if h.runner is not None else "its owner ready"
            print(f"  kill {done.index(k) + 1}: {h.name} back at {k.back:5.1f} s ({ready})")
        live = [h for h in hosts if h.up]
        if len(done) < count and now >= next_kill and len(live) > 1:
            h = rnd.choice(live)
            flight = len(h.flight)
            k = Kill(now - t0, h.name, h.power_off(), flight)
            done.append(k)
            down[h.name] = (h, time.perf_counter() + rnd.uniform(2.0, 6.0), k)
            print(
                f"  kill {len(done)}: {h.name} at {k.at:5.1f} s "
                f"(SIGKILL to its {k.processes} processes, {flight} runs in flight)"
            )
            next_kill = time.perf_counter() + rnd.uniform(2.0, 5.0)
        time.sleep(0.05)
    # the live hosts' last runs to their ends; then the store, until no run is left in flight
    for h in hosts:
        b.wait([h], sorted(h.flight), 120 + 30.0 * n)
    started = len(mine)  # those a runner said ended other than answered: failed (not the killed: unsaid)
    failed = [f"run {m}: {h.ended[m]}" for h, m in mine if h.ended.get(m, "answered") != "answered"]
    waited = time.perf_counter()
    end = waited + TAKE_BOUND_S + 120
    while True:
        got = db.runs(since_ms)
        flight = got.get("PENDING", 0) + got.get("ENQUEUED", 0)
        if not flight:
            break
        if time.perf_counter() > end:
            print(f"  runs still in flight {end - waited:.0f} s after the hosts' last runs ended: {got}")
            break
        time.sleep(0.5)
    wall = time.perf_counter() - t0
    after = b.cpu_now()
    ended, recorded = got.get("SUCCESS", 0), sum(got.values())
    unstarted = sum(1 for f in failed if f.split(": ", 1)[-1].startswith(UNSTARTED))
    print(
        f"kills: {len(done)} in {wall:.1f} s; runs started {started}, in the store {recorded} "
        f"({unstarted} not started, {started - recorded - unstarted} killed before their run was recorded), "
        f"ended {ended}, lost {recorded - ended} (0 expected); "
        f"the last taken up {time.perf_counter() - waited:.1f} s after the live hosts' runs ended"
    )
    if set(got) - {"SUCCESS"}:
        print(f"  runs by status: {got}")
    spent = {k: after[k] - before[k] for k in after}
    hosts = (
        spent.pop("owners") + spent.pop("runners") + spent.pop("killed")
    )  # a killed one's moves to `killed`
    print(
        f"  CPU-seconds in it: the hosts (owners, runners, those killed) {hosts:.1f}, {cpu_line(spent, {})}"
    )
    for line in causes(failed, started):
        print(f"  runs that failed, not killed: {line}")


def causes(failed: list[str], runs: int) -> list[str]:
    """The runs that failed, by cause (their ids and the database's name cut out): how
    many of `runs` each."""
    by: dict[str, int] = {}
    for f in failed:
        why = re.sub(r"^run \w+: ", "", f)
        why = re.sub(r"eukhe_bench_\w+", "DB", why)
        by[why] = by.get(why, 0) + 1
    return [f"{n} of {runs}: {why[:300]}" for why, n in sorted(by.items(), key=lambda kv: -kv[1])]


def cpu_line(after: dict[str, float], before: dict[str, float]) -> str:
    return ", ".join(f"{k} {after[k] - before.get(k, 0.0):.1f}" for k in after)


def ours(cpu: dict[str, float]) -> float:
    return sum(v for k, v in cpu.items() if k != "machine")


def bottleneck(p: Pass, limit: int, cores: int) -> str:
    """What this pass's figures say limits it: Postgres's connections, the machine's cores
    (and who of the fleet spent them), or neither (the runs wait on a poll, a lock)."""
    busy = p.cpu.get("machine", 0.0) / (p.wall * cores)
    mine = {k: v for k, v in p.cpu.items() if k != "machine"}
    top = max(mine, key=lambda k: mine[k]) if mine else "nobody"
    share = mine.get(top, 0.0) / max(ours(p.cpu), 1e-9)
    if p.on_postgres and p.connections >= 0.9 * limit:
        return f"Postgres's connections ({p.connections} of max_connections {limit})"
    if busy >= 0.85:
        return f"the CPU ({cores} cores {busy:.0%} busy; the fleet's most in its {top}, {share:.0%})"
    return f"neither the store nor the CPU ({cores} cores {busy:.0%} busy): a wait"


def show(p: Pass, alone: Pass, sqlite: Pass, cores: int, limit: int) -> None:
    print(
        f"{p.name:7} {p.runs:4} runs  {p.rate:7.1f} rounds/s  p50 {p.p(0.5) * 1000:7.1f} ms  "
        f"p99 {p.p(0.99) * 1000:7.1f} ms  ({p.requests} rounds in {p.wall:.2f} s)"
    )
    if p is not alone:
        print(
            f"        against alone: {p.rate / alone.rate:5.2f}x the rounds a second, "
            f"p50 {p.p(0.5) / alone.p(0.5):5.2f}x, p99 {p.p(0.99) / alone.p(0.99):5.2f}x"
        )
    if p is not sqlite and p is not alone:
        print(
            f"        against sqlite: {p.rate / sqlite.rate:5.2f}x the rounds a second, "
            f"p50 {p.p(0.5) / sqlite.p(0.5):5.2f}x, p99 {p.p(0.99) / sqlite.p(0.99):5.2f}x"
        )
    print(f"        CPU-seconds: {cpu_line(p.cpu, {})} (the fleet's: {ours(p.cpu) / p.wall:.2f} a second)")
    if p.connections:
        print(f"        Postgres connections, at most: {p.connections} of {limit} ({p.whose})")
    print(f"        the bottleneck: {bottleneck(p, limit, cores)}")
    for line in causes(p.failed, p.runs):
        print(f"        failed: {line}")


def runner(url: str, cwd: str) -> int:
    """A host's runner: one process of its home that runs at once every run asked of it
    (a marker a line on its standard input) and says each one's end (`MARK OUTCOME`).
    Its runtime is not a user's (no root-turn lease, which would run a home's runs one
    at a time): its runs go on side by side as the owner's recovered runs do."""
    import asyncio

    from eukhe.ids import new_session
    from eukhe.run.sink import Silent
    from eukhe.run.spec import STEPS, RunSpec
    from eukhe.runtime import open_runtime
    from eukhe.settings.load import load

    home = Path(os.environ["EUKHE_HOME"])
    runtime = open_runtime(home, load(home), Silent(), user=False)

    async def one(mark: str) -> None:
        prompt = f"[bench {mark}] Read a file each round, then say done."
        spec = RunSpec(prompt=prompt, model="vllm/m", base_url=url, cwd=cwd, steps=STEPS)
        try:
            run = await runtime.start(spec, new_session())
        except Exception as e:  # no run recorded: said so, the bench tells it from a killed one
            print(mark, f"{UNSTARTED}: {type(e).__name__}: {e}".replace("\n", " "), flush=True)
            return
        try:
            out = await runtime.result(run)  # its end, as it comes
            said = (
                str(out.outcome) if out.outcome == "answered" else f"{out.outcome}: {out.code}: {out.message}"
            )
        except Exception as e:  # said as the run's outcome: the bench names it
            said = f"{type(e).__name__}: {e}"
        print(mark, said.replace("\n", " "), flush=True)

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        runtime.process.stop = (loop, asyncio.Event())  # what its waits end on, as `Runtime.drive` sets
        runs: set[asyncio.Task[None]] = set()
        print("ready", flush=True)
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            runs.add(asyncio.ensure_future(one(line.strip())))
        await asyncio.gather(*runs)

    try:
        asyncio.run(serve())
    finally:
        runtime.close()
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", type=int, default=4)
    ap.add_argument("--runs", type=int, default=25)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--kills", type=int, default=10)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--smoke", action="store_true", help="every path once, small: the bench still runs")
    ap.add_argument("--runner", help=argparse.SUPPRESS)  # the faux server's URL: be a host's runner
    ap.add_argument("--cwd", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.runner:
        return runner(a.runner, a.cwd)
    if a.smoke:
        a.hosts, a.runs, a.rounds, a.kills = 2, 2, 2, 1
    if a.hosts < 1 or a.runs < 1 or a.rounds < 1:
        ap.error("--hosts, --runs and --rounds must be at least 1")
    seed = a.seed if a.seed is not None else secrets.randbelow(10**6)
    name = database()
    if name is None:
        return 0
    url = url_of(name)
    why = own_names()
    cores = os.cpu_count() or 1
    print(f"hosts {a.hosts} × runs {a.runs} × rounds {a.rounds}, kills {a.kills}, seed {seed}; {cores} cores")
    print(f"database {name} at {POSTGRES.rsplit('/', 1)[0]}")
    if why:
        print(f"every host has this machine's host name: {why}")
    try:
        with tempfile.TemporaryDirectory(prefix="eukhe-fleet-") as tmp:
            stamped = Stamped()
            with FauxServer(parse(script(a.rounds))) as server:
                server.state.seen = stamped
                b = Bench(Path(tmp), server, stamped, not why, a.rounds)
                try:
                    hosts = [b.host(f"host{k}", url) for k in range(a.hosts)]
                    b.conns = Connections(url)
                    b.conns.start()
                    if not a.smoke:  # the tables made, each host's first run: not in `alone`
                        b.measure("warm", hosts, 1, a.rounds)
                    idle = b.idle(0.0, 1.0) if a.smoke else b.idle(5.0, 5.0)
                    alone = b.measure("alone", hosts[:1], 1, a.rounds)
                    fleet = b.measure("fleet", hosts, a.runs, a.rounds)
                    one = b.host("sqlite", None)
                    sqlite = b.measure("sqlite", [one], a.runs, a.rounds)
                    with contextlib.suppress(RuntimeError):
                        one.power_off()
                    b.hosts.remove(one)
                    print(f"idle, {a.hosts} hosts, CPU-seconds a second: {idle}")
                    for p in (alone, sqlite, fleet):
                        show(p, alone, sqlite, cores, b.conns.limit)
                    if a.kills and a.hosts < 2:
                        print("kills: skipped, a fleet of one host has no survivor to take its runs")
                    elif a.kills:  # the store looked at on the connection opened first: never refused
                        kills(
                            b,
                            hosts,
                            a.runs,
                            a.kills,
                            random.Random(seed),
                            b.conns.db,
                            1.0 if a.smoke else 3.0,
                        )
                finally:
                    b.close()
    finally:
        drop(name)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
