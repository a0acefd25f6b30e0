"""The session loop (issue 52): a person's request and all it leads to, for every face
(`eukhe run`, `eukhe run --control`, the editor), one rule the runtime's `SessionDriver`
(`run/drive.py`) asks. Faces differ only by their `Face` in the state, never by a path
of their own.

`Work` is the session's state, `step` what one input makes of it:

- a request (PROMPT) with nothing at work begins the work: its run (RUN); while the work
  goes on it is queued (QUEUE: a steer or a follow-up in the session's inbox, as the face
  names it), and the work's answer looks once more (LOOK) so that one no run took starts
  the next work: none is lost (a cancel leaves what was queued before it to the next
  request);
- the run's end (RUN_ENDED, its answer `answer_of` gives, and what a look after it found:
  the session's subagents at work, `live`, a message waiting, `waiting`): a run whose end
  the face holds (`Face.holds`) goes on: a message waiting starts the session's next run
  (RUN), subagents at work hold its answer and are looked at every `poll` ms (LOOK) until
  none works and nothing waits; any other end answers the work (RESPOND) once
  (`acp_prompt_answered_once`, walked with the editor's face);
- a cancel (CANCEL) aborts the run at work (ABORT), once; the work is answered
  `cancelled` when it ends, at once when held, or at the cancel plus the face's grace
  (`CANCEL_GRACE_MS`, the command line's `RECORDED_MS`), whichever comes first (`drive_cancel_within_grace`);
- permission requests (ASK) end once: the person's choice (CHOSEN), their deadline, or the
  work's cancel, answer or close (`acp_ask_ends`);
- a face that `says` each run's outcome says it once (SAY): before the next run starts,
  or with the answer (a run still at work at the grace: said as still in flight);
- the session's SessionEnd hooks (END) fire exactly once, when the session ends with its
  work done (`Face.ends`, or FINISH: no more requests come) and nothing is left: no run,
  no subagent at work, no message waiting; a work cut while subagents work leaves them
  (DETACH, for a face that `detaches`: their reports wait for the session's next run)
  and fires none; the face gone (CLOSED) leaves a run at work to the home's owner
  (LEAVE), or, with none at work, ends the session (`drive_session_end_once`);
- the interactive agent's face (`AGENT`): a run's answer is not held while subagents work
  (`Face.waits`); idle, the session looks at its subagents every `poll` ms while they work,
  and once when it opens, and a message waiting starts its next work (`Face.watches`,
  `drive_idle_watch`); a cancel's answer withdraws the requests queued in its work, back to
  the person (WITHDRAW, `Face.withdraws`); a request after a cancel, while its run ends, is
  kept (HOLD) and is the next work's request (`Face.keeps`, `drive_kept_after_cancel`).

Pure: standard library only. Times are integer milliseconds given by the runtime.
"""

from __future__ import annotations

from dataclasses import dataclass

from eukhe.rules.run import ABORT_GRACE
from eukhe.rules.states import Choice, replace

CANCEL_GRACE_MS = int(ABORT_GRACE * 1000)
"""After a cancel, the latest the work is answered `cancelled` (the run's abort grace): a
run that has not ended by then is answered for, and ends on its own."""

POLL_MS = 500
"""How often a held work looks at its session's subagents by default (the runtime gives
its own, `timing.child_poll`): how soon a report or their end is seen, never a bound."""


class Reason(Choice):
    """How a work is answered: the Agent Client Protocol's stop reasons (every face's: a run
    answered, cut at the output limit, at its tool rounds' cap, cancelled), and a failure."""

    END_TURN = "end_turn"
    MAX_TOKENS = "max_tokens"
    MAX_TURN_REQUESTS = "max_turn_requests"
    CANCELLED = "cancelled"
    FAILED = "failed"


ROUNDS_CAP = "run_limit"
"""The failure's kind of a run that reached its own cap, its tool rounds (docs/events.md)."""


