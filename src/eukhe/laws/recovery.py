"""The laws of H4.8 (a stuck model gets a recovery, each with a cap) over the model
`rules.recovery`, and its breaks."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import recovery, run
from eukhe.rules.recovery import Act, Cause, Out, RCfg, Rec, Reply, Step
from eukhe.rules.states import replace


@dataclass(frozen=True)
class Model:
    step: Callable[[RCfg, Rec, Reply], Step]
    act_reply: Callable[[Act, run.Input], run.Input]


MODEL = Model(step=recovery.step, act_reply=recovery.act_reply)


def cached(m: Model) -> Model:
    return Model(step=functools.lru_cache(maxsize=1 << 16)(m.step), act_reply=m.act_reply)


INPUTS = [Reply(o, like) for o in Out for like in (False, True)]


def inputs(cfg: RCfg, r: Rec) -> list[Reply]:
    return INPUTS


STUCK = (Out.LENGTH, Out.LEAK, Out.REJECTED, Out.REBUILT, Out.CALLS)


def _calls(x: Reply) -> bool:
    return x.out is Out.CALLS or x.out is Out.REBUILT


# ---------------------------------------------------------------- laws


def rec_length_retries_with_a_note(m: Model, cfg: RCfg, r: Rec, x: Reply) -> bool:
    if not (x.out is Out.LENGTH and recovery.next_row(r, Cause.LENGTH) <= cfg.long):
        return True
    t = m.step(cfg, r, x)
    return (
        (t.act is Act.REDO)
        & (t.rec.cause is Cause.LENGTH)
        & (t.rec.row == recovery.next_row(r, Cause.LENGTH))
    )


def rec_length_gives_up(m: Model, cfg: RCfg, r: Rec, x: Reply) -> bool:
    """After `long` length notes in a row, the next length stop fails the run."""
    in_row = r.row if r.cause is Cause.LENGTH else 0
    if not (x.out is Out.LENGTH and in_row >= cfg.long):
        return True
    return m.step(cfg, r, x).act is Act.QUIT


def rec_leak_rebuilt_is_calls(m: Model, cfg: RCfg, r: Rec, x: Reply) -> bool:
    if x.out is not Out.REBUILT:
        return True
    read = m.step(cfg, r, x) == m.step(cfg, r, Reply(Out.CALLS, x.like))
    return read & (m.act_reply(Act.EXEC, run.Input(run.Kind.ANSWER)).kind is run.Kind.CALLS)


def rec_leak_retries_with_a_note(m: Model, cfg: RCfg, r: Rec, x: Reply) -> bool:
    if not (x.out is Out.LEAK and recovery.next_row(r, Cause.LEAK) <= cfg.leak):
        return True
    t = m.step(cfg, r, x)
    return (t.act is Act.REDO) & (t.rec.cause is Cause.LEAK) & (t.rec.row == recovery.next_row(r, Cause.LEAK))


def rec_leak_stands(m: Model, cfg: RCfg, r: Rec, x: Reply) -> bool:
    in_row = r.row if r.cause is Cause.LEAK else 0
    if not (x.out is Out.LEAK and in_row >= cfg.leak):
        return True
    t = m.step(cfg, r, x)
    return (t.act is Act.STAND) & (m.act_reply(Act.STAND, run.Input(run.Kind.ERROR)).kind is run.Kind.ANSWER)


def rec_rejected_retries_with_a_note(m: Model, cfg: RCfg, r: Rec, x: Reply) -> bool:
    """Output the server's parser rejected, under the leak cap: the next rejected note."""
    if not (x.out is Out.REJECTED and recovery.next_row(r, Cause.REJECTED) <= cfg.leak):
        return True
    t = m.step(cfg, r, x)
    return (
        (t.act is Act.REDO)
        & (t.rec.cause is Cause.REJECTED)
        & (t.rec.row == recovery.next_row(r, Cause.REJECTED))
    )


def rec_rejected_gives_up(m: Model, cfg: RCfg, r: Rec, x: Reply) -> bool:
    """After `leak` rejected notes in a row, the next rejection fails the run (no text stands)."""
    in_row = r.row if r.cause is Cause.REJECTED else 0
    if not (x.out is Out.REJECTED and in_row >= cfg.leak):
        return True
    return m.step(cfg, r, x).act is Act.QUIT


def rec_calls_run(m: Model, cfg: RCfg, r: Rec, x: Reply) -> bool:
    """Calls that make fewer than `repeat` same rounds in a row run; changed results
    start a row of one."""
    if _calls(x) and recovery.would_make(r, x) < recovery.threshold(cfg):
        t = m.step(cfg, r, x)
        return (t.act is Act.EXEC) & (t.rec.same == recovery.would_make(r, x))
    if x.out is Out.RESULTS and not x.like and r.same >= 1:
        return m.step(cfg, r, x).rec.same == 1
    return True


