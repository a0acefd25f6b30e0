"""The editor face (issue 43): eukhe as an Agent Client Protocol agent, and what its laws
say of it: every prompt is answered once, every permission request ends, and the setup
requests answer within their bound.

The runtime (`eukhe.acp`) speaks JSON-RPC through the protocol's SDK, runs each turn
through the durable runtime and asks this module what to do:

- `step`: one `session/prompt` over time (`Turn`): its run's end (`RUN_ENDED`, with the
  answer `answer_of` gives its outcome, and whether the session's subagents are at work and
  a report waits), a look at those subagents (`CHILDREN`), the editor's `session/cancel`, a
  permission request sent and answered, the clock, and the connection closing. A turn is
  answered exactly once (`acp_prompt_answered_once`): when its run ends, unless the run
  answered while the session's subagents work or a message waits for it: then its answer
  is held, a report waiting starts the session's next run within the same turn (RUN), the
  subagents are looked at every `Turn.poll` ms (LOOK) while none waits, and the turn is
  answered once none works and nothing waits (`acp_held_for_subagents`); after a cancel,
  `cancelled`: at once when held (no run is at work), else when the run ends or at the
  cancel plus `CANCEL_GRACE_MS`, whichever comes first. A closed connection answers
  nothing more, and leaves a run at work to the home's owner, as a closed terminal does
  (an ask a run sends then ends at once: nobody would answer it);
- the same `step` ends each permission request once: by the editor's choice, by its
  deadline (a denial that says so), or by the turn's cancel, answer or close, every
  pending one at once (`acp_ask_ends`); a held turn keeps its subagents' asks and takes
  new ones; an answer that comes after is ignored;
- `setup`: `initialize`, `session/new` and `session/load` (`Setup`) answer with their
  result, or fail at `SETUP_MS` with a cause (`acp_setup_bounded`).

Pure: standard library only. Times are integer milliseconds given by the runtime.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

from eukhe.rules.run import ABORT_GRACE

CANCEL_GRACE_MS = int(ABORT_GRACE * 1000)
"""After `session/cancel`, the latest the prompt is answered `cancelled` (the run's abort
grace): a run that has not ended by then is answered for, and ends on its own."""

POLL_MS = 500
"""How often a held turn looks at its session's subagents by default (the runtime gives
its own, `timing.child_poll`): how soon a report or their end is seen, never a bound."""

SETUP_MS = 30_000
"""The latest `initialize`, `session/new` or `session/load` answers: its result, or a
failure with its cause (a store, a model or an MCP server that does not come)."""


class Reason(Enum):
    """How a turn is answered: the protocol's stop reasons, and a failure (a JSON-RPC error
    whose message is the run's cause)."""

    END_TURN = "end_turn"
    MAX_TOKENS = "max_tokens"
    MAX_TURN_REQUESTS = "max_turn_requests"
    CANCELLED = "cancelled"
    FAILED = "failed"


ROUNDS_CAP = "run_limit"
"""The failure's kind of a run that reached its own cap, its tool rounds (docs/events.md)."""


def answer_of(outcome: str, code: str | None, cut: bool) -> Reason:
    """A run's end as the protocol's answer: answered, `end_turn` (`max_tokens` when the
    answer hit the output limit); aborted, `cancelled`; failed at the tool rounds' cap,
    `max_turn_requests`; any other failure, `FAILED` (the response is an error that gives
    the cause). eukhe has no refusal of its own to say (`refusal`)."""
    if outcome == "answered":
        return Reason.MAX_TOKENS if cut else Reason.END_TURN
    if outcome == "aborted":
        return Reason.CANCELLED
    if code == ROUNDS_CAP:
        return Reason.MAX_TURN_REQUESTS
    return Reason.FAILED


HELD = (Reason.END_TURN, Reason.MAX_TOKENS)
"""The answers held while the session's subagents work: a run that answered. A run that
was stopped or failed is answered at once, its subagents' reports left to the next prompt."""


class AskEnd(Enum):
    CHOSEN = "chosen"  # the editor answered with one of eukhe's choices (a yes or a no)
    DEADLINE = "deadline"  # nobody answered by its deadline: a denial that says so
    CANCELLED = "cancelled"  # the turn's cancel: the call does not run


