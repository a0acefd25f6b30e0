"""H5: every subagent reports back exactly once.

Three models, all pure.

**The watch** (H5.2, H5.3). The parent polls each child; the watch clock `W` holds
the no-progress milliseconds left (`left`), the failed polls left in a row (`tries`),
and the child's progress token at the last poll that read one. `look` is the
verdict of one poll:
- the child's run has ended (answered, replied by agent message, failed), or its
  worker is gone: the watch settles at once;
- a new token: progress, the clock is full again;
- the same token: the poll's delay comes off `left`; none left: stalled;
- a failed poll (the worker lives or restarts, but cannot be read): the delay
  comes off `left` and one try off `tries`; no try left: unreachable.
The pause before the next poll doubles per failed poll in a row (2 s, 4 s, ...,
32 s); a reopened parent polls at once (the runtime skips the pause).

**The task** (H5.4): one per spawned child, with a report mode (report, or
silent: never reports). It watches; a verdict that ends the watch owes a report
(none when the child replied by agent message, or the mode is silent). Its
report phase follows one rule, `move`, on its submission's fate in the parent's
inbox (queued, withdrawn, placed): submit; wait until settled; end once placed;
resubmit under the next id only once withdrawn, and never while the parent is
closed (a closing parent admits nothing). An abort of a watched child: delete
owes a cancelled report, cancel owes nothing (the cancel's result is the
answer); an owed report goes on as it was: the abort of the task that owes it
submits nothing and hands it on, ids and all, to a report task the abort
cannot reach.

**The parent's takes** (H5.4): where a run takes what waits for it (its start, each
round end, each look once a child's conversation answered), the key of each place,
and what a take places and hands back (`take`): unique keys across every
continuation, so a take whose step a crash lost, made again, gets the same messages
and no others.

Pure: standard library only, frozen data, total functions.
"""

from __future__ import annotations

from dataclasses import dataclass

from eukhe.rules.states import Choice

CHILD_POLL_FAILURES = 5
"""Failed polls in a row while the worker lives or restarts: unreachable (H5.3)."""

STALL_MS = 600_000
"""`subagentStallMs` by default: no progress this long, the child is stalled (H5.2)."""

POLL_PAUSE_MS = 2_000
"""The pause between two polls; it doubles per failed poll in a row (H5.3)."""

POLL_PAUSE_MAX_MS = 32_000
"""The longest pause between two polls (H5.3)."""


def stall_ms(setting: int) -> int:
    """`subagentStallMs` as the watch uses it: 0 (or unset, or below) is the default."""
    return setting if setting > 0 else STALL_MS


# ---------------------------------------------------------------- the watch


@dataclass(frozen=True)
class WCfg:
    """stall: a full `left` (`subagentStallMs`); polls: a full `tries` (CHILD_POLL_FAILURES)."""

    stall: int
    polls: int


def limits(setting: int) -> WCfg:
    return WCfg(stall_ms(setting), CHILD_POLL_FAILURES)


def wcfg_valid(cfg: WCfg) -> bool:
    return (cfg.stall > 0) & (cfg.polls > 0)


@dataclass(frozen=True)
class W:
    """The watch clock: ms left without progress, failed polls left in a row, and
    the token the last reading gave (-1: none yet, so the first reading is new)."""

    left: int
    tries: int
    token: int = -1


def full(cfg: WCfg) -> W:
    return W(cfg.stall, cfg.polls)


def w_valid(cfg: WCfg, w: W) -> bool:
    return (0 < w.left <= cfg.stall) & (0 < w.tries <= cfg.polls)


class Reading(Choice):
    TOKEN = "token"  # the child's run is live: its progress token
    FAILED = "failed"  # no reading, while its worker lives or restarts
    GONE = "gone"  # its worker is gone: settles at once (worker-exited)
    ANSWERED = "answered"  # its run ended with an answer, and it never replied
    REPLIED = "replied"  # its run ended, and it replied by agent message
    ERRORED = "errored"  # its run ended failed or aborted


@dataclass(frozen=True)
class Poll:
    """One poll: what it read, the token (TOKEN only), and the ms since the last poll
    (a negative delay is read as 0: a clock that went back gives no time)."""

    reading: Reading
    token: int = 0
    delay: int = 0


class Verdict(Choice):
    WATCH = "watch"  # go on watching
    STALLED = "stalled"
    UNREACHABLE = "unreachable"
    GONE = "gone"
    ANSWERED = "answered"
    REPLIED = "replied"
    ERRORED = "errored"


