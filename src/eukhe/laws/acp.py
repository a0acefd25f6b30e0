"""The laws of the editor face (issue 43) over the session loop every face shares
(`rules.drive`, its face `drive.EDITOR`) and the editor's own setup (`rules.acp`), and
their breaks; the laws of what the other faces add to the loop are `laws.drive`'s.

The model is two rules, so the area walks two tracks, one a limit (`ACfg.track`):

- TURN (`acp_prompt_answered_once`, `acp_ask_ends`, `acp_held_for_subagents`): one
  `session/prompt` from `begin` under any history of inputs at times that never go back:
  the end of the run at work (with each outcome, answered through `answer_of`, and each
  of: subagents at work or not, a message waiting or not), a look's result (the same
  two) while a look is under way, the editor's `session/cancel` (once or again),
  permission requests sent while a run is at work or the turn is held (fresh ids, each
  with its deadline a window after it; a held turn's come from its subagents) and
  answered (pending, already ended, or never asked), ticks of the clock (now, a jump
  later, a ms before and at each pending deadline, at the cancel's grace and at a held
  turn's next look), and the connection closing; after the close, the same inputs again
  (a run goes on, left to the owner). A run is at work from the start and from each RUN
  the model does, and ends once. The walk's state keeps, beside the model's `Turn`, what
  came and what the runtime did, as the walk saw it (not the model's own fields, which a
  break may forget to set): when the first cancel came, whether a run is at work, a look
  is under way and the connection closed, while held when the last run's end or look
  came and the answer that run's end gets, every RESPOND's reason, the ABORTs, LEAVEs,
  RUNs and LOOKs, every ask sent with its deadline, and every END_ASK with how it ended.
- SETUP (`acp_setup_bounded`): one `initialize`, `session/new` or `session/load` under
  ticks (now, a ms later, a ms before, at and after its bound) and its work's end.

How they are checked: the turn's laws exhaustively within the bounds printed (the
subagents' inputs in a walk of their own, its run's end finding them in each way only for
a run that answered: the one that may wait for them), then sampled (Hypothesis: up to 5
asks, windows up to 20 s, jumps of time up to 5 s, looks every 1 ms to 5 s, with
subagents or not, each history ending its runs with one outcome drawn, walked for 60
inputs); the setup's law is proven with CrossHair (its state is scalar: when it came, the
last input's time, whether it was answered and failed, the responses so far; a step law
and an inductive invariant, over every number), and walked and sampled as well.
`answer_of` is checked on the walk's runs' ends, and once more over every outcome,
failure's kind and cut (`answer_table`).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import acp, drive
from eukhe.rules.acp import SETUP_MS, Setup
from eukhe.rules.drive import (
    CANCEL_GRACE_MS,
    ROUNDS_CAP,
    Action,
    AskEnd,
    Do,
    Input,
    Kind,
    Reason,
)
from eukhe.rules.drive import Work as Turn
from eukhe.rules.states import Choice, replace


@dataclass(frozen=True)
class Model:
    """The functions of the model the laws call; a break swaps one."""

    begin: Callable[[int, int], Turn]
    step: Callable[[Turn, Input], tuple[Turn, list[Action]]]
    wake: Callable[[Turn], int | None]
    answer_of: Callable[[str, str | None, bool], Reason]
    setup_step: Callable[[Setup, bool, int], tuple[Setup, Do | None]]


MODEL = Model(drive.begin, drive.step, drive.wake, drive.answer_of, acp.setup_step)


class Track(Choice):
    TURN = "turn"
    SETUP = "setup"


@dataclass(frozen=True)
class ACfg:
    """A walk's limits (numbers only, so the prover ranges over them too). TURN: when the
    prompt came, an ask's window (its deadline after it is sent), the asks sent at most,
    the jump of time a tick may take, the outcome its run ends with (an index into
    `OUTCOMES`; -1: each of them), whether the session has subagents (else every run's end
    finds none at work and nothing waiting), how often a held turn looks at them. SETUP:
    when the request came."""

    track: Track
    start: int = 0
    window: int = 0
    asks: int = 0
    jump: int = 1
    outcome: int = -1
    subagents: bool = True
    poll: int = 500


def cfg_valid(cfg: ACfg) -> bool:
    ok = (cfg.asks >= 0) & (cfg.jump >= 1) & (cfg.window >= 0) & (cfg.outcome < len(OUTCOMES))
    return ok & (cfg.poll >= 1)


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


def answered(outcome: int) -> bool:
    """Whether the walk's run end `OUTCOMES[outcome]` is a run that answered: the one whose
    turn waits for the session's subagents and messages."""
    return OUTCOMES[outcome][0] == "answered"