@dataclass(frozen=True)
class Ask:
    """One `session/request_permission`: its id, its deadline (ms), how it ended (None: pending)."""

    id: int
    deadline: int
    ended: AskEnd | None = None


@dataclass(frozen=True)
class Turn:
    """One `session/prompt`: when it came; when the editor cancelled it (None: not); its
    answer, once sent (None: not yet); its permission requests; whether the connection
    closed (nothing more is sent); how often it looks at its subagents while held (ms); the
    answer held while they work (None: a run is at work, or it is answered); and while
    held, when it looks at them next (None: a look is under way)."""

    started: int
    cancelled_at: int | None = None
    answered: Reason | None = None
    asks: tuple[Ask, ...] = ()
    closed: bool = False
    poll: int = POLL_MS
    held: Reason | None = None
    look_at: int | None = None

    def at_work(self) -> bool:
        """A run of the turn is at work (or starting): neither held nor answered."""
        return self.held is None and self.answered is None


class Kind(Enum):
    RUN_ENDED = "run_ended"  # the turn's run ended: `reason` its answer; `live`, `waiting` read after
    CHILDREN = "children"  # a look's result: the session's subagents at work (`live`), a message `waiting`
    CANCEL = "cancel"  # session/cancel
    ASK = "ask"  # a permission request is sent: `ask` its id, `deadline` when it ends
    CHOSEN = "chosen"  # the editor answered the permission request `ask`
    TICK = "tick"  # the clock, at `now`
    CLOSED = "closed"  # the connection closed (stdin's end, a broken pipe)


@dataclass(frozen=True)
class Input:
    kind: Kind
    now: int
    reason: Reason = Reason.END_TURN
    ask: int = 0
    deadline: int = 0
    live: bool = False  # some subagent of the session is at work
    waiting: bool = False  # a message waits for the session's next run (a report, a steer)


class Do(Enum):
    ABORT = "abort"  # abort the turn's run (it ends within its grace)
    RESPOND = "respond"  # answer the prompt (`reason`)
    END_ASK = "end_ask"  # end the permission request `ask` (`how`): stop waiting for the editor
    LEAVE = "leave"  # the editor is gone: its run is left in flight, to the home's owner
    RUN = "run"  # start the session's next run, of what waits for it, within this turn
    LOOK = "look"  # look at the session's subagents and messages: a CHILDREN input answers


@dataclass(frozen=True)
class Action:
    do: Do
    reason: Reason | None = None
    ask: int = 0
    how: AskEnd | None = None


def begin(now: int, poll: int = POLL_MS) -> Turn:
    """A prompt's turn, its run at work; held, it looks at its subagents every `poll` ms."""
    return Turn(now, poll=max(1, poll))


def _end_asks(t: Turn, how: AskEnd, now: int, only_due: bool) -> tuple[Turn, list[Action]]:
    """The pending asks ended `how`: every one, or (`only_due`) those whose deadline has come."""
    asks, done = [], []
    for a in t.asks:
        if a.ended is None and (not only_due or now >= a.deadline):
            asks.append(replace(a, ended=how))
            done.append(Action(Do.END_ASK, ask=a.id, how=how))
        else:
            asks.append(a)
    return replace(t, asks=tuple(asks)), done


def _answer(t: Turn, reason: Reason, now: int) -> tuple[Turn, list[Action]]:
    """The turn answered `reason`, its pending asks ended (no call waits on them now)."""
    t, out = _end_asks(t, AskEnd.CANCELLED, now, only_due=False)
    return replace(t, answered=reason, held=None, look_at=None), [*out, Action(Do.RESPOND, reason)]


def _over(t: Turn, reason: Reason, x: Input) -> tuple[Turn, list[Action]]:
    """A run that answered `reason` has ended, or a look came back (`x.live`, `x.waiting`):
    a message waiting starts the session's next run; subagents at work hold the answer and
    the turn looks again a poll later; else the turn is answered. Its asks are kept while it
    goes on: they may be a subagent's."""
    if x.waiting:
        return replace(t, held=None, look_at=None), [Action(Do.RUN)]
    if x.live:
        return replace(t, held=reason, look_at=x.now + t.poll), []
    return _answer(t, reason, x.now)


