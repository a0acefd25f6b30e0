"""The laws of the editor face (issue 43) over the model `rules.acp`, and its breaks.

The model is two rules, so the area walks two tracks, one a limit (`ACfg.track`):

- TURN (`acp_prompt_answered_once`, `acp_ask_ends`): one `session/prompt` from `begin`
  under any history of inputs at times that never go back: its run's end (with each
  outcome, answered through `answer_of`), the editor's `session/cancel` (once or again),
  permission requests sent (fresh ids, each with its deadline a window after it) and
  answered (pending, already ended, or never asked), ticks of the clock (now, a jump
  later, a ms before and at each pending deadline and at the cancel's grace), and the
  connection closing; after the close, the same inputs again (the run goes on, left to
  the owner). The run ends once and asks nothing after its end. The walk's state keeps,
  beside the model's `Turn`, what came and what the runtime did, as the walk saw it (not
  the model's own fields, which a break may forget to set): when the first cancel came,
  whether the run ended and the connection closed, every RESPOND's reason, the ABORTs
  and LEAVEs, every ask sent with its deadline, and every END_ASK with how it ended.
- SETUP (`acp_setup_bounded`): one `initialize`, `session/new` or `session/load` under
  ticks (now, a ms later, a ms before, at and after its bound) and its work's end.

How they are checked: the turn's laws exhaustively within the bounds printed, then
sampled (Hypothesis: up to 5 asks, windows up to 20 s, jumps of time up to 5 s, each
history ending its run with one outcome drawn, walked for 60 inputs); the setup's law is
proven with CrossHair (its state is scalar: when it came, the last input's time, whether
it was answered and failed, the responses so far; a step law and an inductive invariant,
over every number), and walked and sampled as well. `answer_of` is checked on the walk's
runs' ends, and once more over every outcome, failure's kind and cut (`answer_table`).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from enum import Enum

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import acp
from eukhe.rules.acp import (
    CANCEL_GRACE_MS,
    ROUNDS_CAP,
    SETUP_MS,
    Action,
    AskEnd,
    Do,
    Input,
    Kind,
    Reason,
    Setup,
    Turn,
)


@dataclass(frozen=True)
class Model:
    """The functions of the model the laws call; a break swaps one."""

    begin: Callable[[int], Turn]
    step: Callable[[Turn, Input], tuple[Turn, list[Action]]]
    wake: Callable[[Turn], int | None]
    answer_of: Callable[[str, str | None, bool], Reason]
    setup_step: Callable[[Setup, bool, int], tuple[Setup, Do | None]]


MODEL = Model(acp.begin, acp.step, acp.wake, acp.answer_of, acp.setup_step)


class Track(Enum):
    TURN = "turn"
    SETUP = "setup"


@dataclass(frozen=True)
class ACfg:
    """A walk's limits (numbers only, so the prover ranges over them too). TURN: when the
    prompt came, an ask's window (its deadline after it is sent), the asks sent at most,
    the jump of time a tick may take, the outcome its run ends with (an index into
    `OUTCOMES`; -1: each of them). SETUP: when the request came."""

    track: Track
    start: int = 0
    window: int = 0
    asks: int = 0
    jump: int = 1
    outcome: int = -1


def cfg_valid(cfg: ACfg) -> bool:
    return (cfg.asks >= 0) & (cfg.jump >= 1) & (cfg.window >= 0) & (cfg.outcome < len(OUTCOMES))


OUTCOMES: tuple[tuple[str, str | None, bool], ...] = (
    ("answered", None, False),
    ("answered", None, True),  # the answer hit the output limit
    ("aborted", None, False),  # the run's abort, whoever asked for it
    ("failed", ROUNDS_CAP, False),
    ("failed", "model_error", False),
)
"""How the walk's runs end: the run's outcome, its failure's kind, whether its answer was cut."""


