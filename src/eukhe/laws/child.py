"""The laws of H5.1 and H5.4 (a child's task: its call on each poll, its report
delivered exactly once, the abort rule) over `rules.child`, and its breaks.

The adversary: polls with any reading; the parent placing or withdrawing any
submission by id, closing and reopening; aborts of the task; deletes and cancels;
in any order. The parent's inbox keeps each submission's fate, read by id; a
submission to a closed parent is refused (withdrawn as it comes)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import child
from eukhe.rules.child import (
    Abort,
    Fate,
    Kept,
    Mode,
    Move,
    Owe,
    Part,
    Phase,
    Poll,
    Reading,
    Task,
    Verdict,
    WCfg,
)
from eukhe.rules.states import Choice


@dataclass(frozen=True)
class Model:
    polled: Callable[[WCfg, Task, Poll], Task]
    carry: Callable[[Task, Fate, bool], tuple[Task, Move]]
    aborted: Callable[[Task, Abort], Task]
    place: Callable[[Fate], Fate]
    withdraw: Callable[[Fate], Fate]
    parts: Callable[[Owe, bool, int], tuple[Part, ...]]
    kept: Callable[[int, bool], Kept]


MODEL = Model(child.polled, child.carry, child.aborted, child.place, child.withdraw, child.parts, child.kept)


@dataclass(frozen=True)
class TCfg:
    mode: Mode
    stall: int
    polls: int
    subs: int  # submissions the walk lets the task make (bounds the walk)
    changes: bool = False  # the child brought changes back (a worktree's branch, kept)

    @property
    def w(self) -> WCfg:
        return WCfg(self.stall, self.polls)


@dataclass(frozen=True)
class Sys:
    """The task, the parent's inbox (submission id -> fate), whether the parent is
    open, how many times a report entered the parent's transcript, and how many times
    the child's changes were told there (`told`: the CHANGES parts of what was placed)."""

    task: Task
    inbox: tuple[Fate, ...] = ()
    open: bool = True
    placed: int = 0
    told: int = 0


class Op(Choice):
    POLL = "poll"
    STEP = "step"  # the report task takes a step
    PLACE = "place"
    WITHDRAW = "withdraw"
    CLOSE = "close"
    REOPEN = "reopen"
    ABORT = "abort"


@dataclass(frozen=True)
class In:
    op: Op
    poll: Poll | None = None
    id: int = 0
    abort: Abort = Abort.TASK


def start(m: Model, cfg: TCfg) -> Sys:
    return Sys(child.task(cfg.w, cfg.mode))


def fate(s: Sys, sub: int) -> Fate:
    return s.inbox[sub] if 0 <= sub < len(s.inbox) else Fate.NONE


def _set(inbox: tuple[Fate, ...], i: int, f: Fate) -> tuple[Fate, ...]:
    if i < 0:
        return inbox
    padded = inbox + (Fate.NONE,) * (i + 1 - len(inbox))
    return (*padded[:i], f, *padded[i + 1 :])


def nxt(m: Model, cfg: TCfg, s: Sys, x: In) -> Sys:
    if x.op is Op.POLL and x.poll is not None:
        return Sys(m.polled(cfg.w, s.task, x.poll), s.inbox, s.open, s.placed, s.told)
    if x.op is Op.STEP:
        if s.task.phase is not Phase.REPORT:
            return s
        t, mv = m.carry(s.task, fate(s, s.task.sub), s.open)
        inbox = s.inbox
        if mv is Move.SUBMIT:  # a closed parent admits nothing: refused as it comes
            inbox = _set(inbox, t.sub, Fate.QUEUED if s.open else Fate.WITHDRAWN)
        return Sys(t, inbox, s.open, s.placed, s.told)
    if x.op is Op.PLACE:
        before = fate(s, x.id)
        after = m.place(before) if s.open else before
        entered = (after is Fate.PLACED) & (before is not Fate.PLACED)
        # what it says: the parts the rule gives this submission of the report owed
        said = sum(p is Part.CHANGES for p in m.parts(s.task.owe, cfg.changes, x.id)) if entered else 0
        inbox = _set(s.inbox, x.id, after) if x.id < len(s.inbox) else s.inbox
        return Sys(s.task, inbox, s.open, s.placed + entered, s.told + said)
    if x.op is Op.WITHDRAW:
        inbox = _set(s.inbox, x.id, m.withdraw(fate(s, x.id))) if x.id < len(s.inbox) else s.inbox
        return Sys(s.task, inbox, s.open, s.placed, s.told)
    if x.op is Op.CLOSE:
        return Sys(s.task, tuple(m.withdraw(f) for f in s.inbox), False, s.placed, s.told)
    if x.op is Op.REOPEN:
        return Sys(s.task, s.inbox, True, s.placed, s.told)
    if x.op is Op.ABORT:
        return Sys(m.aborted(s.task, x.abort), s.inbox, s.open, s.placed, s.told)
    return s