def step(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """The turn after one input (at times that never go back), and what the runtime does.

    Closed, nothing more is done, but an ask a run still sends ends at once (`cancelled`:
    no editor is there to answer it, and nothing looks at its deadline). The connection
    closing ends every pending ask and leaves a run at work (LEAVE). A run's end answers
    the turn once: `cancelled` after a cancel; a run that answered, while the session's
    subagents work or a message waits, goes on as `_over` says; any other end with its
    reason. A look's result, while held and looking, goes on as `_over` says; at any other
    time it is stale and does nothing. A cancel aborts the run at work and ends every
    pending ask `cancelled`, once; a held turn has no run at work: it is answered
    `cancelled` at once. An ask is kept pending until the editor's choice (which ends it,
    once) or its deadline. A tick ends the asks due, looks at the subagents of a held turn
    whose look is due (LOOK), and at the cancel plus `CANCEL_GRACE_MS` answers a turn not
    answered yet, `cancelled`."""
    if t.closed:
        if x.kind is Kind.ASK:  # the run goes on, left to the owner: no editor answers its ask
            return t, [Action(Do.END_ASK, ask=x.ask, how=AskEnd.CANCELLED)]
        return t, []
    if x.kind is Kind.CLOSED:
        leave = [Action(Do.LEAVE)] if t.at_work() else []
        t, ended = _end_asks(t, AskEnd.CANCELLED, x.now, only_due=False)
        return replace(t, closed=True), [*ended, *leave]
    if x.kind is Kind.RUN_ENDED:
        if t.answered is not None:  # after the grace's answer: no call waits
            return _end_asks(t, AskEnd.CANCELLED, x.now, only_due=False)
        if t.cancelled_at is not None:
            return _answer(t, Reason.CANCELLED, x.now)
        if x.reason in HELD:
            return _over(t, x.reason, x)
        return _answer(t, x.reason, x.now)
    if x.kind is Kind.CHILDREN:
        if t.answered is not None or t.held is None or t.look_at is not None:
            return t, []  # no look was under way: stale
        return _over(t, t.held, x)
    if x.kind is Kind.CANCEL:
        if t.cancelled_at is not None or t.answered is not None:
            return t, []
        if t.held is not None:  # no run is at work: nothing to stop
            return _answer(replace(t, cancelled_at=x.now), Reason.CANCELLED, x.now)
        t, out = _end_asks(replace(t, cancelled_at=x.now), AskEnd.CANCELLED, x.now, only_due=False)
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
    if t.answered is None and t.cancelled_at is not None and x.now >= t.cancelled_at + CANCEL_GRACE_MS:
        t = replace(t, answered=Reason.CANCELLED, held=None, look_at=None)
        out.append(Action(Do.RESPOND, Reason.CANCELLED))
    if t.held is not None and t.look_at is not None and x.now >= t.look_at:
        t = replace(t, look_at=None)
        out.append(Action(Do.LOOK))
    return t, out


def wake(t: Turn) -> int | None:
    """When the runtime must look again (a TICK) if nothing happens before: the earliest
    pending ask's deadline, the cancel's grace, or a held turn's next look; None: only an
    input moves the turn."""
    times = [a.deadline for a in t.asks if a.ended is None]
    if t.cancelled_at is not None and t.answered is None:
        times.append(t.cancelled_at + CANCEL_GRACE_MS)
    if t.held is not None and t.look_at is not None:
        times.append(t.look_at)
    return None if t.closed or not times else min(times)


# ---------------------------------------------------------------- acp_setup_bounded


@dataclass(frozen=True)
class Setup:
    """One `initialize`, `session/new` or `session/load`: when it came, and whether it was
    answered (with its result or a failure)."""

    started: int
    answered: bool = False
    failed: bool = False


def setup_step(s: Setup, done: bool, now: int) -> tuple[Setup, Do | None]:
    """`done`: the request's work ended (its result, or its own failure); else a tick at
    `now`. Answered once: with its work's end, or a failure at `SETUP_MS` after it came."""
    if s.answered:
        return s, None
    if done:
        return replace(s, answered=True), Do.RESPOND
    if now >= s.started + SETUP_MS:
        return replace(s, answered=True, failed=True), Do.RESPOND
    return s, None
