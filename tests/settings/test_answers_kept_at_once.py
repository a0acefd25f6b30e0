"""A person's answers kept in the home (`approvals.json`, `trust.json`) are read, changed and
written under the file's lock (`settings.locked`): many terminals answering at once all
count, and a lock nobody frees is given up at its deadline, with the file named."""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest

from eukhe.home import HomeError
from eukhe.rules.permission import Kind, Rule, Source
from eukhe.settings import trust
from eukhe.settings.approvals import approvals, approvals_path, approve
from eukhe.settings.locked import lock_path, locked

WRITERS = 12  # processes answering at once
EACH = 4  # answers each
DEADLINE = 120.0  # seconds the processes may take, all told (they import eukhe first)


def _approving(home: str, project: str, i: int, start: Any) -> None:
    start.wait(DEADLINE)  # every writer imported and ready: they answer together
    for j in range(EACH):
        approve(Path(home), Path(project), [Rule(Kind.ALLOW, "Bash", f"echo {i}-{j}", Source.APPROVED)])


def _trusting(home: str, folders: str, i: int, start: Any) -> None:
    start.wait(DEADLINE)
    for j in range(EACH):
        trust.record(Path(home), Path(folders) / f"f{i}-{j}", True)


def _all_at_once(target: Any, home: Path, where: Path) -> None:
    ctx = multiprocessing.get_context("spawn")  # real processes, none forked from the test's threads
    start = ctx.Barrier(WRITERS)
    procs = [ctx.Process(target=target, args=(str(home), str(where), i, start)) for i in range(WRITERS)]
    for p in procs:
        p.start()
    end = time.monotonic() + DEADLINE
    for p in procs:
        p.join(max(0.0, end - time.monotonic()))
    for p in procs:
        if p.is_alive():
            p.kill()
            p.join(10)
    assert [p.exitcode for p in procs] == [0] * WRITERS


def test_many_terminals_approving_at_once_keep_every_approval(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    _all_at_once(_approving, home, project)
    kept = {r.pattern for r in approvals(home, project)}
    missing = {f"echo {i}-{j}" for i in range(WRITERS) for j in range(EACH)} - kept
    assert not missing, f"{len(missing)} approvals lost: {sorted(missing)}"
    assert approvals_path(home).stat().st_mode & 0o777 == 0o600


def test_many_terminals_trusting_folders_at_once_keep_every_record(tmp_path: Path) -> None:
    home, folders = tmp_path / "home", tmp_path / "folders"
    folders.mkdir()
    _all_at_once(_trusting, home, folders)
    kept = {r.folder for r in trust.records(home)}
    missing = {str(folders.resolve() / f"f{i}-{j}") for i in range(WRITERS) for j in range(EACH)} - kept
    assert not missing, f"{len(missing)} trust records lost: {sorted(missing)}"
    assert trust.records_path(home).stat().st_mode & 0o777 == 0o600


def test_a_lock_nobody_frees_is_given_up_at_its_deadline_and_nothing_is_written(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    path = approvals_path(home)
    fd = os.open(lock_path(path), os.O_RDWR | os.O_CREAT, 0o600)  # another open: flock excludes it
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        expected = (
            f"^cannot change {re.escape(str(path))}: another eukhe process has held its lock "
            f"{re.escape(str(lock_path(path)))} for more than 0.2 s; nothing was written; fix: try again, "
            f"or end the process that holds it \\(`fuser {re.escape(str(lock_path(path)))}` names it\\)$"
        )
        with pytest.raises(HomeError, match=expected), locked(path, wait=0.2):
            pytest.fail("the block ran without the lock")
        assert not path.exists()
    finally:
        os.close(fd)
    rule = Rule(Kind.ALLOW, "Bash", "echo hi", Source.APPROVED)
    assert [r.pattern for r in approve(home, tmp_path, [rule])] == ["echo hi"]  # freed: it is kept