def cfg_valid(cfg: TCfg) -> bool:
    return (cfg.stall > 0) & (cfg.polls > 0) & (cfg.subs > 0)


def valid(cfg: TCfg, s: Sys) -> bool:
    return child.w_valid(cfg.w, s.task.w) & (s.placed >= 0)


def polls(cfg: TCfg, s: Sys) -> list[Poll]:
    """No progress all the clock long; progress; a failed poll; and every end."""
    quiet = Poll(Reading.TOKEN, s.task.w.token, cfg.stall)
    moved = Poll(Reading.TOKEN, s.task.w.token + 1, 1)
    ends = [Poll(r) for r in (Reading.GONE, Reading.ANSWERED, Reading.REPLIED, Reading.ERRORED)]
    return [quiet, moved, Poll(Reading.FAILED, 0, 1), *ends]


def inputs(cfg: TCfg, s: Sys) -> list[In]:
    xs = [In(Op.POLL, p) for p in polls(cfg, s)] if s.task.phase is Phase.WATCH else []
    if len(s.inbox) < cfg.subs:
        xs.append(In(Op.STEP))
    ids = range(len(s.inbox) + 1)
    xs += [In(Op.PLACE, id=i) for i in ids] + [In(Op.WITHDRAW, id=i) for i in ids]
    xs += [In(Op.CLOSE), In(Op.REOPEN)]
    xs += [In(Op.ABORT, abort=a) for a in Abort]
    return xs


# ---------------------------------------------------------------- history


@dataclass(frozen=True)
class Ghost:
    """How many submissions the parent withdrew (one by one, or by closing)."""

    withdrawn: int


def _withdrawals(s: Sys, t: Sys) -> int:
    was = sum(f is Fate.WITHDRAWN for f in s.inbox[: len(t.inbox)])
    now = sum(f is Fate.WITHDRAWN for f in t.inbox[: len(s.inbox)])
    return max(now - was, 0)


def ghost_next(m: Model, cfg: TCfg, g: Ghost, s: Sys, x: In, t: Sys) -> Ghost:
    return Ghost(g.withdrawn + _withdrawals(s, t))


# ---------------------------------------------------------------- laws


def _live(s: Sys) -> int:
    return sum(f in (Fate.QUEUED, Fate.PLACED) for f in s.inbox)


def child_one_live(m: Model, cfg: TCfg, s: Sys) -> bool:
    """At most one submission queued or placed."""
    return _live(s) <= 1


def child_report_once(m: Model, cfg: TCfg, s: Sys) -> bool:
    """At most one placed: the transcript holds the report at most once."""
    return (s.placed <= 1) & (sum(f is Fate.PLACED for f in s.inbox) <= 1)


def child_resubmits_per_abort(m: Model, cfg: TCfg, g: Ghost, s: Sys, x: In, t: Sys) -> bool:
    """Submissions: at most one, and one more per withdrawal (a parent's abort or close
    withdraws what it holds queued)."""
    return len(t.inbox) <= 1 + g.withdrawn + _withdrawals(s, t)