# ---------------------------------------------------------------- the tracks' states and inputs


@dataclass(frozen=True)
class TState:
    """TURN: the model's turn and the last input's time; then what came and what the
    runtime did, as the walk saw it: the first cancel's time while the turn was open and
    unanswered, whether a run is at work, a look is under way and the connection closed,
    when the last run's end or look's result came (`since`) and the answer the last run's
    end gets (`last`), every RESPOND's reason, the ABORTs, LEAVEs, RUNs and LOOKs, the
    asks sent (id, deadline), the END_ASKs (id, how)."""

    turn: Turn
    now: int
    cancel: int | None = None
    running: bool = True
    looking: bool = False
    closed: bool = False
    since: int = 0
    last: Reason | None = None
    responses: tuple[Reason | None, ...] = ()
    aborts: int = 0
    leaves: int = 0
    runs: int = 0
    looks: int = 0
    sent: tuple[tuple[int, int], ...] = ()
    ends: tuple[tuple[int, AskEnd | None], ...] = ()

    def held(self) -> bool:
        """As the walk sees it: no run at work, the turn unanswered, the connection open."""
        return not self.running and not self.responses and not self.closed


@dataclass(frozen=True)
class TIn:
    """TURN: one input at `at`: the run's end with `OUTCOMES[outcome]`, or a look's result
    (both with the session's subagents at work, `live`, and a message `waiting`), a
    cancel, an ask (`ask` its id; its deadline is `at` plus the cfg's window), an answer to
    ask `ask`, a tick, the close."""

    kind: Kind
    at: int
    outcome: int = 0
    ask: int = 0
    live: bool = False
    waiting: bool = False


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
    deadline, the cancel's grace (while the turn is unanswered) and a held turn's next look."""
    ts = {s.now, s.now + cfg.jump}
    due = dict(s.sent)
    for i in pending(s):
        ts |= {due[i] - 1, due[i]}
    if s.cancel is not None and not s.responses:
        g = s.cancel + CANCEL_GRACE_MS
        ts |= {g - 1, g}
    if s.held() and not s.looking:
        ts |= {s.since + cfg.poll - 1, s.since + cfg.poll}
    return sorted(t for t in ts if t >= s.now)


FLAGS = ((False, False), (True, False), (False, True), (True, True))
"""What a run's end or a look may find: the session's subagents at work, a message waiting."""


def _turn_inputs(cfg: ACfg, s: TState) -> list[TIn]:
    now = s.now
    xs: list[TIn] = []
    if s.running:  # the run at work ends once
        outs = range(len(OUTCOMES)) if cfg.outcome < 0 else (cfg.outcome,)
        for k in outs:  # a run that did not answer is answered at once whatever it finds: the most
            found = (FLAGS if answered(k) else FLAGS[3:]) if cfg.subagents else FLAGS[:1]
            xs += [TIn(Kind.RUN_ENDED, now, outcome=k, live=lv, waiting=w) for lv, w in found]
    if s.looking:  # the look's result, whatever came meanwhile
        xs += [TIn(Kind.CHILDREN, now, live=lv, waiting=w) for lv, w in FLAGS]
    if len(s.sent) < cfg.asks and (s.running or s.held()):  # the run's, or its subagents'
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
    return TState(m.begin(cfg.start, cfg.poll), cfg.start)


def _turn_next(m: Model, cfg: ACfg, s: TState, x: TIn) -> TState:
    reason = m.answer_of(*OUTCOMES[x.outcome]) if x.kind is Kind.RUN_ENDED else Reason.END_TURN
    deadline = x.at + cfg.window if x.kind is Kind.ASK else 0
    turn, acts = m.step(s.turn, Input(x.kind, x.at, reason, x.ask, deadline, x.live, x.waiting))
    first = x.kind is Kind.CANCEL and not s.closed and s.cancel is None and not s.responses
    did: dict[Do, int] = {}  # how many of each
    responses, ends = s.responses, s.ends
    for a in acts:
        did[a.do] = did.get(a.do, 0) + 1
        if a.do is Do.RESPOND:
            responses += (a.reason,)
        elif a.do is Do.END_ASK:
            ends += ((a.ask, a.how),)
    running = bool(did.get(Do.RUN)) or (s.running and x.kind is not Kind.RUN_ENDED)
    closed = s.closed or x.kind is Kind.CLOSED
    since, last = 0, None  # kept only while held, where they count: fewer states to walk
    if not running and not responses and not closed:
        came = x.kind is Kind.RUN_ENDED or x.kind is Kind.CHILDREN
        since = x.at if came else s.since
        last = expected(*OUTCOMES[x.outcome]) if x.kind is Kind.RUN_ENDED else s.last
    return TState(
        turn,
        max(s.now, x.at),
        x.at if first else s.cancel,
        running,
        bool(did.get(Do.LOOK)) or (s.looking and x.kind is not Kind.CHILDREN),
        closed,
        since,
        last,
        responses,
        s.aborts + did.get(Do.ABORT, 0),
        s.leaves + did.get(Do.LEAVE, 0),
        s.runs + did.get(Do.RUN, 0),
        s.looks + did.get(Do.LOOK, 0),
        (*s.sent, (x.ask, deadline)) if x.kind is Kind.ASK else s.sent,
        ends,
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


def _goes_on(s: TState, x: TIn) -> bool:
    """The input is the end of a run that answered, with the session's subagents at work or
    a message waiting, on an open turn no cancel came to: its answer waits for them."""
    return (
        (x.kind is Kind.RUN_ENDED)
        & answered(x.outcome)
        & (x.live | x.waiting)
        & ((s.cancel is None) & (not s.responses))
    )


def _look_back(s: TState, x: TIn) -> bool:
    """The input is the result of the look under way of a held turn no cancel came to."""
    return (x.kind is Kind.CHILDREN) & s.looking & s.held() & (s.cancel is None)


def acp_prompt_answered_once(m: Model, cfg: ACfg, g: None, s: State, x: In, t: State) -> bool:
    """One input to a turn. RESPOND is done at most once in all; only when a run ends, at a
    held turn's look, at a cancel of a held turn, or at a tick at or after the cancel plus
    CANCEL_GRACE_MS; after a cancel always `cancelled`; at a run's end, the answer it gets
    (`expected`); at a look, the last run's. Once a run ended (the connection open) it has
    been done, unless that run answered while the session's subagents work or a message
    waits (no cancel came); once a tick came at or after the cancel plus the grace, and once
    a held turn was cancelled, it has been done. ABORT is done once, at the first cancel of
    an open, unanswered turn whose run is at work, and never else. The close does LEAVE
    once when a run was at work and the turn not answered, and no RESPOND or ABORT: the run
    is the owner's now; after the close, none of them is done again, nor RUN or LOOK. While
    a cancelled run is at work unanswered, `wake` asks to look again by the cancel's grace
    at the latest."""
    if not (isinstance(s, TState) and isinstance(x, TIn) and isinstance(t, TState)):
        return True
    new = t.responses[len(s.responses) :]
    ok = len(t.responses) <= 1
    if s.closed:
        same = (t.aborts, t.leaves, t.runs, t.looks) == (s.aborts, s.leaves, s.runs, s.looks)
        return ok & (new == ()) & same
    graced = x.kind is Kind.TICK and s.cancel is not None and x.at >= s.cancel + CANCEL_GRACE_MS
    ended = (x.kind is Kind.RUN_ENDED) & (not _goes_on(s, x))
    held_cancel = (x.kind is Kind.CANCEL) & s.held() & (s.cancel is None)
    if new:
        ok &= ended | graced | held_cancel | _look_back(s, x)
        if (s.cancel is not None) | held_cancel:
            ok &= new[0] is Reason.CANCELLED
        elif x.kind is Kind.RUN_ENDED:
            ok &= new[0] is expected(*OUTCOMES[x.outcome])
        elif x.kind is Kind.CHILDREN:
            ok &= new[0] is s.last
    if ended | graced | held_cancel:
        ok &= len(t.responses) == 1
    first = x.kind is Kind.CANCEL and s.cancel is None and not s.responses
    ok &= t.aborts - s.aborts == int(first and s.running)
    ok &= t.leaves - s.leaves == int(x.kind is Kind.CLOSED and not s.responses and s.running)
    if not t.closed and t.cancel is not None and not t.responses:
        w = m.wake(t.turn)
        ok &= (w is not None) and w <= t.cancel + CANCEL_GRACE_MS
    return ok


def acp_held_for_subagents(m: Model, cfg: ACfg, g: None, s: State, x: In, t: State) -> bool:
    """One input to an open turn. RUN (the session's next run, of what waits) is done
    exactly when a run that answered ends with a message waiting, or a held turn's look
    finds one, no cancel having come and the turn unanswered: never while a run is at work,
    never twice at once. While held (no run at work, unanswered), no RESPOND is done but at
    its cancel and at a look that finds no subagent at work and nothing waiting, which
    answers it with the last run's answer; a look that finds some keeps it held. LOOK is
    done exactly at a tick of a held turn with no look under way, at or after the last run's
    end or look plus the cfg's poll; and while it waits for that, `wake` asks to look again
    by then at the latest: a held turn ends once its subagents are done."""
    if not (isinstance(s, TState) and isinstance(x, TIn) and isinstance(t, TState)) or s.closed:
        return True
    open_ = (s.cancel is None) & (not s.responses)
    found = _goes_on(s, x) | _look_back(s, x)
    ok = t.runs - s.runs == int(open_ & found & x.waiting)
    due = s.held() & (s.cancel is None) & (not s.looking) & (x.kind is Kind.TICK)
    ok &= t.looks - s.looks == int(due and x.at >= s.since + cfg.poll)
    new = t.responses[len(s.responses) :]
    if s.held() and x.kind is not Kind.CANCEL:
        done = _look_back(s, x) & (not x.live) & (not x.waiting)
        ok &= new == ((s.last,) if done else ())
    if t.held() and not t.looking:
        w = m.wake(t.turn)
        ok &= (w is not None) and w <= t.since + cfg.poll
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
    CANCELLED at a cancel, the turn's answer, the close, or when it is sent after the
    cancel, the turn's answer or the close. After the input no ask is left pending that: a
    cancel, the turn's answer or the close ended (all of them); a tick found due; the
    editor answered; came too late to wait for. An ask sent before them is kept pending (a
    held turn's too: its subagents ask the editor), and a run's end or a look that does not
    answer the turn ends none (they may be a subagent's). An answer to an ask that is not
    pending (ended already, or never sent) changes nothing and does nothing. While an ask is
    pending on an open connection, `wake` asks to look again by its deadline at the latest,
    and after a tick, never at a time the tick has seen (the runtime would spin)."""
    if not (isinstance(s, TState) and isinstance(x, TIn) and isinstance(t, TState)):
        return True
    ids = [i for i, _ in t.ends]
    ok = len(ids) == len(set(ids))
    due = dict(t.sent)
    late = (s.cancel is not None) | bool(s.responses) | s.closed
    answers = len(t.responses) > len(s.responses)
    for i, how in t.ends[len(s.ends) :]:
        ok &= i in due
        if how is AskEnd.CHOSEN:
            ok &= (x.kind is Kind.CHOSEN) & (x.ask == i)
        elif how is AskEnd.DEADLINE:
            ok &= (x.kind is Kind.TICK) and x.at >= due.get(i, x.at + 1)
        elif how is AskEnd.CANCELLED:
            ok &= (
                (x.kind in (Kind.CANCEL, Kind.CLOSED))
                | answers
                | ((x.kind is Kind.ASK) & (x.ask == i) & late)
            )
        else:
            ok = False
    left = pending(t)
    if (x.kind is Kind.CANCEL) | answers | t.closed:
        ok &= not left
    if x.kind in (Kind.RUN_ENDED, Kind.CHILDREN) and not answers:
        ok &= t.ends == s.ends  # the turn goes on: its subagents' asks with it
    if x.kind is Kind.TICK:
        ok &= all(due[i] > x.at for i in left)
    if x.kind is Kind.ASK:
        ok &= (x.ask in left) != late
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
        "(end_turn, max_tokens, max_turn_requests, an error with its cause), held while the "
        "session's subagents work, or cancelled after a cancel, at the cancel's grace at the latest "
        "(at once when held); the close answers nothing and aborts nothing (issue 43).",
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
        "acp_held_for_subagents",
        "acp",
        "A prompt whose run answered while the session's subagents work is answered once they are "
        "done and nothing waits: each report waiting starts the session's next run within the turn, "
        "never while one is at work, and the turn looks at its subagents every poll until then.",
        history=acp_held_for_subagents,
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
    u, acts = drive.step(t, x)
    if x.kind is Kind.RUN_ENDED and not t.closed and t.answered is not None:
        return u, [*acts, RESPOND_CANCELLED]
    return u, acts


def _cancelled_run_waits_for_grace(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """A run that ends during a cancel is not answered: the grace's tick will (and none comes)."""
    if x.kind is Kind.RUN_ENDED and not t.closed and t.cancelled_at is not None:
        u, acts = drive.step(replace(t, answered=Reason.CANCELLED), x)
        return replace(u, answered=t.answered), acts
    return drive.step(t, x)


def _real_reason_after_cancel(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """After a cancel, the run's own reason (the answer it had, or its failure)."""
    return drive.step(replace(t, cancelled_at=None) if x.kind is Kind.RUN_ENDED else t, x)


def _cancel_answered_at_once(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """A cancel answered at once, while its run still stops (the editor's next prompt meets it)."""
    u, acts = drive.step(t, x)
    if x.kind is Kind.CANCEL and not t.closed and t.answered is None and t.cancelled_at is None:
        return replace(u, answered=Reason.CANCELLED), [*acts, RESPOND_CANCELLED]
    return u, acts


def _close_aborts(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """The close aborts the run (the editor's run dies with its window)."""
    u, acts = drive.step(t, x)
    if x.kind is Kind.CLOSED and not t.closed:
        return u, [Action(Do.ABORT), *acts]
    return u, acts


def _close_responds(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """The close answers the turn `cancelled` (to nobody) and leaves it."""
    u, acts = drive.step(t, x)
    if x.kind is Kind.CLOSED and not t.closed and t.answered is None:
        return replace(u, answered=Reason.CANCELLED), [RESPOND_CANCELLED, *acts]
    return u, acts


def _end_after_close_responds(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """A run's end after the close answers the closed connection."""
    if t.closed and x.kind is Kind.RUN_ENDED:
        return drive.step(replace(t, closed=False), x)
    return drive.step(t, x)


def _grace_late(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """The grace's answer a ms late: `>` for `>=`."""
    u, acts = drive.step(t, x)
    if t.cancelled_at is not None and x.kind is Kind.TICK and x.now == t.cancelled_at + CANCEL_GRACE_MS:
        return replace(u, answered=t.answered), [a for a in acts if a.do is not Do.RESPOND]
    return u, acts


def _wake_without_grace(t: Turn) -> int | None:
    """`wake` forgets the cancel's grace: a run that never ends leaves the prompt open."""
    return drive.wake(replace(t, cancelled_at=None))


def _every_cancel_aborts(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """A second cancel aborts the run again."""
    u, acts = drive.step(t, x)
    if x.kind is Kind.CANCEL and not t.closed and t.answered is None and t.cancelled_at is not None:
        return u, [Action(Do.ABORT), *acts]
    return u, acts


def _leave_when_answered(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """The close leaves a run that has already ended (its turn answered)."""
    u, acts = drive.step(t, x)
    if x.kind is Kind.CLOSED and not t.closed and t.answered is not None:
        return u, [*acts, Action(Do.LEAVE)]
    return u, acts


def _cut_as_end_turn(outcome: str, code: str | None, cut: bool) -> Reason:
    """An answer cut at the output limit told as a whole one."""
    return drive.answer_of(outcome, code, False)


def _cap_as_failure(outcome: str, code: str | None, cut: bool) -> Reason:
    """The tool rounds' cap told as any failure."""
    return drive.answer_of(outcome, None if code == ROUNDS_CAP else code, cut)


def _abort_as_failure(outcome: str, code: str | None, cut: bool) -> Reason:
    """A run aborted by someone else than the editor (the owner, another face) told as failed."""
    return Reason.FAILED if outcome == "aborted" else drive.answer_of(outcome, code, cut)


def _late_answer_ends_again(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """An answer that comes after its ask's deadline (or cancel) ends it again, `chosen`."""
    u, acts = drive.step(t, x)
    if x.kind is Kind.CHOSEN and not t.closed and any(a.id == x.ask and a.ended for a in t.asks):
        return u, [Action(Do.END_ASK, ask=x.ask, how=AskEnd.CHOSEN)]
    return u, acts


def _asks_due(t: Turn, by: int) -> Turn:
    return replace(t, asks=tuple(replace(a, deadline=a.deadline + by) for a in t.asks))


def _deadline_late(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """An ask's deadline a ms late: `>` for `>=`."""
    if x.kind is Kind.TICK and t.answered is None and t.cancelled_at is None:
        u, acts = drive.step(_asks_due(t, 1), x)
        return _asks_due(u, -1), acts
    return drive.step(t, x)


def _deadline_early(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """An ask's deadline a ms early: the person's last ms cut."""
    if x.kind is Kind.TICK and t.answered is None and t.cancelled_at is None:
        u, acts = drive.step(_asks_due(t, -1), x)
        return _asks_due(u, 1), acts
    return drive.step(t, x)


def _cancel_keeps_asks(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """A cancel that aborts the run and leaves its asks to their deadlines."""
    if x.kind is Kind.CANCEL and not t.closed and t.at_work() and t.cancelled_at is None:
        return replace(t, cancelled_at=x.now), [Action(Do.ABORT)]
    return drive.step(t, x)


def _end_keeps_asks(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """A run's end that leaves its asks pending (the editor still shows them)."""
    if x.kind is Kind.RUN_ENDED and not t.closed:
        u, acts = drive.step(replace(t, asks=()), x)
        return replace(u, asks=t.asks), acts
    return drive.step(t, x)


def _late_ask_waits(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """An ask sent after the cancel is sent to the editor and waited for."""
    if x.kind is Kind.ASK and not t.closed and t.cancelled_at is not None and t.answered is None:
        return replace(t, asks=(*t.asks, drive.Ask(x.ask, x.deadline))), []
    return drive.step(t, x)


def _closed_ask_waits(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """The model's first draft: closed, nothing more is done, not even for an ask the run sends."""
    if t.closed:
        return t, []
    return drive.step(t, x)


def _close_keeps_asks(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """The close leaves its asks pending: nobody answers them and nothing looks at their deadline."""
    if x.kind is Kind.CLOSED and not t.closed:
        u, acts = drive.step(replace(t, asks=()), x)
        return replace(u, asks=t.asks), acts
    return drive.step(t, x)


def _wake_without_asks(t: Turn) -> int | None:
    """`wake` forgets the asks' deadlines: an ask nobody answers waits until something else comes."""
    return drive.wake(replace(t, asks=()))


def _wake_counts_ended_asks(t: Turn) -> int | None:
    """`wake` counts asks that ended: the runtime looks again at a time it has seen, for ever."""
    w = drive.wake(t)
    times = [a.deadline for a in t.asks] + ([] if w is None else [w])
    return None if t.closed or not times else min(times)


def _answered_before_the_reports(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """The first draft: a run's end answers the turn, its subagents' reports left to the next
    prompt."""
    if x.kind is Kind.RUN_ENDED:
        return drive.step(t, replace(x, live=False, waiting=False))
    return drive.step(t, x)


def _report_waiting_unread(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """Only subagents at work hold the turn: a report already waiting when the run ends is
    left to the next prompt."""
    if x.kind is Kind.RUN_ENDED and not x.live:
        return drive.step(t, replace(x, waiting=False))
    return drive.step(t, x)


def _never_answered_once_done(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """A look that finds nothing at work and nothing waiting looks again, for ever."""
    if x.kind is Kind.CHILDREN and not x.live and not x.waiting:
        return drive.step(t, replace(x, live=True))
    return drive.step(t, x)


def _held_cancel_still_held(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """A cancel of a held turn answers it `cancelled` but leaves it held: a report and the
    cancel race, and the next run's end answers it again."""
    u, acts = drive.step(t, x)
    if x.kind is Kind.CANCEL and t.held is not None and not t.closed and t.answered is None:
        return replace(u, answered=None, held=t.held, look_at=t.look_at), acts
    return u, acts


def _held_cancel_waits_for_grace(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """A cancel of a held turn aborts a run that is not there and waits for the grace."""
    if x.kind is Kind.CANCEL and t.held is not None and not t.closed and t.answered is None:
        return drive.step(replace(t, held=None, look_at=None), x)
    return drive.step(t, x)


def _failed_run_held(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """A run that failed waits for its subagents too (its error said late, or never)."""
    if x.kind is Kind.RUN_ENDED and x.reason in (Reason.FAILED, Reason.MAX_TURN_REQUESTS):
        u, acts = drive.step(t, replace(x, reason=Reason.END_TURN))
        if u.held is not None:
            return replace(u, held=x.reason), acts
        return u, [replace(a, reason=x.reason) if a.do is Do.RESPOND else a for a in acts]
    return drive.step(t, x)


def _look_answers_end_turn(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """A held turn is answered `end_turn` whatever its last run's answer (a cut one too)."""
    if x.kind is Kind.CHILDREN and t.held is not None:
        return drive.step(replace(t, held=Reason.END_TURN), x)
    return drive.step(t, x)


def _stale_look_runs(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """A look's result that comes after the turn was answered (a cancel came first) still
    starts a run."""
    u, acts = drive.step(t, x)
    if x.kind is Kind.CHILDREN and x.waiting and not t.closed and t.answered is not None:
        return u, [*acts, Action(Do.RUN)]
    return u, acts


def _run_after_close(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """A look that was under way when the editor left starts the next run (nobody to tell)."""
    if t.closed and x.kind is Kind.CHILDREN:
        return drive.step(replace(t, closed=False), x)
    return drive.step(t, x)


def _look_every_tick(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """A held turn looks at each tick, before its poll has passed (a busy loop)."""
    if x.kind is Kind.TICK and t.held is not None and t.look_at is not None and not t.closed:
        return drive.step(t, replace(x, now=max(x.now, t.look_at)))
    return drive.step(t, x)


def _look_again_under_way(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """A tick while a look is under way looks again (two reads racing, two runs)."""
    u, acts = drive.step(t, x)
    if x.kind is Kind.TICK and t.held is not None and t.look_at is None and u.answered is None:
        return u, [*acts, Action(Do.LOOK)]
    return u, acts


def _wake_without_look(t: Turn) -> int | None:
    """`wake` forgets a held turn's next look: nothing moves it until the editor cancels."""
    return drive.wake(replace(t, look_at=None))


def _held_end_ends_asks(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """A run's end ends every ask, though the turn goes on: a subagent's ask is denied though
    the editor allows it."""
    u, acts = drive.step(t, x)
    if x.kind is Kind.RUN_ENDED and not t.closed and u.answered is None and u.cancelled_at is None:
        u, ended = drive._end_asks(u, AskEnd.CANCELLED, x.now, only_due=False)
        return u, [*acts, *ended]
    return u, acts


def _held_denies_asks(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """The first draft: an ask while no run of the turn is at work is denied (a subagent's)."""
    if x.kind is Kind.ASK and not t.closed and t.held is not None:
        return t, [Action(Do.END_ASK, ask=x.ask, how=AskEnd.CANCELLED)]
    return drive.step(t, x)


def _close_leaves_held(t: Turn, x: Input) -> tuple[Turn, list[Action]]:
    """The close of a held turn leaves a run that is not there (and skips its SessionEnd)."""
    u, acts = drive.step(t, x)
    if x.kind is Kind.CLOSED and not t.closed and t.held is not None and t.answered is None:
        return u, [*acts, Action(Do.LEAVE)]
    return u, acts


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
    Mutant("a run's end answers the turn while its subagents work (the first draft)", "acp",
           _step(_answered_before_the_reports)),
    Mutant("a report waiting at the run's end left unread", "acp", _step(_report_waiting_unread)),
    Mutant("a held turn never answered once its subagents are done", "acp",
           _step(_never_answered_once_done)),
    Mutant("a report and a cancel race: a held turn answered twice", "acp", _step(_held_cancel_still_held)),
    Mutant("a held turn's cancel waits for the grace", "acp", _step(_held_cancel_waits_for_grace)),
    Mutant("a failed run held for its subagents", "acp", _step(_failed_run_held)),
    Mutant("a held turn answered end_turn whatever its run's answer", "acp", _step(_look_answers_end_turn)),
    Mutant("a look after the answer starts a run", "acp", _step(_stale_look_runs)),
    Mutant("a look after the close starts a run", "acp", _step(_run_after_close)),
    Mutant("a held turn looks at every tick (busy)", "acp", _step(_look_every_tick)),
    Mutant("a held turn looks again while a look is under way", "acp", _step(_look_again_under_way)),
    Mutant("wake forgets a held turn's look", "acp", replace(MODEL, wake=_wake_without_look)),
    Mutant("a run's end ends its subagents' asks", "acp", _step(_held_end_ends_asks)),
    Mutant("a held turn denies its subagents' asks (the first draft)", "acp", _step(_held_denies_asks)),
    Mutant("the close of a held turn leaves a run", "acp", _step(_close_leaves_held)),
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

HELD_WINDOW, POLL = 1_000, 500
"""A session with subagents is walked with one ask of this window, and looks this often:
its asks end after a look and before the cancel's grace."""


def cfgs() -> Iterator[ACfg]:
    # the setup's first: a mutant's check takes the limits from both ends in turn, so a
    # setup break is found before any turn is walked, and a turn's break in the widest window
    yield ACfg(Track.SETUP, start=0)
    yield ACfg(Track.SETUP, start=7)
    for window in WINDOWS:
        yield ACfg(Track.TURN, start=0, window=window, asks=2, jump=10_000, subagents=False)
    yield ACfg(Track.TURN, start=0, window=HELD_WINDOW, asks=1, jump=10_000, poll=POLL)


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
        subagents=r.random() < 0.8,
        poll=r.choice((1, POLL, r.randint(1, 5_000))),
    )


MEANT = {
    "a turn answered again when its run ends after the grace": "acp_prompt_answered_once",
    "a run ending during a cancel left unanswered (waits for the grace)": "acp_prompt_answered_once",
    "the run's own reason after a cancel": "acp_prompt_answered_once",
    "a cancel answered at once, before its run stops": "acp_prompt_answered_once",
    "the close aborts the run": "acp_prompt_answered_once",
    "the close answers the turn": "acp_prompt_answered_once",
    "the cancel's grace a ms late": "acp_prompt_answered_once",
    "wake forgets the cancel's grace": "acp_prompt_answered_once",
    "answer_of: a cut answer told end_turn": "acp_prompt_answered_once",
    "answer_of: the rounds' cap told as a failure": "acp_prompt_answered_once",
    "a late answer ends its ask again": "acp_ask_ends",
    "an ask's deadline a ms late": "acp_ask_ends",
    "an ask's deadline a ms early": "acp_ask_ends",
    "the cancel leaves the asks pending": "acp_ask_ends",
    "an ask sent after the close waits (the first draft)": "acp_ask_ends",
    "wake forgets the asks' deadlines": "acp_ask_ends",
    "a run's end answers the turn while its subagents work (the first draft)": "acp_prompt_answered_once",
    "a report and a cancel race: a held turn answered twice": "acp_prompt_answered_once",
    "a held turn's cancel waits for the grace": "acp_prompt_answered_once",
    "a held turn never answered once its subagents are done": "acp_held_for_subagents",
    "a look after the answer starts a run": "acp_held_for_subagents",
    "a held turn looks at every tick (busy)": "acp_held_for_subagents",
    "wake forgets a held turn's look": "acp_held_for_subagents",
    "a run's end ends its subagents' asks": "acp_ask_ends",
    "a held turn denies its subagents' asks (the first draft)": "acp_ask_ends",
    "a setup request with no bound": "acp_setup_bounded",
    "a setup request answered twice (late work after the failure)": "acp_setup_bounded",
    "a setup request's bound a ms late": "acp_setup_bounded",
}
"""Each break and the law meant to kill it: `eukhe laws` fails one killed first by another."""


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
        f"and the grace or 10 s on; one with subagents, 1 ask of {HELD_WINDOW} ms, each run's end and "
        f"look finding them at work or not and a message waiting or not, looks every {POLL} ms; "
        "a setup request at 0 and 7 ms"
    ),
    depth=6,
    sample_cfg=sample_cfg,
    laws=LAWS,
    mutants=MUTANTS,
    meant=MEANT,
)
