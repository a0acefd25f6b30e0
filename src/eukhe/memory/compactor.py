"""Building one line of the chat's tree with a model (H1): the calls, the follow-up
to a line too long, and the node's failures, as `rules.compactor` decides them.

`build_call` is one compactor call: up to TRIES model requests in one
conversation, each raced against CALL_DEADLINE on the given clock (the wait
for a provider slot and every preemption by a session request included: the
request is background work in admission, H3). It sends the rule only sizes
and keeps the texts; the rule says when the call ends and which text is the
line. `build_node` is a node's calls until it is built: a failed call waits
RETRY and tries again, and the failure that finds none left builds the node
from its input cut to NODE, reading nothing again (H1.5).

Model requests go through `ask(request) -> Reply` (a provider's stream, read
to its end, in an admission slot): the tests give it the faux server.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from eukhe.admission import AdmissionError, Slots, run_in_slot
from eukhe.ai.guard import guard
from eukhe.ai.provider import Provider
from eukhe.ai.reply import Done, Event, Failure, FailureKind, Reply
from eukhe.ai.request import Message, Request
from eukhe.memory import prompts
from eukhe.rules import compactor as rule
from eukhe.rules import wait
from eukhe.waits import Clock, LoopClock, race

LINE_TOKENS = 2 * rule.NODE
"""Tokens a compactor reply may have: a line of NODE bytes takes far fewer, and a model that
wanders past them is cut (then told where its line must end) rather than let run."""

Ask = Callable[[Request], Awaitable[Reply]]
Save = Callable[[str], Awaitable[str]]  # saves a node's line; the line the store holds
Read = Callable[[], Awaitable[tuple[str, str, str]]]  # a call's context, step and input text
T = TypeVar("T")


@dataclass(frozen=True)
class Call:
    """How one compactor call ended: the rule's line (its end, calls made) and the
    line's text (None: the call failed), with the failure's cause."""

    line: rule.Line
    text: str | None
    cause: str = ""


async def build_call(
    ask: Ask,
    model: str,
    context: str,
    step: str,
    input_text: str,
    clock: Clock | None = None,
    cfg: rule.Cfg = rule.LIMITS,
) -> Call:
    """One compactor call for a node whose input is `input_text` (the labelled message,
    or the two lines to merge), with `context` (the view lines before it) and the
    `step` the model is asked."""
    clock = clock or LoopClock()
    line = rule.line_open(cfg, rule.nbytes(input_text))
    conversation: list[Message] = [Message("user", f"{context}\n\n{step}")]
    replies: list[str] = []
    cause = ""
    while line.live:
        request = Request(model, tuple(conversation), system=prompts.COMPACTOR, max_tokens=LINE_TOKENS)
        raced = await race(ask(request), clock.now() + rule.CALL_DEADLINE / 1000, clock=clock)
        reply = raced.value if raced.error is None else None
        if reply is None or raced.end is not wait.End.EVENT:
            cause = (
                f"the model call passed its deadline of {rule.CALL_DEADLINE // 1000} s"
                if raced.error is None
                else f"the model call broke: {type(raced.error).__name__}: {raced.error}"
            )
            line = rule.line_step(cfg, line, rule.ERROR)
            break
        if reply.failure is not None:
            cause = reply.failure.message
            line = rule.line_step(cfg, line, rule.ERROR)
            break
        text = reply.all_text if reply.has_text else ""
        replies.append(text)
        line = rule.line_step(cfg, line, rule.read_reply(text))
        if line.live:  # too long: the follow-up shows where the line must end
            conversation += [Message("assistant", text), Message("user", prompts.too_long(rule.kept(text)))]
    return Call(line, rule.ended(cfg, line, input_text, replies), cause)


@dataclass(frozen=True)
class Attempt:
    """One job of a node (a call, or the save of its input cut): `built` its saved
    line (None: still pending), the node's pending state after it, and what failed."""

    built: str | None
    pend: rule.Pend
    outcome: rule.Outcome
    cause: str = ""
    cut: bool = False  # built from the input cut, after the failure cap