def rec_repeat_never_runs(m: Model, cfg: RCfg, r: Rec, x: Reply) -> bool:
    if not (_calls(x) and recovery.would_make(r, x) >= recovery.threshold(cfg)):
        return True
    return m.step(cfg, r, x).act is not Act.EXEC


def rec_repeat_redirects(m: Model, cfg: RCfg, r: Rec, x: Reply) -> bool:
    repeat = _calls(x) and recovery.would_make(r, x) >= recovery.threshold(cfg)
    if not (repeat and recovery.next_row(r, Cause.REDIRECT) <= cfg.redirect):
        return True
    t = m.step(cfg, r, x)
    return (
        (t.act is Act.REDO)
        & (t.rec.cause is Cause.REDIRECT)
        & (t.rec.row == recovery.next_row(r, Cause.REDIRECT))
    )


def rec_repeat_gives_up(m: Model, cfg: RCfg, r: Rec, x: Reply) -> bool:
    in_row = r.row if r.cause is Cause.REDIRECT else 0
    repeat = _calls(x) and recovery.would_make(r, x) >= recovery.threshold(cfg)
    if not (repeat and in_row >= cfg.redirect):
        return True
    return m.step(cfg, r, x).act is Act.QUIT


def rec_user_breaks_the_row(m: Model, cfg: RCfg, r: Rec, x: Reply) -> bool:
    """After a user message no row is open, and no call repeats one made before it."""
    if x.out is not Out.USER:
        return True
    t = m.step(cfg, r, x)
    fresh = (t.rec.same == 0) & (t.rec.cause is Cause.NONE) & (t.rec.row == 0)
    nxt = m.step(cfg, t.rec, Reply(Out.CALLS, True))
    return fresh & ((nxt.act is not Act.EXEC) | (nxt.rec.same == 1))


def rec_notes_capped(m: Model, cfg: RCfg, r: Rec) -> bool:
    """Invariant: notes in a row never pass their recovery's cap."""
    return r.row <= recovery.cap(cfg, r.cause)


def rec_never_runs_a_repeat(m: Model, cfg: RCfg, r: Rec) -> bool:
    """Invariant: fewer than max(repeat, 1) same rounds ever run in a row."""
    return r.same < recovery.threshold(cfg)


def rec_stuck_gets_help(m: Model, cfg: RCfg, r: Rec, x: Reply) -> bool:
    if x.out not in STUCK:
        return True
    return m.step(cfg, r, x).act is not Act.PASS


def rec_redo_is_noted(m: Model, cfg: RCfg, r: Rec, x: Reply) -> bool:
    """A recovery retry is a noted error: in every run phase that reads replies, it
    cuts the request and the next carries the next attempt's note (or, notes spent,
    the run fails); it never resends."""
    t = m.step(cfg, r, x)
    if t.act is not Act.REDO:
        return True
    y = m.act_reply(t.act, run.Input(run.Kind.ANSWER))
    if not (y.kind is run.Kind.ERROR and y.noted):
        return False
    return _on_every_run(y, _cuts_or_fails)


def rec_quit_fails(m: Model, cfg: RCfg, r: Rec, x: Reply) -> bool:
    t = m.step(cfg, r, x)
    if t.act is not Act.QUIT:
        return True
    y = m.act_reply(t.act, run.Input(run.Kind.ANSWER))
    return _on_every_run(y, lambda s, u: u.end is run.End.MODEL_ERROR)


# The run states a recovery's reply is read in: both reply phases, notes left and
# spent, under small limits. The H4 laws prove the same for every run state.
_RUN_CFG = run.Cfg(cap=2, retries=1, notes=2, polls=1)
_RUN_STATES = (
    replace(run.start(_RUN_CFG), phase=run.Phase.CALL),
    replace(run.start(_RUN_CFG), phase=run.Phase.CALL, notes=0),
    replace(run.start(_RUN_CFG), phase=run.Phase.POLL, polls=0),
    replace(
        run.start(_RUN_CFG), phase=run.Phase.POLL, polls=0, notes=0, attempt=2, cut_version=0, cut_attempt=1
    ),
)


def _on_every_run(y: run.Input, ok: Callable[[run.Run, run.Run], bool]) -> bool:
    return all(ok(s, run.step(_RUN_CFG, s, y)) for s in _RUN_STATES)


def _cuts_or_fails(s: run.Run, u: run.Run) -> bool:
    if s.notes == 0:
        return u.end is run.End.MODEL_ERROR
    return (u.cut_version, u.cut_attempt) == s.request and u.request == (s.version, s.attempt + 1)