def expected(outcome: str, code: str | None, cut: bool) -> Reason:
    """The answer a run's end gets when no cancel came before it (issue 43): answered,
    `end_turn`, or `max_tokens` when cut at the output limit; aborted, `cancelled`; failed
    at the tool rounds' cap, `max_turn_requests`; any other failure, an error (FAILED)."""
    if outcome == "answered":
        return Reason.MAX_TOKENS if cut else Reason.END_TURN
    if outcome == "aborted":
        return Reason.CANCELLED
    return Reason.MAX_TURN_REQUESTS if code == ROUNDS_CAP else Reason.FAILED


# ---------------------------------------------------------------- the tracks' states and inputs


@dataclass(frozen=True)
class TState:
    """TURN: the model's turn and the last input's time; then what came and what the
    runtime did, as the walk saw it: the first cancel's time while the turn was open and
    unanswered, whether the run ended and the connection closed, every RESPOND's reason,
    the ABORTs and LEAVEs, the asks sent (id, deadline), the END_ASKs (id, how)."""

    turn: Turn
    now: int
    cancel: int | None = None
    ended: bool = False
    closed: bool = False
    responses: tuple[Reason | None, ...] = ()
    aborts: int = 0
    leaves: int = 0
    sent: tuple[tuple[int, int], ...] = ()
    ends: tuple[tuple[int, AskEnd | None], ...] = ()


@dataclass(frozen=True)
class TIn:
    """TURN: one input at `at`: the run's end with `OUTCOMES[outcome]`, a cancel, an ask
    (`ask` its id; its deadline is `at` plus the cfg's window), an answer to ask `ask`, a
    tick, the close."""

    kind: Kind
    at: int
    outcome: int = 0
    ask: int = 0


@dataclass(frozen=True)
class SState:
    """SETUP: when the request came, the last input's time, whether it was answered and
    failed (the model's), and the RESPONDs done so far."""

    started: int
    now: int
    answered: bool = False
    failed: bool = False
    responds: int = 0


@dataclass(frozen=True)
class SIn:
    """SETUP: the request's work ended (`done`), else a tick; at `now`."""

    done: bool
    now: int


State = TState | SState
In = TIn | SIn

STRAY = 99
"""An ask id never sent: an answer to it is an editor's mistake."""


def pending(s: TState) -> list[int]:
    """The asks sent and not ended, as the walk saw it."""
    ended = {i for i, _ in s.ends}
    return [i for i, _ in s.sent if i not in ended]


def _ticks(cfg: ACfg, s: TState) -> list[int]:
    """When the clock may tick next: now, a jump later, and a ms before and at each pending
    deadline and the cancel's grace (while the turn is unanswered)."""
    ts = {s.now, s.now + cfg.jump}
    due = dict(s.sent)
    for i in pending(s):
        ts |= {due[i] - 1, due[i]}
    if s.cancel is not None and not s.responses:
        g = s.cancel + CANCEL_GRACE_MS
        ts |= {g - 1, g}
    return sorted(t for t in ts if t >= s.now)


def _turn_inputs(cfg: ACfg, s: TState) -> list[TIn]:
    now = s.now
    xs: list[TIn] = []
    if not s.ended:  # the run ends once, and asks nothing after its end
        outs = range(len(OUTCOMES)) if cfg.outcome < 0 else (cfg.outcome,)
        xs += [TIn(Kind.RUN_ENDED, now, outcome=k) for k in outs]
        if len(s.sent) < cfg.asks:
            xs.append(TIn(Kind.ASK, now, ask=len(s.sent) + 1))
    xs.append(TIn(Kind.CANCEL, now))
    xs += [TIn(Kind.CHOSEN, now, ask=i) for i, _ in s.sent]
    xs.append(TIn(Kind.CHOSEN, now, ask=STRAY))
    if s.closed:  # nothing looks at the time: one tick far on
        xs.append(TIn(Kind.TICK, now + cfg.jump + CANCEL_GRACE_MS))
    else:
        xs += [TIn(Kind.TICK, t) for t in _ticks(cfg, s)]
    xs.append(TIn(Kind.CLOSED, now))
    return xs


