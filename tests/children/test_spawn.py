"""Subagents with the real `eukhe` process against the faux model server: a child's
report reaches its parent exactly once, whatever the child does."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from eukhe.ai.faux import FauxServer, parse
from eukhe.children import texts
from eukhe.ids import name_of
from tests.proc import eukhe, messages, sessions


def bash(command: str) -> dict[str, Any]:
    return {"calls": [{"name": "bash", "arguments": {"command": command}}]}


def spawn(*tasks: str) -> dict[str, Any]:
    return {
        "calls": [{"name": "spawn", "arguments": {"task": t}, "id": f"s{i}"} for i, t in enumerate(tasks)]
    }


UNCONFINED = {"sandbox": {"mode": "danger-full-access"}}
"""For a test that reads pids a command wrote: in the sandbox they are its pid namespace's, not ours."""


def home_with(tmp_path: Path, settings: dict[str, Any] | None = None) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    if settings:
        (home / "settings.json").write_text(json.dumps(settings))
    return home


def run(server: FauxServer, tmp_path: Path, home: Path, prompt: str = "go") -> Any:
    return eukhe("run", "--model", "vllm/m", "--base-url", server.url, prompt, cwd=tmp_path, home=home)


def reports_in(session: str, tmp_path: Path, home: Path) -> list[str]:
    return [
        m["content"] for m in messages(session, tmp_path, home) if str(m["content"]).startswith("[child-")
    ]


def test_a_spawned_childs_report_reaches_its_parent_once(tmp_path: Path) -> None:
    """The parent goes on while its child works (a Task never holds the orchestrator);
    the child's answer comes back once, as the prompt of the session's next run."""
    home = home_with(tmp_path)
    script = [
        {"when": "count the files", "results": 0, **bash("sleep 1; ls | wc -l")},
        {"when": "count the files", "results": 1, "text": "there are 2 files"},
        {"when": "[child-exited", "results": 0, "text": "my child counted 2 files"},
        {"when": "go", "results": 0, **spawn("count the files")},
        {"when": "go", "results": 1, "text": "spawned it"},
    ]
    with FauxServer(parse(script)) as server:
        done = run(server, tmp_path, home)
    assert done.returncode == 0, done.stderr
    out = done.stdout + done.stderr
    assert out.index("spawned it") < out.index("child c1.1 ended: answered")  # the parent did not wait
    assert "child c1.1 started" in out and "my child counted 2 files" in out
    [row] = sessions(tmp_path, home)
    assert row["runs"] == 2
    assert reports_in(row["id"], tmp_path, home) == [
        "[child-exited: no-reply child:c1.1] Last assistant text: there are 2 files"
    ]


def test_a_hung_child_is_aborted_and_reported_stalled_with_its_seconds(tmp_path: Path) -> None:
    home = home_with(tmp_path, {"subagentStallMs": 2000})
    script = [
        {"when": "wait forever", "results": 0, **bash("sleep 60")},
        {"when": "[child-failed", "results": 0, "text": "it stalled"},
        {"when": "go", "results": 0, **spawn("wait forever")},
        {"when": "go", "results": 1, "text": "spawned"},
    ]
    started = time.monotonic()
    with FauxServer(parse(script)) as server:
        done = run(server, tmp_path, home)
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert took < 40, took  # not the 60 s of its command
    [row] = sessions(tmp_path, home)
    [report] = reports_in(row["id"], tmp_path, home)
    assert report.startswith("[child-failed child:c1.1] stalled: no progress for ")
    assert "(subagentStallMs); its run was aborted" in report


def test_a_child_that_only_talks_is_stalled_and_one_with_new_notes_is_not(tmp_path: Path) -> None:
    """Streamed text is no progress (H5.2); an accepted progress note is. Both children
    work past a stall budget of 4 s: the talker streams a reply for 10 s, the other gives
    a new note about every second for 5 s (the same note again would not count)."""
    home = home_with(tmp_path, {"subagentStallMs": 4000})
    notes = [{"when": "note as you go", "results": i, "calls": [
        {"name": "progress", "arguments": {"note": f"step {i} done"}}], "delay": 0.3, "chunks": 2}
        for i in range(5)]  # fmt: skip
    script = [
        {"when": "talk slowly", "results": 0, "text": "word " * 100, "chunks": 100, "delay": 0.1},
        *notes,
        {"when": "note as you go", "results": 5, "text": "finished all steps"},
        {"when": "[child-", "results": 0, "text": "noted"},
        {"when": "go", "results": 0, **spawn("talk slowly", "note as you go")},
        {"when": "go", "results": 2, "text": "spawned both"},
    ]
    with FauxServer(parse(script)) as server:
        done = run(server, tmp_path, home)
    assert done.returncode == 0, done.stderr
    [row] = sessions(tmp_path, home)
    got = sorted(reports_in(row["id"], tmp_path, home))
    assert len(got) == 2, got
    assert got[0].startswith("[child-exited: no-reply child:c1.2] Last assistant text: finished all steps")
    assert got[1].startswith("[child-failed child:c1.1] stalled: no progress for ")