def _run(m: Model, cfg: TCfg, s: Sys, xs: list[In]) -> Sys:
    for x in xs:
        s = nxt(m, cfg, s, x)
    return s


def child_delivered_once(m: Model, cfg: TCfg, s: Sys) -> bool:
    """An owed report is placed exactly once when the parent reopens, the task takes
    three steps, and the parent's run places the id the task then awaits."""
    if not child.owes(s.task):
        return True
    t = _run(m, cfg, s, [In(Op.REOPEN), In(Op.STEP)])
    t = _run(m, cfg, t, [In(Op.PLACE, id=t.task.sub), In(Op.STEP), In(Op.STEP)])
    return (t.placed == 1) & (t.task.phase is Phase.DONE)


_ENDS_OWING = {
    Verdict.ANSWERED: Owe.EXITED,
    Verdict.ERRORED: Owe.FAILED,
    Verdict.STALLED: Owe.STALLED,
    Verdict.UNREACHABLE: Owe.UNREACHABLE,
    Verdict.GONE: Owe.GONE,
}


def child_task_call(m: Model, cfg: TCfg, s: Sys, x: In) -> bool:
    """A watched task's call on a poll is the watch's verdict as its report mode acts on
    it: watch on with the clock `look` gives; report what the verdict owes; or settle
    with no report (a child that replied by agent message, or a silent task)."""
    if x.op is not Op.POLL or x.poll is None or s.task.phase is not Phase.WATCH:
        return True
    seen = child.look(cfg.w, s.task.w, x.poll)
    t = nxt(m, cfg, s, x)
    same = (t.inbox == s.inbox) & (t.task.sub == s.task.sub)
    if seen.verdict is Verdict.WATCH:
        return same & (t.task.phase is Phase.WATCH) & (t.task.w == seen.w)
    if s.task.mode is Mode.SILENT or seen.verdict is Verdict.REPLIED:
        return same & (t.task.phase is Phase.DONE) & (t.task.owe is Owe.NONE)
    return same & (t.task.phase is Phase.REPORT) & (t.task.owe is _ENDS_OWING[seen.verdict])


def child_silent_never_reports(m: Model, cfg: TCfg, s: Sys) -> bool:
    """A silent task never submits a report, and never owes one."""
    return (s.task.mode is Mode.REPORT) | ((not s.inbox) & (s.task.phase is not Phase.REPORT))


def child_report_move(m: Model, cfg: TCfg, s: Sys, x: In) -> bool:
    """The report phase's step is the one report rule: end once placed; wait while
    queued, or while the parent is closed; else submit under the next id."""
    if x.op is not Op.STEP or s.task.phase is not Phase.REPORT or len(s.inbox) >= cfg.subs:
        return True
    f = fate(s, s.task.sub)
    t = nxt(m, cfg, s, x)
    _, mv = m.carry(s.task, f, s.open)
    if f is Fate.PLACED:
        want = Move.END
        ok = (t.task.phase is Phase.DONE) & (t.inbox == s.inbox)
    elif f is Fate.QUEUED or not s.open:
        want = Move.WAIT
        ok = t == s
    else:
        want = Move.SUBMIT
        ok = (t.task.sub == s.task.sub + 1) & (t.inbox == (*s.inbox, Fate.QUEUED)) & owes_same(s.task, t.task)
    return ok & (mv is want)


def owes_same(a: Task, b: Task) -> bool:
    return (a.phase is b.phase) & (a.owe is b.owe) & (a.mode is b.mode)


def child_report_move_is_owe(m: Model, cfg: TCfg, s: Sys) -> bool:
    """What the moves carry out keeps what is owed: a reporting task owes a report; a
    watching one has submitted nothing; an ended one owed nothing, or its report was
    placed."""
    if s.task.phase is Phase.REPORT:
        return s.task.owe is not Owe.NONE
    if s.task.phase is Phase.WATCH:
        return (not s.inbox) & (s.task.owe is Owe.NONE)
    return (s.task.owe is Owe.NONE) | (s.placed == 1)


