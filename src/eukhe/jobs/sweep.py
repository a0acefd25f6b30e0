"""What the home's owner does with background jobs as it starts: it ends every job whose holder
died (`rules.job.at_owner_start`), so none outlives the process that held it.

A job whose keeper still runs is ended by its keeper (the pipe from its dead holder has closed;
a SIGTERM tells it again) and here alike, a keeper being a process that may have died a moment
ago. Here, by the rule's steps: SIGTERM to its tree (its cgroup's processes, and every process
that carries its mark), then SIGKILL after the grace, again every TICK_S while one lives. Its
record says ENDED once none is left; ended jobs' files are pruned after `record.KEEP_ENDED_S`."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from eukhe.home import HomeError
from eukhe.jobs import record
from eukhe.jobs.tree import Tree
from eukhe.rules import job as rule

__all__ = ["GIVE_UP_S", "sweep"]

GIVE_UP_S = rule.END_BOUND_S + 10 * rule.TICK_S
"""Seconds the sweep keeps killing a tree that will not die (a process in uninterruptible
sleep) before it says so and leaves it to the next start."""

_SIGS = {rule.Sig.TERM: signal.SIGTERM, rule.Sig.KILL: signal.SIGKILL}


@dataclass
class _Orphan:
    folder: Path
    meta: record.Meta
    state: record.State
    tree: Tree


def _orphans(root: Path) -> list[_Orphan]:
    found: list[_Orphan] = []
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    for name in names:
        folder = root / name
        meta = record.read_meta(folder)
        if meta is None:
            continue
        state = record.read_state(folder) or record.State(rule.started(meta.started, meta.lifetime))
        if rule.ended(state.job) or record.alive(meta.holder):
            continue
        if state.keeper is not None and record.alive(state.keeper):  # its keeper ends it too
            with contextlib.suppress(OSError):
                os.kill(state.keeper.pid, signal.SIGTERM)
        # only the cgroup its keeper made (named by its mark): a record that names another
        # (a process of the job outside the sandbox may write its folder) is not killed whole
        named = state.cgroup is not None and Path(state.cgroup).name == f"eukhe-{meta.mark}"
        cgroup = Path(state.cgroup) if named and state.cgroup else None
        found.append(_Orphan(folder, meta, state, Tree(meta.mark, cgroup, None)))
    return found


def sweep(
    home: Path,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], object] = time.sleep,
) -> list[str]:
    """Every job of `home` whose holder and keeper are gone, ended as the rule says (blocking, at
    most GIVE_UP_S); what was done, a line each (the owner's log)."""
    root = record.jobs_root(home)
    orphans, said = _orphans(root), []
    now = clock()
    jobs: dict[str, rule.Job] = {}
    for o in orphans:
        jobs[o.meta.id] = _step(o, rule.at_owner_start(o.state.job, False, now))
    until = now + GIVE_UP_S
    while True:
        live = [o for o in orphans if not rule.ended(jobs[o.meta.id])]
        now = clock()
        if not live or now >= until:
            break
        sleep(max(rule.next_look(tuple(jobs[o.meta.id] for o in live), now) - now, 0.05))
        now = clock()
        for o in live:
            jobs[o.meta.id] = _step(o, rule.on_tick(jobs[o.meta.id], now, o.tree.alive()))
    for o in orphans:
        job = jobs[o.meta.id]
        if rule.ended(job):
            o.tree.remove()
            said.append(f"background job {o.meta.id} ({o.meta.command[:60]}): its holder died; ended")
        else:
            said.append(f"background job {o.meta.id}: its processes would not die within {GIVE_UP_S:g} s")
    record.prune(home)
    return said


def _step(o: _Orphan, step: rule.Step) -> rule.Job:
    job, sig = step
    if sig is not None:
        o.tree.signal(_SIGS[sig.sig])
    if job != o.state.job:
        o.state = record.State(job, o.state.keeper, o.state.cgroup, o.state.notes)
        with contextlib.suppress(HomeError):  # its folder unwritable: the next start looks again
            record.write_state(o.folder, o.state)
    return job