def answer_of(outcome: str, code: str | None, cut: bool) -> Reason:
    """A run's end as an answer: answered, `end_turn` (`max_tokens` when the answer hit the
    output limit); aborted, `cancelled`; failed at the tool rounds' cap,
    `max_turn_requests`; any other failure, `FAILED`."""
    if outcome == "answered":
        return Reason.MAX_TOKENS if cut else Reason.END_TURN
    if outcome == "aborted":
        return Reason.CANCELLED
    if code == ROUNDS_CAP:
        return Reason.MAX_TURN_REQUESTS
    return Reason.FAILED


HELD = (Reason.END_TURN, Reason.MAX_TOKENS)
"""The editor's held ends: a run that answered. A run that was stopped or failed is
answered at once, its subagents' reports left to the next prompt."""

EVERY = tuple(Reason)
"""The command line's held ends: whatever a run's end, its subagents are waited for."""


@dataclass(frozen=True)
class Face:
    """What a face makes of the session loop, the one difference between faces.

    ends: the session ends with its work (`eukhe run`), else more may come until FINISH
      (`--control`'s input closed) or CLOSED (the editor, the agent);
    holds: the run ends whose work goes on (what waits runs, the answer held while the
      session's subagents work);
    says: each run's outcome is said (SAY), not only the work's answer (the command line);
    detaches: a work cut while subagents work closes the session to their reports until
      its next run (DETACH);
    grace: after a cancel, the latest the work is answered (ms);
    waits: the answer of a run it holds waits while the session's subagents work (else it
      is given at once, and what they report waits for the session);
    watches: idle, the session looks at its subagents every poll while they work (and once
      when it opens), and a message waiting starts its next work; gone, it detaches them;
    withdraws: a cancel's answer withdraws the requests queued in its work (WITHDRAW): they
      go back to the person, not to a run;
    keeps: a request after a cancel, while the cancelled run ends, is kept (HOLD), not
      queued: the next work's request once the cancelled one is answered and its run ended."""

    ends: bool = False
    holds: tuple[Reason, ...] = HELD
    says: bool = False
    detaches: bool = False
    grace: int = CANCEL_GRACE_MS
    waits: bool = True
    watches: bool = False
    withdraws: bool = False
    keeps: bool = False


EDITOR = Face()
"""`eukhe acp`: one answer a prompt, only a run that answered waits for its subagents."""

RECORDED_MS = 2 * CANCEL_GRACE_MS
"""The command line's grace: the run's abort grace, and as long again for its outcome to be
recorded (a run cut by its deadline says so: its outcome is the one said)."""

COMMAND = Face(ends=True, holds=EVERY, says=True, detaches=True, grace=RECORDED_MS)
"""`eukhe run`: one request, the session ends with it."""

CONTROL = Face(holds=EVERY, says=True, detaches=True, grace=RECORDED_MS)
"""`eukhe run --control`: requests until standard input closes (FINISH)."""

UNSTOPPED = tuple(r for r in Reason if r is not Reason.CANCELLED)
"""The agent's held ends: every end but a stop, whose messages go back to the person."""

AGENT = Face(
    holds=UNSTOPPED, says=True, grace=RECORDED_MS, waits=False, watches=True, withdraws=True, keeps=True
)
"""`eukhe` (the interactive agent): each run's outcome shown at once, what waits run after
it, the subagents watched while the prompt is idle; Ctrl-C gives the queued messages back
and makes what is typed while its run ends the next request."""


class AskEnd(Choice):
    CHOSEN = "chosen"  # the person answered with one of eukhe's choices (a yes or a no)
    DEADLINE = "deadline"  # nobody answered by its deadline: a denial that says so
    CANCELLED = "cancelled"  # the work's cancel, answer or close: the call does not run


@dataclass(frozen=True)
class Ask:
    """One permission request: its id, its deadline (ms), how it ended (None: pending)."""

    id: int
    deadline: int
    ended: AskEnd | None = None