def child_changes_told_once(m: Model, cfg: TCfg, s: Sys) -> bool:
    """A report placed in the parent's transcript tells the child's changes (its branch, its
    commits, its diff's summary) exactly once when it brought some, and never when it brought
    none: so, with `child_report_once` and `child_delivered_once`, they are told exactly once."""
    return s.told == (s.placed if cfg.changes else 0)


def child_worktree_never_lost(m: Model, cfg: TCfg) -> str | None:
    """What a child's worktree leaves as it ends (`kept`), over every count of commits up to 3,
    with and without uncommitted work: removed with its branch only when it holds nothing;
    uncommitted work committed on its branch; commits kept on it. A counterexample, or None."""
    for commits, dirty in itertools.product(range(4), (False, True)):
        want = Kept.COMMITTED if dirty else Kept.BRANCH if commits > 0 else Kept.NOTHING
        got = m.kept(commits, dirty)
        if got is not want:
            return f"{commits} commits, uncommitted work {dirty}: {got.value}, not {want.value}"
    return None


def child_abort_rule(m: Model, cfg: TCfg, s: Sys, x: In) -> bool:
    """Abort of a watched child: delete owes a cancelled report, cancel owes nothing; a
    task's own abort leaves the watch on. An owed report goes on as it was: same ids,
    nothing submitted."""
    if x.op is not Op.ABORT:
        return True
    t = nxt(m, cfg, s, x)
    if t.inbox != s.inbox:
        return False
    a, b = s.task, t.task
    if a.phase is Phase.WATCH:
        if x.abort is Abort.TASK:
            return b == a
        if x.abort is Abort.DELETE and a.mode is Mode.REPORT:
            return (b.phase is Phase.REPORT) & (b.owe is Owe.CANCELLED) & (b.sub == a.sub)
        return (b.phase is Phase.DONE) & (b.owe is Owe.NONE)
    return owes_same(a, b) & (b.sub == a.sub)


LAWS = (
    Law("child_one_live", "H5.4", "≤ 1 live submission (H5.4).", node=child_one_live, prove=False),
    Law(
        "child_report_once",
        "H5.4",
        "≤ 1 placed: transcript holds it at most once (H5.4).",
        node=child_report_once,
        prove=False,
    ),
    Law(
        "child_resubmits_per_abort",
        "H5.4",
        "Submissions ≤ 1 + parent aborts, closes, withdrawals (H5.4).",
        history=child_resubmits_per_abort,
        prove=False,
    ),
    Law(
        "child_delivered_once",
        "H5.4",
        "Owed report placed exactly once when the parent reopens, the task takes three steps, and the "
        "parent's run places the id then awaited (H5.4).",
        node=child_delivered_once,
        prove=False,
    ),
    Law(
        "child_task_call",
        "H5.2-H5.4",
        "Task's call on a poll = watch verdict (`look`) as its report mode acts on it: watch on, report, "
        "or settle without report (H5.2-H5.4).",
        edge=child_task_call,
        prove=False,
    ),
    Law(
        "child_silent_never_reports",
        "H5.4",
        "Silent task (`Mode.SILENT`) never reports to its parent.",
        node=child_silent_never_reports,
        prove=False,
    ),
    Law(
        "child_report_move",
        "H5.4",
        "Report phase's move = the one report rule (H5.4).",
        edge=child_report_move,
        prove=False,
    ),
    Law(
        "child_report_move_is_owe",
        "H5.4",
        "Report phase's move carried out = the model's `owe` (H5.4).",
        node=child_report_move_is_owe,
        prove=False,
    ),
    Law(
        "child_changes_told_once",
        "H5.4",
        "A placed report tells the child's changes (branch, commits, diff summary) exactly once when it "
        "brought some, never when it brought none (H5.4, extended to changes).",
        node=child_changes_told_once,
        prove=False,
    ),
    Law(
        "child_worktree_never_lost",
        "H5.4",
        "A child's worktree is removed with its branch only when it holds nothing; uncommitted work is "
        "committed on its branch, commits kept there (H5.4, extended to changes).",
        extra=child_worktree_never_lost,
        prove=False,
    ),
    Law(
        "child_abort_rule",
        "H5.4",
        "Abort of a watched child: delete owes a cancelled report, cancel owes nothing; an owed report "
        "goes on as it was (H5.4).",
        edge=child_abort_rule,
        prove=False,
    ),
)


