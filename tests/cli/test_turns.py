"""Runs of one home take turns, and say so (issue 56): a second `eukhe run` started while a
first holds the root-turn lease says once on stderr for whom it waits, `eukhe status` lists
it in the queue, and it answers once the first has."""

from __future__ import annotations

import json
from pathlib import Path

from eukhe.ai.faux import FauxServer, parse
from tests.proc import Reader, eukhe, start, until


def test_a_run_that_waits_for_its_turn_says_for_whom_and_is_in_the_queue(tmp_path: Path) -> None:
    home, gate = tmp_path / "home", tmp_path / "gate"
    script = [
        {"when": "first", "text": "first done", "stallAfter": 0, "stallUntil": str(gate)},
        {"when": "second", "text": "second done"},
    ]
    with FauxServer(parse(script)) as server:
        args = ("run", "--model", "vllm/m", "--base-url", server.url)
        one = start(*args, "first", cwd=tmp_path, home=home)
        first = Reader(one)
        until("the first run's request", lambda: any(s.method == "POST" for s in server.seen))
        two = start(*args, "second", cwd=tmp_path, home=home)
        second = Reader(two)
        until("the second run to say it waits", lambda: any("waiting for the root-turn lease" in line
                                                            for line in second.err))  # fmt: skip
        status = json.loads(eukhe("status", "--json", cwd=tmp_path, home=home).stdout)
        [waiter] = status["lease"]["waiters"]
        assert status["lease"]["holder"]["run"].endswith("/0001") and waiter["run"].endswith("/0001")
        assert waiter["session"] != status["lease"]["holder"]["session"]
        gate.write_text("go")
        assert one.wait(60) == 0 and two.wait(60) == 0
    first.to_end()
    second.to_end()
    said = [line for line in second.err if "waiting for the root-turn lease" in line]
    assert len(said) == 1 and status["lease"]["holder"]["session"] in said[0], said
    assert "second done" in "".join(second.out) and "first done" in "".join(first.out)
