"""The laws of hooks (issue 42) over the model `rules.hook`, and its breaks.

The model is five small rules, so the area walks five tracks, one a limit (`HCfg.track`):

- PROC (`hook_ends`): one hook's process from `begin(start, timeout)` under any inputs: a
  tick, its exit or the run's abort, at times that never go back: the last input's, one
  after, a ms before, at and after its timeout and its deadline, and when it asks to be
  woken (`Proc.wake`). The walk's state carries the TERMs and KILLs sent so far.
- VERDICT (`hook_failure_shown`, `hook_guard_fails_closed`): every way a hook ends (`RANS`:
  answers, exit 2, crashes, signals, timeouts, bad JSON, aborts, hooks that open on
  failure), judged at every event, and the verdicts of up to three hooks combined.
- STOP (`stop_hook_bounded`): a run's Stop events, each with its hooks' verdict (a block, a
  pass, a block with `continue: false`, a deny), under caps 0..4.
- FIRE (`hook_fires_once`): a run of durable steps, each firing its event, with crashes
  anywhere: before the hook runs, between its answer and its record, after the record.

What the models can say, and what they cannot: the process is the model's abstraction of
the runtime's (`eukhe.hooks`) asyncio wait, so that stdin is closed after the payload and
that the signals reach the group are the runtime's to show (its bridge test). The FIRE
track's driver is the runtime as documented: it asks `fire(recorded)`, runs the hook when
told to, and writes the answer as the durable step's output, so the answer and the
record land together, written once (a durable step's output is never overwritten). A
crash between the hook's answer and that write loses the answer: the replay runs the hook
again, and nothing can stop that but a record written before the hook runs (which would
lose the answer instead). So the law is: no run once a record exists, every run past the
first paid for by a crash inside that window, and every replay goes on with the first
recorded answer.

How they are checked: exhaustively within the bounds printed, then sampled (Hypothesis:
timeouts up to 100 s with jumps of time up to 3 s, caps up to 40, hooks' ends drawn with
any status and stderr up to 2000 characters, combined up to 24 at once, runs of up to 6
steps with up to 5 crashes). No law is proven: the area's state ranges over five tracks
and tuples, which the prover's cases (numbers, flags, enums) do not.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import hook
from eukhe.rules.hook import (
    BLOCKS,
    GRACE_MS,
    GUARDS,
    RANK,
    STDERR_SHOWN,
    TIMEOUT_MS,
    Action,
    Answer,
    Event,
    Fire,
    Input,
    Kind,
    Phase,
    Proc,
    Ran,
    StopNext,
    Verdict,
)
from eukhe.rules.states import Choice, replace


@dataclass(frozen=True)
class Model:
    """The functions of the model the laws call; a break swaps one."""

    begin: Callable[[int, int | None], Proc]
    step: Callable[[Proc, Input, int], tuple[Proc, Action]]
    wake: Callable[[Proc], int]
    verdict: Callable[[Event, Ran], Verdict]
    combine: Callable[[Sequence[Verdict]], Verdict]
    after_stop: Callable[[int, int, Verdict], tuple[int, StopNext]]
    fire: Callable[[bool], Fire]
    asks: Callable[[Verdict], bool] = hook.asks_a_person
    after_tool: Callable[[bool], Event] = hook.after_tool
    mode: Callable[[bool, str, str], str] = hook.permission_mode


def _wake(p: Proc) -> int:
    return p.wake


MODEL = Model(hook.begin, hook.step, _wake, hook.verdict, hook.combine, hook.after_stop, hook.fire)


def cached(m: Model) -> Model:
    """The model as the walk runs it: each hook's end judged once an event."""
    return replace(m, verdict=functools.lru_cache(maxsize=1 << 14)(m.verdict))


class Track(Choice):
    PROC = "proc"
    VERDICT = "verdict"
    STOP = "stop"
    FIRE = "fire"


@dataclass(frozen=True)
class HCfg:
    """A walk's limits. PROC: the start and the declared timeout (None: the default), the
    jumps of time tried; VERDICT: the event, the hooks combined at most, the hooks' ends
    (`seed` -1: `RANS`, else drawn from it); STOP: the cap; FIRE: steps and crashes."""

    track: Track
    start: int = 0
    timeout: int | None = None
    jumps: tuple[int, ...] = (1,)
    event: Event = Event.PRE_TOOL_USE
    width: int = 0
    seed: int = -1
    cap: int = 0
    steps: int = 0
    crashes: int = 0


def cfg_valid(cfg: HCfg) -> bool:
    return (cfg.width >= 0) & (cfg.steps >= 0) & (cfg.crashes >= 0)


# ---------------------------------------------------------------- the tracks' states and inputs


@dataclass(frozen=True)
class PState:
    """PROC: the process, the last input's time, the TERMs and KILLs sent so far."""

    proc: Proc
    now: int
    terms: int = 0
    kills: int = 0


@dataclass(frozen=True)
class PIn:
    x: Input
    at: int


@dataclass(frozen=True)
class JState:
    """VERDICT: the hooks' ends so far (indices into the cfg's vocabulary)."""

    ran: tuple[int, ...] = ()


@dataclass(frozen=True)
class JIn:
    i: int


@dataclass(frozen=True)
class SState:
    """STOP: the run's blocks (the model's count), the blocks that let it go on (counted
    here), and how it ended (None: going on)."""

    blocks: int = 0
    went_on: int = 0
    ended: StopNext | None = None


@dataclass(frozen=True)
class SIn:
    v: Verdict


@dataclass(frozen=True)
class FState:
    """FIRE: the step the run is at; `held`: the answer of a hook that ran, not yet recorded
    (-1: none); per step: its recorded answer (-1: none, the durable store), the hook's runs,
    the crashes between its answer and its record, and the answer the run went on with."""

    step: int
    held: int
    records: tuple[int, ...]
    runs: tuple[int, ...]
    window: tuple[int, ...]
    used: tuple[int, ...]
    crashes: int = 0


class Go(Choice):
    GO = "go"  # the runtime's next move
    CRASH = "crash"  # the process dies here; the run is replayed from its first step


@dataclass(frozen=True)
class FIn:
    go: Go


