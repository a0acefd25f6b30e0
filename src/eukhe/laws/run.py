"""The laws of H4 (every run ends) over the model `rules.run`, and its breaks."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import run
from eukhe.rules.run import Cfg, End, Input, Kind, Phase, Run
from eukhe.rules.states import replace


@dataclass(frozen=True)
class Model:
    """The functions of the H4 model the laws call; a mutant swaps one."""

    step: Callable[[Cfg, Run, Input], Run]
    ended_reply: Callable[[bool, bool], Kind]
    takes_steers: Callable[[Cfg, Run, Input], bool] = run.takes_steers
    round_log: Callable[[int, int], tuple[run.Entry, ...]] = run.round_log


MODEL = Model(step=run.step, ended_reply=run.ended_reply)


def cached(m: Model) -> Model:
    """The model with its steps remembered, for walks that meet a state many times."""
    return replace(m, step=functools.lru_cache(maxsize=1 << 18)(m.step))


CALLING = (Phase.CALL, Phase.POLL)


# ---------------------------------------------------------------- inputs


def _inputs() -> dict[Kind, list[Input]]:
    b = (False, True)
    out: dict[Kind, list[Input]] = {k: [Input(k)] for k in Kind}
    out[Kind.PREPARED] = [Input(Kind.PREPARED, compact=c) for c in b]
    out[Kind.COMPACTED] = [Input(Kind.COMPACTED, entry=e, failed=f) for e in b for f in b if not (e and f)]
    out[Kind.ERROR] = [Input(Kind.ERROR, retryable=r, noted=n) for r in b for n in b]
    out[Kind.POLL_FAILED] = [Input(Kind.POLL_FAILED, retryable=r, late=late) for r in b for late in b]
    out[Kind.ROUND_END] = [
        Input(Kind.ROUND_END, stop=st, reset=re, answered=a) for st in b for re in b for a in b if st or not a
    ]
    return out


INPUTS = _inputs()


def inputs(cfg: Cfg, s: Run) -> list[Input]:
    """Every input the phase accepts, each flag both ways."""
    return [x for k, xs in INPUTS.items() if run.accepts(s.phase, k) for x in xs]


# ---------------------------------------------------------------- history


@dataclass(frozen=True)
class Ghost:
    """What a history did: rounds made, deferred replies in a row, requests cut."""

    made: int
    deferred: int
    cuts: frozenset[tuple[int, int]]


def ghost_start(cfg: Cfg) -> Ghost:
    return Ghost(0, 0, frozenset())


def ghost_next(m: Model, cfg: Cfg, g: Ghost, s: Run, x: Input, t: Run) -> Ghost:
    if not s.live or not run.accepts(s.phase, x.kind):
        return g
    made = g.made + (1 if _counted(s, x) else 0)
    if x.kind is Kind.DEFERRED:
        deferred = g.deferred + 1
    elif x.kind in run.REPLIES:
        deferred = 0
    else:
        deferred = g.deferred
    cut = (t.cut_version, t.cut_attempt) != (s.cut_version, s.cut_attempt)
    cuts = g.cuts | {s.request} if cut else g.cuts
    return Ghost(made, deferred, cuts)


# ---------------------------------------------------------------- laws


def _reply(s_en: dict[str, Enum], x_en: dict[str, Enum], *kinds: Kind) -> bool:
    return s_en["phase"] in CALLING and x_en.get("kind") in kinds


def run_ends_edge(m: Model, cfg: Cfg, s: Run, x: Input) -> bool:
    """Every input a live phase accepts lowers M by at least 1 and keeps the run valid;
    a live run has M >= 1."""
    if not (s.live and run.accepts(s.phase, x.kind)):
        return True
    t = m.step(cfg, s, x)
    return run.valid(cfg, t) & (run.measure(cfg, t) <= run.measure(cfg, s) - 1) & (run.measure(cfg, s) >= 1)


def run_ends_start(m: Model, cfg: Cfg, s: Run) -> bool:
    """M starts at most bound(cfg) (a node law: true of every state, so of the start)."""
    return run.measure(cfg, s) <= run.bound(cfg)


LONGEST = 6


def run_ends_longest(m: Model, cfg: Cfg) -> str | None:
    """The longest history of accepted inputs from the start is at most bound(cfg) long.
    (Walked to the end for the smaller limits: cap + retries + notes + polls <= LONGEST.)"""
    if cfg.cap + cfg.retries + cfg.notes + cfg.polls > LONGEST:
        return None
    memo: dict[Run, int] = {}
    on_path: set[Run] = set()

    def longest(s: Run) -> int:
        if s in memo:
            return memo[s]
        if s in on_path:
            raise RecursionError(f"a cycle through {s!r}: the run never ends")
        on_path.add(s)
        best = 0
        if s.live:
            for x in inputs(cfg, s):
                t = m.step(cfg, s, x)
                if t != s:
                    best = max(best, 1 + longest(t))
                elif x.kind is not Kind.ABORT:
                    raise RecursionError(f"{s!r} takes {x!r} and does not move: the run never ends")
        on_path.discard(s)
        memo[s] = best
        return best

    try:
        n = longest(run.start(cfg))
    except RecursionError as e:
        return str(e)[:400]
    return None if n <= run.bound(cfg) else f"a history of {n} inputs > bound {run.bound(cfg)}"


def run_end_stays(m: Model, cfg: Cfg, s: Run, x: Input) -> bool:
    return s.live or m.step(cfg, s, x) == s


def run_abort_ends_now(m: Model, cfg: Cfg, s: Run, x: Input) -> bool:
    if not (s.live and x.kind is Kind.ABORT):
        return True
    return m.step(cfg, s, x).end is End.ABORTED


def _counted(s: Run, x: Input) -> bool:
    """A round end that counts: every one but a control stop."""
    return s.live and s.phase is Phase.TOOLS and x.kind is Kind.ROUND_END and not x.stop


def run_rounds_capped_edge(m: Model, cfg: Cfg, s: Run, x: Input) -> bool:
    """The counted round end of the last round the cap allows fails the run, even
    with a continuation queued (cap first)."""
    if not (_counted(s, x) and s.rounds == 1):
        return True
    return m.step(cfg, s, x).end is End.RUN_LIMIT


def run_rounds_capped_history(m: Model, cfg: Cfg, g: Ghost, s: Run, x: Input, t: Run) -> bool:
    made = g.made + (1 if _counted(s, x) else 0)
    return made < max(cfg.cap, 1) or t.end is End.RUN_LIMIT


def run_rounds_fail_at_cap_edge(m: Model, cfg: Cfg, s: Run, x: Input) -> bool:
    """Only the counted round end of the last round fails on the cap."""
    t = m.step(cfg, s, x)
    if not (s.live and t.end is End.RUN_LIMIT):
        return True
    return (s.phase is Phase.TOOLS) & (x.kind is Kind.ROUND_END) & (not x.stop) & (s.rounds == 1)


def run_rounds_fail_at_cap_history(m: Model, cfg: Cfg, g: Ghost, s: Run, x: Input, t: Run) -> bool:
    if not (s.live and t.end is End.RUN_LIMIT):
        return True
    return g.made + 1 == max(cfg.cap, 1)


def run_polls_need_defers(m: Model, cfg: Cfg, g: Ghost, s: Run, x: Input, t: Run) -> bool:
    """A deferred reply fails the run on the poll cap only as the polls+1-th in a row."""
    if not (s.live and x.kind is Kind.DEFERRED and t.end is not End.LIVE):
        return True
    return t.end is End.NOT_READY and g.deferred + 1 == cfg.polls + 1


def run_no_answer_is_an_error(m: Model, cfg: Cfg, s: Run, x: Input) -> bool:
    if m.ended_reply(False, False) is not Kind.NO_ANSWER:
        return False
    if not (s.live and s.phase in CALLING and x.kind is Kind.NO_ANSWER):
        return True
    t = m.step(cfg, s, x)
    if s.notes >= 1:
        return (t.phase is Phase.PREPARE) & (t.notes == s.notes - 1) & (t.attempt == s.attempt + 1)
    return t.end is End.MODEL_ERROR


def run_calls_never_answer(m: Model, cfg: Cfg, s: Run, x: Input) -> bool:
    if m.ended_reply(True, True) is not Kind.CALLS or m.ended_reply(True, False) is not Kind.CALLS:
        return False
    if not (s.live and s.phase in CALLING and x.kind is Kind.CALLS):
        return True
    t = m.step(cfg, s, x)
    return (t.phase is Phase.TOOLS) & (t.end is End.LIVE)


def _noted(x: Input) -> bool:
    return x.kind is Kind.NO_ANSWER or (x.kind is Kind.ERROR and x.noted)


def run_note_spends_no_retry(m: Model, cfg: Cfg, s: Run, x: Input) -> bool:
    if not (s.live and s.phase in CALLING and _noted(x)):
        return True
    t = m.step(cfg, s, x)
    return (t.retries == s.retries) & ((t.end is not End.LIVE) | (t.notes == s.notes - 1))


def run_retry_spends_no_note(m: Model, cfg: Cfg, s: Run, x: Input) -> bool:
    transient = x.kind in (Kind.ERROR, Kind.POLL_FAILED) and x.retryable and not x.noted
    if not (s.live and s.phase in CALLING and transient):
        return True
    t = m.step(cfg, s, x)
    return (t.notes == s.notes) & ((t.end is not End.LIVE) | (t.retries == s.retries - 1))


def run_retry_sends_a_new_request(m: Model, cfg: Cfg, s: Run) -> bool:
    """Invariant: every cut request is older than the one the run sends next."""
    return (s.cut_version, s.cut_attempt) < (s.version, s.attempt)


def run_retry_sends_a_new_request_history(m: Model, cfg: Cfg, g: Ghost, s: Run, x: Input, t: Run) -> bool:
    sends = s.live and t.live and t.phase is Phase.CALL and s.phase is not Phase.CALL
    return not sends or t.request not in g.cuts


def run_cut_names_the_request(m: Model, cfg: Cfg, s: Run, x: Input) -> bool:
    if not (s.live and s.phase in CALLING and _noted(x) and s.notes >= 1):
        return True
    t = m.step(cfg, s, x)
    return (
        (t.cut_version == s.version)
        & (t.cut_attempt == s.attempt)
        & t.request.__eq__((s.version, s.attempt + 1))
    )


def run_note_is_never_logged(m: Model, cfg: Cfg, s: Run, x: Input) -> bool:
    """The logged context grows only by a counted round or a compaction entry, and is
    the same whatever note the request carries."""
    t = m.step(cfg, s, x)
    bare = m.step(cfg, replace(s, attempt=0, cut_version=-1, cut_attempt=-1), x)
    if bare.version != t.version:
        return False
    if t.version == s.version:
        return True
    counted = _counted(s, x)
    entry = s.phase in (Phase.COMPACT, Phase.OVERFLOW) and x.kind is Kind.COMPACTED and x.entry
    return s.live and (counted or entry) and t.version == s.version + 1


def run_steer_enters_at_a_round_end(m: Model, cfg: Cfg, s: Run, x: Input) -> bool:
    """Steers enter the logged context exactly at the counted round ends that leave the
    run going (live, or a continuation taking over): never while a call is out, never
    into a run that ends there (they are the next run's prompt then), and never held
    back past such a round end."""
    if not s.live:
        return not m.takes_steers(cfg, s, x)
    t = m.step(cfg, s, x)
    going = t.live | (t.end is End.CONTINUED)
    at_round_end = (s.phase is Phase.TOOLS) & (x.kind is Kind.ROUND_END) & (not x.stop)
    return m.takes_steers(cfg, s, x) == (at_round_end & going)


def run_stop_answers_as_told(m: Model, cfg: Cfg, s: Run, x: Input) -> bool:
    """A control stop at a round end ends the run uncounted: answered when the round gave
    the run's answer (a plan nobody here can approve), else stopped."""
    if not (s.live and s.phase is Phase.TOOLS and x.kind is Kind.ROUND_END and x.stop):
        return True
    t = m.step(cfg, s, x)
    return (t.end is (End.ANSWERED if x.answered else End.STOPPED)) & (t.rounds == s.rounds)


STEER_BOUNDS = (8, 4)
"""Calls and user messages of one round that `run_steer_never_splits_a_call` walks."""


def run_steer_never_splits_a_call(m: Model, cfg: Cfg) -> str | None:
    """A round logs each call's result, then the user messages that came while it ran:
    no user message ever lands between a call and its result."""
    calls_max, users_max = STEER_BOUNDS
    for calls in range(calls_max + 1):
        for users in range(users_max + 1):
            log = m.round_log(calls, users)
            results = [i for i, e in enumerate(log) if e is run.Entry.RESULT]
            steers = [i for i, e in enumerate(log) if e is run.Entry.USER]
            if len(results) != calls or len(steers) != users or len(log) != calls + users:
                return f"round_log({calls}, {users}) = {log}: not one result a call and every message"
            if results and steers and min(steers) < max(results):
                return f"round_log({calls}, {users}) = {log}: a user message before a call's result"
    return None


def _live(s_en: dict[str, Enum], x_en: dict[str, Enum]) -> bool:
    return s_en["phase"] is not Phase.ENDED


LAWS = (
    Law(
        "run_ends",
        "H4.1",
        "Ended after bound(cfg) = max(cap, 1)·(2 + (retries + notes + 2)·(polls + 2)) inputs.",
        edge=run_ends_edge,
        node=run_ends_start,
        keep=lambda s, x: False,  # M <= bound at the start; the edge form proves it only falls
        scope=_live,
        extra=run_ends_longest,
    ),
    Law(
        "run_end_stays",
        "H4.1",
        "Ended run never changes.",
        edge=run_end_stays,
        scope=lambda s, x: s["phase"] is Phase.ENDED,
    ),
    Law(
        "run_abort_ends_now",
        "H4.6",
        "Abort ends a live run as aborted next step.",
        edge=run_abort_ends_now,
        scope=lambda s, x: _live(s, x) and x.get("kind") is Kind.ABORT,
    ),
    Law(
        "run_rounds_capped",
        "H4.2",
        "max(cap, 1) rounds made: failed.",
        edge=run_rounds_capped_edge,
        history=run_rounds_capped_history,
        scope=lambda s, x: s["phase"] is Phase.TOOLS and x.get("kind") is Kind.ROUND_END,
    ),
    Law(
        "run_rounds_fail_at_cap",
        "H4.2",
        "Round cap fails only at exactly max(cap, 1) rounds.",
        edge=run_rounds_fail_at_cap_edge,
        history=run_rounds_fail_at_cap_history,
        scope=_live,
    ),
    Law(
        "run_polls_need_defers",
        "H4.4",
        "Poll cap fails only after polls + 1 deferred replies in a row.",
        history=run_polls_need_defers,
        prove=False,
    ),
    Law(
        "run_no_answer_is_an_error",
        "H4.7",
        "No text, no tool call: noted error, retried with note while notes last, else fails on the model.",
        edge=run_no_answer_is_an_error,
        scope=lambda s, x: _reply(s, x, Kind.NO_ANSWER),
    ),
    Law(
        "run_calls_never_answer",
        "H4.1",
        "Tool call: never answers; to tools whatever text/stop reason.",
        edge=run_calls_never_answer,
        scope=lambda s, x: _reply(s, x, Kind.CALLS),
    ),
    Law(
        "run_note_spends_no_retry",
        "H4.5",
        "Noted error spends a note; retries left unchanged.",
        edge=run_note_spends_no_retry,
        scope=lambda s, x: _reply(s, x, Kind.NO_ANSWER, Kind.ERROR),
    ),
    Law(
        "run_retry_spends_no_note",
        "H4.5",
        "Retryable non-noted error spends a retry; notes unchanged.",
        edge=run_retry_spends_no_note,
        scope=lambda s, x: _reply(s, x, Kind.ERROR, Kind.POLL_FAILED),
    ),
    Law(
        "run_retry_sends_a_new_request",
        "H4.7",
        "No sent request equals an earlier cut one, cut after cut until notes run out.",
        node=run_retry_sends_a_new_request,
        history=run_retry_sends_a_new_request_history,
        keep=_live,
    ),
    Law(
        "run_cut_names_the_request",
        "H4.7",
        "Noted reply cuts the sent request; next carries the next note.",
        edge=run_cut_names_the_request,
        scope=lambda s, x: _reply(s, x, Kind.NO_ANSWER, Kind.ERROR),
    ),
    Law(
        "run_note_is_never_logged",
        "H4.7",
        "Note changes model input only; logged lines equal the note-less context.",
        edge=run_note_is_never_logged,
        scope=_live,
    ),
    Law(
        "run_steer_enters_at_a_round_end",
        "H4.8.4",
        "A steer enters at a counted round end that leaves the run going, and only there.",
        edge=run_steer_enters_at_a_round_end,
    ),
    Law(
        "run_stop_answers_as_told",
        "H4.1",
        "A control stop ends the run uncounted: answered with the round's answer, else stopped.",
        edge=run_stop_answers_as_told,
        scope=lambda s, x: s["phase"] is Phase.TOOLS and x.get("kind") is Kind.ROUND_END,
    ),
    Law(
        "run_steer_never_splits_a_call",
        "H4.8.4",
        "No steer lands between a call and its result: a round logs every result, then steers.",
        extra=run_steer_never_splits_a_call,
        prove=False,
    ),
)


# ---------------------------------------------------------------- breaks


def _break(change: Callable[[Cfg, Run, Input, Run], Run]) -> Model:
    def step(cfg: Cfg, s: Run, x: Input) -> Run:
        t = run.step(cfg, s, x)
        if (
            not s.live
            or not run.accepts(s.phase, x.kind)
            or (x.kind is Kind.ABORT and s.phase is not Phase.TOOLS)
        ):
            return t
        return change(cfg, s, x, t)

    return Model(step=step, ended_reply=run.ended_reply)


def _no_poll_cap(cfg: Cfg, s: Run, x: Input, t: Run) -> Run:
    if x.kind is Kind.DEFERRED and t.end is End.NOT_READY:
        return replace(s, phase=Phase.POLL, polls=0)
    return t


def _no_round_cap(cfg: Cfg, s: Run, x: Input, t: Run) -> Run:
    if t.end is End.RUN_LIMIT:
        return replace(
            run.start(cfg),
            rounds=1,
            version=s.version + 1,
            cut_version=s.cut_version,
            cut_attempt=s.cut_attempt,
        )
    return t


def _early_cap(cfg: Cfg, s: Run, x: Input, t: Run) -> Run:
    if s.phase is Phase.TOOLS and x.kind is Kind.ROUND_END and s.rounds == 2:
        return replace(s, phase=Phase.ENDED, end=End.RUN_LIMIT)
    return t


def _reset_before_the_cap(cfg: Cfg, s: Run, x: Input, t: Run) -> Run:
    if x.kind is Kind.ROUND_END and x.reset and not x.stop and t.end is End.RUN_LIMIT:
        return replace(t, end=End.CONTINUED)
    return t


def _polls_not_reset(cfg: Cfg, s: Run, x: Input, t: Run) -> Run:
    if s.phase is Phase.POLL and x.kind in run.REPLIES and x.kind is not Kind.DEFERRED and t.live:
        return replace(t, polls=s.polls)
    return t


def _abort_ignored_in_tools(cfg: Cfg, s: Run, x: Input, t: Run) -> Run:
    return s if s.phase is Phase.TOOLS and x.kind is Kind.ABORT else t


def _retry_spends_nothing(cfg: Cfg, s: Run, x: Input, t: Run) -> Run:
    if x.kind is Kind.ERROR and x.retryable and not x.noted and t.live:
        return replace(t, retries=s.retries)
    return t


def _note_spends_a_retry(cfg: Cfg, s: Run, x: Input, t: Run) -> Run:
    if _noted(x) and t.live and s.retries >= 1:
        return replace(t, retries=s.retries - 1, notes=s.notes)
    return t


def _retry_spends_a_note(cfg: Cfg, s: Run, x: Input, t: Run) -> Run:
    if x.kind is Kind.ERROR and x.retryable and not x.noted and t.live and s.notes >= 1:
        return replace(t, notes=s.notes - 1)
    return t


def _no_answer_answers(cfg: Cfg, s: Run, x: Input, t: Run) -> Run:
    return replace(s, phase=Phase.ENDED, end=End.ANSWERED) if x.kind is Kind.NO_ANSWER else t


def _calls_answer(cfg: Cfg, s: Run, x: Input, t: Run) -> Run:
    return replace(s, phase=Phase.ENDED, end=End.ANSWERED) if x.kind is Kind.CALLS else t


def _cut_note_kept(cfg: Cfg, s: Run, x: Input, t: Run) -> Run:
    if _noted(x) and t.live:
        return replace(t, attempt=s.attempt)
    return t


def _stop_drops_the_answer(cfg: Cfg, s: Run, x: Input, t: Run) -> Run:
    return replace(t, end=End.STOPPED) if t.end is End.ANSWERED and x.kind is Kind.ROUND_END else t


def _stop_answers(cfg: Cfg, s: Run, x: Input, t: Run) -> Run:
    return replace(t, end=End.ANSWERED) if t.end is End.STOPPED else t


def _steer(takes: Callable[[Cfg, Run, Input], bool]) -> Model:
    return replace(MODEL, takes_steers=takes)


def _steer_while_calls_are_out(cfg: Cfg, s: Run, x: Input) -> bool:
    return run.takes_steers(cfg, s, x) or (s.live and s.phase is Phase.CALL and x.kind is Kind.CALLS)


def _steer_into_the_last_round(cfg: Cfg, s: Run, x: Input) -> bool:
    return s.live and s.phase is Phase.TOOLS and x.kind is Kind.ROUND_END and not x.stop


def _steer_held_back(cfg: Cfg, s: Run, x: Input) -> bool:
    return run.takes_steers(cfg, s, x) and s.rounds > 2


def _steer_after_the_first_result(calls: int, users: int) -> tuple[run.Entry, ...]:
    log = list(run.round_log(calls, 0))
    return tuple(log[:1] + [run.Entry.USER] * users + log[1:]) if calls else run.round_log(calls, users)


def _steer_lost(calls: int, users: int) -> tuple[run.Entry, ...]:
    return run.round_log(calls, 0)


MUTANTS = (
    Mutant("no poll cap", "H4.4", _break(_no_poll_cap)),
    Mutant("no round cap", "H4.2", _break(_no_round_cap)),
    Mutant("early cap", "H4.2", _break(_early_cap)),
    Mutant("queued continuation ending the run before the cap", "H4.2", _break(_reset_before_the_cap)),
    Mutant("poll count not reset by a non-deferred reply", "H4.4", _break(_polls_not_reset)),
    Mutant("abort ignored in tools", "H4.6", _break(_abort_ignored_in_tools)),
    Mutant("retry spending neither retry nor note", "H4.5", _break(_retry_spends_nothing)),
    Mutant("noted retry spending a retry", "H4.7", _break(_note_spends_a_retry)),
    Mutant("transient retry spending a note", "H4.5", _break(_retry_spends_a_note)),
    Mutant("no-text-no-call reply answering", "H4.7", _break(_no_answer_answers)),
    Mutant("tool-call reply answering", "H4.1", _break(_calls_answer)),
    Mutant("post-cut retry keeping the cut note", "H4.7", _break(_cut_note_kept)),
    Mutant("a plan's stop that drops the answer", "H4.1", _break(_stop_drops_the_answer)),
    Mutant("a control stop taken for an answer", "H4.1", _break(_stop_answers)),
    Mutant("a steer taken with the calls of a reply", "H4.8.4", _steer(_steer_while_calls_are_out)),
    Mutant("a steer taken into a run that ends at its cap", "H4.8.4", _steer(_steer_into_the_last_round)),
    Mutant("a steer held back past a round end", "H4.8.4", _steer(_steer_held_back)),
    Mutant(
        "a steer logged after the first result",
        "H4.8.4",
        replace(MODEL, round_log=_steer_after_the_first_result),
    ),
    Mutant("a steer never logged", "H4.8.4", replace(MODEL, round_log=_steer_lost)),
)


# ---------------------------------------------------------------- the area


def proof_cases() -> list[tuple[dict[str, Enum], dict[str, Enum]]]:
    """Each live phase with each input it accepts; each end with each input."""
    out: list[tuple[dict[str, Enum], dict[str, Enum]]] = [
        ({"phase": Phase.ENDED, "end": end}, {"kind": kind})
        for end in End
        if end is not End.LIVE
        for kind in Kind
    ]
    for phase in Phase:
        for kind in Kind:
            if run.accepts(phase, kind):
                out.append(({"phase": phase, "end": End.LIVE}, {"kind": kind}))
    return out


def cfgs() -> Iterator[Cfg]:
    for cap, retries, notes, polls in itertools.product(range(4), range(4), range(4), range(4)):
        yield Cfg(cap, retries, notes, polls)


def sample_cfg(seed: int) -> Cfg:
    return Cfg(seed % 12, (seed // 12) % 5, (seed // 60) % 9, (seed // 540) % 6)


AREA = Area(
    name="run",
    model=MODEL,
    cfg_type=Cfg,
    state_type=Run,
    input_type=Input,
    proof_cases=proof_cases,
    valid=run.valid,
    cfg_valid=run.cfg_valid,
    start=lambda m, cfg: run.start(cfg),
    next=lambda m, cfg, s, x: m.step(cfg, s, x),
    inputs=inputs,
    cfgs=cfgs,
    bounds="cap 0..3, retries 0..3, notes 0..3, polls 0..3",
    depth=8,
    sample_cfg=sample_cfg,
    laws=LAWS,
    mutants=MUTANTS,
    ghost_start=ghost_start,
    ghost_next=ghost_next,
    cached=cached,
)