async def attempt(
    ask: Ask,
    model: str,
    read: Read,
    save: Save,
    pend: rule.Pend,
    clock: Clock | None = None,
    cfg: rule.Cfg = rule.LIMITS,
) -> Attempt:
    """One job of a pending node: read its input, make one compactor call, save the
    line. A read or a save that fails is a disk failure, which counts nothing. The
    failure that finds no failures left builds the node from that call's input cut
    to NODE, reading nothing again (H1.5)."""
    source = await _attempt(read)
    if source is None:
        return Attempt(
            None, rule.pend_after(cfg, pend, rule.Outcome.DISK).pend, rule.Outcome.DISK, "cannot read"
        )
    context, step, input_text = source
    call = await build_call(ask, model, context, step, input_text, clock, cfg)
    if rule.outcome(call.line) is rule.Outcome.BUILT and call.text is not None:
        saved = await _attempt(functools.partial(save, call.text))
        if saved is not None:
            return Attempt(saved, rule.MADE, rule.Outcome.BUILT)
        return Attempt(None, pend, rule.Outcome.DISK, "cannot save the line")
    after = rule.pend_after(cfg, pend, rule.Outcome.FAILED)
    cause = call.cause or "the call failed"
    if after.act is rule.Act.CUT:  # the last failure: its input cut, only the save can fail now
        saved = await _attempt(functools.partial(save, rule.cut(input_text, cfg.node)))
        if saved is not None:
            return Attempt(saved, rule.MADE, rule.Outcome.BUILT, cause, cut=True)
        return Attempt(None, pend, rule.Outcome.DISK, cause + "; cannot save the cut")
    return Attempt(None, after.pend, rule.Outcome.FAILED, cause)


@dataclass(frozen=True)
class Built:
    """A node's line, how many calls failed on the way, and each failure's cause."""

    text: str
    failures: int
    causes: tuple[str, ...]
    cut: bool  # built from its input cut, after the failure cap


async def build_node(
    ask: Ask,
    model: str,
    read: Read,
    save: Save,
    clock: Clock | None = None,
    cfg: rule.Cfg = rule.LIMITS,
) -> Built:
    """A node's jobs, RETRY apart, until its line is saved (outside the chat's queue,
    which otherwise schedules the jobs and their RETRY)."""
    clock = clock or LoopClock()
    p = rule.pend_start(cfg)
    causes: list[str] = []
    while True:
        a = await attempt(ask, model, read, save, p, clock, cfg)
        if a.outcome is rule.Outcome.FAILED or (a.cut and a.cause):
            causes.append(a.cause)
        if a.built is not None:
            return Built(a.built, len(causes), tuple(causes), a.cut)
        p = a.pend
        await clock.sleep_until(clock.now() + rule.RETRY / 1000)


async def _attempt(work: Callable[[], Awaitable[T]]) -> T | None:
    """A store read or write; None when it failed (a disk failure, which counts nothing)."""
    try:
        return await work()
    except asyncio.CancelledError:
        raise
    except Exception:
        return None


def request_tokens(budget: int) -> int:
    """A compactor request's tokens at most, for a view budget of `budget` bytes: the
    view lines before the node, two inputs of NODE bytes, the instructions, the reply
    (3 bytes a token: an estimate that errs high)."""
    return (budget + 2 * rule.NODE + len(prompts.COMPACTOR) + 1) // 3 + LINE_TOKENS


def asker(provider: Provider, registry: Slots, idle: float = 120.0) -> Ask:
    """`ask` over a provider: its stream read to its end under the stream guards, in a
    background slot of its admission (a session request preempts it and it asks
    again, H3). A refused slot is a failed reply, never an exception."""
    name = str(getattr(provider, "name", "model"))

    async def ask(request: Request) -> Reply:
        async def body(_slot: object) -> Reply:
            last: Event | None = None
            async for event in guard(provider.stream(request), name, idle=idle):
                last = event
            assert isinstance(last, Done)
            return last.reply

        deadline = asyncio.get_running_loop().time() + rule.CALL_DEADLINE / 1000
        try:
            return await run_in_slot(body, name, interactive=False, deadline=deadline, registry=registry)
        except AdmissionError as e:
            return Reply(failure=Failure(FailureKind.OVERLOADED, True, str(e)))

    return ask