ENDS = {
    Reading.GONE: Verdict.GONE,
    Reading.ANSWERED: Verdict.ANSWERED,
    Reading.REPLIED: Verdict.REPLIED,
    Reading.ERRORED: Verdict.ERRORED,
}


@dataclass(frozen=True)
class Look:
    verdict: Verdict
    w: W


def look(cfg: WCfg, w: W, p: Poll) -> Look:
    """The verdict of one poll, and the clock after it."""
    if p.reading in ENDS:
        return Look(ENDS[p.reading], w)
    if p.reading is Reading.TOKEN and p.token != w.token:
        return Look(Verdict.WATCH, W(cfg.stall, cfg.polls, p.token))
    delay = p.delay if p.delay > 0 else 0
    left = w.left - delay
    if p.reading is Reading.TOKEN:
        if left <= 0:
            return Look(Verdict.STALLED, W(w.left, cfg.polls, w.token))
        return Look(Verdict.WATCH, W(left, cfg.polls, w.token))
    tries = w.tries - 1
    if tries <= 0:
        return Look(Verdict.UNREACHABLE, W(w.left, w.tries, w.token))
    if left <= 0:
        return Look(Verdict.STALLED, W(w.left, w.tries, w.token))
    return Look(Verdict.WATCH, W(left, tries, w.token))


def pause(cfg: WCfg, w: W) -> int:
    """Ms before the next poll: POLL_PAUSE_MS, doubled per failed poll in a row, at
    most POLL_PAUSE_MAX_MS."""
    failed = cfg.polls - w.tries
    ms = POLL_PAUSE_MS
    for _ in range(failed if failed > 0 else 0):
        if ms >= POLL_PAUSE_MAX_MS:
            break
        ms = ms * 2
    return ms if ms < POLL_PAUSE_MAX_MS else POLL_PAUSE_MAX_MS


# ---------------------------------------------------------------- the task


class Mode(Choice):
    REPORT = "report"  # reports back to its parent
    SILENT = "silent"  # never reports


class Phase(Choice):
    WATCH = "watch"
    REPORT = "report"
    DONE = "done"


class Owe(Choice):
    """The report a task owes (the `[child-...]` shapes of the runtime's reports)."""

    NONE = "none"
    EXITED = "exited"  # answered without a reply: its last assistant text
    FAILED = "failed"  # its run failed or was aborted
    STALLED = "stalled"
    UNREACHABLE = "unreachable"
    GONE = "gone"  # worker-exited
    CANCELLED = "cancelled"  # deleted by the parent


OWED = {
    Verdict.ANSWERED: Owe.EXITED,
    Verdict.ERRORED: Owe.FAILED,
    Verdict.STALLED: Owe.STALLED,
    Verdict.UNREACHABLE: Owe.UNREACHABLE,
    Verdict.GONE: Owe.GONE,
    Verdict.REPLIED: Owe.NONE,
}


class Fate(Choice):
    """A submission's fate in the parent's inbox, read by its id."""

    NONE = "none"  # no submission yet
    QUEUED = "queued"
    WITHDRAWN = "withdrawn"
    PLACED = "placed"


@dataclass(frozen=True)
class Task:
    """A child's task. sub: the id of its live submission (-1: none yet); a resubmission
    takes sub + 1. tasks: how many report tasks have carried the report (an abort of
    one hands it to the next)."""

    phase: Phase
    mode: Mode
    w: W
    owe: Owe = Owe.NONE
    sub: int = -1
    tasks: int = 1


def task(cfg: WCfg, mode: Mode) -> Task:
    return Task(Phase.WATCH, mode, full(cfg))


class Call(Choice):
    """What a poll makes the task do."""

    WATCH = "watch"  # watch on
    REPORT = "report"  # go to the report phase
    SETTLE = "settle"  # end with no report


def call(mode: Mode, verdict: Verdict) -> Call:
    """The task's call on a poll: the watch verdict as its report mode acts on it."""
    if verdict is Verdict.WATCH:
        return Call.WATCH
    if mode is Mode.SILENT or OWED[verdict] is Owe.NONE:
        return Call.SETTLE
    return Call.REPORT


