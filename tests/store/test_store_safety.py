"""A store never runs what it holds: eukhe writes JSON (`store/codec.py`), reads pickled
rows only from its home's own store (`store/guard.py`), rewrites them as JSON
(`eukhe store migrate`, and the store's opening), and never opens a store a folder
names unless the user trusts that folder."""

from __future__ import annotations

import base64
import json
import os
import pickle
import shutil
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from eukhe.ai.faux import FauxServer, parse
from eukhe.ai.reply import Failure, FailureKind, Reply, Stop, ToolCall, Usage
from eukhe.ai.request import Message
from eukhe.settings import trust
from eukhe.store.codec import Codec, CodecError, StoredError
from tests.proc import eukhe, messages, sessions
from tests.store.postgres import drop, fresh_database, url_of

FIXTURE = Path(__file__).parent.parent / "fixtures" / "stores" / "eukhe-0.1.0.sqlite"
OLD_URL = "http://127.0.0.1:36033/v1"
OLD_CWD = "/tmp/fx/w"
ANSWERED, CUT = "20261202-121945-a8b612", "20261202-121951-17293f"


class Payload:
    """What a hostile store holds: a pickle that runs a command as it is read."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (os.system, (f"touch {self.marker}",))


def poisoned(path: Path, marker: Path) -> Path:
    """The fixture store with every serialized value replaced by the payload."""
    shutil.copy(FIXTURE, path)
    bad = base64.b64encode(pickle.dumps(Payload(marker))).decode()
    c = sqlite3.connect(path)
    with c:
        c.execute("UPDATE workflow_input SET inputs = ?", (bad,))
        c.execute("UPDATE workflow_output SET output = ?", (bad,))
        c.execute("UPDATE operation_outputs SET output = ?", (bad,))
    c.close()
    return path


def repository(tmp_path: Path, marker: Path) -> tuple[Path, Path]:
    home, repo = tmp_path / "home", tmp_path / "repo"
    home.mkdir()
    (repo / ".eukhe").mkdir(parents=True)
    store = poisoned(repo / "evil.sqlite", marker)
    (repo / ".eukhe" / "settings.json").write_text(
        json.dumps({"durable": {"databaseUrl": f"sqlite:///{store}"}})
    )
    return home, repo


def test_a_repositorys_store_is_never_opened_in_a_folder_its_user_does_not_trust(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    home, repo = repository(tmp_path, marker)
    for args in (("sessions",), ("session", "show", ANSWERED), ("resume",), ("chat", "status")):
        done = eukhe(*args, cwd=repo, home=home)
        assert not marker.exists(), f"eukhe {' '.join(args)} ran the store's code: {done.stderr}"
        assert "durable.databaseUrl is ignored: this folder is not trusted" in done.stderr, (
            args,
            done.stderr,
        )
    assert not (repo / "evil.sqlite-journal").exists()


def test_a_trusted_folders_store_that_holds_pickled_rows_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    home, repo = repository(tmp_path, marker)
    trust.record(home, repo, True)
    for args in (("sessions",), ("session", "show", ANSWERED), ("resume",)):
        done = eukhe(*args, cwd=repo, home=home)
        assert not marker.exists(), f"eukhe {' '.join(args)} ran the store's code: {done.stderr}"
        assert done.returncode == 2, done.stderr
        assert f"refusing the store at sqlite:///{repo / 'evil.sqlite'}: its table " in done.stderr
        assert "'py_pickle' serializer, which runs code as it reads them" in done.stderr


def test_a_trusted_folders_postgres_store_that_holds_pickled_rows_is_refused(tmp_path: Path) -> None:
    """The same on Postgres, where DBOS keeps its tables in the schema `dbos`: the guard
    finds every table with a serialization column in the database's catalog."""
    import psycopg

    marker = tmp_path / "pwned"
    home, repo = tmp_path / "home", tmp_path / "repo"
    home.mkdir()
    (repo / ".eukhe").mkdir(parents=True)
    name = fresh_database()
    try:
        bad = base64.b64encode(pickle.dumps(Payload(marker))).decode()
        with psycopg.connect(url_of(name), autocommit=True) as c:
            c.execute("CREATE SCHEMA dbos")
            c.execute(
                "CREATE TABLE dbos.operation_outputs (workflow_uuid TEXT, function_id INT, output TEXT,"
                " serialization TEXT)"
            )
            c.execute("INSERT INTO dbos.operation_outputs VALUES ('w', 1, %s, 'py_pickle')", (bad,))
        settings = {"durable": {"databaseUrl": url_of(name)}}
        (repo / ".eukhe" / "settings.json").write_text(json.dumps(settings))
        trust.record(home, repo, True)
        done = eukhe("sessions", cwd=repo, home=home)
    finally:
        drop(name)
    assert not marker.exists(), f"eukhe sessions ran the store's code: {done.stderr}"
    assert done.returncode == 2, done.stderr
    assert "its table operation_outputs holds 1 rows written by the 'py_pickle' serializer" in done.stderr


