"""The laws of the session loop every face shares (issue 52) over `rules.drive`, for what
the editor's laws (`laws.acp`, which walk `drive.EDITOR` from a prompt at work) do not
see: requests that come while a work goes on, the faces that say each run, the session's
end, its subagents detached on a cut; and the interactive agent's face: its answer not
held, its idle session watching its subagents, a cancel giving the queued requests back
(WITHDRAW) and keeping those that come after it (HOLD) as the next work's.

One walk, from a session no request has come to (`drive.idle`), under any history of: a
person's request (PROMPT), the end of the run at work (each outcome through `answer_of`,
finding the session's subagents at work or not and a message waiting or not; one that
finds nothing waiting only when no queued request is left in the walk's inbox, unless one
came after its work's last run started, which the look may have missed), a look's result
while a look is under way (the same, with the inbox as it was when the look began), a
cancel, ticks (now, a jump later, a ms before and at the cancel's grace and a held work's
next look), FINISH (no more requests) and the face's CLOSED. Each face is walked: the
command line's (`drive.COMMAND`, its first request given), `--control`'s, the editor's and
the agent's (`drive.AGENT`; ticks also a ms before and at an idle session's next look).
The walk keeps, beside the model's `Work`, what came and what the runtime did as it saw
it: whether a run is at work, a look is under way (and the inbox when it began), the
inbox of queued requests (a RUN takes them all), when the work's cancel came, and the
counts of RUN, SAY, END, DETACH, QUEUE, HOLD, WITHDRAW and RESPOND (those of the work at
hand, too), the requests kept that no run took, and whether the look under way is an idle
session's.

How they are checked: exhaustively within the bounds printed, then sampled (Hypothesis:
jumps up to 5 s, looks every 1 ms to 5 s, each face, 60 inputs).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import drive
from eukhe.rules.drive import Action, Do, Face, Input, Kind, Work
from eukhe.rules.states import Choice, replace


@dataclass(frozen=True)
class Model:
    """The functions of the model the laws call; a break swaps one."""

    idle: Callable[[Face, int], Work]
    step: Callable[[Work, Input], tuple[Work, list[Action]]]
    wake: Callable[[Work], int | None]


MODEL = Model(drive.idle, drive.step, drive.wake)


def cached(m: Model) -> Model:
    """The model as the walk runs it: each work's step on an input taken once. The walk's
    states carry counts beside the work, so one work meets one input in many of them (the
    agent's walk: 358,426 steps of far fewer distinct works); its steps were most of the walk."""
    step = functools.lru_cache(maxsize=1 << 16)(m.step)
    wake = functools.lru_cache(maxsize=1 << 16)(m.wake)
    return replace(m, step=lambda w, x: _copied(step(w, x)), wake=wake)


def _copied(done: tuple[Work, list[Action]]) -> tuple[Work, list[Action]]:
    return done[0], list(done[1])  # the remembered list stays as the step made it


class Which(Choice):
    COMMAND = "command"
    CONTROL = "control"
    EDITOR = "editor"
    AGENT = "agent"


FACES = {
    Which.COMMAND: drive.COMMAND,
    Which.CONTROL: drive.CONTROL,
    Which.EDITOR: drive.EDITOR,
    Which.AGENT: drive.AGENT,
}


@dataclass(frozen=True)
class DCfg:
    """A walk's limits: the face, the requests that may come at most, the jump of time a
    tick may take, how often a held work looks at its subagents."""

    face: Which
    prompts: int = 2
    jump: int = 10_000
    poll: int = 500


def cfg_valid(cfg: DCfg) -> bool:
    return (cfg.prompts >= 0) & (cfg.jump >= 1) & (cfg.poll >= 1)


OUTCOMES: tuple[tuple[str, str | None, bool], ...] = (
    ("answered", None, False),
    ("aborted", None, False),
    ("failed", "model_error", False),
)
"""How the walk's runs end: answered, aborted (whoever asked), failed."""


@dataclass(frozen=True)
class DState:
    """The model's work and the last input's time; then as the walk saw it: a run at work, a
    look under way and the inbox when it began, the queued requests no run has taken, the
    requests queued since the last run started, the work's cancel (None: not), when the
    last run's end or look came (while held), FINISH and CLOSED come, and the counts."""

    work: Work
    now: int
    running: bool = False
    looking: bool = False
    seen: int = 0  # the inbox when the look under way began
    inbox: int = 0
    fresh: int = 0  # requests queued since the last run started: its end's look may miss them
    cancel: int | None = None
    since: int = 0
    finished: bool = False
    closed: bool = False
    prompts: int = 0
    runs: int = 0
    says: int = 0
    ends: int = 0
    detaches: int = 0
    queues: int = 0
    responds: int = 0  # in all
    answered: int = 0  # the work at hand's RESPONDs
    left: bool = False  # the last answer left something: a run, a subagent at work, a message
    live: bool = False  # the last run's end or look found subagents at work
    late: int = 0  # requests queued since the work's cancel, no run having taken them
    holds: int = 0  # HOLDs in all
    kept: int = 0  # requests kept (HOLD) no run has taken
    withdrawals: int = 0  # WITHDRAWs in all
    watched: bool = False  # the look under way began while the session was idle
    watches: int = 0  # looks begun while the session was idle, in all


@dataclass(frozen=True)
class DIn:
    kind: Kind
    at: int
    outcome: int = 0
    live: bool = False
    waiting: bool = False


def start(m: Model, cfg: DCfg) -> DState:
    return DState(m.idle(FACES[cfg.face], cfg.poll), 0)


FLAGS = ((False, False), (True, False), (False, True), (True, True))


def _ticks(cfg: DCfg, s: DState) -> list[int]:
    ts = {s.now, s.now + cfg.jump}
    if s.cancel is not None and s.answered == 0:
        g = s.cancel + FACES[cfg.face].grace
        ts |= {g - 1, g}
    held = s.answered == 0 and s.runs
    watched = FACES[cfg.face].watches and s.answered > 0 and s.live
    if not s.running and not s.looking and (held or watched):
        ts |= {s.since + cfg.poll - 1, s.since + cfg.poll}
    return sorted(t for t in ts if t >= s.now)


def inputs(cfg: DCfg, s: DState) -> Sequence[DIn]:
    now = s.now
    xs: list[DIn] = []
    if s.prompts < cfg.prompts and not (cfg.face is Which.COMMAND and s.prompts):
        xs.append(DIn(Kind.PROMPT, now))
    if s.running:  # the run at work ends once; it may miss what was queued since it started
        for k in range(len(OUTCOMES)):
            xs += [
                DIn(Kind.RUN_ENDED, now, outcome=k, live=lv, waiting=w)
                for lv, w in FLAGS
                if w or s.inbox - s.fresh <= 0
            ]
    if s.looking:
        xs += [DIn(Kind.CHILDREN, now, live=lv, waiting=w) for lv, w in FLAGS if w or s.seen == 0]
    xs.append(DIn(Kind.CANCEL, now))
    if not s.closed:
        xs += [DIn(Kind.TICK, t) for t in _ticks(cfg, s)]
    if cfg.face is Which.CONTROL:
        xs.append(DIn(Kind.FINISH, now))
    if cfg.face is not Which.COMMAND:
        xs.append(DIn(Kind.CLOSED, now))
    return xs


def nxt(m: Model, cfg: DCfg, s: DState, x: DIn) -> DState:
    reason = drive.answer_of(*OUTCOMES[x.outcome]) if x.kind is Kind.RUN_ENDED else drive.Reason.END_TURN
    work, acts = m.step(s.work, Input(x.kind, x.at, reason, live=x.live, waiting=x.waiting))
    did: dict[Do, int] = {}
    for a in acts:
        did[a.do] = did.get(a.do, 0) + 1
    runs = did.get(Do.RUN, 0)
    queues = did.get(Do.QUEUE, 0)
    looks = did.get(Do.LOOK, 0)
    responds = did.get(Do.RESPOND, 0)
    holds = did.get(Do.HOLD, 0)
    withdrawals = did.get(Do.WITHDRAW, 0)
    ended = x.kind is Kind.RUN_ENDED
    running = bool(runs) or (s.running and not ended)
    renewed = bool(runs) and bool(responds)  # the work answered and the next one's run begun
    new_work = bool(runs) and (x.kind is Kind.PROMPT or s.answered > 0 or renewed)
    emptied = bool(runs) or bool(withdrawals)  # a run takes the inbox; a withdrawal gives it back
    inbox = 0 if emptied else s.inbox + queues
    watch = bool(looks) and _idle(s) and x.kind is Kind.TICK
    first_cancel = x.kind is Kind.CANCEL and s.cancel is None and s.answered == 0 and not s.closed
    cancel = None if new_work else (x.at if first_cancel and s.runs else s.cancel)
    came = ended or x.kind is Kind.CHILDREN
    left = s.left
    if responds:
        left = (s.running and not ended) or x.live or x.waiting or (x.kind is Kind.CANCEL and s.live)
    looking = bool(looks) or (s.looking and x.kind is not Kind.CHILDREN and not new_work and not responds)
    return DState(
        work,
        max(s.now, x.at),
        running,
        looking,
        inbox if looks else s.seen,
        inbox,
        0 if emptied else s.fresh + queues,
        cancel,
        x.at if came else s.since,
        s.finished or x.kind is Kind.FINISH,
        s.closed or x.kind is Kind.CLOSED,
        s.prompts + (x.kind is Kind.PROMPT),
        s.runs + runs,
        s.says + did.get(Do.SAY, 0),
        s.ends + did.get(Do.END, 0),
        s.detaches + did.get(Do.DETACH, 0),
        s.queues + queues,
        s.responds + responds,
        0 if renewed else (0 if new_work else s.answered) + responds,
        left,
        x.live if came else s.live,
        0 if emptied else s.late + (queues if (cancel is not None and not first_cancel) else 0),
        s.holds + holds,
        0 if runs else s.kept + holds,
        s.withdrawals + withdrawals,
        watch or (s.watched and looking and not bool(looks)),
        s.watches + watch,
    )


def valid(cfg: DCfg, s: DState) -> bool:
    return True


# ---------------------------------------------------------------- the laws


def _idle(s: DState) -> bool:
    """As the walk sees it: no run at work, no look under way but an idle session's own, the
    work answered (or none came)."""
    return (not s.running) & ((not s.looking) | s.watched) & ((s.answered > 0) | (s.runs == 0))


def drive_session_end_once(m: Model, cfg: DCfg, g: None, s: DState, x: DIn, t: DState) -> bool:
    """SessionEnd (END) fires at most once in a session, never while a run is at work (nor at
    the grace's answer of a run still at work), never when the work leaves a subagent at work
    or a message waiting after a cut; and it has fired once the session ends with its work:
    for the command line when its work was answered leaving nothing, for `--control` once
    FINISH came and no work goes on, none having been cut, and for a face that closed with
    no run at work once a request came. A face that detaches leaves its subagents at work
    (DETACH) when a cut answers its work while they work, and only then or at the close."""
    ok = t.ends <= 1
    fired = t.ends > s.ends
    if fired:
        ok &= not t.running
        ok &= (x.kind in (Kind.FINISH, Kind.CLOSED, Kind.CHILDREN)) | (t.answered > s.answered)
        ok &= not t.left or x.kind is Kind.CLOSED
    ends_with_work = cfg.face is Which.COMMAND or t.finished
    if ends_with_work and _idle(t) and t.runs and not t.closed and not t.left:
        ok &= t.ends == 1
    if x.kind is Kind.CLOSED and not s.closed and not s.running and s.runs:
        ok &= t.ends == 1
    face = FACES[cfg.face]
    if t.detaches > s.detaches:  # a face that watched its subagents leaves them when it goes
        ok &= (face.detaches & ((x.kind is Kind.CLOSED) | t.left)) | (face.watches & (x.kind is Kind.CLOSED))
    cut = (t.cancel is not None) | (cfg.face is Which.COMMAND)
    live = x.live if x.kind in (Kind.RUN_ENDED, Kind.CHILDREN) else s.live
    if t.answered > s.answered and cut and live and face.detaches and s.ends == 0:
        ok &= t.detaches == s.detaches + 1
    return ok


def drive_cancel_within_grace(m: Model, cfg: DCfg, g: None, s: DState, x: DIn, t: DState) -> bool:
    """A cancel of a work at work aborts its run once; the work is answered `cancelled` (once)
    when its run ends, at once when held, and at a tick at or after the cancel plus the
    face's grace at the latest; until then `wake` asks to look again by the grace."""
    if s.closed:
        return True
    ok = t.answered <= 1
    if t.cancel is not None and x.kind is Kind.TICK and x.at >= t.cancel + FACES[cfg.face].grace:
        ok &= t.answered == 1
    if t.cancel is not None and t.answered == 0 and not t.closed:
        w = m.wake(t.work)
        ok &= (w is not None) and w <= t.cancel + FACES[cfg.face].grace
    if x.kind is Kind.CANCEL and s.cancel is None and s.answered == 0 and s.runs and not s.running:
        ok &= t.answered == 1  # held: no run to wait for
    return ok


def drive_requests_none_lost(m: Model, cfg: DCfg, g: None, s: DState, x: DIn, t: DState) -> bool:
    """A request with no work going on starts the session's next run (RUN), once; one that
    comes while a work goes on is queued (QUEUE), never a run of its own: RUN is never done
    while a run is at work, nor twice at once. What waits is never left behind: once the
    session is idle with its face open, no cancel having cut its last work, no queued
    request is left in the inbox (the last look finds it and starts the next work); after a
    cancel, none queued since the cancel (what came before it waits for the next request)."""
    ok = (t.runs - s.runs) <= 1
    if t.runs > s.runs:
        ok &= not s.running or x.kind is Kind.RUN_ENDED
    if x.kind is Kind.PROMPT and not s.closed and s.ends == 0:
        later = t.queues - s.queues + t.holds - s.holds  # queued, or kept after a cancel
        ok &= (t.runs - s.runs, later) == ((1, 0) if _idle(s) else (0, 1))
    if _idle(t) and not t.closed and t.ends == 0:
        ok &= (t.inbox if t.cancel is None else t.late) == 0
    return ok


def drive_each_run_said_once(m: Model, cfg: DCfg, g: None, s: DState, x: DIn, t: DState) -> bool:
    """A face that says each run says its outcome once (SAY): never more SAYs than runs, at
    most the run at work or held unsaid, each said before the next starts, and every one
    said once its work is answered; a face that does not say (the editor) never does."""
    if not FACES[cfg.face].says:
        return t.says == 0
    ok = t.runs - 1 <= t.says <= t.runs
    if t.runs > s.runs and s.runs:
        ok &= t.says == s.runs
    if t.answered > s.answered:
        ok &= t.says == t.runs
    return ok


def drive_answer_not_held(m: Model, cfg: DCfg, g: None, s: DState, x: DIn, t: DState) -> bool:
    """A face that does not wait for its subagents (the agent) answers a run's end at once
    when no message waits, whatever works; a face that waits holds the answer of a run it
    holds while they work, no cancel having come and no message waiting."""
    if s.closed or x.kind is not Kind.RUN_ENDED or s.answered:
        return True
    face = FACES[cfg.face]
    if not face.waits and not x.waiting:
        return t.responds == s.responds + 1
    held = drive.answer_of(*OUTCOMES[x.outcome]) in face.holds
    if face.waits and x.live and held and s.cancel is None and not x.waiting:
        return t.responds == s.responds
    return True


def drive_idle_watch(m: Model, cfg: DCfg, g: None, s: DState, x: DIn, t: DState) -> bool:
    """A face that watches (the agent): an idle session, open, whose last run's end or look
    found its subagents at work, or that has not looked yet, looks again by a poll on
    (`wake`); an idle session's look that finds a message waiting starts its next work (one
    RUN), one that finds none starts nothing. A face that does not watch never looks while
    idle."""
    face = FACES[cfg.face]
    if not face.watches:
        return t.watches == 0
    ok = True
    unwatched = not t.looking and (t.live or (t.runs == 0 and t.watches == 0))
    if _idle(t) and not t.closed and t.ends == 0 and unwatched:
        w = m.wake(t.work)
        ok &= (w is not None) and w <= t.since + cfg.poll
    if s.watched and x.kind is Kind.CHILDREN and not s.closed:
        ok &= (t.runs - s.runs) == int(x.waiting)
    return ok


def drive_cancel_withdraws(m: Model, cfg: DCfg, g: None, s: DState, x: DIn, t: DState) -> bool:
    """A face that withdraws (the agent): a cancel's answer withdraws the requests queued in
    its work (WITHDRAW, once, with the answer: back to the person, not to a run); no other
    answer withdraws, and a face that does not withdraw never does."""
    w = t.withdrawals - s.withdrawals
    if not FACES[cfg.face].withdraws:
        return w == 0
    cut = (s.cancel is not None) | (x.kind is Kind.CANCEL)
    if t.responds > s.responds:
        return w == int(cut)
    return w == 0


def drive_kept_after_cancel(m: Model, cfg: DCfg, g: None, s: DState, x: DIn, t: DState) -> bool:
    """A face that keeps (the agent): a request after a cancel, while the cancelled work goes
    on, is kept (HOLD): never queued for the run it stops, nor run beside it; once that work
    is answered and its run has ended, what was kept is the next work's (one RUN takes it
    all), none left behind. A face that does not keep never does."""
    if not FACES[cfg.face].keeps:
        return t.holds == 0
    ok = True
    if x.kind is Kind.PROMPT and not s.closed and s.ends == 0 and s.cancel is not None and not _idle(s):
        ok &= (t.holds - s.holds, t.queues - s.queues, t.runs - s.runs) == (1, 0, 0)
    if _idle(t) and not t.closed and t.ends == 0:
        ok &= t.kept == 0
    return ok


LAWS = (
    Law(
        "drive_session_end_once",
        "drive",
        "SessionEnd fires exactly once when the session ends with its work (eukhe run's answer, "
        "--control's input closed, the face gone), never while a run is at work nor when a cut leaves "
        "subagents at work, which are detached (issue 52).",
        history=drive_session_end_once,
        prove=False,
    ),
    Law(
        "drive_cancel_within_grace",
        "drive",
        "A cancel is answered once, when the run ends, at once when held, by its grace at the latest, "
        "on every face (issue 52).",
        history=drive_cancel_within_grace,
        prove=False,
    ),
    Law(
        "drive_requests_none_lost",
        "drive",
        "A request with nothing at work is the session's next run; one while a work goes on is queued "
        "and run after it, none lost, none a second run at work (issue 52).",
        history=drive_requests_none_lost,
        prove=False,
    ),
    Law(
        "drive_each_run_said_once",
        "drive",
        "A face that says each run's outcome says it once, before the next run starts, all of them by "
        "the work's answer (issue 52).",
        history=drive_each_run_said_once,
        prove=False,
    ),
    Law(
        "drive_answer_not_held",
        "drive",
        "The agent's face shows a run's answer at once while subagents work; a face that waits holds it "
        "(issue 52).",
        history=drive_answer_not_held,
        prove=False,
    ),
    Law(
        "drive_idle_watch",
        "drive",
        "The agent's idle session keeps looking at its working subagents and a report starts its next "
        "work; no other face looks while idle (issue 52).",
        history=drive_idle_watch,
        prove=False,
    ),
    Law(
        "drive_cancel_withdraws",
        "drive",
        "On the agent's face a cancel's answer gives what was queued back to the person, and only a "
        "cancel's (issue 52).",
        history=drive_cancel_withdraws,
        prove=False,
    ),
    Law(
        "drive_kept_after_cancel",
        "drive",
        "On the agent's face what is typed after a cancel is kept, not steered into the stopped run, "
        "and is the next work's request once that run has ended (issue 52).",
        history=drive_kept_after_cancel,
        prove=False,
    ),
)


# ---------------------------------------------------------------- breaks


def _step(f: Callable[[Work, Input], tuple[Work, list[Action]]]) -> Model:
    return replace(MODEL, step=f)


def _end_again_at_finish(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """FINISH fires SessionEnd whether or not it fired."""
    u, acts = drive.step(t, x)
    if x.kind is Kind.FINISH and not t.closed and t.fired:
        return u, [*acts, Action(Do.END)]
    return u, acts


def _end_at_grace(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """The grace's answer ends the session though its run is still at work."""
    u, acts = drive.step(t, x)
    if x.kind is Kind.TICK and t.answered is None and u.answered is not None and t.face.ends and not u.fired:
        return replace(u, fired=True), [Action(Do.END), *acts]
    return u, acts


def _end_on_cut(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """A cut that leaves subagents at work ends the session all the same."""
    u, acts = drive.step(t, x)
    if u.answered is not None and t.answered is None and u.left and t.face.ends and not u.fired:
        return replace(u, fired=True), [Action(Do.END), *acts]
    return u, acts


def _no_end_with_work(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """The command line's session never fires SessionEnd (the first draft of `Runtime.request`
    when its subagents ended with no report)."""
    u, acts = drive.step(t, x)
    return u, [a for a in acts if a.do is not Do.END or x.kind is not Kind.CHILDREN]


def _finish_waits_for_more(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """FINISH with nothing at work ends nothing: the session waits for a work that never comes."""
    if x.kind is Kind.FINISH:
        return replace(t, face=replace(t.face, ends=True)), []
    return drive.step(t, x)


def _close_without_end(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """The face gone with no run at work: its SessionEnd skipped."""
    u, acts = drive.step(t, x)
    if x.kind is Kind.CLOSED:
        return u, [a for a in acts if a.do is not Do.END]
    return u, acts


def _no_detach(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """A cut leaves the subagents' reports open to a run that is not there."""
    u, acts = drive.step(t, x)
    return u, [a for a in acts if a.do is not Do.DETACH]


def _prompt_runs_beside(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """A request while a run works starts a run of its own beside it."""
    u, acts = drive.step(t, x)
    if x.kind is Kind.PROMPT and acts == [Action(Do.QUEUE)]:
        return u, [Action(Do.RUN)]
    return u, acts


def _prompt_dropped(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """A request while a work goes on is dropped (the first draft's busy refusal, unsaid)."""
    u, acts = drive.step(t, x)
    if x.kind is Kind.PROMPT and acts == [Action(Do.QUEUE)]:
        return t, []
    return u, acts


def _no_last_look(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """The answer forgets the requests queued meanwhile: one its run missed waits for ever."""
    if x.kind in (Kind.RUN_ENDED, Kind.CHILDREN, Kind.TICK) and not t.following:
        u, acts = drive.step(replace(t, queued=0), x)
        return u, acts
    return drive.step(t, x)


def _last_look_runs_nothing(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """The last look finds a request waiting and ends all the same."""
    if x.kind is Kind.CHILDREN and t.following and not t.closed:
        return drive.step(t, replace(x, waiting=False))
    return drive.step(t, x)


def _cancel_drops_later_requests(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """The first draft: a cancelled work looks at nothing more, so a request sent after the
    cancel (`--control`'s follow-up after its abort) waits for ever."""
    if t.cancelled_at is not None and x.kind in (Kind.RUN_ENDED, Kind.TICK) and not t.following:
        return drive.step(replace(t, queued=0), x)
    return drive.step(t, x)


def _no_say_before_run(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """The last run's outcome is not said before the next starts (its line lost)."""
    u, acts = drive.step(t, x)
    if any(a.do is Do.RUN for a in acts):
        return u, [a for a in acts if a.do is not Do.SAY]
    return u, acts


def _say_again(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """The last look's next work says the last run again before it starts."""
    u, acts = drive.step(t, x)
    if x.kind is Kind.CHILDREN and t.following and t.face.says and any(a.do is Do.RUN for a in acts):
        return u, [Action(Do.SAY), *acts]
    return u, acts


def _grace_late_everywhere(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """The grace a second late on the command line (its result's own bound, twice the grace)."""
    if x.kind is Kind.TICK and t.cancelled_at is not None:
        return drive.step(t, replace(x, now=x.now - 1_000))
    return drive.step(t, x)


def _wake_without_grace(t: Work) -> int | None:
    """`wake` forgets the cancel's grace: a run that never ends keeps the face waiting."""
    return drive.wake(replace(t, cancelled_at=None))


def _held_cancel_waits(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """A cancel of a held work waits for a run that is not there."""
    if x.kind is Kind.CANCEL and t.held is not None and not t.closed:
        return drive.step(replace(t, held=None, look_at=None), x)
    return drive.step(t, x)


def _with(face: Callable[[Face], Face]) -> Callable[[Work, Input], tuple[Work, list[Action]]]:
    """The step as if the work's face were `face(...)` of it (the face kept as it was)."""

    def step(t: Work, x: Input) -> tuple[Work, list[Action]]:
        u, acts = drive.step(replace(t, face=face(t.face)), x)
        return replace(u, face=t.face), acts

    return step


def _agent_holds(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """The agent holds its answer while subagents work (the command line's way)."""
    return _with(lambda f: replace(f, waits=True))(t, x)


def _stops_watching(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """The idle session stops watching its subagents after its first look."""
    return _with(lambda f: replace(f, watches=False))(t, x)


def _every_face_watches(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """Every face looks at its subagents while idle (the editor runs reports unasked)."""
    return _with(lambda f: replace(f, watches=True))(t, x)


def _watch_runs_nothing(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """An idle session's look finds a report waiting and starts nothing."""
    if x.kind is Kind.CHILDREN and t.watching and not t.closed:
        return drive.step(t, replace(x, waiting=False))
    return drive.step(t, x)


def _no_withdraw(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """Ctrl-C's queued messages are not given back: the next run takes them."""
    u, acts = drive.step(t, x)
    return u, [a for a in acts if a.do is not Do.WITHDRAW]


def _every_answer_withdraws(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """Every answer gives the queued messages back, not only a cancel's."""
    u, acts = drive.step(t, x)
    answered = any(a.do is Do.RESPOND for a in acts) and not any(a.do is Do.WITHDRAW for a in acts)
    if answered and t.face.withdraws:
        return u, [Action(Do.WITHDRAW), *acts]
    return u, acts


def _kept_steers(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """What is typed after Ctrl-C is queued as a steer of the run it stops."""
    return _with(lambda f: replace(f, keeps=False))(t, x)


def _kept_lost(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """The cancelled run's end forgets what was typed meanwhile."""
    if x.kind is Kind.RUN_ENDED:
        return drive.step(replace(t, kept=0), x)
    return drive.step(t, x)


def _kept_runs_beside(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """What is typed after Ctrl-C runs at once, beside the run still ending."""
    u, acts = drive.step(t, x)
    if x.kind is Kind.PROMPT and acts == [Action(Do.HOLD)]:
        return replace(u, kept=t.kept), [Action(Do.RUN)]
    return u, acts


MUTANTS = (
    Mutant("FINISH fires SessionEnd again", "drive", _step(_end_again_at_finish)),
    Mutant("SessionEnd at the grace, its run still at work", "drive", _step(_end_at_grace)),
    Mutant("SessionEnd on a cut that leaves subagents at work", "drive", _step(_end_on_cut)),
    Mutant("no SessionEnd once the subagents are done", "drive", _step(_no_end_with_work)),
    Mutant("FINISH with nothing at work ends nothing", "drive", _step(_finish_waits_for_more)),
    Mutant("the close skips SessionEnd", "drive", _step(_close_without_end)),
    Mutant("a cut leaves its subagents attached", "drive", _step(_no_detach)),
    Mutant("a request while a run works runs beside it", "drive", _step(_prompt_runs_beside)),
    Mutant("a request while a work goes on is dropped", "drive", _step(_prompt_dropped)),
    Mutant("the answer forgets what was queued meanwhile", "drive", _step(_no_last_look)),
    Mutant("the last look finds a request and ends", "drive", _step(_last_look_runs_nothing)),
    Mutant("a request after a cancel waits for ever", "drive", _step(_cancel_drops_later_requests)),
    Mutant("the last run not said before the next", "drive", _step(_no_say_before_run)),
    Mutant("the last run said again before the next work", "drive", _step(_say_again)),
    Mutant("the grace a second late", "drive", _step(_grace_late_everywhere)),
    Mutant("wake forgets the cancel's grace", "drive", replace(MODEL, wake=_wake_without_grace)),
    Mutant("a held work's cancel waits for the grace", "drive", _step(_held_cancel_waits)),
    Mutant("the agent holds its answer while subagents work", "drive", _step(_agent_holds)),
    Mutant("the idle agent stops watching its subagents", "drive", _step(_stops_watching)),
    Mutant("every face watches its subagents while idle", "drive", _step(_every_face_watches)),
    Mutant("an idle look finds a report and runs nothing", "drive", _step(_watch_runs_nothing)),
    Mutant("Ctrl-C's queued messages not given back", "drive", _step(_no_withdraw)),
    Mutant("every answer gives the queued messages back", "drive", _step(_every_answer_withdraws)),
    Mutant("what is typed after Ctrl-C steers the stopped run", "drive", _step(_kept_steers)),
    Mutant("what is typed after Ctrl-C is forgotten", "drive", _step(_kept_lost)),
    Mutant("what is typed after Ctrl-C runs beside the stopped run", "drive", _step(_kept_runs_beside)),
)


# ---------------------------------------------------------------- the area


def cfgs() -> Iterator[DCfg]:
    for face in Which:
        yield DCfg(face, prompts=1 if face is Which.COMMAND else 2)


def sample_cfg(seed: int) -> DCfg:
    r = random.Random(seed)
    return DCfg(
        r.choice(list(Which)),
        prompts=r.randint(1, 4),
        jump=r.randint(1, 5_000),
        poll=r.choice((1, 500, r.randint(1, 5_000))),
    )


MEANT = {
    "FINISH fires SessionEnd again": "drive_session_end_once",
    "SessionEnd at the grace, its run still at work": "drive_session_end_once",
    "SessionEnd on a cut that leaves subagents at work": "drive_session_end_once",
    "no SessionEnd once the subagents are done": "drive_session_end_once",
    "FINISH with nothing at work ends nothing": "drive_session_end_once",
    "the close skips SessionEnd": "drive_session_end_once",
    "a cut leaves its subagents attached": "drive_session_end_once",
    "a request while a run works runs beside it": "drive_requests_none_lost",
    "a request while a work goes on is dropped": "drive_requests_none_lost",
    "the answer forgets what was queued meanwhile": "drive_requests_none_lost",
    "the last look finds a request and ends": "drive_requests_none_lost",
    "a request after a cancel waits for ever": "drive_requests_none_lost",
    "the last run not said before the next": "drive_each_run_said_once",
    "the last run said again before the next work": "drive_each_run_said_once",
    "the grace a second late": "drive_cancel_within_grace",
    "wake forgets the cancel's grace": "drive_cancel_within_grace",
    "a held work's cancel waits for the grace": "drive_cancel_within_grace",
    "the agent holds its answer while subagents work": "drive_answer_not_held",
    "the idle agent stops watching its subagents": "drive_idle_watch",
    "every face watches its subagents while idle": "drive_idle_watch",
    "an idle look finds a report and runs nothing": "drive_idle_watch",
    "Ctrl-C's queued messages not given back": "drive_cancel_withdraws",
    "every answer gives the queued messages back": "drive_cancel_withdraws",
    "what is typed after Ctrl-C steers the stopped run": "drive_kept_after_cancel",
    "what is typed after Ctrl-C is forgotten": "drive_kept_after_cancel",
    "what is typed after Ctrl-C runs beside the stopped run": "drive_requests_none_lost",
}
"""Each break and the law meant to kill it: `eukhe laws` fails one killed first by another."""


AREA = Area(
    name="drive",
    model=MODEL,
    cfg_type=DCfg,
    state_type=DState,
    input_type=DIn,
    proof_cases=lambda: [],
    valid=valid,
    cfg_valid=cfg_valid,
    start=start,
    next=nxt,
    inputs=inputs,
    cfgs=cfgs,
    bounds=(
        "each face (the command line with its one request, --control, the editor and the agent with "
        "up to 2), "
        f"runs ending with each of {len(OUTCOMES)} outcomes, finding subagents at work or not and a "
        "message waiting or not, ticks a ms before and at the grace and a held work's look or 10 s on"
    ),
    depth=7,
    sample_cfg=sample_cfg,
    laws=LAWS,
    mutants=MUTANTS,
    meant=MEANT,
    shallow_first=True,
    cached=cached,
)