# ---------------------------------------------------------------- breaks


def _with(**parts: Callable[..., object]) -> Model:
    fields = {"polled": child.polled, "carry": child.carry, "aborted": child.aborted}
    fields |= {"place": child.place, "withdraw": child.withdraw, "parts": child.parts, "kept": child.kept}
    return Model(**{**fields, **parts})  # type: ignore[arg-type]


def _carry_by(rule: Callable[[Fate, bool], Move]) -> Callable[[Task, Fate, bool], tuple[Task, Move]]:
    def carry(t: Task, f: Fate, open_: bool) -> tuple[Task, Move]:
        mv = rule(f, open_)
        return child.reported(t, mv), mv

    return carry


def _resends_while_queued(f: Fate, open_: bool) -> Move:
    return Move.SUBMIT if f is Fate.QUEUED else child.move(f, open_)


def _waits_out_withdrawal(f: Fate, open_: bool) -> Move:
    return Move.WAIT if f is Fate.WITHDRAWN else child.move(f, open_)


def _submits_when_closed(f: Fate, open_: bool) -> Move:
    return child.move(f, True)


def _ends_unplaced(f: Fate, open_: bool) -> Move:
    return Move.END if f is Fate.QUEUED else child.move(f, open_)


def _resend_same_id(t: Task, f: Fate, open_: bool) -> tuple[Task, Move]:
    mv = child.move(f, open_)
    if mv is Move.SUBMIT and t.sub >= 0:
        return t, mv
    return child.reported(t, mv), mv


def _abort_skips_an_id(t: Task, how: Abort) -> Task:
    """The owing task's abort takes the next id (as if it had resubmitted)."""
    if t.phase is Phase.REPORT:
        return Task(t.phase, t.mode, t.w, t.owe, t.sub + 1, t.tasks + 1)
    return child.aborted(t, how)


def _abort_drops_report(t: Task, how: Abort) -> Task:
    if t.phase is Phase.REPORT:
        return Task(Phase.DONE, t.mode, t.w, t.owe, t.sub, t.tasks)
    return child.aborted(t, how)


def _delete_owes_nothing(t: Task, how: Abort) -> Task:
    return child.aborted(t, Abort.CANCEL if how is Abort.DELETE else how)


def _cancel_owes_report(t: Task, how: Abort) -> Task:
    return child.aborted(t, Abort.DELETE if how is Abort.CANCEL else how)


def _silent_reports(cfg: WCfg, t: Task, p: Poll) -> Task:
    return child.polled(cfg, Task(t.phase, Mode.REPORT, t.w, t.owe, t.sub, t.tasks), p)


def _reply_reported(cfg: WCfg, t: Task, p: Poll) -> Task:
    """A child that replied by agent message reported again at its end."""
    if p.reading is Reading.REPLIED:
        p = Poll(Reading.ANSWERED)
    return child.polled(cfg, t, p)


def _places_withdrawn(f: Fate) -> Fate:
    return Fate.PLACED if f in (Fate.QUEUED, Fate.WITHDRAWN) else f


def _withdraws_placed(f: Fate) -> Fate:
    return Fate.WITHDRAWN if f in (Fate.QUEUED, Fate.PLACED) else f


def _changes_per_submission(owe: Owe, changes: bool, sub: int) -> tuple[Part, ...]:
    """The changes told again by each resubmission, as if appended to the text each time."""
    got = child.parts(owe, changes, sub)
    return got + (Part.CHANGES,) * (sub if Part.CHANGES in got and sub > 0 else 0)


