"""A run eukhe 0.1 began (step layout 1, no `permit` step) resumes through the permission
gate: what it recorded replays as recorded, and a call it had not recorded yet is asked of
the rules like any other."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from eukhe.ai.faux import FauxServer, parse
from tests.proc import eukhe, messages
from tests.store.test_store_safety import CUT, FIXTURE, OLD_CWD, OLD_URL, in_a_home

COMMAND = "echo started > s.txt; sleep 60"  # the bash call the 0.1 run's model asked for
RAN = "echo started > s.txt"  # the same call, without its wait


def cut_before_its_call(db: Path, work: Path, url: str) -> None:
    """The fixture's 0.1 run, cut off after its model asked for the bash call and before
    the call's first step (its `intent`) was recorded; its model and folder these."""
    c = sqlite3.connect(db)
    with c:
        c.execute(
            "DELETE FROM operation_outputs WHERE workflow_uuid = ? AND function_name = 'intent'",
            (f"{CUT}/0001",),
        )
        rows = list(c.execute("SELECT workflow_uuid, function_id, output FROM operation_outputs"))
        for wid, fid, out in rows:  # JSON now (the store's opening rewrote the pickles)
            if out and COMMAND in out:
                c.execute(
                    "UPDATE operation_outputs SET output = ? WHERE workflow_uuid = ? AND function_id = ?",
                    (out.replace(COMMAND, RAN), wid, fid),
                )
        for wid, text in list(c.execute("SELECT workflow_uuid, inputs FROM workflow_input")):
            fixed = text.replace(OLD_URL, url).replace(OLD_CWD, str(work))
            c.execute("UPDATE workflow_input SET inputs = ? WHERE workflow_uuid = ?", (fixed, wid))
    c.close()


@pytest.mark.parametrize("rules", [{"deny": ["Bash"]}, {"ask": ["Bash(echo:*)"]}], ids=["deny", "ask"])
def test_a_call_a_cut_off_01_run_had_not_made_is_denied_by_the_rules_on_recovery(
    tmp_path: Path, rules: dict[str, list[str]]
) -> None:
    """The attack: a run begun under 0.1 was cut off before a call the rules now deny (or
    ask, with nobody to answer: denied). Replayed without the gate, it ran the call."""
    home, work, db = in_a_home(FIXTURE, tmp_path)
    migrated = eukhe("store", "migrate", cwd=work, home=home)  # its rows as JSON, to be edited
    assert migrated.returncode == 0, migrated.stderr
    (home / "settings.json").write_text(json.dumps({"permissions": rules}))
    script = [{"when": "sleep", "results": 1, "text": "not run, then"}]
    with FauxServer(parse(script)) as server:
        cut_before_its_call(db, work, server.url)
        resumed = eukhe("resume", cwd=work, home=home)
    assert resumed.returncode == 0, resumed.stderr
    assert not (work / "s.txt").exists(), "the recovered 0.1 run ran a call its rules deny"
    got = messages(CUT, work, home)
    assert got[-1]["content"] == "not run, then", got
    denied = "Tool bash was not run: permission denied"
    assert got[-2]["role"] == "tool" and got[-2]["content"].startswith(denied), got[-2]