def test_report_texts() -> None:
    assert texts.report(texts.Owe.CANCELLED, "c1.1", "") == (
        "[child-exited: cancelled child:c1.1] Deleted by parent orchestrator"
    )


def test_a_running_child_is_listed_with_its_clock_and_eukhe_abort_ends_it(tmp_path: Path) -> None:
    """Children left running are never invisible: `eukhe status` lists each with its
    watch's clock, and `eukhe abort` ends one (its command's process with it); its
    parent hears how it ended."""
    from tests.proc import Reader, start, until

    home = home_with(tmp_path, {"subagentStallMs": 120_000, **UNCONFINED})  # it reads `$$`
    script = [
        {"when": "sleep long", "results": 0, **bash("echo $$ > child.pid; sleep 120")},
        {"when": "[child-failed", "results": 0, "text": "it was aborted"},
        {"when": "go", "results": 0, **spawn("sleep long")},
        {"when": "go", "results": 1, "text": "spawned"},
    ]
    with FauxServer(parse(script)) as server:
        p = start("run", "--model", "vllm/m", "--base-url", server.url, "go", cwd=tmp_path, home=home)
        out = Reader(p)
        pid_file = tmp_path / "child.pid"
        until("the child's command", lambda: pid_file.exists() and pid_file.read_text().strip() != "")
        listed: list[str] = []

        def shows_its_clock() -> bool:
            listed[:] = [eukhe("status", cwd=tmp_path, home=home).stdout]
            return "subagents: 1" in listed[0] and "s left before stalled" in listed[0]

        until("eukhe status to list the child", shows_its_clock, about=lambda: "".join(listed))
        [row] = sessions(tmp_path, home)
        cid = f"{row['id']}/0001.c1"
        assert f"c1.1 ({cid}, session {row['id']})" in listed[0]
        aborted = eukhe("abort", cid, cwd=tmp_path, home=home)
        assert aborted.returncode == 0, aborted.stderr
        assert p.wait(timeout=60) == 0, "".join(out.err)
    pid = int(pid_file.read_text())
    from tests.tools.helpers import alive

    until("the child's command to be gone", lambda: not alive(pid), deadline=10)
    [report] = reports_in(row["id"], tmp_path, home)
    assert report.startswith("[child-failed child:c1.1] aborted"), report


def test_a_cancelled_child_leaves_none_of_its_processes(tmp_path: Path) -> None:
    """No process outlives what owns it: a child whose kernel runs a detached cell and a
    background `bash()` command is cancelled by its parent; its kernel, the cell and the
    command are all gone while the parent still runs, and a cancel owes no report."""
    from tests.proc import Reader, start, until
    from tests.tools.helpers import alive

    home = home_with(tmp_path, {"toolBlockingBudgetMs": 500, **UNCONFINED})  # it reads the kernel's pids
    cell = (
        "import os, time\n"
        "h = bash('sleep 300')\n"
        "open('kernel.pids', 'w').write(f'{os.getpid()} {h.pid}')\n"
        "time.sleep(300)\n"
    )
    stop = {"name": "stop_child", "arguments": {"child": "c1.1", "how": "cancel"}}
    goes_on = "for i in $(seq 600); do [ -f parent.go ] && break; sleep 0.1; done"
    script = [
        {"when": "use the kernel", "results": 0, "calls": [{"name": "ipython", "arguments": {"code": cell}}]},
        {"when": "use the kernel", "results": 1, **bash("sleep 300")},
        {"when": "go", "results": 0, **spawn("use the kernel")},
        {"when": "go", "results": 1, **bash("while [ ! -s kernel.pids ]; do sleep 0.1; done; sleep 1")},
        {"when": "go", "results": 2, "calls": [stop]},
        # the parent goes on meanwhile, until the test has seen the child's processes gone (60 s at most)
        {"when": "go", "results": 3, **bash(goes_on)},
        {"when": "go", "results": 4, "text": "cancelled it"},
    ]
    with FauxServer(parse(script)) as server:
        p = start("run", "--model", "vllm/m", "--base-url", server.url, "go", cwd=tmp_path, home=home)
        out = Reader(p)
        until(
            "the cancel",
            lambda: any("cancelled by its parent" in x for x in out.out),
            about=lambda: "".join(out.err),
        )
        pids = [int(x) for x in (tmp_path / "kernel.pids").read_text().split()]
        assert len(pids) == 2
        until("the kernel and its command to end", lambda: not any(alive(pid) for pid in pids), deadline=10)
        assert p.poll() is None  # while its parent runs: they ended with the child, not with the process
        (tmp_path / "parent.go").touch()
        assert p.wait(timeout=60) == 0, "".join(out.err)
    [row] = sessions(tmp_path, home)
    assert reports_in(row["id"], tmp_path, home) == []  # a cancel owes nothing