def in_a_home(fixture: Path, tmp_path: Path) -> tuple[Path, Path, Path]:
    """A home whose store is a copy of `fixture`, its runs in flight left by a process
    that is gone, and a work folder: the home, the folder, the store's file."""
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    db = home / "eukhe.sqlite"
    shutil.copy(fixture, db)
    dead = f"eukhe:{socket.gethostname()}:999999999:0"  # its process, gone, on this host
    c = sqlite3.connect(db)
    with c:
        c.execute("UPDATE workflow_status SET executor_id = ? WHERE status = 'PENDING'", (dead,))
    c.close()
    return home, work, db


def test_the_home_store_of_an_earlier_eukhe_stays_readable_and_its_cut_off_run_resumes(
    tmp_path: Path,
) -> None:
    """The upgrade: a store eukhe 0.1.0 wrote (pickle) in the home: its sessions read, the
    run it left cut off resumes, and every row is JSON afterwards."""
    home, work, db = in_a_home(FIXTURE, tmp_path)
    listed = {r["id"]: r for r in sessions(work, home)}
    assert listed[ANSWERED]["outcome"] == "answered" and listed[CUT]["outcome"] == "in flight"
    assert [m["content"] for m in messages(ANSWERED, work, home)][-1] == "It says alpha."
    migrated = eukhe("store", "migrate", cwd=work, home=home)
    assert migrated.returncode == 0, migrated.stderr
    assert (
        "0 pickled rows" not in migrated.stdout
        and "1 runs in flight handed to eukhe-0.2.0" in migrated.stdout
    )
    c = sqlite3.connect(db)
    assert {r[0] for r in c.execute("SELECT serialization FROM operation_outputs")} == {"eukhe_json"}
    script = [{"when": "sleep", "results": 1, "text": "slept"}]
    with FauxServer(parse(script)) as server:  # the cut-off run's model, now at another port
        with c:
            for wid, text in list(c.execute("SELECT workflow_uuid, inputs FROM workflow_input")):
                fixed = text.replace(OLD_URL, server.url).replace(OLD_CWD, str(work))
                c.execute("UPDATE workflow_input SET inputs = ? WHERE workflow_uuid = ?", (fixed, wid))
        c.close()
        resumed = eukhe("resume", cwd=work, home=home)
    assert resumed.returncode == 0, resumed.stderr
    got = messages(CUT, work, home)
    assert got[-1]["content"] == "slept", got
    assert "interrupted by a restart" in got[-2]["content"]  # the bash call the kill cut is not run again


FIXTURE_020 = FIXTURE.parent / "eukhe-0.2.0.sqlite"
URL_020, CWD_020 = "http://127.0.0.1:46725/v1", "/tmp/fx2/w"
ANSWERED_020, CUT_020 = "20261202-165933-9db6d3", "20261202-170025-c69e86"


def test_a_run_cut_off_under_the_modules_before_the_run_got_its_home_resumes(tmp_path: Path) -> None:
    """Runs in flight across the upgrade still recover: a store 0.2.0 wrote before the
    moves of issue 25 (its run cut off in a bash call) is read, and its run finished, by
    today's modules."""
    home, work, db = in_a_home(FIXTURE_020, tmp_path)
    script = [{"when": "sleep a while", "results": 1, "text": "slept"}]
    with FauxServer(parse(script)) as server:  # the cut-off run's model, now at another port
        # the home's settings named the model's server (the runs' specs do not)
        settings = {"model": "vllm/m", "providers": {"vllm": {"baseUrl": server.url}}}
        (home / "settings.json").write_text(json.dumps(settings))
        c = sqlite3.connect(db)
        with c:
            for wid, text in list(c.execute("SELECT workflow_uuid, inputs FROM workflow_input")):
                fixed = text.replace(URL_020, server.url).replace(CWD_020, str(work))
                c.execute("UPDATE workflow_input SET inputs = ? WHERE workflow_uuid = ?", (fixed, wid))
        c.close()
        listed = {r["id"]: r for r in sessions(work, home)}
        assert listed[ANSWERED_020]["outcome"] == "answered" and listed[CUT_020]["outcome"] == "in flight"
        assert [m["content"] for m in messages(ANSWERED_020, work, home)][-1] == "It says alpha."
        resumed = eukhe("resume", cwd=work, home=home)
    assert resumed.returncode == 0, resumed.stderr
    got = messages(CUT_020, work, home)
    assert got[-1]["content"] == "slept", got
    assert "interrupted by a restart" in got[-2]["content"]  # the bash call the kill cut is not run again