def _changes_first_only(owe: Owe, changes: bool, sub: int) -> tuple[Part, ...]:
    """Only the first submission tells the changes (a resubmission rebuilt without them)."""
    return child.parts(owe, changes and sub == 0, sub)


def _changes_only_answered(owe: Owe, changes: bool, sub: int) -> tuple[Part, ...]:
    """A child that failed, stalled or was deleted drops its changes from its report."""
    return child.parts(owe, changes and owe is Owe.EXITED, sub)


def _drops_uncommitted(commits: int, dirty: bool) -> Kept:
    """Uncommitted work in a worktree without commits removed with it, as if it held nothing."""
    return child.kept(commits, dirty and commits > 0)


MUTANTS = (
    Mutant("a report resent while queued", "H5.4", _with(carry=_carry_by(_resends_while_queued))),
    Mutant("a withdrawn report waited on forever", "H5.4", _with(carry=_carry_by(_waits_out_withdrawal))),
    Mutant("a report submitted to a closed parent", "H5.4", _with(carry=_carry_by(_submits_when_closed))),
    Mutant("a report task that ends before placement", "H5.4", _with(carry=_carry_by(_ends_unplaced))),
    Mutant("a resubmission under the same id", "H5.4", _with(carry=_resend_same_id)),
    Mutant("a task abort that takes the next id", "H5.4", _with(aborted=_abort_skips_an_id)),
    Mutant("a task abort that drops the owed report", "H5.4", _with(aborted=_abort_drops_report)),
    Mutant("a delete that owes nothing", "H5.4", _with(aborted=_delete_owes_nothing)),
    Mutant("a cancel that owes a report", "H5.4", _with(aborted=_cancel_owes_report)),
    Mutant("a silent task that reports", "H5.4", _with(polled=_silent_reports)),
    Mutant("a replied child reported again", "H5.1", _with(polled=_reply_reported)),
    Mutant("a withdrawn submission placed", "H5.4", _with(place=_places_withdrawn)),
    Mutant("a placed submission withdrawn", "H5.4", _with(withdraw=_withdraws_placed)),
    Mutant("changes told again by each resubmission", "H5.4", _with(parts=_changes_per_submission)),
    Mutant("changes told by the first submission only", "H5.4", _with(parts=_changes_first_only)),
    Mutant("a failed child's changes left out of its report", "H5.4", _with(parts=_changes_only_answered)),
    Mutant("uncommitted work removed with its worktree", "H5.4", _with(kept=_drops_uncommitted)),
)


# ---------------------------------------------------------------- the area


def proof_cases() -> list[tuple[dict[str, Enum], dict[str, Enum]]]:
    return [({}, {})]


def cfgs() -> Iterator[TCfg]:
    # changes count only in what is told, never in a step: one bound of polls with them, one
    # without, keeps the walk as long as it was
    for mode, polls in itertools.product(Mode, (1, 2)):
        yield TCfg(mode, 2, polls, 3, polls == 1)


def sample_cfg(seed: int) -> TCfg:
    mode = Mode.SILENT if seed % 5 == 0 else Mode.REPORT
    return TCfg(mode, 1 + seed % 50, 1 + (seed // 50) % 6, 12, seed % 3 != 0)


AREA = Area(
    name="child",
    model=MODEL,
    cfg_type=TCfg,
    state_type=Sys,
    input_type=In,
    proof_cases=proof_cases,
    valid=valid,
    cfg_valid=cfg_valid,
    start=start,
    next=nxt,
    inputs=inputs,
    cfgs=cfgs,
    bounds="both report modes, stall 2 ms, 1..2 polls, 3 submissions, changes with 1 poll",
    depth=8,
    sample_cfg=sample_cfg,
    laws=LAWS,
    mutants=MUTANTS,
    ghost_start=lambda cfg: Ghost(0),
    ghost_next=ghost_next,
)