def _setup_inputs(cfg: ACfg, s: SState) -> list[SIn]:
    bound = s.started + SETUP_MS
    ts = sorted(t for t in {s.now, s.now + 1, bound - 1, bound, bound + 1} if t >= s.now)
    return [SIn(True, s.now), *(SIn(False, t) for t in ts)]


def inputs(cfg: ACfg, s: State) -> Sequence[In]:
    if isinstance(s, TState):
        return _turn_inputs(cfg, s)
    return _setup_inputs(cfg, s)


def start(m: Model, cfg: ACfg) -> State:
    if cfg.track is Track.SETUP:
        return SState(cfg.start, cfg.start)
    return TState(m.begin(cfg.start), cfg.start)


def _turn_next(m: Model, cfg: ACfg, s: TState, x: TIn) -> TState:
    reason = m.answer_of(*OUTCOMES[x.outcome]) if x.kind is Kind.RUN_ENDED else Reason.END_TURN
    deadline = x.at + cfg.window if x.kind is Kind.ASK else 0
    turn, acts = m.step(s.turn, Input(x.kind, x.at, reason, x.ask, deadline))
    first = x.kind is Kind.CANCEL and not s.closed and s.cancel is None and not s.responses
    return TState(
        turn,
        max(s.now, x.at),
        x.at if first else s.cancel,
        s.ended or x.kind is Kind.RUN_ENDED,
        s.closed or x.kind is Kind.CLOSED,
        s.responses + tuple(a.reason for a in acts if a.do is Do.RESPOND),
        s.aborts + sum(a.do is Do.ABORT for a in acts),
        s.leaves + sum(a.do is Do.LEAVE for a in acts),
        (*s.sent, (x.ask, deadline)) if x.kind is Kind.ASK else s.sent,
        s.ends + tuple((a.ask, a.how) for a in acts if a.do is Do.END_ASK),
    )


def _setup_next(m: Model, s: SState, x: SIn) -> SState:
    t, act = m.setup_step(Setup(s.started, s.answered, s.failed), x.done, x.now)
    return SState(s.started, max(s.now, x.now), t.answered, t.failed, s.responds + (act is Do.RESPOND))


def nxt(m: Model, cfg: ACfg, s: State, x: In) -> State:
    if isinstance(s, TState) and isinstance(x, TIn):
        return _turn_next(m, cfg, s, x)
    if isinstance(s, SState) and isinstance(x, SIn):
        return _setup_next(m, s, x)
    return s


def valid(cfg: ACfg, s: State) -> bool:
    """The model's states: a setup request fails only as it is answered."""
    if isinstance(s, SState):
        return s.answered | (not s.failed)
    return True


# ---------------------------------------------------------------- acp_prompt_answered_once