State = PState | JState | SState | FState
In = PIn | JIn | SIn | FIn


def _proc(at: int, timeout: int, phase: Phase, timed_out: bool = False, aborted: bool = False) -> Proc:
    return Proc(0, timeout, phase, at, timed_out, aborted)


LONG = "".join(f"line {i}: something went wrong\n" for i in range(60))

ENDED = _proc(10, TIMEOUT_MS, Phase.ENDED)
RANS: tuple[Ran, ...] = (
    Ran("true", ENDED, 0),
    Ran("echo hi", ENDED, 0, answer=Answer(plain="hi from the hook")),
    Ran("guard", ENDED, 0, answer=Answer(permission="deny", permission_reason="no rm")),
    Ran("guard", ENDED, 0, answer=Answer(permission="ask")),
    Ran("guard", ENDED, 0, answer=Answer(permission="allow", context="allowed")),
    Ran("check", ENDED, 0, answer=Answer(decision="block", reason="tests fail")),
    Ran("halt", ENDED, 0, answer=Answer(proceed=False, stop_reason="halt", system_message="stopped")),
    Ran("ok", ENDED, 0, answer=Answer(decision="approve", context="ctx")),
    Ran("json", ENDED, 0, "Traceback: bad json", answer=None),
    Ran("block", ENDED, BLOCKS, "blocked: rm -rf"),
    Ran("block", ENDED, BLOCKS, "", answer=None),
    Ran("fails", ENDED, 1, "boom"),
    Ran("missing", ENDED, 127, "sh: missing: command not found"),
    Ran("odd", ENDED, 3, LONG),
    Ran("segv", ENDED, -11),
    Ran("slow", _proc(1500, 1000, Phase.ENDED, timed_out=True), -15, "got SIGTERM"),
    Ran("stuck", _proc(3000, 1000, Phase.GONE, timed_out=True), None, LONG),
    Ran("aborted", _proc(5, 1000, Phase.GONE, aborted=True), None, "partial"),
    Ran("fails", ENDED, 1, "boom", open_on_failure=True),
    Ran("stuck", _proc(3000, 1000, Phase.GONE, timed_out=True), None, "", open_on_failure=True),
    Ran("json", ENDED, 0, "", answer=None, open_on_failure=True),
)
"""The ways a hook ends that the exhaustive walk judges."""