@dataclass(frozen=True)
class Work:
    """The session's work: when its request came; when it was cancelled (None: not); its
    answer, once sent (None: not yet); its permission requests; whether the face is gone
    (nothing more is sent); how often it looks at its subagents while held (ms); the answer
    held while they work (None: a run is at work, or it is answered); while held, when it
    looks next (None: a look is under way); then the session's: its face; whether a request
    came (an idle session's has not); whether the last look found subagents at work; the
    requests queued since the run at work started; whether the answered work's last look
    is under way; whether SessionEnd fired; whether the last work was cut, leaving
    subagents at work or a message waiting; whether its run outlived the cancel's grace
    (still at work, answered for); requests kept since the cancel (`Face.keeps`); when the
    idle session looks next at its subagents (`Face.watches`; None: it does not) and whether
    that look is under way."""

    started: int
    cancelled_at: int | None = None
    answered: Reason | None = None
    asks: tuple[Ask, ...] = ()
    closed: bool = False
    poll: int = POLL_MS
    held: Reason | None = None
    look_at: int | None = None
    face: Face = EDITOR
    began: bool = True
    live: bool = False
    queued: int = 0
    following: bool = False
    fired: bool = False
    left: bool = False
    outlived: bool = False
    kept: int = 0
    watch_at: int | None = None
    watching: bool = False

    def at_work(self) -> bool:
        """A run of the work is at work (or starting): neither held nor answered."""
        return self.began and self.held is None and self.answered is None

    def idle(self) -> bool:
        """No work goes on: none came, or the last was answered, its last look is over and its
        run has ended."""
        done = not self.began or self.answered is not None
        return done and not self.following and not self.outlived


class Kind(Choice):
    PROMPT = "prompt"  # a person's request
    RUN_ENDED = "run_ended"  # the run ended: `reason` its answer; `live`, `waiting` read after
    CHILDREN = "children"  # a look's result: subagents at work (`live`), a message `waiting`
    CANCEL = "cancel"  # the person cancels (the editor's session/cancel, Ctrl-C, an abort)
    ASK = "ask"  # a permission request is sent: `ask` its id, `deadline` when it ends
    CHOSEN = "chosen"  # the person answered the permission request `ask`
    TICK = "tick"  # the clock, at `now`
    FINISH = "finish"  # no more requests come: the session ends with its work
    CLOSED = "closed"  # the face is gone (the editor's connection, the terminal)


@dataclass(frozen=True)
class Input:
    kind: Kind
    now: int
    reason: Reason = Reason.END_TURN
    ask: int = 0
    deadline: int = 0
    live: bool = False  # some subagent of the session is at work
    waiting: bool = False  # a message waits for the session's next run (a report, a steer)


class Do(Choice):
    ABORT = "abort"  # abort the run at work (it ends within its grace)
    RESPOND = "respond"  # answer the work (`reason`)
    END_ASK = "end_ask"  # end the permission request `ask` (`how`): stop waiting for the person
    LEAVE = "leave"  # the face is gone: its run is left in flight, to the home's owner
    RUN = "run"  # start the session's next run (the request's, or of what waits for it)
    LOOK = "look"  # look at the session's subagents and messages: a CHILDREN input answers
    QUEUE = "queue"  # queue the request in the session's inbox, for the run at work or after it
    SAY = "say"  # say the last run's outcome (still in flight, if it has not ended)
    WITHDRAW = "withdraw"  # the requests queued in the work go back to the person
    HOLD = "hold"  # keep the request: the next work's, once the cancelled one is over
    END = "end"  # fire the session's SessionEnd hooks
    DETACH = "detach"  # the subagents are left at work: their reports wait for the next run


@dataclass(frozen=True)
class Action:
    do: Do
    reason: Reason | None = None
    ask: int = 0
    how: AskEnd | None = None