def acp_prompt_answered_once(m: Model, cfg: ACfg, g: None, s: State, x: In, t: State) -> bool:
    """One input to a turn. RESPOND is done at most once in all; only when the run ends or
    at a tick at or after the cancel plus CANCEL_GRACE_MS; after a cancel always
    `cancelled`, else with the answer its run's end gets (`expected`). Once the run ended
    (the connection open) it has been done; once a tick came at or after the cancel plus
    the grace, it has been done. ABORT is done once, at the first cancel of an open,
    unanswered turn, and never else. The close does LEAVE once when the turn was not
    answered, and no RESPOND or ABORT: the run is the owner's now; after the close, none of
    the three is done again. While a cancelled turn waits for its answer, `wake` asks to
    look again by the cancel's grace at the latest."""
    if not (isinstance(s, TState) and isinstance(x, TIn) and isinstance(t, TState)):
        return True
    new = t.responses[len(s.responses) :]
    ok = len(t.responses) <= 1
    if s.closed:
        return ok & (new == ()) & (t.aborts == s.aborts) & (t.leaves == s.leaves)
    graced = x.kind is Kind.TICK and s.cancel is not None and x.at >= s.cancel + CANCEL_GRACE_MS
    if new:
        ok &= (x.kind is Kind.RUN_ENDED) | graced
        if s.cancel is not None:
            ok &= new[0] is Reason.CANCELLED
        elif x.kind is Kind.RUN_ENDED:
            ok &= new[0] is expected(*OUTCOMES[x.outcome])
    if (x.kind is Kind.RUN_ENDED) | graced:
        ok &= len(t.responses) == 1
    first = x.kind is Kind.CANCEL and s.cancel is None and not s.responses
    ok &= t.aborts - s.aborts == int(first)
    ok &= t.leaves - s.leaves == int(x.kind is Kind.CLOSED and not s.responses)
    if not t.closed and t.cancel is not None and not t.responses:
        w = m.wake(t.turn)
        ok &= (w is not None) and w <= t.cancel + CANCEL_GRACE_MS
    return ok


ANSWERS: tuple[tuple[str, str | None, bool], ...] = tuple(
    itertools.product(
        ("answered", "aborted", "failed", ""),
        (None, ROUNDS_CAP, "model_error", "timeout", "", "run_limit "),
        (False, True),
    )
)
"""Every run's end `answer_table` reads: an outcome (and one that is none of them), a
failure's kind (none, the rounds' cap, others, one like it), an answer cut or not."""


def answer_table(m: Model, cfg: ACfg) -> str | None:
    """`answer_of` over every end in `ANSWERS`: the answer `expected` gives."""
    if cfg.track is not Track.TURN:
        return None
    for end in ANSWERS:
        got = m.answer_of(*end)
        if got is not expected(*end):
            return f"answer_of{end!r} is {got}, not {expected(*end)}"
    return None


# ---------------------------------------------------------------- acp_ask_ends


def acp_ask_ends(m: Model, cfg: ACfg, g: None, s: State, x: In, t: State) -> bool:
    """One input to a turn. END_ASK is done at most once an ask id, only for an ask sent:
    CHOSEN at the editor's answer to it; DEADLINE at a tick at or after its deadline;
    CANCELLED at a cancel, the run's end, the close, or when it is sent after the cancel,
    the turn's answer or the close. After the input no ask is left pending that: a cancel,
    the run's end or the close ended (all of them); a tick found due; the editor answered;
    came too late to wait for. An answer to an ask that is not pending (ended already, or
    never sent) changes nothing and does nothing. While an ask is pending on an open
    connection, `wake` asks to look again by its deadline at the latest, and after a tick,
    never at a time the tick has seen (the runtime would spin)."""
    if not (isinstance(s, TState) and isinstance(x, TIn) and isinstance(t, TState)):
        return True
    ids = [i for i, _ in t.ends]
    ok = len(ids) == len(set(ids))
    due = dict(t.sent)
    late = (s.cancel is not None) | bool(s.responses) | s.closed
    for i, how in t.ends[len(s.ends) :]:
        ok &= i in due
        if how is AskEnd.CHOSEN:
            ok &= (x.kind is Kind.CHOSEN) & (x.ask == i)
        elif how is AskEnd.DEADLINE:
            ok &= (x.kind is Kind.TICK) and x.at >= due.get(i, x.at + 1)
        elif how is AskEnd.CANCELLED:
            ok &= (x.kind in (Kind.CANCEL, Kind.RUN_ENDED, Kind.CLOSED)) | (
                (x.kind is Kind.ASK) & (x.ask == i) & late
            )
        else:
            ok = False
    left = pending(t)
    if (x.kind in (Kind.CANCEL, Kind.RUN_ENDED)) | t.closed:
        ok &= not left
    if x.kind is Kind.TICK:
        ok &= all(due[i] > x.at for i in left)
    if x.kind is Kind.ASK and late:
        ok &= x.ask not in left
    if x.kind is Kind.CHOSEN:
        if x.ask in pending(s):
            ok &= x.ask not in left
        else:
            ok &= t == s
    if left and not t.closed:
        w = m.wake(t.turn)
        ok &= (w is not None) and w <= min(due[i] for i in left)
    if x.kind is Kind.TICK:
        w = m.wake(t.turn)
        ok &= (w is None) or w > x.at
    return ok


