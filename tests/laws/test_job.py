"""The background jobs' rule (issue 54) at its edges, its laws there by their names, every
break aimed at one of them, and a history walked by hand: a job killed, its SIGTERM-proof
children gone at the grace, and the same under a break the laws catch. `eukhe laws --area
job` walks the rest and checks each break is killed by its own law."""

from __future__ import annotations

from eukhe.laws import areas
from eukhe.laws import job as laws
from eukhe.laws.job import JCfg, JIn, JState, Kind
from eukhe.rules import job
from eukhe.rules.job import GRACE_S, TICK_S, Output, Phase, Sig, Signal, To, Why


def test_the_laws_by_name_and_every_break_is_meant_for_one_of_them() -> None:
    assert areas.AREAS["job"] is laws.AREA
    assert [law.name for law in laws.AREA.laws] == [
        "job_kill_takes_the_tree",
        "job_ends",
        "job_output_bounded",
    ]
    assert laws.AREA.meant is laws.MEANT
    assert set(laws.MEANT) == {m.name for m in laws.AREA.mutants}
    assert set(laws.MEANT.values()) == {law.name for law in laws.AREA.laws}


def test_a_kill_sends_term_to_the_tree_then_kill_at_the_grace_and_again_a_tick_on() -> None:
    j = job.started(10.0, 60.0)
    j, sig = job.on_kill(j, 11.0)
    assert sig == Signal(Sig.TERM, To.TREE) and j.phase is Phase.ENDING and j.why is Why.KILLED
    assert job.due(j) == 11.0 + GRACE_S
    assert job.on_tick(j, 11.0 + GRACE_S - 0.001, alive=True) == (j, None)  # within the grace
    j, sig = job.on_tick(j, 11.0 + GRACE_S, alive=True)
    assert sig == Signal(Sig.KILL, To.TREE)
    assert job.due(j) == 11.0 + GRACE_S + TICK_S  # a process forked between a look and a kill
    again, sig = job.on_tick(j, 11.0 + GRACE_S + TICK_S, alive=True)
    assert sig == Signal(Sig.KILL, To.TREE)
    gone, sig = job.on_tick(again, 14.5, alive=False)
    assert sig is None and job.ended(gone) and job.due(gone) is None and gone.why is Why.KILLED


def test_a_second_reason_keeps_the_first_and_never_puts_the_kill_off() -> None:
    j, _ = job.on_end(job.started(0.0), Why.SESSION_END, 1.0)
    for later in (job.on_kill(j, 1.5), job.on_end(j, Why.TIMEOUT, 1.9), job.at_owner_start(j, False, 1.9)):
        assert later == (j, None)
    assert j.kill_at == 1.0 + GRACE_S and j.why is Why.SESSION_END


def test_the_lifetime_bound_ends_a_running_job_at_its_due() -> None:
    j = job.started(5.0, 30.0)
    assert job.due(j) == 35.0
    assert job.on_tick(j, 34.9, alive=True) == (j, None)
    ending, sig = job.on_tick(j, 35.0, alive=True)
    assert sig == Signal(Sig.TERM) and ending.why is Why.LIFETIME
    assert job.started(0.0, 0.0).lifetime == job.LIFETIME_S  # a setting left unset


def test_an_exit_with_children_left_ends_them_and_one_without_is_the_end() -> None:
    j = job.started(0.0)
    done, sig = job.on_exit(j, 3, 2.0, alive=False)
    assert sig is None and job.ended(done) and done.status == 3 and done.why is Why.EXITED
    left, sig = job.on_exit(j, 0, 2.0, alive=True)
    assert sig == Signal(Sig.TERM) and left.phase is Phase.ENDING and left.status == 0
    assert job.state(j) == "running"
    assert job.state(done) == "ended: its command exited, exit status 3"
    assert job.state(left) == "ending: its command exited"
    assert job.state(job.on_tick(job.on_kill(j, 1.0)[0], 1.5, alive=False)[0]) == "ended: job_kill"


def test_the_owner_start_ends_a_dead_holders_jobs_and_leaves_a_live_ones() -> None:
    j = job.started(0.0)
    assert job.at_owner_start(j, holder_alive=True, now=50.0) == (j, None)
    found, sig = job.at_owner_start(j, holder_alive=False, now=50.0)
    assert sig == Signal(Sig.TERM) and found.why is Why.HOLDER_DIED
    stale, _ = job.on_kill(j, 1.0)  # ending when its holder died: killed at the first look
    assert job.at_owner_start(stale, False, 50.0) == (stale, None)
    assert job.next_look((stale,), 50.0) == 50.0
    assert job.on_tick(stale, 50.0, alive=True)[1] == Signal(Sig.KILL)


def test_next_look_is_the_earliest_due_and_at_most_a_tick_on() -> None:
    assert job.next_look((), 7.0) == 7.0 + TICK_S
    assert job.next_look((job.started(0.0, 7.5),), 7.0) == 7.5
    assert job.next_look((job.started(0.0, 100.0),), 7.0) == 7.0 + TICK_S


def test_output_keeps_the_latest_part_and_a_look_shows_what_is_new_with_the_cut_said() -> None:
    out = job.appended(Output(), b"abcdef", hold=4)
    assert out.kept == b"cdef" and out.total == 6
    view, out = job.output_view(out, show=3)
    assert view.data == b"def" and view.cut == 3 and "3 bytes" in view.note
    view, out = job.output_view(out, show=3)
    assert view == job.View(b"", 0, "")  # nothing new
    out = job.appended(out, b"gh", hold=4)
    view, out = job.output_view(out, show=3)
    assert view.data == b"gh" and view.cut == 0 and view.note == ""
    out = job.appended(out, b"x" * 10, hold=4)
    view, _ = job.output_view(out, show=30)
    assert view.data == b"xxxx" and view.cut == 6 and "6 bytes" in view.note  # dropped from the file


KILLED = (
    JIn(Kind.KILL, 0),  # SIGTERM: the first process goes; its child and the one that left the group do not
    JIn(Kind.TICK),
    JIn(Kind.TICK),  # the grace: SIGKILL to the tree
    JIn(Kind.TICK),  # the tree is empty: ended
)


def walk(m: laws.Model, cfg: JCfg, xs: tuple[JIn, ...]) -> tuple[JState, list[str]]:
    s = laws.start(m, cfg)
    broken: list[str] = []
    for x in xs:
        s = laws.nxt(m, cfg, s, x)
        broken += [law.name for law in laws.LAWS if law.node is not None and not law.node(m, cfg, s)]
    return s, broken


def test_a_killed_jobs_whole_tree_is_gone_at_the_grace() -> None:
    s, broken = walk(laws.MODEL, JCfg(), KILLED)
    assert broken == []
    assert s.t == GRACE_S + TICK_S and job.ended(s.jobs[0].job)
    assert not any(p.alive for p in s.jobs[0].procs)


def test_signals_to_the_group_spare_the_process_that_left_it() -> None:
    spared = next(m for m in laws.MUTANTS if m.name == "a process that left the group spared")
    s, broken = walk(spared.model, JCfg(), KILLED[:3])
    assert broken == ["job_kill_takes_the_tree"]
    assert [p.alive for p in s.jobs[0].procs] == [False, False, True]
