"""`EUKHE_OWNER_FORK`: a home's owner forked by a warm template (its imports done), as the
test suite starts its owners (tests/conftest.py); with no template there, or one that is
not this Python's, the owner is a process of its own, as always."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from eukhe.ai.faux import FauxServer, parse
from eukhe.client.client import read_info
from eukhe.client.handoff import OWNER_FORK
from tests import forks
from tests.proc import eukhe


def owner_of(home: Path) -> int:
    end = time.monotonic() + 10
    while (info := read_info(home)) is None:
        assert time.monotonic() < end, "the owner wrote nothing of itself"
        time.sleep(0.05)
    return int(info["pid"])


def stat(pid: int) -> tuple[int, int]:
    """A process's parent and session."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return int(fields[1]), int(fields[3])


def a_run(tmp_path: Path, fork: str) -> int:
    with FauxServer(parse(["done"])) as server:
        done = eukhe(
            "run", "--model", "vllm/m", "--base-url", server.url, "--json", "go",
            cwd=tmp_path, extra={OWNER_FORK: fork},
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1])["answer"] == "done"
    return owner_of(tmp_path / "home")


def test_the_owner_is_forked_by_the_template_and_outlives_its_client(tmp_path: Path) -> None:
    template = forks.template()
    pid = a_run(tmp_path, template.path)
    parent, session = stat(pid)
    assert parent == template.proc.pid  # the template's child, not the client's
    assert session == pid  # a session of its own: the client's end is not its end
    assert b"eukhe.warm" in Path(f"/proc/{pid}/cmdline").read_bytes()
    os.kill(pid, 0)  # alive after its client ended


def test_with_no_template_there_the_owner_is_a_process_of_its_own(tmp_path: Path) -> None:
    pid = a_run(tmp_path, str(tmp_path / "nothing.sock"))
    assert b"eukhe.owner" in Path(f"/proc/{pid}/cmdline").read_bytes()