# ---------------------------------------------------------------- acp_setup_bounded


def acp_setup_bounded(m: Model, cfg: ACfg, s: State, x: In) -> bool:
    """One input to a setup request: answered, nothing changes and nothing is done; its
    work's end answers it (RESPOND, not failed); a tick at or after SETUP_MS after it came
    answers it failed (RESPOND); a tick before leaves it as it was."""
    if not (isinstance(s, SState) and isinstance(x, SIn)):
        return True
    was = Setup(s.started, s.answered, s.failed)
    t, act = m.setup_step(was, x.done, x.now)
    if s.answered:
        return (t == was) & (act is None)
    if x.done:
        return (t == Setup(s.started, True, False)) & (act is Do.RESPOND)
    if x.now >= s.started + SETUP_MS:
        return (t == Setup(s.started, True, True)) & (act is Do.RESPOND)
    return (t == was) & (act is None)


def acp_setup_bounded_node(m: Model, cfg: ACfg, s: State) -> bool:
    """Over any history: RESPOND done once when answered, never when not, never twice; a
    failure only answered; unanswered only while the last input came before the bound."""
    if not isinstance(s, SState):
        return True
    ok = (s.responds == int(s.answered)) & (s.answered | (not s.failed))
    return ok & (s.answered | (s.now < s.started + SETUP_MS))


LAWS = (
    Law(
        "acp_prompt_answered_once",
        "acp",
        "Each session/prompt gets exactly one response: when its run ends, with its answer "
        "(end_turn, max_tokens, max_turn_requests, an error with its cause), or cancelled after a "
        "cancel, at the cancel's grace at the latest; the close answers nothing and aborts nothing "
        "(issue 43).",
        history=acp_prompt_answered_once,
        extra=answer_table,
        prove=False,
    ),
    Law(
        "acp_ask_ends",
        "acp",
        "Every permission request ends exactly once: by the editor's choice, by its deadline at the "
        "latest, or by the cancel, the run's end or the close; a late answer does nothing (issue 43).",
        history=acp_ask_ends,
        prove=False,
    ),
    Law(
        "acp_setup_bounded",
        "acp",
        "initialize, session/new and session/load are answered exactly once, by SETUP_MS at the latest "
        "(a failure with its cause at the bound) (issue 43).",
        edge=acp_setup_bounded,
        node=acp_setup_bounded_node,
    ),
)


# ---------------------------------------------------------------- breaks


def _step(f: Callable[[Turn, Input], tuple[Turn, list[Action]]]) -> Model:
    return replace(MODEL, step=f)


RESPOND_CANCELLED = Action(Do.RESPOND, Reason.CANCELLED)