def test_ctrl_c_leaves_the_children_running_and_the_next_run_gets_their_reports(tmp_path: Path) -> None:
    """A closing parent admits nothing: Ctrl-C while `eukhe run` waits for its subagent
    closes the session and leaves the child running (the owner takes it up); its report
    stays owed, and the session's next run gets it at its start, once."""
    import signal

    from tests.proc import Reader, start, until

    home = home_with(tmp_path)
    script = [
        {"when": "take a while", "results": 0, **bash("sleep 4")},
        {"when": "take a while", "results": 1, "text": "finally done"},
        {"when": "[child-", "results": 0, "text": "noted"},
        {"when": "what did it say", "results": 0, "text": "it said finally done"},
        {"when": "go", "results": 0, **spawn("take a while")},
        {"when": "go", "results": 1, "text": "spawned"},
    ]
    with FauxServer(parse(script)) as server:
        p = start(
            "run", "--model", "vllm/m", "--base-url", server.url, "--events", "go", cwd=tmp_path, home=home
        )
        out = Reader(p)
        until("the wait for the child", lambda: any("waiting for 1 subagent" in x for x in out.out))
        p.send_signal(signal.SIGINT)
        p.wait(timeout=30)
        events = [json.loads(x) for x in out.to_end().out]
        said = [e["text"] for e in events if e["type"] == "say"]
        assert "left 1 subagent running: their reports wait for this session's next run" in said, said
        # the line that says so comes before the run's outcome: the stream ends with it
        assert events[-1]["type"] == "outcome" and events[-1]["answer"] == "spawned", events[-1]
        [row] = sessions(tmp_path, home)
        cid = f"{row['id']}/0001.c1"

        def child_ended() -> bool:
            got = json.loads(eukhe("status", "--json", cwd=tmp_path, home=home).stdout or "{}")
            return not [
                k for k in got.get("subagents") or [] if (k.get("watch") or {}).get("phase") == "watch"
            ]

        until("the owner to finish the child", child_ended, deadline=90)
        done = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "--session", row["id"], "what did it say",
            cwd=tmp_path, home=home,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    got = reports_in(row["id"], tmp_path, home)
    assert got == [f"[child-exited: no-reply child:{name_of(cid)}] Last assistant text: finally done"], got


def test_a_child_answers_only_once_its_own_child_has_reported(tmp_path: Path) -> None:
    """Two levels: the child spawns a grandchild and answers at once; it goes on when the
    grandchild's report comes, and its report to the parent is what it said then."""
    home = home_with(tmp_path, {"subagents": {"maxDepth": 2}})
    script = [
        {"when": "grand task", "results": 0, **bash("sleep 1")},
        {"when": "grand task", "results": 1, "text": "grand done"},
        {"when": "child:c1.1.1]", "results": 1, "text": "my child said grand done"},  # its spawn before
        {"when": "child task", "results": 0, **spawn("grand task")},
        {"when": "child task", "results": 1, "text": "waiting for my child"},
        {"when": "child:c1.1]", "results": 0, "text": "noted"},
        {"when": "go", "results": 0, **spawn("child task")},
        {"when": "go", "results": 1, "text": "spawned"},
    ]
    with FauxServer(parse(script)) as server:
        done = run(server, tmp_path, home)
    assert done.returncode == 0, done.stderr
    [row] = sessions(tmp_path, home)
    assert reports_in(row["id"], tmp_path, home) == [
        "[child-exited: no-reply child:c1.1] Last assistant text: my child said grand done"
    ]
