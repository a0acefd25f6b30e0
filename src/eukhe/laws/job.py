"""The laws of background jobs (issue 54) over `rules.job`: jobs, their process trees, their
holder, its session, a clock, and their output.

The walk's world: 1-2 jobs started at 0 with a lifetime of the cfg's, each a tree of
processes: its first process (it takes SIGTERM), a child that ignores SIGTERM, and (a cfg's
choice) a grandchild that ignores it too and has left the job's process group (`setsid`).
A signal reaches the processes its target names (`To`): the tree, every one; the group, those
still in it; the leader, the first. SIGKILL ends each it reaches, SIGTERM each that takes it.

The holder (the process that started the jobs and watches them) lives, or has died (CRASH,
at most the cfg's faults). While it lives, the runtime does what the rule says: on each input
below it calls the rule and sends the signal the rule gives to the job's tree, and time moves
only to its next look (`job.next_look`: the earliest due, at most TICK_S on), where it calls
`on_tick` with whether the tree has a process left. While it is dead, time moves TICK_S a
tick and nobody acts, until the home's owner starts again (OWNER_START: `at_owner_start` on
every job's record, and the watch goes on).

Inputs: EXIT j (job j's first process exits by itself, 0), KILL j (`job_kill`), END w (the
session ends, is aborted, or its --timeout passes: every job ends), CRASH, OWNER_START, TICK;
and for the output, PRINT n (job 0 prints n bytes of its stream) and LOOK (`job_output`).

The world keeps its own account (never the rule's) of when each job's first reason to end
came (`reason`) and when a `job_kill` of it came (`killed`): the laws judge the rule by it.

How they are checked: exhaustively within the bounds printed, then sampled (Hypothesis: 1-2
jobs, either tree, lifetimes of 1-100 s, up to 2 faults, 40 inputs).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import job as rule
from eukhe.rules.job import END_BOUND_S, GRACE_S, TICK_S, Job, Output, Phase, Sig, Signal, Step, To, View, Why
from eukhe.rules.states import Choice, replace


@dataclass(frozen=True)
class Model:
    """The rule's functions the walk asks; a break swaps one. `hold` and `show`: the output's
    bounds in the walk (a few bytes: the rule's own are a megabyte and 30 kB)."""

    started: Callable[[float, float], Job]
    on_end: Callable[[Job, Why, float], Step]
    on_kill: Callable[[Job, float], Step]
    on_exit: Callable[[Job, int, float, bool], Step]
    on_tick: Callable[[Job, float, bool], Step]
    at_owner_start: Callable[[Job, bool, float], Step]
    next_look: Callable[[tuple[Job, ...], float], float]
    appended: Callable[[Output, bytes, int], Output]
    output_view: Callable[[Output, int], tuple[View, Output]]
    hold: int = 4
    show: int = 3


MODEL = Model(
    rule.started,
    rule.on_end,
    rule.on_kill,
    rule.on_exit,
    rule.on_tick,
    rule.at_owner_start,
    rule.next_look,
    rule.appended,
    rule.output_view,
)


@dataclass(frozen=True)
class JCfg:
    """A walk's bounds: jobs; whether each tree has a grandchild that left the group; the
    jobs' lifetime; holder deaths at most; whether the walk prints and looks (then alone:
    one job, no deaths); the session's ends offered."""

    jobs: int = 1
    escapee: bool = True
    lifetime: float = 100.0
    faults: int = 0
    prints: bool = False
    ends: tuple[Why, ...] = (Why.SESSION_END, Why.ABORT, Why.TIMEOUT)


def cfg_valid(cfg: JCfg) -> bool:
    return (1 <= cfg.jobs <= 2) & (cfg.lifetime > 0) & (cfg.faults >= 0)


@dataclass(frozen=True)
class Proc:
    alive: bool = True
    in_group: bool = True
    ignores_term: bool = False


@dataclass(frozen=True)
class JobW:
    """One job: the rule's record, its processes (the first is its command), and the world's
    account: when its first reason to end came, when a `job_kill` of it first came."""

    job: Job
    procs: tuple[Proc, ...]
    reason: float | None = None
    killed: float | None = None


NO_OUTPUT = Output()


@dataclass(frozen=True)
class JState:
    t: float
    jobs: tuple[JobW, ...]
    holder: bool = True
    watched_since: float = 0.0  # since when the living holder watches (its start, or the owner's)
    over: bool = False  # the session has ended
    faults: int = 0
    out: Output = NO_OUTPUT
    printed: int = 0  # bytes job 0 printed in all (the world's count)


class Kind(Choice):
    EXIT = "exit"
    KILL = "kill"
    END = "end"
    CRASH = "crash"
    OWNER_START = "owner start"
    TICK = "tick"
    PRINT = "print"
    LOOK = "look"


@dataclass(frozen=True)
class JIn:
    kind: Kind
    who: int = 0
    why: Why | None = None
    n: int = 0


def valid(cfg: JCfg, s: JState) -> bool:
    return len(s.jobs) == cfg.jobs


def stream(a: int, b: int) -> bytes:
    """Bytes a..b of what job 0 prints: each byte says where it is (mod 251)."""
    return bytes(i % 251 for i in range(a, b))


def tree(cfg: JCfg) -> tuple[Proc, ...]:
    procs: tuple[Proc, ...] = (Proc(), Proc(ignores_term=True))
    if cfg.escapee:
        procs += (Proc(in_group=False, ignores_term=True),)
    return procs


def start(m: Model, cfg: JCfg) -> JState:
    return JState(0.0, tuple(JobW(m.started(0.0, cfg.lifetime), tree(cfg)) for _ in range(cfg.jobs)))


def _alive(w: JobW) -> bool:
    return any(p.alive for p in w.procs)


def _signal(procs: tuple[Proc, ...], sig: Signal | None) -> tuple[Proc, ...]:
    if sig is None:
        return procs
    out = []
    for i, p in enumerate(procs):
        reached = sig.to is To.TREE or (sig.to is To.GROUP and p.in_group) or (sig.to is To.LEADER and i == 0)
        if p.alive and reached and (sig.sig is Sig.KILL or not p.ignores_term):
            p = Proc(False, p.in_group, p.ignores_term)
        out.append(p)
    return tuple(out)


def _stepped(w: JobW, step: Step, reason: float | None = None, killed: float | None = None) -> JobW:
    job, sig = step
    return JobW(
        job,
        _signal(w.procs, sig),
        w.reason if w.reason is not None else reason,
        w.killed if w.killed is not None else killed,
    )


def _reasoned(w: JobW, t: float) -> JobW:
    return w if w.reason is not None else JobW(w.job, w.procs, t, w.killed)


def nxt(m: Model, cfg: JCfg, s: JState, x: JIn) -> JState:
    k, t = x.kind, s.t
    jobs = list(s.jobs)
    if k is Kind.PRINT:
        out = m.appended(s.out, stream(s.printed, s.printed + x.n), m.hold)
        return replace(s, out=out, printed=s.printed + x.n)
    if k is Kind.LOOK:
        return replace(s, out=m.output_view(s.out, m.show)[1])
    if k is Kind.EXIT:
        w = jobs[x.who]
        first = w.procs[0]
        procs = (Proc(False, first.in_group, first.ignores_term), *w.procs[1:])
        w = JobW(w.job, procs, w.reason if w.reason is not None else t, w.killed)
        if s.holder:
            w = _stepped(w, m.on_exit(w.job, 0, t, _alive(w)))
        jobs[x.who] = w
        return replace(s, jobs=tuple(jobs))
    if k is Kind.KILL:
        jobs[x.who] = _stepped(jobs[x.who], m.on_kill(jobs[x.who].job, t), t, t)
        return replace(s, jobs=tuple(jobs))
    if k is Kind.END:
        why = x.why if x.why is not None else Why.SESSION_END
        ended = tuple(_stepped(w, m.on_end(w.job, why, t), t) for w in jobs)
        return replace(s, jobs=ended, over=True)
    if k is Kind.CRASH:
        # the holder's death is a reason for each of its jobs: they are ended at the owner's start
        return replace(s, jobs=tuple(_reasoned(w, t) for w in jobs), holder=False, faults=s.faults + 1)
    if k is Kind.OWNER_START:
        found = tuple(_stepped(w, m.at_owner_start(w.job, False, t)) for w in jobs)
        return replace(s, jobs=found, holder=True, watched_since=t)
    # TICK
    if not s.holder:
        return replace(s, t=t + TICK_S)
    at = m.next_look(tuple(w.job for w in jobs), t)
    looked = []
    for w in jobs:
        looked.append(_stepped(w, m.on_tick(w.job, at, _alive(w))))
    return replace(s, t=at, jobs=tuple(looked))


def inputs(cfg: JCfg, s: JState) -> list[JIn]:
    if cfg.prints:
        return [JIn(Kind.PRINT, n=1), JIn(Kind.PRINT, n=5), JIn(Kind.LOOK)]
    xs: list[JIn] = []
    for j, w in enumerate(s.jobs):
        if w.procs[0].alive:
            xs.append(JIn(Kind.EXIT, j))
        if s.holder and not s.over and w.job.phase is not Phase.ENDED:
            xs.append(JIn(Kind.KILL, j))
    if s.holder:
        if not s.over:
            xs += [JIn(Kind.END, why=why) for why in cfg.ends]
        if s.faults < cfg.faults:
            xs.append(JIn(Kind.CRASH))
    else:
        xs.append(JIn(Kind.OWNER_START))
    if any(_alive(w) for w in s.jobs) or any(w.job.phase is not Phase.ENDED for w in s.jobs):
        xs.append(JIn(Kind.TICK))
    return xs


# ---------------------------------------------------------------- laws


def job_ends(m: Model, cfg: JCfg, s: JState) -> bool:
    """No process of a job lives END_BOUND_S after the first reason it ends came (its lifetime
    passing counts from its end), counted from the owner's start when its holder had died."""
    if not s.holder:
        return True
    for w in s.jobs:
        if not _alive(w):
            continue
        r = w.job.started + cfg.lifetime
        if w.reason is not None and w.reason < r:
            r = w.reason
        if s.t >= max(r, s.watched_since) + END_BOUND_S:
            return False
    return True


def job_kill_takes_the_tree(m: Model, cfg: JCfg, s: JState) -> bool:
    """A job the rule says has ended has no process left; and GRACE_S after a `job_kill`
    (its holder watching since), none of the processes it started lives: grandchildren and
    those that left its group included."""
    for w in s.jobs:
        if not _alive(w):
            continue
        if w.job.phase is Phase.ENDED:
            return False
        if s.holder and w.killed is not None and w.killed >= s.watched_since and s.t >= w.killed + GRACE_S:
            return False
    return True


def job_output_bounded(m: Model, cfg: JCfg, g: None, s: JState, x: JIn, t: JState) -> bool:
    """What is held stays within its bound however much is printed; a look shows at most its
    bound, the latest of what came since the last look, and says the rest was cut."""
    if len(t.out.kept) > m.hold:
        return False
    if x.kind is not Kind.LOOK:
        return True
    view = m.output_view(s.out, m.show)[0]
    new = s.printed - s.out.seen
    shown = len(view.data)
    if shown > m.show or view.cut != new - shown or view.data != stream(s.printed - shown, s.printed):
        return False
    return (view.cut > 0) == (str(view.cut) in view.note)


LAWS = (
    Law(
        "job_kill_takes_the_tree",
        "issue 54",
        "A kill ends every process the job started, its grandchildren and those that left its "
        "process group included, GRACE_S after it; a job said ended has none left (issue 54).",
        node=job_kill_takes_the_tree,
        prove=False,
    ),
    Law(
        "job_ends",
        "issue 54",
        "Every job ends: by itself, by job_kill, by its session's end, abort or --timeout, by its "
        "lifetime bound, or by its holder's death (at the owner's next start), and none of its "
        "processes outlives these by more than END_BOUND_S (issue 54).",
        node=job_ends,
        prove=False,
    ),
    Law(
        "job_output_bounded",
        "issue 54",
        "A job's output held and shown stays within its bound however much it prints, and the cut "
        "is said (issue 54).",
        history=job_output_bounded,
        prove=False,
    ),
)


# ---------------------------------------------------------------- breaks


def _no_kill(job: Job, now: float, alive: bool) -> Step:
    """SIGTERM, then nothing: a child that ignores it lives on."""
    after, sig = rule.on_tick(job, now, alive)
    return after, None if sig is not None and sig.sig is Sig.KILL else sig


def _kill_leader(job: Job, now: float, alive: bool) -> Step:
    after, sig = rule.on_tick(job, now, alive)
    return after, Signal(Sig.KILL, To.LEADER) if sig is not None and sig.sig is Sig.KILL else sig


def _group(step: Step) -> Step:
    after, sig = step
    return after, None if sig is None else Signal(sig.sig, To.GROUP)


def _group_end(job: Job, why: Why, now: float) -> Step:
    return _group(rule.on_end(job, why, now))


def _group_kill(job: Job, now: float) -> Step:
    return _group(rule.on_kill(job, now))


def _group_exit(job: Job, status: int, now: float, alive: bool) -> Step:
    return _group(rule.on_exit(job, status, now, alive))


def _group_tick(job: Job, now: float, alive: bool) -> Step:
    return _group(rule.on_tick(job, now, alive))


def _group_found(job: Job, holder_alive: bool, now: float) -> Step:
    return _group(rule.at_owner_start(job, holder_alive, now))


def _kill_restarts_grace(job: Job, now: float) -> Step:
    """A second job_kill puts the SIGKILL off again."""
    if job.phase is Phase.ENDING:
        return replace(job, kill_at=now + GRACE_S), Signal(Sig.TERM)
    return rule.on_kill(job, now)


def _exit_ends_at_once(job: Job, status: int, now: float, alive: bool) -> Step:
    """Its command's exit taken for the job's end: what it left running is forgotten."""
    return rule.on_exit(job, status, now, False)


def _holder_forgotten(job: Job, holder_alive: bool, now: float) -> Step:
    return job, None


def _no_lifetime(job: Job, now: float, alive: bool) -> Step:
    return rule.on_tick(replace(job, lifetime=float("inf")), now, alive)


def _session_end_ignored(job: Job, why: Why, now: float) -> Step:
    if why is Why.SESSION_END:
        return job, None
    return rule.on_end(job, why, now)


def _unbounded(out: Output, data: bytes, hold: int) -> Output:
    return rule.appended(out, data, 1 << 30)


def _cut_unsaid(out: Output, show: int) -> tuple[View, Output]:
    view, after = rule.output_view(out, show)
    return View(view.data, view.cut, ""), after


def _from_the_start(out: Output, show: int) -> tuple[View, Output]:
    """A look that shows all that is kept, what earlier looks showed included."""
    view, after = rule.output_view(replace(out, seen=0), show)
    return view, after


def _sleeps_long(jobs: tuple[Job, ...], now: float) -> float:
    """A watch that looks every 10 s, whatever is due."""
    return now + 10 * TICK_S


def _show_unbounded(out: Output, show: int) -> tuple[View, Output]:
    return rule.output_view(out, 1 << 30)


def _mutant(name: str, **swap: object) -> Mutant:
    return Mutant(name, "issue 54", replace(MODEL, **swap))  # type: ignore[arg-type]


MUTANTS = (
    _mutant("no SIGKILL after SIGTERM", on_tick=_no_kill),
    _mutant("SIGKILL only to the group leader", on_tick=_kill_leader),
    _mutant(
        "a process that left the group spared",
        on_end=_group_end,
        on_kill=_group_kill,
        on_exit=_group_exit,
        on_tick=_group_tick,
        at_owner_start=_group_found,
    ),
    _mutant("a second job_kill that puts the SIGKILL off", on_kill=_kill_restarts_grace),
    _mutant("a watch that sleeps past what is due", next_look=_sleeps_long),
    _mutant("an exited command's children left running", on_exit=_exit_ends_at_once),
    _mutant("the holder's death forgotten at the owner's start", at_owner_start=_holder_forgotten),
    _mutant("the lifetime bound ignored", on_tick=_no_lifetime),
    _mutant("the session's end not ending its jobs", on_end=_session_end_ignored),
    _mutant("output held unbounded", appended=_unbounded),
    _mutant("the cut not said", output_view=_cut_unsaid),
    _mutant("a look that shows everything from the start", output_view=_from_the_start),
    _mutant("a look past its bound", output_view=_show_unbounded),
)

MEANT = {
    "no SIGKILL after SIGTERM": "job_kill_takes_the_tree",
    "SIGKILL only to the group leader": "job_kill_takes_the_tree",
    "a process that left the group spared": "job_kill_takes_the_tree",
    "a second job_kill that puts the SIGKILL off": "job_kill_takes_the_tree",
    "a watch that sleeps past what is due": "job_ends",
    "an exited command's children left running": "job_kill_takes_the_tree",
    "the holder's death forgotten at the owner's start": "job_ends",
    "the lifetime bound ignored": "job_ends",
    "the session's end not ending its jobs": "job_ends",
    "output held unbounded": "job_output_bounded",
    "the cut not said": "job_output_bounded",
    "a look that shows everything from the start": "job_output_bounded",
    "a look past its bound": "job_output_bounded",
}
"""Each break and the law meant to kill it: `eukhe laws` fails one killed first by another."""


# ---------------------------------------------------------------- the area


def cfgs() -> Iterator[JCfg]:
    yield JCfg(prints=True)  # one job printing 1 or 5 bytes at a time, looked at
    yield JCfg(faults=1, ends=(Why.SESSION_END,))  # its holder dies; the owner starts again
    yield JCfg(lifetime=1.0, ends=())  # its lifetime passes
    yield JCfg(
        jobs=2, escapee=False, ends=(Why.SESSION_END, Why.ABORT, Why.TIMEOUT)
    )  # a session's end ends both


def sample_cfg(seed: int) -> JCfg:
    r = random.Random(seed)
    return JCfg(
        jobs=r.randint(1, 2),
        escapee=r.random() < 0.5,
        lifetime=r.choice((1.0, 3.0, 100.0)),
        faults=r.randint(0, 2),
        prints=r.random() < 0.25,
    )


AREA = Area(
    name="job",
    model=MODEL,
    cfg_type=JCfg,
    state_type=JState,
    input_type=JIn,
    proof_cases=lambda: [],
    valid=valid,
    cfg_valid=cfg_valid,
    start=start,
    next=nxt,
    inputs=inputs,
    cfgs=cfgs,
    bounds=(
        "a job printing 1 or 5 bytes, held 4, shown 3; a job of 3 processes (one ignoring SIGTERM, "
        "one that left the group) whose holder dies once, or whose lifetime of 1 s passes; "
        "2 jobs of 2 processes ended by the session's end, abort or timeout"
    ),
    depth=6,
    sample_cfg=sample_cfg,
    laws=LAWS,
    mutants=MUTANTS,
    meant=MEANT,
    samples=80,
    sample_length=40,
)