def _respond_again_after_grace(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """A run that ends after the grace answered the turn is answered again."""
    u, acts = acp.step(t, x)
    if x.kind is Kind.RUN_ENDED and not t.closed and t.answered is not None:
        return u, [*acts, RESPOND_CANCELLED]
    return u, acts


def _cancelled_run_waits_for_grace(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """A run that ends during a cancel is not answered: the grace's tick will (and none comes)."""
    if x.kind is Kind.RUN_ENDED and not t.closed and t.cancelled_at is not None:
        u, acts = acp.step(replace(t, answered=Reason.CANCELLED), x)
        return replace(u, answered=t.answered), acts
    return acp.step(t, x)


def _real_reason_after_cancel(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """After a cancel, the run's own reason (the answer it had, or its failure)."""
    return acp.step(replace(t, cancelled_at=None) if x.kind is Kind.RUN_ENDED else t, x)


def _cancel_answered_at_once(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """A cancel answered at once, while its run still stops (the editor's next prompt meets it)."""
    u, acts = acp.step(t, x)
    if x.kind is Kind.CANCEL and not t.closed and t.answered is None and t.cancelled_at is None:
        return replace(u, answered=Reason.CANCELLED), [*acts, RESPOND_CANCELLED]
    return u, acts


def _close_aborts(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """The close aborts the run (the editor's run dies with its window)."""
    u, acts = acp.step(t, x)
    if x.kind is Kind.CLOSED and not t.closed:
        return u, [Action(Do.ABORT), *acts]
    return u, acts


def _close_responds(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """The close answers the turn `cancelled` (to nobody) and leaves it."""
    u, acts = acp.step(t, x)
    if x.kind is Kind.CLOSED and not t.closed and t.answered is None:
        return replace(u, answered=Reason.CANCELLED), [RESPOND_CANCELLED, *acts]
    return u, acts


def _end_after_close_responds(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """A run's end after the close answers the closed connection."""
    if t.closed and x.kind is Kind.RUN_ENDED:
        return acp.step(replace(t, closed=False), x)
    return acp.step(t, x)


def _grace_late(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """The grace's answer a ms late: `>` for `>=`."""
    u, acts = acp.step(t, x)
    if t.cancelled_at is not None and x.kind is Kind.TICK and x.now == t.cancelled_at + CANCEL_GRACE_MS:
        return replace(u, answered=t.answered), [a for a in acts if a.do is not Do.RESPOND]
    return u, acts


def _wake_without_grace(t: Turn) -> int | None:
    """`wake` forgets the cancel's grace: a run that never ends leaves the prompt open."""
    return acp.wake(replace(t, cancelled_at=None))


def _every_cancel_aborts(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """A second cancel aborts the run again."""
    u, acts = acp.step(t, x)
    if x.kind is Kind.CANCEL and not t.closed and t.answered is None and t.cancelled_at is not None:
        return u, [Action(Do.ABORT), *acts]
    return u, acts


def _leave_when_answered(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """The close leaves a run that has already ended (its turn answered)."""
    u, acts = acp.step(t, x)
    if x.kind is Kind.CLOSED and not t.closed and t.answered is not None:
        return u, [*acts, Action(Do.LEAVE)]
    return u, acts


def _cut_as_end_turn(outcome: str, code: str | None, cut: bool) -> Reason:
    """An answer cut at the output limit told as a whole one."""
    return acp.answer_of(outcome, code, False)


def _cap_as_failure(outcome: str, code: str | None, cut: bool) -> Reason:
    """The tool rounds' cap told as any failure."""
    return acp.answer_of(outcome, None if code == ROUNDS_CAP else code, cut)


def _abort_as_failure(outcome: str, code: str | None, cut: bool) -> Reason:
    """A run aborted by someone else than the editor (the owner, another face) told as failed."""
    return Reason.FAILED if outcome == "aborted" else acp.answer_of(outcome, code, cut)


def _late_answer_ends_again(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """An answer that comes after its ask's deadline (or cancel) ends it again, `chosen`."""
    u, acts = acp.step(t, x)
    if x.kind is Kind.CHOSEN and not t.closed and any(a.id == x.ask and a.ended for a in t.asks):
        return u, [Action(Do.END_ASK, ask=x.ask, how=AskEnd.CHOSEN)]
    return u, acts


def _deadline_late(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """An ask's deadline a ms late: `>` for `>=`."""
    if x.kind is Kind.TICK and t.answered is None and t.cancelled_at is None:
        return acp.step(t, replace(x, now=x.now - 1))
    return acp.step(t, x)


def _deadline_early(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """An ask's deadline a ms early: the person's last ms cut."""
    if x.kind is Kind.TICK and t.answered is None and t.cancelled_at is None:
        return acp.step(t, replace(x, now=x.now + 1))
    return acp.step(t, x)


def _cancel_keeps_asks(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """A cancel that aborts the run and leaves its asks to their deadlines."""
    if x.kind is Kind.CANCEL and not t.closed and t.answered is None and t.cancelled_at is None:
        return replace(t, cancelled_at=x.now), [Action(Do.ABORT)]
    return acp.step(t, x)


def _end_keeps_asks(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """A run's end that leaves its asks pending (the editor still shows them)."""
    if x.kind is Kind.RUN_ENDED and not t.closed:
        u, acts = acp.step(replace(t, asks=()), x)
        return replace(u, asks=t.asks), acts
    return acp.step(t, x)


def _late_ask_waits(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """An ask sent after the cancel is sent to the editor and waited for."""
    if x.kind is Kind.ASK and not t.closed and t.cancelled_at is not None and t.answered is None:
        return replace(t, asks=(*t.asks, acp.Ask(x.ask, x.deadline))), []
    return acp.step(t, x)


def _closed_ask_waits(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """The model's first draft: closed, nothing more is done, not even for an ask the run sends."""
    if t.closed:
        return t, []
    return acp.step(t, x)


def _close_keeps_asks(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """The close leaves its asks pending: nobody answers them and nothing looks at their deadline."""
    if x.kind is Kind.CLOSED and not t.closed:
        u, acts = acp.step(replace(t, asks=()), x)
        return replace(u, asks=t.asks), acts
    return acp.step(t, x)


def _wake_without_asks(t: Turn) -> int | None:
    """`wake` forgets the asks' deadlines: an ask nobody answers waits until something else comes."""
    return acp.wake(replace(t, asks=()))


def _wake_counts_ended_asks(t: Turn) -> int | None:
    """`wake` counts asks that ended: the runtime looks again at a time it has seen, for ever."""
    w = acp.wake(t)
    times = [a.deadline for a in t.asks] + ([] if w is None else [w])
    return None if t.closed or not times else min(times)


def _setups(f: Callable[[Setup, bool, int], tuple[Setup, Do | None]]) -> Model:
    return replace(MODEL, setup_step=f)


def _setup_unbounded(s: Setup, done: bool, now: int) -> tuple[Setup, Do | None]:
    """A setup request that waits for its work however long it takes."""
    return acp.setup_step(s, done, s.started)


def _setup_answers_late_work(s: Setup, done: bool, now: int) -> tuple[Setup, Do | None]:
    """Work that ends after the bound's failure is answered too."""
    if s.answered and done:
        return replace(s, failed=False), Do.RESPOND
    return acp.setup_step(s, done, now)


def _setup_bound_late(s: Setup, done: bool, now: int) -> tuple[Setup, Do | None]:
    """The bound a ms late: `>` for `>=`."""
    return acp.setup_step(s, done, now - 1)


MUTANTS = (
    Mutant("a turn answered again when its run ends after the grace", "acp",
           _step(_respond_again_after_grace)),
    Mutant("a run ending during a cancel left unanswered (waits for the grace)", "acp",
           _step(_cancelled_run_waits_for_grace)),
    Mutant("the run's own reason after a cancel", "acp", _step(_real_reason_after_cancel)),
    Mutant("a cancel answered at once, before its run stops", "acp", _step(_cancel_answered_at_once)),
    Mutant("the close aborts the run", "acp", _step(_close_aborts)),
    Mutant("the close answers the turn", "acp", _step(_close_responds)),
    Mutant("a run's end after the close answers it", "acp", _step(_end_after_close_responds)),
    Mutant("the cancel's grace a ms late", "acp", _step(_grace_late)),
    Mutant("wake forgets the cancel's grace", "acp", replace(MODEL, wake=_wake_without_grace)),
    Mutant("every cancel aborts the run", "acp", _step(_every_cancel_aborts)),
    Mutant("the close leaves a run that has ended", "acp", _step(_leave_when_answered)),
    Mutant("answer_of: a cut answer told end_turn", "acp", replace(MODEL, answer_of=_cut_as_end_turn)),
    Mutant("answer_of: the rounds' cap told as a failure", "acp", replace(MODEL, answer_of=_cap_as_failure)),
    Mutant("answer_of: an abort told as a failure", "acp", replace(MODEL, answer_of=_abort_as_failure)),
    Mutant("a late answer ends its ask again", "acp", _step(_late_answer_ends_again)),
    Mutant("an ask's deadline a ms late", "acp", _step(_deadline_late)),
    Mutant("an ask's deadline a ms early", "acp", _step(_deadline_early)),
    Mutant("the cancel leaves the asks pending", "acp", _step(_cancel_keeps_asks)),
    Mutant("the run's end leaves the asks pending", "acp", _step(_end_keeps_asks)),
    Mutant("an ask sent after the cancel waits", "acp", _step(_late_ask_waits)),
    Mutant("an ask sent after the close waits (the first draft)", "acp", _step(_closed_ask_waits)),
    Mutant("the close leaves the asks pending", "acp", _step(_close_keeps_asks)),
    Mutant("wake forgets the asks' deadlines", "acp", replace(MODEL, wake=_wake_without_asks)),
    Mutant("wake counts ended asks (spins)", "acp", replace(MODEL, wake=_wake_counts_ended_asks)),
    Mutant("a setup request with no bound", "acp", _setups(_setup_unbounded)),
    Mutant("a setup request answered twice (late work after the failure)", "acp",
           _setups(_setup_answers_late_work)),
    Mutant("a setup request's bound a ms late", "acp", _setups(_setup_bound_late)),
)  # fmt: skip


# ---------------------------------------------------------------- the area


def proof_cases() -> list[tuple[dict[str, Enum], dict[str, Enum]]]:
    return [({}, {})]  # the setup's state and input are numbers and flags: one case


WINDOWS = (0, 1_000, 5_000)
"""The asks' windows walked: due at once, before the cancel's grace, after it."""


def cfgs() -> Iterator[ACfg]:
    # the setup's first: a mutant's check takes the limits from both ends in turn, so a
    # setup break is found before any turn is walked, and a turn's break in the widest window
    yield ACfg(Track.SETUP, start=0)
    yield ACfg(Track.SETUP, start=7)
    for window in WINDOWS:
        yield ACfg(Track.TURN, start=0, window=window, asks=2, jump=10_000)


def sample_cfg(seed: int) -> ACfg:
    r = random.Random(seed)
    if seed % 5 == 0:
        return ACfg(Track.SETUP, start=r.randint(0, 10**6))
    return ACfg(
        Track.TURN,
        start=r.randint(0, 10**6),
        window=r.choice((0, 1, CANCEL_GRACE_MS, r.randint(0, 20_000))),
        asks=r.randint(0, 5),
        jump=r.randint(1, 5_000),
        outcome=r.randrange(len(OUTCOMES)),
    )


AREA = Area(
    name="acp",
    model=MODEL,
    cfg_type=ACfg,
    state_type=SState,
    input_type=SIn,
    proof_cases=proof_cases,
    valid=valid,
    cfg_valid=cfg_valid,
    start=start,
    next=nxt,
    inputs=inputs,
    cfgs=cfgs,
    bounds=(
        f"a turn with up to 2 asks, their windows {', '.join(map(str, WINDOWS))} ms, "
        f"its run ending with each of {len(OUTCOMES)} outcomes, ticks a ms before and at each deadline "
        "and the grace or 10 s on; a setup request at 0 and 7 ms"
    ),
    depth=6,
    sample_cfg=sample_cfg,
    laws=LAWS,
    mutants=MUTANTS,
)