def _out(*outs: Out) -> Callable[[dict[str, Enum], dict[str, Enum]], bool]:
    return lambda s, x: x["out"] in outs


LAWS = (
    Law(
        "rec_length_retries_with_a_note",
        "H4.8",
        "No-answer length stop under cap: next length note.",
        edge=rec_length_retries_with_a_note,
        scope=_out(Out.LENGTH),
    ),
    Law(
        "rec_length_gives_up",
        "H4.8",
        "After long length notes in a row: fails.",
        edge=rec_length_gives_up,
        scope=_out(Out.LENGTH),
    ),
    Law(
        "rec_leak_rebuilt_is_calls",
        "H4.8.3",
        "All parse, all offered: rebuilt, read as tool calls.",
        edge=rec_leak_rebuilt_is_calls,
        scope=_out(Out.REBUILT),
    ),
    Law(
        "rec_leak_retries_with_a_note",
        "H4.8",
        "Not rebuilt, under cap: next leak note.",
        edge=rec_leak_retries_with_a_note,
        scope=_out(Out.LEAK),
    ),
    Law(
        "rec_leak_stands",
        "H4.8",
        "After leak leak notes in a row: answers as text.",
        edge=rec_leak_stands,
        scope=_out(Out.LEAK),
    ),
    Law(
        "rec_rejected_retries_with_a_note",
        "H4.8",
        "Output the server's tool-call parser rejected, under the leak cap: next note.",
        edge=rec_rejected_retries_with_a_note,
        scope=_out(Out.REJECTED),
    ),
    Law(
        "rec_rejected_gives_up",
        "H4.8",
        "After leak rejected notes in a row: fails.",
        edge=rec_rejected_gives_up,
        scope=_out(Out.REJECTED),
    ),
    Law(
        "rec_calls_run",
        "H4.8.4",
        "< repeat rounds in a row: run; changed results start a row of 1.",
        edge=rec_calls_run,
        scope=_out(Out.CALLS, Out.REBUILT, Out.RESULTS),
    ),
    Law(
        "rec_repeat_never_runs",
        "H4.8",
        "Would make repeat same rounds: never run.",
        edge=rec_repeat_never_runs,
        scope=_out(Out.CALLS, Out.REBUILT),
    ),
    Law(
        "rec_repeat_redirects",
        "H4.8",
        "Under cap: next redirect note.",
        edge=rec_repeat_redirects,
        scope=_out(Out.CALLS, Out.REBUILT),
    ),
    Law(
        "rec_repeat_gives_up",
        "H4.8",
        "After redirect redirect notes in a row: fails.",
        edge=rec_repeat_gives_up,
        scope=_out(Out.CALLS, Out.REBUILT),
    ),
    Law(
        "rec_user_breaks_the_row",
        "H4.8.4",
        "User message ends the row; no later call repeats an earlier one.",
        edge=rec_user_breaks_the_row,
        scope=_out(Out.USER),
    ),
    Law("rec_notes_capped", "H4.8.1", "Notes in a row ≤ cap.", node=rec_notes_capped),
    Law(
        "rec_never_runs_a_repeat",
        "H4.3",
        "Never max(repeat, 1) same rounds run in a row.",
        node=rec_never_runs_a_repeat,
    ),
    Law(
        "rec_stuck_gets_help",
        "H4.8",
        "Stuck reply always gets an effective act: run, noted retry, answer, end.",
        edge=rec_stuck_gets_help,
        scope=_out(*STUCK),
    ),
    Law(
        "rec_redo_is_noted",
        "H4.8.2",
        "Recovery retry = noted error with next attempt's note; never resends.",
        edge=rec_redo_is_noted,
        scope=_out(*STUCK),
    ),
    Law(
        "rec_quit_fails",
        "H4.8",
        "At cap: fails on the model at once.",
        edge=rec_quit_fails,
        scope=_out(*STUCK),
    ),
)


# ---------------------------------------------------------------- breaks


def _break(change: Callable[[RCfg, Rec, Reply, Step], Step]) -> Model:
    def step(cfg: RCfg, r: Rec, x: Reply) -> Step:
        return change(cfg, r, x, recovery.step(cfg, r, x))

    return Model(step=step, act_reply=recovery.act_reply)


def _uncapped(cause: Cause, out: Out) -> Callable[[RCfg, Rec, Reply, Step], Step]:
    def change(cfg: RCfg, r: Rec, x: Reply, t: Step) -> Step:
        hits = x.out is out if out is not Out.CALLS else _calls(x) and t.act is not Act.EXEC
        if hits and t.act is not Act.REDO:
            return Step(Act.REDO, Rec(cause, recovery.next_row(r, cause), r.same))
        return t

    return change