def begin(now: int, poll: int = POLL_MS, face: Face = EDITOR) -> Work:
    """A request's work, its run at work; held, it looks at its subagents every `poll` ms."""
    return Work(now, poll=max(1, poll), face=face)


def idle(face: Face, poll: int = POLL_MS) -> Work:
    """A session no request has come to yet; a face that watches looks at once at its
    subagents and at what a closed face left waiting."""
    return Work(0, poll=max(1, poll), face=face, began=False, watch_at=0 if face.watches else None)


def _watch(t: Work, now: int) -> Work:
    """An idle session of a face that watches looks again a poll on while its subagents work."""
    due = t.face.watches and t.live and t.idle() and not t.closed and not t.fired
    return replace(t, watch_at=now + t.poll if due else None, watching=False)


def _end_asks(t: Work, how: AskEnd, now: int, only_due: bool) -> tuple[Work, list[Action]]:
    """The pending asks ended `how`: every one, or (`only_due`) those whose deadline has come."""
    asks, done = [], []
    for a in t.asks:
        if a.ended is None and (not only_due or now >= a.deadline):
            asks.append(replace(a, ended=how))
            done.append(Action(Do.END_ASK, ask=a.id, how=how))
        else:
            asks.append(a)
    return replace(t, asks=tuple(asks)), done


def _ending(t: Work, left: bool) -> tuple[Work, list[Action]]:
    """SessionEnd, once, when the session ends with this work and it left nothing."""
    if not t.face.ends or t.fired or left:
        return t, []
    return replace(t, fired=True), [Action(Do.END)]


def _answer(
    t: Work, reason: Reason, now: int, live: bool = False, waiting: bool = False, running: bool = False
) -> tuple[Work, list[Action]]:
    """The work answered `reason`, its pending asks ended (no call waits on them now), what
    it leaves kept (`live`: subagents at work; `waiting`: a message; `running`: its run, at
    the grace); the session ended with it when it leaves nothing, its subagents detached
    when it is the session's end or its cut; the last run said; and, when a request was
    queued since its last run or its cancel, a last look (what no run took starts the next work)."""
    t, out = _end_asks(t, AskEnd.CANCELLED, now, only_due=False)
    left = live or waiting or running
    cut = t.face.ends or t.cancelled_at is not None
    detach = live and t.face.detaches and cut and not t.fired
    withdraw = t.cancelled_at is not None and t.face.withdraws
    t = replace(t, answered=reason, held=None, look_at=None, live=live, left=left, outlived=running)
    t, ending = _ending(t, left)
    out += ending
    if detach:
        out.append(Action(Do.DETACH))
    if withdraw:
        out.append(Action(Do.WITHDRAW))
    if t.face.says:
        out.append(Action(Do.SAY))
    out.append(Action(Do.RESPOND, reason))
    if running:  # a run still at work looks at its own end
        return t, out
    if t.kept and not t.fired:  # what was typed since the cancel: the next work
        t, run = _run(_fresh(t, now), said=True)
        return t, out + run
    if t.queued:
        t = replace(t, following=True, queued=0)
        out.append(Action(Do.LOOK))
    return _watch(t, now), out


def _run(t: Work, said: bool = False) -> tuple[Work, list[Action]]:
    """The session's next run within the work, the last one's outcome said before it
    (unless `said` already, with the last work's answer)."""
    say = [Action(Do.SAY)] if t.face.says and not said else []
    return replace(t, held=None, look_at=None, queued=0), [*say, Action(Do.RUN)]


def _over(t: Work, reason: Reason, x: Input) -> tuple[Work, list[Action]]:
    """A run the face holds has ended, answered `reason`, or a look came back (`x.live`,
    `x.waiting`): a message waiting starts the session's next run; subagents at work hold
    the answer and the work looks again a poll later; else the work is answered. Its asks
    are kept while it goes on: they may be a subagent's."""
    if x.waiting:
        return _run(replace(t, live=x.live))
    if x.live and t.face.waits:
        return replace(t, held=reason, look_at=x.now + t.poll, live=True), []
    return _answer(t, reason, x.now, x.live)