def watched(cfg: WCfg, t: Task, p: Poll) -> tuple[Task, Verdict]:
    """The task after a poll, and the watch's verdict (a task not watching ignores the
    poll: WATCH). A stalled or unreachable child is stopped, whatever its mode."""
    if t.phase is not Phase.WATCH:
        return t, Verdict.WATCH
    seen = look(cfg, t.w, p)
    c = call(t.mode, seen.verdict)
    if c is Call.WATCH:
        return Task(Phase.WATCH, t.mode, seen.w, t.owe, t.sub, t.tasks), seen.verdict
    if c is Call.SETTLE:
        return Task(Phase.DONE, t.mode, seen.w, Owe.NONE, t.sub, t.tasks), seen.verdict
    return Task(Phase.REPORT, t.mode, seen.w, OWED[seen.verdict], t.sub, t.tasks), seen.verdict


def polled(cfg: WCfg, t: Task, p: Poll) -> Task:
    """The task after a poll."""
    return watched(cfg, t, p)[0]


STOPS = frozenset({Verdict.STALLED, Verdict.UNREACHABLE})
"""The verdicts on which the child's run is aborted and its worker stopped (H5.3)."""


class Move(Choice):
    SUBMIT = "submit"  # submit under the next id
    WAIT = "wait"  # wait until the submission settles (or the parent reopens)
    END = "end"  # placed: the report is delivered


def move(fate: Fate, open_: bool) -> Move:
    """The one report rule: on its submission's fate, and whether the parent admits."""
    if fate is Fate.PLACED:
        return Move.END
    if fate is Fate.QUEUED:
        return Move.WAIT
    return Move.SUBMIT if open_ else Move.WAIT


def reported(t: Task, m: Move) -> Task:
    """The report task after carrying out `m` (a task not reporting ignores it)."""
    if t.phase is not Phase.REPORT:
        return t
    if m is Move.SUBMIT:
        return Task(t.phase, t.mode, t.w, t.owe, t.sub + 1, t.tasks)
    if m is Move.END:
        return Task(Phase.DONE, t.mode, t.w, t.owe, t.sub, t.tasks)
    return t


class Abort(Choice):
    DELETE = "delete"  # the parent deletes the child: a cancelled report is owed
    CANCEL = "cancel"  # the parent cancels the child: the cancel's result is the answer
    TASK = "task"  # the task itself is aborted (its parent's run stops, a restart)


def aborted(t: Task, how: Abort) -> Task:
    """The abort rule. Watching: delete owes a cancelled report (unless silent), cancel
    owes nothing, and a task abort leaves the watch to go on. Reporting: the report goes
    on as it was, handed to the next report task with its ids."""
    if t.phase is Phase.REPORT:
        return Task(t.phase, t.mode, t.w, t.owe, t.sub, t.tasks + 1)
    if t.phase is Phase.DONE or how is Abort.TASK:
        return t
    if how is Abort.DELETE and t.mode is Mode.REPORT:
        return Task(Phase.REPORT, t.mode, t.w, Owe.CANCELLED, t.sub, t.tasks)
    return Task(Phase.DONE, t.mode, t.w, Owe.NONE, t.sub, t.tasks)


def owes(t: Task) -> bool:
    """Whether the task still owes its parent a report."""
    return t.phase is Phase.REPORT


def carry(t: Task, fate: Fate, open_: bool) -> tuple[Task, Move]:
    """One step of the report phase: the move the rule gives on the submission's fate,
    and the task once it is carried out."""
    m = move(fate, open_)
    return reported(t, m), m


# ---------------------------------------------------------------- the parent's inbox


def place(f: Fate) -> Fate:
    """The parent places a submission in its transcript: only a queued one (an id it
    knows is dropped, so a resend is never placed twice)."""
    return Fate.PLACED if f is Fate.QUEUED else f


def withdraw(f: Fate) -> Fate:
    """The parent withdraws a submission (its run stops or closes): only a queued one;
    a withdrawal that loses its race to placement leaves it placed."""
    return Fate.WITHDRAWN if f is Fate.QUEUED else f


# ---------------------------------------------------------------- the parent's takes
# A run takes what waits for it (its children's reports, its user's steers) at places:
# its start, each round end, and, once a child's conversation has answered with children
# of its own still at work, each look for their reports (a look that finds some goes on
# with them: a continuation of the same conversation, in the same run). Each take is a
# recorded step; the store remembers which take placed what, by the take's key, so a
# take whose step a crash lost gets the same messages again when the replay makes it.
# That is sound only while a key names one place of the whole run: a key counted per
# conversation would hand a continuation what an earlier conversation took.


