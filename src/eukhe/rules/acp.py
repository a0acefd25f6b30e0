"""The editor face (issue 43): eukhe as an Agent Client Protocol agent, and what its laws
say of it: every prompt is answered once, every permission request ends, and the setup
requests answer within their bound.

The runtime (`eukhe.acp`) speaks JSON-RPC through the protocol's SDK, runs each turn
through the durable runtime and asks this module what to do:

- `step`: one `session/prompt` over time (`Turn`): its run's end (`RUN_ENDED`, with the
  answer `answer_of` gives its outcome), the editor's `session/cancel`, a permission
  request sent and answered, the clock, and the connection closing. A turn is answered
  exactly once: when its run ends; after a cancel, `cancelled`, when the run ends or at the
  cancel plus `CANCEL_GRACE_MS`, whichever comes first (`acp_prompt_answered_once`). A
  closed connection answers nothing more, and leaves the run to the home's owner, as a
  closed terminal does (an ask the run sends then ends at once: nobody would answer it);
- the same `step` ends each permission request once: by the editor's choice, by its
  deadline (a denial that says so), or by the turn's cancel, every pending one at once
  (`acp_ask_ends`); an answer that comes after is ignored;
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
    closed (nothing more is sent)."""

    started: int
    cancelled_at: int | None = None
    answered: Reason | None = None
    asks: tuple[Ask, ...] = ()
    closed: bool = False


class Kind(Enum):
    RUN_ENDED = "run_ended"  # the turn's run ended: `reason` its answer
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


class Do(Enum):
    ABORT = "abort"  # abort the turn's run (it ends within its grace)
    RESPOND = "respond"  # answer the prompt (`reason`)
    END_ASK = "end_ask"  # end the permission request `ask` (`how`): stop waiting for the editor
    LEAVE = "leave"  # the editor is gone: its run is left in flight, to the home's owner


@dataclass(frozen=True)
class Action:
    do: Do
    reason: Reason | None = None
    ask: int = 0
    how: AskEnd | None = None


def begin(now: int) -> Turn:
    return Turn(now)


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


def step(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """The turn after one input (at times that never go back), and what the runtime does.

    Closed, nothing more is done, but an ask the run still sends ends at once (`cancelled`:
    no editor is there to answer it, and nothing looks at its deadline). The connection
    closing ends every pending ask and leaves the run (LEAVE). A run's end answers the turn
    once: with its reason, or `cancelled` after a cancel. A cancel aborts the run and ends
    every pending ask `cancelled`, once. An ask is kept pending until the
    editor's choice (which ends it, once) or its deadline. At the cancel plus
    `CANCEL_GRACE_MS`, a turn not answered yet is answered `cancelled`."""
    if t.closed:
        if x.kind is Kind.ASK:  # the run goes on, left to the owner: no editor answers its ask
            return t, [Action(Do.END_ASK, ask=x.ask, how=AskEnd.CANCELLED)]
        return t, []
    if x.kind is Kind.CLOSED:
        t, ended = _end_asks(t, AskEnd.CANCELLED, x.now, only_due=False)
        leave = [] if t.answered is not None else [Action(Do.LEAVE)]
        return replace(t, closed=True), [*ended, *leave]
    out: list[Action] = []
    if x.kind is Kind.RUN_ENDED:
        t, out = _end_asks(t, AskEnd.CANCELLED, x.now, only_due=False)  # its run is over: no call waits
        if t.answered is None:
            reason = Reason.CANCELLED if t.cancelled_at is not None else x.reason
            t = replace(t, answered=reason)
            out.append(Action(Do.RESPOND, reason))
        return t, out
    if x.kind is Kind.CANCEL:
        if t.cancelled_at is not None or t.answered is not None:
            return t, []
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
        t = replace(t, answered=Reason.CANCELLED)
        out.append(Action(Do.RESPOND, Reason.CANCELLED))
    return t, out


def wake(t: Turn) -> int | None:
    """When the runtime must look again (a TICK) if nothing happens before: the earliest
    pending ask's deadline, or the cancel's grace; None: only an input moves the turn."""
    times = [a.deadline for a in t.asks if a.ended is None]
    if t.cancelled_at is not None and t.answered is None:
        times.append(t.cancelled_at + CANCEL_GRACE_MS)
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