def _repeat_runs(cfg: RCfg, r: Rec, x: Reply, t: Step) -> Step:
    if _calls(x) and t.act is not Act.EXEC:
        return Step(Act.EXEC, Rec(Cause.NONE, 0, recovery.would_make(r, x)))
    return t


def _user_keeps_the_row(cfg: RCfg, r: Rec, x: Reply, t: Step) -> Step:
    return Step(t.act, Rec(Cause.NONE, 0, r.same)) if x.out is Out.USER else t


def _note_past_cap(cfg: RCfg, r: Rec, x: Reply, t: Step) -> Step:
    """Caps checked with > where >= belongs: one note too many."""
    if x.out in STUCK and t.act in (Act.QUIT, Act.STAND) and t.rec.cause is Cause.NONE:
        cause = {Out.LENGTH: Cause.LENGTH, Out.LEAK: Cause.LEAK, Out.REJECTED: Cause.REJECTED}.get(
            x.out, Cause.REDIRECT
        )
        row = recovery.next_row(r, cause)
        if row == recovery.cap(cfg, cause) + 1:
            return Step(Act.REDO, Rec(cause, row, r.same))
    return t


def _rejected_stands(cfg: RCfg, r: Rec, x: Reply, t: Step) -> Step:
    """The leak's cap act copied to the server's rejection: an empty reply would answer."""
    return Step(Act.STAND, t.rec) if x.out is Out.REJECTED and t.act is Act.QUIT else t


def _results_keep_the_row(cfg: RCfg, r: Rec, x: Reply, t: Step) -> Step:
    return Step(t.act, r) if x.out is Out.RESULTS else t


def _redo_is_transient(a: Act, passed: run.Input) -> run.Input:
    if a is Act.REDO:
        return run.Input(run.Kind.ERROR, retryable=True, noted=False)
    return recovery.act_reply(a, passed)


def _quit_is_retried(a: Act, passed: run.Input) -> run.Input:
    if a is Act.QUIT:
        return run.Input(run.Kind.ERROR, retryable=True, noted=True)
    return recovery.act_reply(a, passed)


MUTANTS = (
    Mutant("length recovery without its cap", "H4.8", _break(_uncapped(Cause.LENGTH, Out.LENGTH))),
    Mutant("leak recovery without its cap", "H4.8", _break(_uncapped(Cause.LEAK, Out.LEAK))),
    Mutant(
        "rejected-output recovery without its cap", "H4.8", _break(_uncapped(Cause.REJECTED, Out.REJECTED))
    ),
    Mutant("rejected output that stands as an answer", "H4.8", _break(_rejected_stands)),
    Mutant("repeat recovery without its cap", "H4.8", _break(_uncapped(Cause.REDIRECT, Out.CALLS))),
    Mutant("a repeat that runs", "H4.8", _break(_repeat_runs)),
    Mutant("a user message that does not end the row", "H4.8.4", _break(_user_keeps_the_row)),
    Mutant("a note past its cap", "H4.8.1", _break(_note_past_cap)),
    Mutant("changed results that keep the row", "H4.8.4", _break(_results_keep_the_row)),
    Mutant(
        "a recovery retry sent as a transient retry (resends)",
        "H4.8.2",
        Model(step=recovery.step, act_reply=_redo_is_transient),
    ),
    Mutant(
        "a recovery at its cap that retries", "H4.8", Model(step=recovery.step, act_reply=_quit_is_retried)
    ),
)


# ---------------------------------------------------------------- the area


def proof_cases() -> list[tuple[dict[str, Enum], dict[str, Enum]]]:
    return [({"cause": c}, {"out": o}) for c in Cause for o in Out]


def cfgs() -> Iterator[RCfg]:
    for long, leak, redirect, repeat in itertools.product(range(4), range(4), range(4), range(4)):
        yield RCfg(long, leak, redirect, repeat)


def sample_cfg(seed: int) -> RCfg:
    return RCfg(seed % 7, (seed // 7) % 7, (seed // 49) % 7, (seed // 343) % 9)


AREA = Area(
    name="recovery",
    model=MODEL,
    cfg_type=RCfg,
    state_type=Rec,
    input_type=Reply,
    proof_cases=proof_cases,
    valid=recovery.valid,
    cfg_valid=recovery.caps_valid,
    start=lambda m, cfg: recovery.START,
    next=lambda m, cfg, r, x: m.step(cfg, r, x).rec,
    inputs=inputs,
    cfgs=cfgs,
    bounds="caps long, leak, redirect, repeat 0..3",
    depth=8,
    sample_cfg=sample_cfg,
    laws=LAWS,
    mutants=MUTANTS,
    cached=cached,
)