def _fresh(t: Work, now: int) -> Work:
    """The session's next work, begun at `now`: what the session keeps, kept."""
    return Work(now, poll=t.poll, face=t.face, live=t.live, fired=t.fired)


def _closed(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """The face is gone: a run at work is left to the owner; with none, the session ends
    (its subagents detached, their reports owed to its next run)."""
    at_work = t.at_work()
    t, out = _end_asks(t, AskEnd.CANCELLED, x.now, only_due=False)
    t = replace(t, closed=True, following=False)
    if at_work:
        return t, [*out, Action(Do.LEAVE)]
    if not t.began or t.fired or t.outlived:  # a run outlived its grace: it is at work still
        return t, out
    # a face that watched its subagents leaves them: their reports wait for the next run
    detach = [Action(Do.DETACH)] if t.live and (t.face.detaches or t.face.watches) else []
    return replace(t, fired=True), [*out, *detach, Action(Do.END)]


def _finish(t: Work) -> tuple[Work, list[Action]]:
    """No more requests come: the session ends with its work, at once when none goes on."""
    t = replace(t, face=replace(t.face, ends=True))
    if not t.idle() or not t.began or t.fired or t.left:  # a cut, or a run outlived its grace
        return t, []
    return replace(t, fired=True), [Action(Do.END)]


def _prompt(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """A request: the next work when none goes on; else queued for the run at work or after."""
    if t.fired:  # the session has ended: nothing more runs in it
        return t, []
    if t.idle():
        return _fresh(t, x.now), [Action(Do.RUN)]
    if t.face.keeps and t.cancelled_at is not None:  # not a steer of the run it stops
        return replace(t, kept=t.kept + 1), [Action(Do.HOLD)]
    return replace(t, queued=t.queued + 1), [Action(Do.QUEUE)]


def _looked(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """A look's result: a held work goes on as `_over` says; an answered work's last look
    starts the next work when a message waits, looks again when a request was queued since
    it began, else is over (the session's end, if it ends with the work); an idle session's
    look (`Face.watches`) starts the next work when a message waits, else looks again a poll
    on while its subagents work; any other is stale."""
    if t.following:
        if x.waiting:
            return _run(replace(_fresh(t, x.now), live=x.live), said=True)
        if t.queued:
            return replace(t, queued=0, live=x.live), [Action(Do.LOOK)]
        t, out = _ending(replace(t, following=False, live=x.live, left=x.live), x.live)
        return _watch(t, x.now), out
    if t.watching:
        if x.waiting:
            return _run(replace(_fresh(t, x.now), live=x.live), said=True)
        return _watch(replace(t, live=x.live), x.now), []
    if t.answered is not None or t.held is None or t.look_at is not None:
        return t, []  # no look was under way: stale
    return _over(t, t.held, x)


def step(t: Work, x: Input) -> tuple[Work, list[Action]]:
    """The session after one input (at times that never go back), and what the runtime does.

    Closed, nothing more is done, but an ask a run still sends ends at once (`cancelled`:
    nobody is there to answer it, and nothing looks at its deadline). A run's end answers
    the work once: `cancelled` after a cancel; a run whose end the face holds, while the
    session's subagents work or a message waits, goes on as `_over` says; any other end with
    its reason. A look's result goes on as `_looked` says. A cancel aborts the run at work
    and ends every pending ask `cancelled`, once; a held work has no run at work: it is
    answered `cancelled` at once. An ask is kept pending until the person's choice (which
    ends it, once) or its deadline. A tick ends the asks due, looks at the subagents of a
    held work whose look is due (LOOK), and at the cancel plus the face's grace answers a
    work not answered yet, `cancelled`."""
    if t.closed:
        if x.kind is Kind.ASK:  # the run goes on, left to the owner: nobody answers its ask
            return t, [Action(Do.END_ASK, ask=x.ask, how=AskEnd.CANCELLED)]
        return t, []
    if x.kind is Kind.CLOSED:
        return _closed(t, x)
    if x.kind is Kind.PROMPT:
        return _prompt(t, x)
    if x.kind is Kind.FINISH:
        return _finish(t)
    if x.kind is Kind.RUN_ENDED:
        if not t.began:
            return t, []
        if t.answered is not None:  # after the grace's answer: no call waits
            t, out = _end_asks(replace(t, outlived=False, live=x.live), AskEnd.CANCELLED, x.now, False)
            if t.kept and not t.fired:  # typed since the cancel: the next work
                t, run = _run(_fresh(t, x.now), said=True)
                return t, out + run
            if t.queued:  # requests came while it outlived its grace: they start the next work
                t = replace(t, following=True, queued=0)
                out.append(Action(Do.LOOK))
                return t, out
            return _watch(t, x.now), out
        if t.cancelled_at is not None:
            return _answer(t, Reason.CANCELLED, x.now, x.live, x.waiting)
        if x.reason in t.face.holds:
            return _over(t, x.reason, x)
        return _answer(t, x.reason, x.now, x.live, x.waiting)
    if x.kind is Kind.CHILDREN:
        return _looked(t, x)
    if x.kind is Kind.CANCEL:
        if t.cancelled_at is not None or t.answered is not None or not t.began:
            return t, []
        if t.held is not None:  # no run is at work: nothing to stop
            return _answer(replace(t, cancelled_at=x.now, queued=0), Reason.CANCELLED, x.now, t.live)
        # what was queued before the cancel waits for the session's next request; what comes
        # after it starts the next work once this one is answered
        t = replace(t, cancelled_at=x.now, queued=0)
        t, out = _end_asks(t, AskEnd.CANCELLED, x.now, only_due=False)
        return t, [Action(Do.ABORT), *out]
    if x.kind is Kind.ASK:
        if t.answered is not None or t.cancelled_at is not None or any(a.id == x.ask for a in t.asks):
            return t, [Action(Do.END_ASK, ask=x.ask, how=AskEnd.CANCELLED)]  # no call waits on it
        return replace(t, asks=(*t.asks, Ask(x.ask, x.deadline))), []
    if x.kind is Kind.CHOSEN:
        asks = tuple(
            replace(a, ended=AskEnd.CHOSEN) if a.id == x.ask and a.ended is None else a for a in t.asks
        )
        if asks == t.asks:
            return t, []  # ended already, or never asked: a late or stray answer changes nothing
        return replace(t, asks=asks), [Action(Do.END_ASK, ask=x.ask, how=AskEnd.CHOSEN)]
    t, out = _end_asks(t, AskEnd.DEADLINE, x.now, only_due=True)  # TICK
    if t.answered is None and t.cancelled_at is not None and x.now >= t.cancelled_at + t.face.grace:
        t, answered = _answer(t, Reason.CANCELLED, x.now, t.live, running=True)
        out += answered
    if t.held is not None and t.look_at is not None and x.now >= t.look_at:
        t = replace(t, look_at=None)
        out.append(Action(Do.LOOK))
    if t.idle() and t.watch_at is not None and x.now >= t.watch_at:
        t = replace(t, watch_at=None, watching=True)
        out.append(Action(Do.LOOK))
    return t, out


def wake(t: Work) -> int | None:
    """When the runtime must look again (a TICK) if nothing happens before: the earliest
    pending ask's deadline, the cancel's grace, or a held work's next look; None: only an
    input moves the work."""
    times = [a.deadline for a in t.asks if a.ended is None]
    if t.cancelled_at is not None and t.answered is None:
        times.append(t.cancelled_at + t.face.grace)
    if t.held is not None and t.look_at is not None:
        times.append(t.look_at)
    if t.idle() and t.watch_at is not None:
        times.append(t.watch_at)
    return None if t.closed or not times else min(times)
