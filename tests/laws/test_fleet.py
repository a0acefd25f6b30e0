"""The fleet's rule (issue 53) at its edges, its laws there by their names, and two
histories walked by hand: a cut executor fenced and its run taken up on another host, and
the same history under a break the laws catch. `eukhe laws --area fleet` walks the rest and
checks each break is killed by its own law."""

from __future__ import annotations

from eukhe.laws import areas
from eukhe.laws import fleet as laws
from eukhe.laws.fleet import FCfg, FIn, FState, Kind
from eukhe.rules import fleet
from eukhe.rules.fleet import FENCE_S, LEASE_TTL_S, Lease, Seen


def test_the_laws_by_name() -> None:
    assert areas.AREAS["fleet"] is laws.AREA
    assert [law.name for law in laws.AREA.laws] == [
        "fleet_dead_runs_taken",
        "fleet_one_worker",
        "fleet_partitioned_stops",
        "fleet_run_ends",
    ]
    assert set(laws.MEANT) == {mu.name for mu in laws.MUTANTS}


def test_the_fence_stops_before_anyone_may_take_and_the_bound_is_ttl_and_a_look() -> None:
    assert fleet.BEAT_S < FENCE_S < LEASE_TTL_S
    assert fleet.TAKE_BOUND_S == LEASE_TTL_S + fleet.WATCH_S


def test_may_record_until_the_fence_from_the_beats_send_time() -> None:
    lease = fleet.confirmed(fleet.held(100.0), 103.0)
    assert fleet.may_record(lease, 103.0 + FENCE_S - 0.001)
    assert not fleet.may_record(lease, 103.0 + FENCE_S)
    assert not fleet.may_record(Lease(), 0.0)  # never held
    assert not fleet.may_record(fleet.lost(lease), 103.5)  # lost: at once, whatever the clock


def test_a_confirmation_never_moves_back_and_a_lost_lease_stays_lost() -> None:
    lease = fleet.confirmed(fleet.held(10.0), 14.0)
    assert fleet.confirmed(lease, 12.0) == lease  # a late reply of an older beat
    gone = fleet.lost(lease)
    assert fleet.confirmed(gone, 20.0).lost
    assert not fleet.may_record(fleet.confirmed(gone, 20.0), 20.5)


def test_a_lease_is_gone_past_its_ttl_and_a_freed_lock_only_on_its_own_host() -> None:
    now = 1000.0
    fresh_cut_elsewhere = Seen(beat_at=now - 1.0, lock_held=False, process_gone=None)
    assert not fleet.gone(fresh_cut_elsewhere, now)  # it may live behind a cut: not yet
    assert fleet.gone(Seen(now - 1.0, lock_held=False, process_gone=True), now)  # dead, here
    assert not fleet.gone(Seen(now - 1.0, lock_held=False, process_gone=False), now)  # cut, here
    assert not fleet.gone(Seen(now - 1.0, lock_held=True, process_gone=True), now)  # a pid reused
    assert not fleet.gone(Seen(now - LEASE_TTL_S, lock_held=True, process_gone=None), now)
    assert fleet.gone(Seen(now - LEASE_TTL_S - 0.001, lock_held=True, process_gone=None), now)
    assert fleet.gone(Seen(None, lock_held=False, process_gone=None), now)
    assert not fleet.gone(Seen(None, lock_held=True, process_gone=None), now)


CUT_AND_TAKEN = (
    FIn(Kind.PARTITION, 0),  # executor 0's lease connection cut at 0; it lives
    FIn(Kind.STEP, 0, 0),  # within its fence: it records
    FIn(Kind.WATCH, 1),  # on another host, a freed lock says nothing yet
    FIn(Kind.TICK, dt=FENCE_S),
    FIn(Kind.STEP, 0, 0),  # at its fence: refused
    FIn(Kind.BEAT, 1),
    FIn(Kind.TICK, dt=LEASE_TTL_S - FENCE_S + 0.25),
    FIn(Kind.WATCH, 1),  # executor 0's lease is gone: taken
    FIn(Kind.HEAL, 0),
    FIn(Kind.BEAT, 0),  # its lock is gone: lost
    FIn(Kind.STEP, 0, 0),  # refused
    FIn(Kind.STEP, 1, 0),  # the run goes on on host 1 and ends
)


def walk(m: laws.Model, cfg: FCfg, xs: tuple[FIn, ...]) -> tuple[FState, list[str]]:
    s = laws.start(m, cfg)
    broken: list[str] = []
    for x in xs:
        t = laws.nxt(m, cfg, s, x)
        for law in laws.LAWS:
            if law.history is not None:
                ok = law.history(m, cfg, None, s, x, t)
            else:
                ok = law.node is not None and law.node(m, cfg, t)
            if not ok:
                broken.append(law.name)
        s = t
    return s, broken


def test_a_cut_executor_is_fenced_and_its_run_taken_up_on_another_host() -> None:
    s, broken = walk(laws.MODEL, FCfg(2, 2, 1), CUT_AND_TAKEN)
    assert broken == []
    assert s.runs[0] == laws.Run(holder=1, prev=0, steps=2, ended=True, by=1)
    assert s.ex[0].lease.lost and s.ex[0].told


def test_the_same_history_with_a_freed_lock_taken_for_gone_has_two_workers() -> None:
    freed = next(mu.model for mu in laws.MUTANTS if mu.name == "gone on a freed lock alone on another host")
    s, broken = walk(freed, FCfg(2, 2, 1), (*CUT_AND_TAKEN[:3], FIn(Kind.STEP, 0, 0)))
    assert s.runs[0].holder == 1 and s.runs[0].by == 0
    assert "fleet_one_worker" in broken