@functools.lru_cache(maxsize=64)
def rans(seed: int) -> tuple[Ran, ...]:
    """The hooks' ends of a walk: `RANS`, or (seed >= 0) 24 drawn: any status from -64 to
    300, answers of every kind, stderr up to 2000 characters, timeouts, aborts."""
    if seed < 0:
        return RANS
    r = random.Random(seed)
    out = []
    for i in range(24):
        size = r.choice((0, 5, 399, 400, 401, 2000))
        first = r.randint(0, 99)
        err = "".join(f"{j}: é… failed\n" for j in range(first, first + size // 10 + 1))[:size]
        timeout = r.randint(1, 100_000)
        how = r.randrange(6)
        status: int | None = r.choice((0, 0, 0, BLOCKS, 1, 127, r.randint(-64, 300)))
        proc = _proc(timeout // 2, timeout, Phase.ENDED)
        if how == 0:
            proc, status = _proc(timeout + GRACE_MS, timeout, Phase.GONE, timed_out=True), None
        elif how == 1:
            proc = _proc(timeout + 1, timeout, Phase.ENDED, timed_out=True)
        elif how == 2:
            proc, status = _proc(timeout // 3, timeout, Phase.GONE, aborted=True), None
        answer = Answer(
            decision=r.choice((None, "block", "approve", "nonsense")),
            reason=r.choice(("", "why")),
            proceed=r.random() < 0.8,
            permission=r.choice((None, "allow", "deny", "ask", "maybe")),
            context=r.choice(("", "ctx")),
            plain=r.choice(("", "plain")),
        )
        out.append(
            Ran(f"hook {i}", proc, status, err, None if r.random() < 0.2 else answer, r.random() < 0.3)
        )
    return tuple(out)


def _times(cfg: HCfg, s: PState) -> list[int]:
    p = s.proc
    due = p.started + p.timeout
    end = due + GRACE_MS
    ts = {s.now, due - 1, due, due + 1, end - 1, end, end + 1, p.wake}
    ts |= {s.now + j for j in cfg.jumps}
    return sorted(t for t in ts if t >= s.now)


STOP_VERDICTS = (
    Verdict(Kind.BLOCK, "not done yet"),
    Verdict(),
    Verdict(Kind.BLOCK, "halted", stop=True),
    Verdict(Kind.DENY, "odd"),
)
"""A Stop event's hooks, combined: a block, nothing, a block that also says `continue: false`,
a kind a Stop hook never gives."""


def start(m: Model, cfg: HCfg) -> State:
    if cfg.track is Track.PROC:
        return PState(m.begin(cfg.start, cfg.timeout), cfg.start)
    if cfg.track is Track.VERDICT:
        return JState()
    if cfg.track is Track.STOP:
        return SState()
    n = max(cfg.steps, 0)
    return FState(0, -1, (-1,) * n, (0,) * n, (0,) * n, (-1,) * n)


def inputs(cfg: HCfg, s: State) -> Sequence[In]:
    if isinstance(s, PState):
        if s.proc.settled:
            return [PIn(Input.TICK, s.now), PIn(Input.EXITED, s.now + 1), PIn(Input.ABORT, s.now + 1)]
        return [PIn(x, t) for t in _times(cfg, s) for x in Input]
    if isinstance(s, JState):
        return [JIn(i) for i in range(len(rans(cfg.seed)))] if len(s.ran) < cfg.width else []
    if isinstance(s, SState):
        return [] if s.ended is not None else [SIn(v) for v in STOP_VERDICTS]
    xs = [FIn(Go.GO)] if s.step < len(s.records) else []
    return xs + ([FIn(Go.CRASH)] if s.crashes < cfg.crashes else [])


def _fire_next(m: Model, s: FState, go: Go) -> FState:
    """The runtime's move: at a step, ask `fire`; RUN: the hook runs (its answer a fresh
    number); REPLAY: go on with the record. With an answer held, write it as the step's
    output (the first write stands) and go on with it. A crash loses what is held and
    replays the run from its first step."""
    k = s.step
    if go is Go.CRASH:
        window = s.window
        if s.held >= 0:
            window = (*window[:k], window[k] + 1, *window[k + 1 :])
        return FState(0, -1, s.records, s.runs, window, s.used, s.crashes + 1)
    if k >= len(s.records):
        return s
    if s.held >= 0:
        rec = s.records[k] if s.records[k] >= 0 else s.held
        records = (*s.records[:k], rec, *s.records[k + 1 :])
        used = (*s.used[:k], s.held, *s.used[k + 1 :])
        return FState(k + 1, -1, records, s.runs, s.window, used, s.crashes)
    if m.fire(s.records[k] >= 0) is Fire.RUN:
        runs = (*s.runs[:k], s.runs[k] + 1, *s.runs[k + 1 :])
        return FState(k, sum(s.runs), s.records, runs, s.window, s.used, s.crashes)
    used = (*s.used[:k], s.records[k], *s.used[k + 1 :])
    return FState(k + 1, -1, s.records, s.runs, s.window, used, s.crashes)


def nxt(m: Model, cfg: HCfg, s: State, x: In) -> State:
    if isinstance(s, PState) and isinstance(x, PIn):
        p, act = m.step(s.proc, x.x, x.at)
        return PState(p, max(s.now, x.at), s.terms + (act is Action.TERM), s.kills + (act is Action.KILL))
    if isinstance(s, JState) and isinstance(x, JIn):
        return JState((*s.ran, x.i))
    if isinstance(s, SState) and isinstance(x, SIn):
        blocks, then = m.after_stop(s.blocks, cfg.cap, x.v)
        return SState(blocks, s.went_on + (then is StopNext.GO_ON), None if then is StopNext.GO_ON else then)
    if isinstance(s, FState) and isinstance(x, FIn):
        return _fire_next(m, s, x.go)
    return s


def valid(cfg: HCfg, s: State) -> bool:
    return True


# ---------------------------------------------------------------- hook_ends


def hook_ends(m: Model, cfg: HCfg, s: State, x: In) -> bool:
    """One input to a hook's process: settled, nothing changes and the action is DONE; the
    abort settles at once (KILL); an input at or after the deadline (the timeout plus
    GRACE_MS) finds it settled; SIGTERM at most once, only from a running process at or
    after its timeout; SIGKILL (and GONE) only at or after the deadline, or on the abort; an
    exit settles it (DONE); a process left unsettled has every signal due sent and asks to
    be woken after now, by its timeout while running, by its deadline once signalled."""
    if not (isinstance(s, PState) and isinstance(x, PIn)):
        return True
    p = s.proc
    t, act = m.step(p, x.x, x.at)
    due = p.started + p.timeout
    end = due + GRACE_MS
    if p.settled:
        return (t == p) & (act is Action.DONE)
    ok = (t.started == p.started) & (t.timeout == p.timeout)
    if x.x is Input.ABORT:
        ok &= t.settled & t.aborted & (act is Action.KILL)
    if x.x is Input.EXITED:
        ok &= (t.phase is Phase.ENDED) & (act is Action.DONE) & (t.timed_out == (p.timed_out or x.at >= due))
    if x.at >= end:
        ok &= t.settled
    if act is Action.TERM:
        ok &= (p.phase is Phase.RUNNING) & (x.at >= due) & (s.terms == 0) & (t.phase is Phase.TERMED)
    if act is Action.KILL or t.phase is Phase.GONE:
        ok &= (x.x is Input.ABORT) | (x.at >= end)
    if t.settled:
        ok &= act in (Action.KILL, Action.DONE)
    else:
        ok &= act in (Action.WAIT, Action.TERM)
        ok &= (t.phase is Phase.TERMED) == (x.at >= due or p.phase is Phase.TERMED)
        w = m.wake(t)
        ok &= (w > max(s.now, x.at)) & (w <= (due if t.phase is Phase.RUNNING else end))
    return ok


def hook_ends_node(m: Model, cfg: HCfg, s: State) -> bool:
    """A hook begins running at its start with its declared timeout (none or not above 0:
    TIMEOUT_MS, 60 s); SIGTERM and SIGKILL at most once each."""
    if not isinstance(s, PState):
        return True
    want = TIMEOUT_MS if cfg.timeout is None or cfg.timeout <= 0 else cfg.timeout
    return (s.proc.started == cfg.start) & (s.proc.timeout == want) & (s.terms <= 1) & (s.kills <= 1)


# ---------------------------------------------------------------- hook_failure_shown


def failed(r: Ran) -> bool:
    """A crash, a timeout, an unknown exit or bad JSON, and not aborted: exit 0 with a JSON
    object (or plain text) and exit 2 are no failures."""
    if r.proc.aborted:
        return False
    if r.proc.timed_out or r.status is None:
        return True
    return r.status not in (0, BLOCKS) or (r.status == 0 and r.answer is None)


def _shows(line: str, r: Ran) -> bool:
    """The line names the timeout or the status, and carries the tail of the stderr, within
    STDERR_SHOWN characters of it ("…" included), and nothing else of it."""
    if r.proc.timed_out:
        named = "timed out" in line
    elif r.status is None:
        named = "no exit status" in line
    elif r.status == 0:
        named = "JSON" in line
    elif r.status < 0:
        named = f"signal {-r.status}" in line
    else:
        named = f"exited {r.status}" in line
    err = r.stderr.strip()
    if not err:
        return named
    keep = err if len(err) <= STDERR_SHOWN else err[len(err) - STDERR_SHOWN + 1 :]
    cut = len(err) > STDERR_SHOWN
    shown = line.endswith(("…" if cut else "") + keep)
    return named & shown & (len(line) <= 200 + STDERR_SHOWN)


@functools.lru_cache(maxsize=1 << 12)
def _judged(verdict: Callable[[Event, Ran], Verdict], event: Event, seed: int, i: int) -> Verdict:
    """One hook's end judged once a model (the sampled walk runs the model uncached)."""
    return verdict(event, rans(seed)[i])


def _verdicts(m: Model, cfg: HCfg, s: State, x: In) -> tuple[list[Ran], list[Verdict]] | None:
    if not (isinstance(s, JState) and isinstance(x, JIn)):
        return None
    vocab = rans(cfg.seed)
    idx = (*s.ran, x.i)
    return [vocab[i] for i in idx], [_judged(m.verdict, cfg.event, cfg.seed, i) for i in idx]


def hook_failure_shown(m: Model, cfg: HCfg, s: State, x: In) -> bool:
    """Each hook's verdict has exactly one failure line when it failed, none when it did
    not (exit 0 with a JSON object or plain text, exit 2, aborted); the line names its
    status or its timeout and carries its stderr's tail; the verdicts combined keep every
    failure line exactly once, in the hooks' order."""
    got = _verdicts(m, cfg, s, x)
    if got is None:
        return True
    rs, vs = got
    r, v = rs[-1], vs[-1]
    ok = len(v.failures) == (1 if failed(r) else 0)
    if v.failures:
        ok &= _shows(v.failures[0], r)
    every = [f for w in vs for f in w.failures]
    return ok & (list(m.combine(vs).failures) == every)


# ---------------------------------------------------------------- hook_guard_fails_closed


def hook_guard_fails_closed(m: Model, cfg: HCfg, s: State, x: In) -> bool:
    """At a PreToolUse or PermissionRequest: a hook that fails denies the call with its
    failure line as the reason, unless it opens on failure (then it passes, its failure
    shown); exit 2 denies with its stderr. Elsewhere a failure decides nothing (PASS). The
    hooks combined: a deny from any of them wins, with every deny's reason."""
    got = _verdicts(m, cfg, s, x)
    if got is None:
        return True
    rs, vs = got
    r, v = rs[-1], vs[-1]
    ok = True
    guard = cfg.event in GUARDS
    if failed(r):
        if guard and not r.open_on_failure:
            ok &= (v.kind is Kind.DENY) & bool(v.failures) & all(f in v.reason for f in v.failures)
        else:
            ok &= v.kind is Kind.PASS
    elif guard and r.status == BLOCKS and not r.proc.aborted:
        ok &= (v.kind is Kind.DENY) & (r.stderr.strip()[-20:] in v.reason)
    c = m.combine(vs)
    denies = [w for w in vs if w.kind is Kind.DENY]
    if denies:
        ok &= (c.kind is Kind.DENY) & all(w.reason in c.reason for w in denies)
    else:
        ok &= c.kind is max((w.kind for w in vs), key=RANK.__getitem__)
    return ok


# ---------------------------------------------------------------- hook_guard_ask_asks


def hook_guard_ask_asks(m: Model, cfg: HCfg, s: State, x: In) -> bool:
    """At a PreToolUse: a hook that ends answering `ask` is an ask, with its reason; the hooks
    combined make the call ask a person (`asks_a_person`: the permission rule then asks, and
    denies it where nobody can answer) exactly when one of them asks and none denies, whatever
    the others allow (issue 51)."""
    got = _verdicts(m, cfg, s, x)
    if got is None or cfg.event is not Event.PRE_TOOL_USE:
        return True
    rs, vs = got
    r, v = rs[-1], vs[-1]
    a = r.answer
    ok = True
    if a is not None and a.permission == "ask" and r.status == 0 and not failed(r) and not r.proc.aborted:
        ok &= (v.kind is Kind.ASK) & (v.reason == (a.permission_reason or a.reason))
    asks = any(w.kind is Kind.ASK for w in vs)
    denies = any(w.kind is Kind.DENY for w in vs)
    return ok & (m.asks(m.combine(vs)) == (asks and not denies))


# ---------------------------------------------------------------- stop_hook_bounded


def stop_hook_bounded(m: Model, cfg: HCfg, s: State, x: In) -> bool:
    """After a Stop (or SubagentStop) event: a block (without `continue: false`) under the
    cap goes on and counts one; a block at the cap ends the run failed (FAIL, the named
    STOP_LIMIT) and counts none; anything else ends the run as it would (END). No clock is
    asked, and the count never passes the cap."""
    if not (isinstance(s, SState) and isinstance(x, SIn)):
        return True
    blocks, then = m.after_stop(s.blocks, cfg.cap, x.v)
    cap = max(cfg.cap, 0)
    if x.v.kind is not Kind.BLOCK or x.v.stop:
        want = (s.blocks, StopNext.END)
    elif s.blocks < cap:
        want = (s.blocks + 1, StopNext.GO_ON)
    else:
        want = (s.blocks, StopNext.FAIL)
    return ((blocks, then) == want) & (blocks <= cap)


def stop_hook_bounded_node(m: Model, cfg: HCfg, s: State) -> bool:
    """The count is the blocks that let the run go on, never past the cap; `stop_hook_active`
    says so once one has; a run that ends failed has gone on exactly `cap` times."""
    if not isinstance(s, SState):
        return True
    ok = (s.blocks == s.went_on) & (s.blocks <= max(cfg.cap, 0))
    ok &= hook.stop_hook_active(s.blocks) == (s.went_on > 0)
    if s.ended is StopNext.FAIL:
        ok &= s.went_on == max(cfg.cap, 0)
    return ok


def stop_hook_bounded_always(m: Model, cfg: HCfg) -> str | None:
    """A hook that always blocks ends the run with the named failure after exactly `cap`
    blocks that went on."""
    if cfg.track is not Track.STOP:
        return None
    blocks, always = 0, Verdict(Kind.BLOCK, "never done")
    for n in range(max(cfg.cap, 0) + 2):
        blocks, then = m.after_stop(blocks, cfg.cap, always)
        if then is StopNext.FAIL:
            return None if n == max(cfg.cap, 0) else f"cap {cfg.cap}: failed after {n} blocks"
        if then is not StopNext.GO_ON:
            return f"cap {cfg.cap}: a block ended the run as {then}"
    return f"cap {cfg.cap}: an always-blocking hook still goes on after {cfg.cap + 2} blocks"


# ---------------------------------------------------------------- hook_call_end_fired


def hook_call_end_fired(m: Model, cfg: HCfg) -> str | None:
    """A call that failed fires PostToolUseFailure, one that succeeded PostToolUse: each
    matched on the tool, and each hook's exit 2 there a block whose stderr reaches the model
    with the call's result (Claude Code's: the failure shown to the model). Checked once, on
    the walk of PostToolUseFailure's verdicts."""
    if cfg.track is not Track.VERDICT or cfg.event is not Event.POST_TOOL_USE_FAILURE:
        return None
    for error, want in ((True, Event.POST_TOOL_USE_FAILURE), (False, Event.POST_TOOL_USE)):
        got = m.after_tool(error)
        if got is not want:
            return (
                f"a call {'that failed' if error else 'that succeeded'} fires {got.value}, not {want.value}"
            )
        if got not in hook.MATCHED:
            return f"{got.value}'s matcher is not over the tool"
        v = m.verdict(got, Ran("check", Proc(0, 1, Phase.ENDED, 0), BLOCKS, "the tests fail"))
        if v.kind is not Kind.BLOCK or v.reason != "the tests fail":
            return f"{got.value}: exit 2 gives {v.kind.value} {v.reason!r}, not its stderr to the model"
    return None


# ---------------------------------------------------------------- hook_mode_said

MODES = ("read-only", "workspace-write", "danger-full-access")
POLICIES = ("untrusted", "on-request", "never")
CLAUDE_MODES = frozenset({"default", "plan", "acceptEdits", "dontAsk", "bypassPermissions"})


def hook_mode_said(m: Model, cfg: HCfg) -> str | None:
    """`permission_mode` is one of Claude Code's, whatever eukhe's mode and policy: `plan`
    whenever plan mode is on; never one that says edits run unasked (`acceptEdits`,
    `bypassPermissions`) where every write asks (`untrusted`) or none may write
    (`read-only`); `dontAsk` exactly where an ask is a denial and writes are confined.
    Checked once, on the first Stop walk."""
    if cfg.track is not Track.STOP or cfg.cap != 0:
        return None
    for plan in (False, True):
        for mode in MODES:
            for policy in POLICIES:
                said = m.mode(plan, mode, policy)
                where = f"plan {plan}, {mode}, {policy}: {said!r}"
                if said not in CLAUDE_MODES:
                    return f"{where} is not one of Claude Code's modes"
                if plan and said != "plan":
                    return f"{where}, not plan"
                if not plan and said == "plan":
                    return f"{where}, with plan mode off"
                unasked = said in ("acceptEdits", "bypassPermissions")
                if unasked and (policy == "untrusted" or mode == "read-only"):
                    return f"{where}: edits said to run unasked where they ask or cannot run"
                confined = mode != "danger-full-access"
                if not plan and (said == "dontAsk") != (policy == "never" and confined):
                    return f"{where}: dontAsk is where an ask is a denial, and only there"
    return None


# ---------------------------------------------------------------- hook_fires_once


def hook_fires_once(m: Model, cfg: HCfg, s: State, x: In) -> bool:
    """One move of the runtime: a record, once written, never changes; no hook runs for a
    step that has its record (a replay reads it)."""
    if not (isinstance(s, FState) and isinstance(x, FIn)):
        return True
    t = _fire_next(m, s, x.go)
    kept = all(a == b for a, b in zip(s.records, t.records, strict=True) if a >= 0)
    no_rerun = all(a == b for a, b, r in zip(s.runs, t.runs, s.records, strict=True) if r >= 0)
    return kept & no_rerun


def hook_fires_once_node(m: Model, cfg: HCfg, s: State) -> bool:
    """Over any history of moves and crashes: every step the run has passed fired its hook
    and went on with its first recorded answer; each step's hook ran at most once, plus once
    for each crash between its answer and its record."""
    if not isinstance(s, FState):
        return True
    passed = all((s.records[k] >= 0) & (s.used[k] == s.records[k]) for k in range(s.step))
    once = all(n <= 1 + w for n, w in zip(s.runs, s.window, strict=True))
    return passed & once


LAWS = (
    Law(
        "hook_ends",
        "hooks",
        "A hook's process gets SIGTERM at its timeout (default 60 s), SIGKILL a grace later, and the turn "
        "goes on by then whatever it does; the run's abort ends the wait at once (issue 42).",
        edge=hook_ends,
        node=hook_ends_node,
        prove=False,
    ),
    Law(
        "hook_failure_shown",
        "hooks",
        "A crash, a timeout, an unknown exit or bad JSON is shown once, with its exit status and the tail "
        "of its stderr (issue 42).",
        edge=hook_failure_shown,
        prove=False,
    ),
    Law(
        "hook_guard_fails_closed",
        "hooks",
        "A PreToolUse or PermissionRequest hook that fails denies the call with the cause; onFailure allow "
        "opens it; a deny from any hook wins (issue 42).",
        edge=hook_guard_fails_closed,
        prove=False,
    ),
    Law(
        "hook_guard_ask_asks",
        "hooks",
        "A PreToolUse hook's ask makes the call ask a person, with its reason, whatever another hook "
        "allows; a deny still wins (issue 51).",
        edge=hook_guard_ask_asks,
        prove=False,
    ),
    Law(
        "stop_hook_bounded",
        "hooks",
        "Stop and SubagentStop blocks count; an always-blocking hook ends the run with STOP_LIMIT after at "
        "most the cap's blocks, never by a clock (issue 42).",
        edge=stop_hook_bounded,
        node=stop_hook_bounded_node,
        extra=stop_hook_bounded_always,
        prove=False,
    ),
    Law(
        "hook_fires_once",
        "hooks",
        "Each event fires once a thing that happens, across a crash and its replay: none after its record, "
        "the replay with the recorded answer; only a crash between answer and record runs it again "
        "(issue 42).",
        edge=hook_fires_once,
        node=hook_fires_once_node,
        prove=False,
    ),
    Law(
        "hook_call_end_fired",
        "hooks",
        "A call that failed fires PostToolUseFailure, one that succeeded PostToolUse, each matched on its "
        "tool, and a hook's exit 2 there gives its stderr to the model with the result (issue 55).",
        extra=hook_call_end_fired,
        prove=False,
    ),
    Law(
        "hook_mode_said",
        "hooks",
        "A hook reads the permission mode in Claude Code's names: plan whenever plan mode is on, never edits "
        "run unasked where they ask, dontAsk where an ask is a denial (issue 55).",
        extra=hook_mode_said,
        prove=False,
    ),
)


# ---------------------------------------------------------------- breaks


def _step(f: Callable[[Proc, Input, int], tuple[Proc, Action]]) -> Model:
    return replace(MODEL, step=f)


def _never_kills(p: Proc, x: Input, now: int) -> tuple[Proc, Action]:
    """SIGTERM and then no SIGKILL: the turn waits for a process that ignores SIGTERM."""
    if p.phase is Phase.TERMED and x is Input.TICK:
        return p, Action.WAIT
    return hook.step(p, x, now)


def _term_early(p: Proc, x: Input, now: int) -> tuple[Proc, Action]:
    """SIGTERM a millisecond before the timeout."""
    if p.phase is Phase.RUNNING and x is Input.TICK and now == p.started + p.timeout - 1:
        return replace(p, phase=Phase.TERMED, since=now, timed_out=True), Action.TERM
    return hook.step(p, x, now)


def _term_twice(p: Proc, x: Input, now: int) -> tuple[Proc, Action]:
    """SIGTERM again at every tick between the timeout and the SIGKILL."""
    q, act = hook.step(p, x, now)
    if p.phase is Phase.TERMED and act is Action.WAIT:
        return q, Action.TERM
    return q, act


def _kill_at_timeout(p: Proc, x: Input, now: int) -> tuple[Proc, Action]:
    """SIGKILL at the timeout, no grace for the SIGTERM."""
    q, act = hook.step(p, x, now)
    if act is Action.TERM:
        return replace(q, phase=Phase.GONE), Action.KILL
    return q, act


def _abort_waits(p: Proc, x: Input, now: int) -> tuple[Proc, Action]:
    """An abort that sends SIGTERM and waits out the grace."""
    if x is Input.ABORT and p.phase is Phase.RUNNING:
        return replace(p, phase=Phase.TERMED, since=now, aborted=True), Action.TERM
    return hook.step(p, x, now)


def _kill_after_exit(p: Proc, x: Input, now: int) -> tuple[Proc, Action]:
    """A KILL sent to a process that already exited."""
    q, act = hook.step(p, x, now)
    if x is Input.EXITED and act is Action.DONE and not p.settled:
        return q, Action.KILL
    return q, act


def _wake_forgets_timeout(p: Proc) -> int:
    """A running process woken only at its deadline: with no tick the timeout passes unseen."""
    return hook.deadline(p) if p.phase is Phase.RUNNING else p.wake


def _wake_after_late_term(p: Proc) -> int:
    """The draft's wake: a grace after the SIGTERM, past the deadline when the SIGTERM was late."""
    if p.phase is Phase.TERMED:
        return p.since + GRACE_MS
    return p.wake


def _begin_without_default(now: int, timeout_ms: int | None) -> Proc:
    """No default timeout: a hook that declares none waits for ever (here: for a day)."""
    return hook.begin(now, 86_400_000 if timeout_ms is None else timeout_ms)


def _verdict(f: Callable[[Event, Ran], Verdict]) -> Model:
    return replace(MODEL, verdict=f)


def _drops_127(e: Event, r: Ran) -> Verdict:
    """A command not found (exit 127) passes silently."""
    if r.status == 127 and not r.proc.aborted:
        return Verdict()
    return hook.verdict(e, r)


def _no_stderr(e: Event, r: Ran) -> Verdict:
    """A failure shown without its stderr."""
    return hook.verdict(e, replace(r, stderr="")) if failed(r) else hook.verdict(e, r)


def _head_of_stderr(e: Event, r: Ran) -> Verdict:
    """A failure shown with the head of its stderr, not its tail."""
    err = r.stderr.strip()
    return hook.verdict(e, replace(r, stderr=err[:STDERR_SHOWN])) if failed(r) else hook.verdict(e, r)


def _bad_json_passes(e: Event, r: Ran) -> Verdict:
    """Bad JSON read as an empty answer: no failure, and a guard passes."""
    if r.status == 0 and r.answer is None:
        return hook.verdict(e, replace(r, answer=Answer()))
    return hook.verdict(e, r)


def _timeout_unseen(e: Event, r: Ran) -> Verdict:
    """A hook that timed out after exiting 0 read as answered."""
    if r.proc.timed_out and r.status in (0, -15):
        return hook.verdict(e, replace(r, proc=replace(r.proc, timed_out=False), status=0))
    return hook.verdict(e, r)


def _twice_combined(vs: Sequence[Verdict]) -> Verdict:
    """Every failure shown twice: once in its hook's verdict and once more combined."""
    c = hook.combine(vs)
    return replace(c, failures=c.failures + tuple(f for v in vs for f in v.failures))


def _guard_failure_passes(e: Event, r: Ran) -> Verdict:
    """A guard that fails lets the call through (fails open)."""
    v = hook.verdict(e, r)
    if e in GUARDS and failed(r):
        return replace(v, kind=Kind.PASS, reason="")
    return v


def _open_ignored(e: Event, r: Ran) -> Verdict:
    """onFailure allow ignored: a guard that fails always denies."""
    return hook.verdict(e, replace(r, open_on_failure=False))


def _exit_2_passes_a_guard(e: Event, r: Ran) -> Verdict:
    """A guard's exit 2 read as nothing said."""
    if e in GUARDS and r.status == BLOCKS and not failed(r):
        return Verdict()
    return hook.verdict(e, r)


def _deny_without_cause(e: Event, r: Ran) -> Verdict:
    """A guard's failure denies, with no word of why."""
    v = hook.verdict(e, r)
    if e in GUARDS and v.kind is Kind.DENY and v.failures:
        return replace(v, reason="denied")
    return v


def _ask_beats_deny(vs: Sequence[Verdict]) -> Verdict:
    """An ask that wins over a deny in the hooks combined."""
    c = hook.combine(vs)
    if any(v.kind is Kind.ASK for v in vs):
        return replace(c, kind=Kind.ASK)
    return c


def _ask_ignored(v: Verdict) -> bool:
    """A guard's ask that asks nobody: only a deny changes anything (the finding of issue 51)."""
    return False


def _allow_beats_ask(vs: Sequence[Verdict]) -> Verdict:
    """Another hook's allow that silences a guard's ask in the hooks combined."""
    c = hook.combine(vs)
    if c.kind is Kind.ASK and any(v.kind is Kind.ALLOW for v in vs):
        return replace(c, kind=Kind.ALLOW)
    return c


def _ask_read_as_nothing(e: Event, r: Ran) -> Verdict:
    """A guard's `permissionDecision: ask` read as no answer."""
    v = hook.verdict(e, r)
    return replace(v, kind=Kind.PASS, reason="") if v.kind is Kind.ASK else v


def _last_wins(vs: Sequence[Verdict]) -> Verdict:
    """The last hook's kind wins, as if run in turn and overwritten."""
    c = hook.combine(vs)
    return replace(c, kind=vs[-1].kind) if vs else c


def _stops(f: Callable[[int, int, Verdict], tuple[int, StopNext]]) -> Model:
    return replace(MODEL, after_stop=f)


def _cap_plus_one(blocks: int, cap: int, v: Verdict) -> tuple[int, StopNext]:
    """A cap off by one: one block more goes on."""
    return hook.after_stop(blocks, cap + 1, v)


def _cap_minus_one(blocks: int, cap: int, v: Verdict) -> tuple[int, StopNext]:
    """A cap off by one: the run fails a block early."""
    return hook.after_stop(blocks, cap - 1, v)


def _not_counted(blocks: int, cap: int, v: Verdict) -> tuple[int, StopNext]:
    """Blocks not counted: the run goes on for ever."""
    b, then = hook.after_stop(blocks, cap, v)
    return (blocks, then) if then is StopNext.GO_ON else (b, then)


def _cap_ignored(blocks: int, cap: int, v: Verdict) -> tuple[int, StopNext]:
    """The cap ignored: every block goes on, counted."""
    b, then = hook.after_stop(blocks, cap, v)
    return (blocks + 1, StopNext.GO_ON) if then is StopNext.FAIL else (b, then)


def _fails_quietly(blocks: int, cap: int, v: Verdict) -> tuple[int, StopNext]:
    """Past the cap the run ends as if answered, not with the named failure."""
    b, then = hook.after_stop(blocks, cap, v)
    return (b, StopNext.END) if then is StopNext.FAIL else (b, then)


def _fires(f: Callable[[bool], Fire]) -> Model:
    return replace(MODEL, fire=f)


def _failure_as_success(error: bool) -> Event:
    """A failed call's hooks told it succeeded (the old PostToolUse for every call)."""
    return Event.POST_TOOL_USE


def _success_as_failure(error: bool) -> Event:
    return Event.POST_TOOL_USE_FAILURE if not error else Event.POST_TOOL_USE


def _failure_only_shown(e: Event, r: Ran) -> Verdict:
    """PostToolUseFailure's exit 2 shown to the person only: the model never reads it."""
    if e is Event.POST_TOOL_USE_FAILURE and r.status == BLOCKS and not r.proc.aborted:
        return Verdict(messages=(r.stderr,))
    return hook.verdict(e, r)


def _plan_unsaid(plan: bool, mode: str, policy: str) -> str:
    """Plan mode said as the mode under it."""
    return hook.permission_mode(False, mode, policy)


def _every_mode_accepts_edits(plan: bool, mode: str, policy: str) -> str:
    return "plan" if plan else "acceptEdits"


def _always_runs(recorded: bool) -> Fire:
    """A replay that runs the hook again though its answer is recorded."""
    return Fire.RUN


def _never_runs(recorded: bool) -> Fire:
    """An event that never fires: every step read as a replay."""
    return Fire.REPLAY


def _inverted(recorded: bool) -> Fire:
    return Fire.RUN if recorded else Fire.REPLAY


MUTANTS = (
    Mutant("no SIGKILL after SIGTERM (waits for ever)", "hooks", _step(_never_kills)),
    Mutant("a timeout unseen without a tick (woken only at the deadline)", "hooks",
           replace(MODEL, wake=_wake_forgets_timeout)),
    Mutant("a SIGKILL a grace after a late SIGTERM (the draft's wake)", "hooks",
           replace(MODEL, wake=_wake_after_late_term)),
    Mutant("no default timeout", "hooks", replace(MODEL, begin=_begin_without_default)),
    Mutant("SIGTERM before the timeout", "hooks", _step(_term_early)),
    Mutant("SIGTERM sent twice", "hooks", _step(_term_twice)),
    Mutant("SIGKILL at the timeout, no grace", "hooks", _step(_kill_at_timeout)),
    Mutant("an abort that waits for the grace", "hooks", _step(_abort_waits)),
    Mutant("a SIGKILL after the exit", "hooks", _step(_kill_after_exit)),
    Mutant("a failure line dropped for exit 127", "hooks", _verdict(_drops_127)),
    Mutant("a failure shown without its stderr", "hooks", _verdict(_no_stderr)),
    Mutant("a failure shown with its stderr's head", "hooks", _verdict(_head_of_stderr)),
    Mutant("bad JSON read as an empty answer", "hooks", _verdict(_bad_json_passes)),
    Mutant("a timeout read as an answer", "hooks", _verdict(_timeout_unseen)),
    Mutant("a failure shown twice by combine", "hooks", replace(MODEL, combine=_twice_combined)),
    Mutant("a guard failure that passes", "hooks", _verdict(_guard_failure_passes)),
    Mutant("onFailure allow ignored (a failing guard always denies)", "hooks", _verdict(_open_ignored)),
    Mutant("a guard's exit 2 that passes", "hooks", _verdict(_exit_2_passes_a_guard)),
    Mutant("a guard's failure denied without its cause", "hooks", _verdict(_deny_without_cause)),
    Mutant("an ask beating a deny in combine", "hooks", replace(MODEL, combine=_ask_beats_deny)),
    Mutant("the last hook's kind wins in combine", "hooks", replace(MODEL, combine=_last_wins)),
    Mutant("a guard's ask that asks nobody", "hooks", replace(MODEL, asks=_ask_ignored)),
    Mutant("another hook's allow silencing a guard's ask", "hooks", replace(MODEL, combine=_allow_beats_ask)),
    Mutant("a guard's ask read as no answer", "hooks", _verdict(_ask_read_as_nothing)),
    Mutant("a stop cap off by one (late)", "hooks", _stops(_cap_plus_one)),
    Mutant("a stop cap off by one (early)", "hooks", _stops(_cap_minus_one)),
    Mutant("stop blocks not counted", "hooks", _stops(_not_counted)),
    Mutant("the stop cap ignored", "hooks", _stops(_cap_ignored)),
    Mutant("past the stop cap, no named failure", "hooks", _stops(_fails_quietly)),
    Mutant("fire always RUN (a replay runs the hook again)", "hooks", _fires(_always_runs)),
    Mutant("fire never RUN (an event that never fires)", "hooks", _fires(_never_runs)),
    Mutant("fire inverted", "hooks", _fires(_inverted)),
    Mutant("a failed call fires PostToolUse", "hooks", replace(MODEL, after_tool=_failure_as_success)),
    Mutant("the ends of calls swapped", "hooks", replace(MODEL, after_tool=_success_as_failure)),
    Mutant("PostToolUseFailure's exit 2 never reaches the model", "hooks", _verdict(_failure_only_shown)),
    Mutant("plan mode said as the mode under it", "hooks", replace(MODEL, mode=_plan_unsaid)),
    Mutant("every mode said to accept edits", "hooks", replace(MODEL, mode=_every_mode_accepts_edits)),
)  # fmt: skip


# ---------------------------------------------------------------- the area


def proof_cases() -> list[tuple[dict[str, Enum], dict[str, Enum]]]:
    return []


def cfgs() -> Iterator[HCfg]:
    for begin, timeout in ((0, None), (0, 1), (5, 3), (0, -1)):
        yield HCfg(Track.PROC, start=begin, timeout=timeout)
    for event in Event:
        yield HCfg(Track.VERDICT, event=event, width=3 if event in (Event.PRE_TOOL_USE, Event.STOP) else 2)
    for cap in range(5):
        yield HCfg(Track.STOP, cap=cap)
    for steps, crashes in ((1, 2), (2, 2), (3, 1)):
        yield HCfg(Track.FIRE, steps=steps, crashes=crashes)


def sample_cfg(seed: int) -> HCfg:
    r = random.Random(seed)
    track = list(Track)[seed % 4]
    if track is Track.PROC:
        timeout = r.choice((None, 0, r.randint(1, 100_000)))
        jumps = tuple(sorted({r.randint(1, 3000) for _ in range(3)}))
        return HCfg(track, start=r.randint(0, 10**6), timeout=timeout, jumps=jumps)
    if track is Track.VERDICT:
        return HCfg(track, event=r.choice(list(Event)), width=24, seed=seed)
    if track is Track.STOP:
        return HCfg(track, cap=r.randint(0, 40))
    return HCfg(track, steps=r.randint(1, 6), crashes=r.randint(0, 5))


MEANT = {
    "no SIGKILL after SIGTERM (waits for ever)": "hook_ends",
    "a timeout unseen without a tick (woken only at the deadline)": "hook_ends",
    "a SIGKILL a grace after a late SIGTERM (the draft's wake)": "hook_ends",
    "no default timeout": "hook_ends",
    "SIGTERM before the timeout": "hook_ends",
    "SIGTERM sent twice": "hook_ends",
    "SIGKILL at the timeout, no grace": "hook_ends",
    "an abort that waits for the grace": "hook_ends",
    "a SIGKILL after the exit": "hook_ends",
    "a failure line dropped for exit 127": "hook_failure_shown",
    "a failure shown without its stderr": "hook_failure_shown",
    "a failure shown with its stderr's head": "hook_failure_shown",
    "bad JSON read as an empty answer": "hook_failure_shown",
    "a timeout read as an answer": "hook_failure_shown",
    "a failure shown twice by combine": "hook_failure_shown",
    "a guard failure that passes": "hook_guard_fails_closed",
    "onFailure allow ignored (a failing guard always denies)": "hook_guard_fails_closed",
    "a guard's exit 2 that passes": "hook_guard_fails_closed",
    "a guard's failure denied without its cause": "hook_guard_fails_closed",
    "an ask beating a deny in combine": "hook_guard_fails_closed",
    "the last hook's kind wins in combine": "hook_guard_fails_closed",
    "a guard's ask that asks nobody": "hook_guard_ask_asks",
    "another hook's allow silencing a guard's ask": "hook_guard_fails_closed",
    "a guard's ask read as no answer": "hook_guard_ask_asks",
    "a stop cap off by one (late)": "stop_hook_bounded",
    "a stop cap off by one (early)": "stop_hook_bounded",
    "stop blocks not counted": "stop_hook_bounded",
    "the stop cap ignored": "stop_hook_bounded",
    "past the stop cap, no named failure": "stop_hook_bounded",
    "fire always RUN (a replay runs the hook again)": "hook_fires_once",
    "fire never RUN (an event that never fires)": "hook_fires_once",
    "fire inverted": "hook_fires_once",
    "a failed call fires PostToolUse": "hook_call_end_fired",
    "the ends of calls swapped": "hook_call_end_fired",
    "PostToolUseFailure's exit 2 never reaches the model": "hook_call_end_fired",
    "plan mode said as the mode under it": "hook_mode_said",
    "every mode said to accept edits": "hook_mode_said",
}
"""Each break and the law meant to kill it: `eukhe laws` fails one killed first by another."""

AREA = Area(
    name="hook",
    model=MODEL,
    cfg_type=HCfg,
    state_type=PState,
    input_type=PIn,
    proof_cases=proof_cases,
    valid=valid,
    cfg_valid=cfg_valid,
    start=start,
    next=nxt,
    inputs=inputs,
    cfgs=cfgs,
    bounds=(
        "a hook's process started at 0 or 5 ms with timeouts none, -1, 1, 3 ms; "
        f"{len(RANS)} ways a hook ends at every event, combined 2 at a time (3 at PreToolUse and Stop); "
        "Stop caps 0..4; runs of 1, 2, 3 steps with 2, 2, 1 crashes"
    ),
    depth=10,
    sample_cfg=sample_cfg,
    laws=LAWS,
    mutants=MUTANTS,
    meant=MEANT,
    cached=cached,
)
