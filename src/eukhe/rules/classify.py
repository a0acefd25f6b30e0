"""Classification (H4.1, H4.5, H4.7, H4.8): what a reply is to the run, before the run
reads it. The runtime reads a reply into scalars (`Seen`: its failure's kind, whether it
is retryable, whether it has calls, text, a length stop, what the leak scan found of
its text, whether its calls repeat the last round's); this rule says which H4 input it
is (`rules.run.Input`) and what the H4.8 recoveries read of it (`rules.recovery.Reply`).

- A failure: one H4 input a kind. The server's rejection of the model's tool-call
  output (`rejected`), a stalled stream and a repetition cut are noted errors (retried
  at once with a note, never a retry); an overflow is compacted, never resent as is;
  any other kind is an error, retryable as the reply says.
- Tool calls are calls, whatever the text and the stop reason (H4.1).
- Text the leak scan rebuilt into calls is calls (REBUILT); text with markup it could
  not rebuild is an answer the recoveries read as a leak.
- Text is an answer; no text and no call is no answer: a length stop reads as LENGTH,
  anything else as a noted no-answer (H4.7).

Pure: standard library only, frozen data, a total function.
"""

from __future__ import annotations

from dataclasses import dataclass

from eukhe.rules import recovery
from eukhe.rules import run as run_rule
from eukhe.rules.recovery import Out
from eukhe.rules.states import Choice


class Failure(Choice):
    """A failed reply's kind (the values of `eukhe.ai.reply.Kind`; NONE: the reply did not fail)."""

    NONE = "none"
    RATE_LIMITED = "rate_limited"
    OVERLOADED = "overloaded"
    SERVER = "server"
    CONNECTION = "connection"
    TIMEOUT = "timeout"
    STALL = "stall"
    REPEATING = "repeating"
    BAD_REQUEST = "bad_request"
    AUTH = "auth"
    NOT_FOUND = "not_found"
    UNPROCESSABLE = "unprocessable"
    REFUSED = "refused"
    MALFORMED = "malformed"
    STREAM_ERROR = "stream_error"
    REJECTED = "rejected"
    OVERFLOW = "overflow"


NOTED = frozenset({Failure.REJECTED, Failure.STALL, Failure.REPEATING})
"""Failures retried at once with a note (the same request would give the same output)."""


@dataclass(frozen=True)
class Seen:
    """A reply as the runtime read it. `like`: its calls equal the last round's; `rebuilt`:
    the leak scan rebuilt calls from its text (`rebuilt_like`: and they equal the last
    round's); `leak`: the scan found markup it could not rebuild."""

    failure: Failure = Failure.NONE
    retryable: bool = False
    calls: bool = False
    like: bool = False
    text: bool = False
    rebuilt: bool = False
    rebuilt_like: bool = False
    leak: bool = False
    length: bool = False


@dataclass(frozen=True)
class Read:
    """What the reply is: the run's input, what recovery reads, and whether the run takes
    the rebuilt calls (and the scan's finding for its notes)."""

    input: run_rule.Input
    reply: recovery.Reply
    rebuilt: bool = False
    leak: bool = False


def classify(s: Seen) -> Read:
    """The run's input for a reply as it came, and what recovery reads of it."""
    if s.failure is not Failure.NONE:
        if s.failure is Failure.REJECTED:
            return Read(
                run_rule.Input(run_rule.Kind.ERROR, retryable=True, noted=True), recovery.Reply(Out.REJECTED)
            )
        if s.failure is Failure.OVERFLOW:
            return Read(run_rule.Input(run_rule.Kind.OVERFLOW), recovery.Reply(Out.OTHER))
        if s.failure in NOTED:
            return Read(
                run_rule.Input(run_rule.Kind.ERROR, retryable=True, noted=True), recovery.Reply(Out.NOTED)
            )
        return Read(run_rule.Input(run_rule.Kind.ERROR, retryable=s.retryable), recovery.Reply(Out.OTHER))
    if s.calls:
        return Read(run_rule.Input(run_rule.Kind.CALLS), recovery.Reply(Out.CALLS, s.like))
    if s.text and s.rebuilt:
        return Read(
            run_rule.Input(run_rule.Kind.CALLS), recovery.Reply(Out.REBUILT, s.rebuilt_like), rebuilt=True
        )
    if s.text and s.leak:
        return Read(run_rule.Input(run_rule.Kind.ANSWER), recovery.Reply(Out.LEAK), leak=True)
    if s.text:
        return Read(run_rule.Input(run_rule.Kind.ANSWER), recovery.Reply(Out.ANSWER))
    if s.length:
        return Read(run_rule.Input(run_rule.Kind.NO_ANSWER), recovery.Reply(Out.LENGTH))
    return Read(run_rule.Input(run_rule.Kind.NO_ANSWER), recovery.Reply(Out.NOTED))
