"""H5.4 one level down: a report reaches its parent once across every continuation of
the parent's conversation, with the real `eukhe` process against the faux model."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from dbos import DBOSClient

from eukhe.ai.faux import FauxServer, parse
from eukhe.store import session_runs as store_sessions
from eukhe.store.codec import Codec
from tests.children.test_spawn import bash, home_with, reports_in, run, spawn
from tests.proc import sessions


def transcript(home: Path, run_id: str) -> list[str]:
    """A run's messages as its workflow recorded them (a child's session has no `session show`)."""
    client = DBOSClient(system_database_url=f"sqlite:///{home / 'eukhe.sqlite'}", serializer=Codec())
    try:
        return [str(m.content) for m in asyncio.run(store_sessions.transcript(run_id, client))]
    finally:
        client.destroy()


def three_levels() -> list[dict[str, Any]]:
    """ROOT spawns MID; MID spawns LEAF-A and LEAF-B. LEAF-A's report is placed at MID's
    round 2 and MID answers; LEAF-B reports after that, and MID's conversation goes on
    with it for two rounds more."""
    wait_a = "while [ ! -f a.done ]; do sleep 0.1; done; sleep 5; touch mid.r2"
    after_mid = "while [ ! -f mid.r2 ]; do sleep 0.1; done; sleep 3"
    return [
        {"when": "leaf a task", "results": 0, **bash("touch a.done")},
        {"when": "leaf a task", "results": 1, "text": "LEAF-A done"},
        {"when": "leaf b task", "results": 0, **bash(after_mid)},
        {"when": "leaf b task", "results": 1, "text": "LEAF-B done"},
        {"when": "mid task", "results": 0, **spawn("leaf a task", "leaf b task")},
        {"when": "mid task", "results": 2, **bash(wait_a)},
        {"when": "child:c1.1.1]", "results": 3, "text": "mid got A"},
        {"when": "child:c1.1.2]", "results": 3, **bash("true")},
        {"when": "child:c1.1.2]", "results": 4, **bash("true")},
        {"when": "child:c1.1.2]", "results": 5, "text": "mid got B"},
        {"when": "child:c1.1.1]", "results": 5, "text": "mid got A again"},
        {"when": "child:c1.1]", "results": 0, "text": "noted"},
        {"when": "go", "results": 0, **spawn("mid task")},
        {"when": "go", "results": 1, "text": "spawned"},
    ]


def test_a_grandchilds_report_reaches_its_parent_once_across_its_continuations(tmp_path: Path) -> None:
    home = home_with(tmp_path, {"subagents": {"maxDepth": 2}})
    with FauxServer(parse(three_levels())) as server:
        done = run(server, tmp_path, home)
    assert done.returncode == 0, done.stderr
    [row] = sessions(tmp_path, home)
    mid = transcript(home, f"{row['id']}/0001.c1")
    for leaf, news in (("c1.1.1", "LEAF-A done"), ("c1.1.2", "LEAF-B done")):
        got = [m for m in mid if m.startswith(f"[child-exited: no-reply child:{leaf}]")]
        assert got == [f"[child-exited: no-reply child:{leaf}] Last assistant text: {news}"], mid
    assert reports_in(row["id"], tmp_path, home) == [
        "[child-exited: no-reply child:c1.1] Last assistant text: mid got B"
    ]
