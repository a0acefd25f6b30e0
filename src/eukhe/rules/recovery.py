"""H4.8: a stuck model gets a recovery, each with a cap.

A model is stuck when it reasons to the output limit (a `length` stop with no
answer), writes tool calls as text markup the harness cannot rebuild (or that
the server's own tool-call parser rejects: llama.cpp answers such output with
an error, so the same request would fail the same way), or makes the same
calls with the same results round after round. `step` reads
one reply as `Out` and answers an act: pass the reply on, run its calls,
retry with a recovery note, keep the reply as the answer, or end the run.
Each recovery's cap counts its notes in a row.

`act_reply` maps each act to the reply the H4 model (`rules.run`) reads, so
every H4 law, true for every reply, holds with the recoveries in place.

Pure: standard library and `rules` only.
"""

from __future__ import annotations

from dataclasses import dataclass

from eukhe.rules import run
from eukhe.rules.states import Choice

LENGTH_NOTES = 3
"""Length notes in a row before the run fails."""
LEAK_NOTES = 2
"""Leak notes in a row before the reply stands as text."""
REDIRECT_NOTES = 2
"""Redirect notes in a row before the run fails."""
REPEAT_CALLS = 5
"""Same rounds in a row that calls would make: not run."""
ARGUMENTS_SHOWN = 400
"""Characters of each call's canonical arguments a redirect note lists."""


@dataclass(frozen=True)
class RCfg:
    """The caps: length, leak and redirect notes in a row; same rounds that do not run."""

    long: int
    leak: int
    redirect: int
    repeat: int


CAPS = RCfg(long=LENGTH_NOTES, leak=LEAK_NOTES, redirect=REDIRECT_NOTES, repeat=REPEAT_CALLS)


def caps_valid(cfg: RCfg) -> bool:
    return (cfg.long >= 0) & (cfg.leak >= 0) & (cfg.redirect >= 0) & (cfg.repeat >= 0)


class Cause(Choice):
    """The recovery whose notes are in a row now."""

    NONE = "none"
    LENGTH = "length"
    LEAK = "leak"
    REJECTED = "rejected"
    REDIRECT = "redirect"


@dataclass(frozen=True)
class Rec:
    """Recoveries: the current note row (cause, notes in a row) and the same rounds
    run in a row, as the request context has them (so a restart keeps them)."""

    cause: Cause
    row: int
    same: int


START = Rec(Cause.NONE, 0, 0)


class Out(Choice):
    """What one reply (or event) is, as recovery reads it."""

    LENGTH = "length"  # stop `length` with no text and no tool call
    LEAK = "leak"  # no tool call; markup in the text that cannot be rebuilt
    REJECTED = "rejected"  # the server's tool-call parser rejected the output: a leak it caught
    REBUILT = "rebuilt"  # leaked calls that all parse and name offered tools
    CALLS = "calls"  # tool calls (any stop reason)
    RESULTS = "results"  # the tool round ran; `like`: its results equal the round before
    NOTED = "noted"  # another noted reply (no answer, repetition cut, stall)
    USER = "user"  # a user message (steer, next turn)
    ANSWER = "answer"
    OTHER = "other"  # transient errors, deferred replies, anything else


@dataclass(frozen=True)
class Reply:
    """`like`: for CALLS and REBUILT, the calls equal the last round's (names and
    canonical arguments, any order); for RESULTS, the results equal the round before."""

    out: Out
    like: bool = False


class Act(Choice):
    PASS = "pass"  # the reply goes on as it is
    EXEC = "exec"  # run the calls
    REDO = "redo"  # noted retry with the recovery's note
    STAND = "stand"  # the reply answers as text, unchanged
    QUIT = "quit"  # the run fails on the model


@dataclass(frozen=True)
class Step:
    act: Act
    rec: Rec


def cap(cfg: RCfg, cause: Cause) -> int:
    """Notes in a row a recovery may write."""
    if cause is Cause.LENGTH:
        return cfg.long
    if cause is Cause.LEAK or cause is Cause.REJECTED:
        return cfg.leak  # a rejected output is a leak the server caught: the same cap
    if cause is Cause.REDIRECT:
        return cfg.redirect
    return 0


def threshold(cfg: RCfg) -> int:
    """Same rounds in a row that calls must not make: max(repeat, 1)."""
    return cfg.repeat if cfg.repeat >= 1 else 1


def would_make(r: Rec, x: Reply) -> int:
    """Same rounds in a row that running these calls would make."""
    return r.same + 1 if x.like & (r.same >= 1) else 1


def next_row(r: Rec, cause: Cause) -> int:
    """The row a note of this cause would carry."""
    return r.row + 1 if r.cause is cause else 1


def _note(cfg: RCfg, r: Rec, cause: Cause, at_cap: Act) -> Step:
    row = next_row(r, cause)
    if row > cap(cfg, cause):
        return Step(at_cap, Rec(Cause.NONE, 0, r.same))
    return Step(Act.REDO, Rec(cause, row, r.same))


def step(cfg: RCfg, r: Rec, x: Reply) -> Step:
    """Rec.step: the act for one reply and the recoveries after it."""
    o = x.out
    if o is Out.LENGTH:
        return _note(cfg, r, Cause.LENGTH, Act.QUIT)
    if o is Out.LEAK:
        return _note(cfg, r, Cause.LEAK, Act.STAND)
    if o is Out.REJECTED:  # no text to stand as the answer: at the cap the run fails
        return _note(cfg, r, Cause.REJECTED, Act.QUIT)
    if o is Out.CALLS or o is Out.REBUILT:
        made = would_make(r, x)
        if made >= threshold(cfg):
            return _note(cfg, r, Cause.REDIRECT, Act.QUIT)
        return Step(Act.EXEC, Rec(Cause.NONE, 0, made))
    if o is Out.RESULTS:
        # changed results start a row of one: the round just run
        same = r.same if x.like or r.same <= 1 else 1
        return Step(Act.PASS, Rec(r.cause, r.row, same))
    if o is Out.USER:
        return Step(Act.PASS, START)
    if o is Out.NOTED or o is Out.ANSWER:
        return Step(Act.PASS, Rec(Cause.NONE, 0, r.same))
    return Step(Act.PASS, r)  # a transient retry resends the note: the row stays


def act_reply(act: Act, passed: run.Input) -> run.Input:
    """Act.reply: the reply the run reads for an act (PASS: the reply as it came)."""
    if act is Act.REDO:
        return run.Input(run.Kind.ERROR, retryable=True, noted=True)
    if act is Act.EXEC:
        return run.Input(run.Kind.CALLS)
    if act is Act.STAND:
        return run.Input(run.Kind.ANSWER)
    if act is Act.QUIT:
        return run.Input(run.Kind.ERROR, retryable=False, noted=False)
    return passed


def valid(cfg: RCfg, r: Rec) -> bool:
    """The shape of recoveries: a row belongs to a cause."""
    none = r.cause is Cause.NONE
    return (r.row >= 0) & (r.same >= 0) & ((none & (r.row == 0)) | ((not none) & (r.row >= 1)))