class At(Choice):
    START = "start"  # the run's start
    ROUND = "round"  # a round end of one of its conversations
    LOOK = "look"  # a look for its children's reports, once its conversation answered


@dataclass(frozen=True)
class Place:
    """A place of a run where it takes. conversation: 1 for the run's first, one more for
    each continuation; n: the round of that conversation (ROUND), or the look of the run
    (LOOK), counted from 1."""

    at: At
    conversation: int = 0
    n: int = 0


def key(p: Place) -> str:
    """The place's key in the inbox: one place of the run, one key, across every
    continuation of its conversation; the same place on replay, the same key."""
    if p.at is At.ROUND:
        return f"g{p.conversation}r{p.n}"
    if p.at is At.LOOK:
        return f"look{p.n}"
    return "start"


@dataclass(frozen=True)
class Where:
    """How far a run has come, as its takes count it: its conversation (0 before its
    start), the rounds that conversation has ended, and the looks the run has made."""

    conversation: int = 0
    round: int = 0
    looks: int = 0


def next_place(w: Where, at: At) -> tuple[Where, Place]:
    """The run's next place of kind `at`, and how far it has come once there."""
    if at is At.ROUND:
        return Where(w.conversation, w.round + 1, w.looks), Place(At.ROUND, w.conversation, w.round + 1)
    if at is At.LOOK:
        return Where(w.conversation, w.round, w.looks + 1), Place(At.LOOK, w.conversation, w.looks + 1)
    return Where(1, 0, w.looks), Place(At.START)


def went_on(w: Where) -> Where:
    """The conversation goes on with what a look found: the next conversation, no round yet."""
    return Where(w.conversation + 1, 0, w.looks)


@dataclass(frozen=True)
class Held:
    """A message in the parent's inbox: its fate, and the key of the take that placed
    it ("": none yet)."""

    fate: Fate
    taker: str = ""


def take(inbox: tuple[Held, ...], taker: str) -> tuple[tuple[Held, ...], tuple[int, ...]]:
    """A take by `taker` (a run's place key): every queued message is placed for it, and
    what this same take placed before comes back again (its step was lost to a crash, and
    the replay makes it anew). The inbox after, and the messages that enter the run's
    transcript, in inbox order. A key "" takes nothing."""
    after: list[Held] = []
    got: list[int] = []
    for i, h in enumerate(inbox):
        if taker != "" and h.fate is Fate.PLACED and h.taker == taker:
            after.append(h)
            got.append(i)
        elif taker != "" and place(h.fate) is Fate.PLACED and h.fate is not Fate.PLACED:
            after.append(Held(Fate.PLACED, taker))
            got.append(i)
        else:
            after.append(h)
    return tuple(after), tuple(got)


# ---------------------------------------------------------------- the changes it brings back
# A child spawned with `isolation: "worktree"` works in a git worktree of its own, on a branch
# of its own. As it ends, what its worktree holds decides what is kept (`kept`), and its report
# tells its changes (the branch, its commits, the diff's summary) exactly once (`parts`): each
# submission of the report says the same, whatever its id, so the one placed says it once.


class Kept(Choice):
    """What a child's worktree leaves as it ends."""

    NOTHING = "nothing"  # no commit, nothing uncommitted: the worktree and its branch are removed
    BRANCH = "branch"  # its commits, on its branch (kept); the worktree's folder is removed
    COMMITTED = "committed"  # its uncommitted work committed on its branch for it, then as BRANCH


def kept(commits: int, dirty: bool) -> Kept:
    """What is kept of a worktree with `commits` commits on its branch beyond where it began,
    and uncommitted work (`dirty`): uncommitted work is never lost, and only a worktree with
    nothing at all is removed with its branch."""
    if dirty:
        return Kept.COMMITTED
    if commits > 0:
        return Kept.BRANCH
    return Kept.NOTHING


class Part(Choice):
    """The parts of a child's report, in order."""

    HEAD = "head"  # the `[child-...]` tag, and its last text or the cause
    CHANGES = "changes"  # its branch, its commits, the summary of its diff


def parts(owe: Owe, changes: bool, sub: int) -> tuple[Part, ...]:
    """What the report a task owes says, in order, in its submission `sub` (a resubmission says
    what the first said: its id changes nothing): its head, then its changes once when the
    child brought some (`changes`: a branch kept), whatever way it ended. Owing nothing: no part."""
    if owe is Owe.NONE:
        return ()
    return (Part.HEAD, Part.CHANGES) if changes else (Part.HEAD,)