@pytest.mark.parametrize(
    "value",
    [
        Reply(
            ("a", "b"),
            calls=(ToolCall("c1", "bash", "{}", {"x": [1, {"$eukhe": 2}]}),),
            stop=Stop.TOOL_USE,
            usage=Usage(1, 2),
        ),
        Reply(failure=Failure(FailureKind.OVERLOADED, True, "busy", 529, float("inf"))),
        Message("tool", "out", call_id="c1", is_error=True),
        {"args": ({"prompt": "p"},), "kwargs": {}},
        {1: "a", (2, 3): "b"},
        ("text", False),
        b"\x00\xff",
    ],
)
def test_the_codec_gives_back_what_it_was_given(value: Any) -> None:
    codec = Codec()
    assert codec.deserialize(codec.serialize(value)) == value


def test_a_failure_kind_written_under_its_old_name_reads_back() -> None:
    # eukhe 0.2.0 wrote ai.reply's FailureKind as "Kind" (issue 25 gave it a name of its own)
    codec = Codec()
    assert codec.deserialize('{"$eukhe": "enum", "type": "Kind", "v": "stall"}') is FailureKind.STALL
    assert '"type":"FailureKind"' in codec.serialize(FailureKind.STALL)


def test_the_codec_keeps_an_error_as_its_kind_and_message_and_reads_nothing_it_does_not_know() -> None:
    codec = Codec()
    got = codec.deserialize(codec.serialize(ValueError("bad input")))
    assert isinstance(got, StoredError) and got.kind == "ValueError" and str(got) == "bad input"
    for row in (
        '{"$eukhe": "data", "type": "Popen", "v": {"args": "touch x"}}',
        '{"$eukhe": "data", "type": "Message", "v": {"role": "user", "evil": 1}}',
        '{"$eukhe": "import", "v": "os.system"}',
    ):
        with pytest.raises(CodecError):
            codec.deserialize(row)
    with pytest.raises(CodecError, match=r"cannot write a builtins\.object"):
        codec.serialize(object())


def test_the_store_runs_in_wal_mode_its_journals_private_and_a_killed_runs_record_kept(
    tmp_path: Path,
) -> None:
    """The store is written in WAL mode with synchronous=NORMAL: a commit is in the journal
    before its step returns, so a kill loses none (a power cut may lose the last ones). The
    journal and its index hold the transcript: they are as private as the store."""
    home = tmp_path / "home"
    with FauxServer(parse(["the answer"])) as server:
        done = eukhe("run", "--model", "vllm/m", "--base-url", server.url, "--json", "hi", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    session = sessions(tmp_path, home)[0]["id"]
    db = home / "eukhe.sqlite"
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    files = sorted(p.name for p in home.glob("eukhe.sqlite*"))
    assert "eukhe.sqlite-wal" in files, files  # the process left without a checkpoint (leave: no close)
    for p in home.glob("eukhe.sqlite*"):
        assert p.stat().st_mode & 0o077 == 0, (p.name, oct(p.stat().st_mode))
    # another process reads what the journal holds
    assert [m["content"] for m in messages(session, tmp_path, home) if m["role"] == "assistant"] == [
        "the answer"
    ]


def test_making_the_store_private_again_keeps_the_locks_sqlite_holds_on_it(tmp_path: Path) -> None:
    """Closing any descriptor of a file drops every POSIX lock the process holds on it, SQLite's
    own included. Every open of eukhe's tables makes the store private first: on a store already
    private it must not open the file, or a write under way in this process loses its lock and
    another process writes at the same time (in WAL mode, another process may remove the journal
    this one still writes to: its commits were lost)."""
    from eukhe.store.urls import private_store

    db = tmp_path / "eukhe.sqlite"
    url = f"sqlite:///{db}"
    private_store(url)
    mine = sqlite3.connect(db, isolation_level=None)
    mine.execute("CREATE TABLE t (x)")
    mine.execute("BEGIN IMMEDIATE")  # this process writes: its RESERVED lock is on the file
    mine.execute("INSERT INTO t VALUES (1)")
    private_store(url)  # as the chat's tables open while a run's step writes
    other = (
        "import sqlite3, sys\n"
        "c = sqlite3.connect(sys.argv[1], timeout=0, isolation_level=None)\n"
        "try:\n    c.execute('BEGIN IMMEDIATE'); print('wrote')\n"
        "except sqlite3.OperationalError as e:\n    print(e)\n"
    )
    done = subprocess.run([sys.executable, "-c", other, str(db)], capture_output=True, text=True, timeout=30)
    mine.execute("COMMIT")
    mine.close()
    assert done.stdout.strip() == "database is locked", done.stdout + done.stderr
