"""H4: every run ends.

A run is one user turn: model requests, deferred-job polls, compactions and
tool rounds, until it ends answered, aborted or failed. This module is the
model of that loop and the decisions the harness asks of it; the harness
keeps no copy of any rule written here.

The run moves through phases (prepare, compact, call, poll, tools) and every
limit counts down: rounds left before the cap, transient retries and notes
left in this generation, polls left for the current deferred job. The
measure `measure` falls by at least one on every input a live phase accepts
and starts at `bound(cfg)`, so a run ends after at most `bound(cfg)` inputs
(law `run_ends`).

Requests sit beside the phases (H4.7): a request is the logged-context
version and the note attempt it carries (0: no note). A noted reply cuts the
request it answered and moves the note to the next attempt, so no request is
ever sent twice; other errors resend the same request.

Pure: standard library only, frozen data, total functions. An input that
the current phase does not accept leaves the run unchanged (see `accepts`).
"""

from __future__ import annotations

from dataclasses import dataclass

from eukhe.rules.states import Choice, replace

MAX_NOTES = 8
"""Noted retries per generation (H4.7); not `retry.maxRetries`."""

ABORT_GRACE = 3.0
"""Seconds a phase handler that ignores the run's cancel is given before it is dropped (H4.6):
every wait's losing work gets as long (`waits.race`), then is left."""

DEFAULT_MAX_TOOL_ROUNDS = 250
"""`maxToolRounds` when unset or 0 (H4.2)."""


def _nat(n: int) -> int:
    return n if n > 0 else 0


def round_cap(max_tool_rounds: int) -> int:
    """The round cap of the setting `maxToolRounds`: 0 (or less) means the default."""
    return DEFAULT_MAX_TOOL_ROUNDS if max_tool_rounds <= 0 else max_tool_rounds


@dataclass(frozen=True)
class Cfg:
    """The limits of one run, as `limits` makes them (see `cfg_valid`).

    cap: round cap: `max(cap, 1)` tool rounds are made at most. (The setting's 0 means
        the default; `limits` maps it before the model sees it.)
    retries: transient retries per generation (0 when the retry policy is off).
    notes: noted retries per generation (`MAX_NOTES`).
    polls: polls of one deferred job after the request that started it.
    """

    cap: int
    retries: int
    notes: int
    polls: int


def cfg_valid(cfg: Cfg) -> bool:
    """Limits the model runs under: no negative count (a cap of 0 allows one round)."""
    return (cfg.cap >= 0) & (cfg.retries >= 0) & (cfg.notes >= 0) & (cfg.polls >= 0)


def limits(max_tool_rounds: int, max_retries: int, retry_enabled: bool, polls: int) -> Cfg:
    """The model's limits from the settings: notes ignore the retry policy (H4.7)."""
    return Cfg(
        cap=round_cap(max_tool_rounds),
        retries=_nat(max_retries) if retry_enabled else 0,
        notes=MAX_NOTES,
        polls=_nat(polls),
    )


def bound(cfg: Cfg) -> int:
    """Inputs after which every run has ended: max(cap, 1)·(2 + (retries + notes + 2)·(polls + 2))."""
    return max(cfg.cap, 1) * (2 + (_nat(cfg.retries) + _nat(cfg.notes) + 2) * (_nat(cfg.polls) + 2))


class Phase(Choice):
    PREPARE = "prepare"  # before_request hooks, then a request (or a threshold compaction)
    COMPACT = "compact"  # threshold compaction before the request
    OVERFLOW = "overflow"  # compaction after the provider said the context overflows
    CALL = "call"  # a request is out; its reply is awaited
    POLL = "poll"  # a deferred job is polled
    TOOLS = "tools"  # a tool round runs
    ENDED = "ended"


class End(Choice):
    LIVE = "live"
    ANSWERED = "answered"
    ABORTED = "aborted"
    RUN_LIMIT = "run_limit"  # the round cap (H4.2)
    MODEL_ERROR = "model_error"  # notes or retries spent, a failing error, a recovery at its cap
    NOT_READY = "not_ready"  # the deferred job was not ready by its deadline (H4.4)
    HOOK_FAILED = "hook_failed"  # a before_request hook failed: nothing was sent (H6.1)
    COMPACTION_FAILED = "compaction_failed"
    STOPPED = "stopped"  # a control stopped the run after a tool round (not counted)
    CONTINUED = "continued"  # a queued continuation took over, with its own count


ERROR_CODES: dict[End, str] = {
    End.RUN_LIMIT: "run_limit",
    End.MODEL_ERROR: "model_error",
    End.NOT_READY: "model_error",
    End.HOOK_FAILED: "model_error",
    End.COMPACTION_FAILED: "model_error",
}
"""The user-facing error code of each failed end."""


class Kind(Choice):
    """What happened: the input of one step."""

    PREPARED = "prepared"  # hooks ran; `compact`: the context passed the blocking threshold
    HOOK_FAILED = "hook_failed"
    COMPACTED = "compacted"  # compaction ended; `entry`: it logged an entry; `failed`
    ANSWER = "answer"  # a reply with text and no tool call
    CALLS = "calls"  # a reply with tool calls, whatever its text and stop reason
    NO_ANSWER = "no_answer"  # a turn-ending reply with no text and no tool call
    ERROR = "error"  # `retryable`, `noted`
    DEFERRED = "deferred"  # the answer is a job still running
    OVERFLOW = "overflow"  # the provider said the context is too long
    POLL_FAILED = "poll_failed"  # a poll of the job failed; `retryable`, `late` (past the deadline)
    ROUND_END = "round_end"  # the tool round finished; `stop`: a control stops the run
    # uncounted (`answered`: with the round's answer, a plan nobody here can approve);
    # `reset`: a continuation is queued (it takes over after the count)
    ABORT = "abort"


REPLIES = frozenset({Kind.ANSWER, Kind.CALLS, Kind.NO_ANSWER, Kind.ERROR, Kind.DEFERRED, Kind.OVERFLOW})


@dataclass(frozen=True)
class Input:
    kind: Kind
    retryable: bool = False
    noted: bool = False
    compact: bool = False
    entry: bool = False
    failed: bool = False
    late: bool = False
    stop: bool = False
    reset: bool = False
    answered: bool = False


ABORT = Input(Kind.ABORT)


@dataclass(frozen=True)
class Run:
    """One run's state; the counts left are this generation's.

    rounds: rounds left before the cap fails the run (counting the one under way).
    retries, notes: transient retries and notes left in this generation.
    polls: polls left for the current deferred job (full when none runs).
    failures: failed polls in a row (kept by the poll checkpoint).
    compacted: this round has compacted once already.
    version: logged-context version; attempt: note attempt of the request (0: none).
    cut_version, cut_attempt: the last request cut by a noted reply (-1: none).
    """

    phase: Phase
    end: End
    rounds: int
    retries: int
    notes: int
    polls: int
    failures: int
    compacted: bool
    version: int
    attempt: int
    cut_version: int
    cut_attempt: int

    @property
    def request(self) -> tuple[int, int]:
        """The request this run sends (or sent) from its phase: context version and note attempt."""
        return (self.version, self.attempt)

    @property
    def live(self) -> bool:
        return self.end is End.LIVE


def start(cfg: Cfg) -> Run:
    return Run(
        phase=Phase.PREPARE,
        end=End.LIVE,
        rounds=cfg.cap if cfg.cap >= 1 else 1,
        retries=cfg.retries,
        notes=cfg.notes,
        polls=cfg.polls,
        failures=0,
        compacted=False,
        version=0,
        attempt=0,
        cut_version=-1,
        cut_attempt=-1,
    )


_ACCEPTS: dict[Phase, frozenset[Kind]] = {
    Phase.PREPARE: frozenset({Kind.PREPARED, Kind.HOOK_FAILED, Kind.ABORT}),
    Phase.COMPACT: frozenset({Kind.COMPACTED, Kind.ABORT}),
    Phase.OVERFLOW: frozenset({Kind.COMPACTED, Kind.ABORT}),
    Phase.CALL: REPLIES | {Kind.ABORT},
    Phase.POLL: REPLIES | {Kind.POLL_FAILED, Kind.ABORT},
    Phase.TOOLS: frozenset({Kind.ROUND_END, Kind.ABORT}),
    Phase.ENDED: frozenset(),
}


def accepts(phase: Phase, kind: Kind) -> bool:
    """Whether a phase takes this input; any other input leaves the run unchanged."""
    return kind in _ACCEPTS[phase]


def ended_reply(has_calls: bool, has_text: bool) -> Kind:
    """`Ended.reply`: a turn-ending message is its calls if any (any stop reason), else
    its text, else no answer (a noted error). Whitespace-only text is no text."""
    if has_calls:
        return Kind.CALLS
    if has_text:
        return Kind.ANSWER
    return Kind.NO_ANSWER


def _end(s: Run, end: End) -> Run:
    return replace(s, phase=Phase.ENDED, end=end)


def _send(s: Run) -> Run:
    return replace(s, phase=Phase.CALL)


def before_request(cfg: Cfg, s: Run, x: Input) -> Run:
    """prepare: hooks ran (or failed); send, or compact first past the threshold."""
    if x.kind is Kind.HOOK_FAILED:
        return _end(s, End.HOOK_FAILED)
    if x.compact and not s.compacted:
        return replace(s, phase=Phase.COMPACT, compacted=True)
    return _send(s)


def after_compaction(cfg: Cfg, s: Run, x: Input) -> Run:
    """compaction end: a threshold compaction fails the run only when it failed; an
    overflow compaction needs its entry. An entry is a new logged context; the note stays."""
    version = s.version + 1 if x.entry and not x.failed else s.version
    if x.failed or (s.phase is Phase.OVERFLOW and not x.entry):
        return _end(replace(s, version=version), End.COMPACTION_FAILED)
    return _send(replace(s, version=version))


def _retry(cfg: Cfg, s: Run) -> Run:
    """A new attempt of this generation: back to prepare, the deferred job forgotten."""
    return replace(s, phase=Phase.PREPARE, polls=cfg.polls, failures=0)


def after_reply(cfg: Cfg, s: Run, x: Input) -> Run:
    """reply: answer, tool round, noted retry (spends a note, cuts the request),
    transient retry (spends a retry, same request), deferred job, or the end."""
    k = x.kind
    if k is Kind.ANSWER:
        return _end(s, End.ANSWERED)
    if k is Kind.CALLS:
        return replace(s, phase=Phase.TOOLS, polls=cfg.polls, failures=0)
    if k is Kind.DEFERRED:
        if s.polls <= 0:
            return _end(s, End.NOT_READY)
        return replace(s, phase=Phase.POLL, polls=s.polls - 1, failures=0)
    if k is Kind.OVERFLOW:
        if s.compacted:
            return _end(s, End.COMPACTION_FAILED)
        return replace(s, phase=Phase.OVERFLOW, compacted=True, polls=cfg.polls, failures=0)
    if k is Kind.NO_ANSWER or x.noted:
        if s.notes <= 0:
            return _end(s, End.MODEL_ERROR)
        cut = replace(s, notes=s.notes - 1, cut_version=s.version, cut_attempt=s.attempt)
        return _retry(cfg, replace(cut, attempt=s.attempt + 1))
    if x.retryable and s.retries > 0:
        return _retry(cfg, replace(s, retries=s.retries - 1))
    return _end(s, End.MODEL_ERROR)


def poll_failed(cfg: Cfg, s: Run, x: Input) -> Run:
    """A failed poll never resends while the job can run: a retryable failure before
    the deadline polls the same job again, spending a retry; otherwise the job is
    cancelled and the run fails."""
    if x.late:
        return _end(s, End.NOT_READY)
    if x.retryable and s.retries > 0:
        return replace(s, retries=s.retries - 1, failures=s.failures + 1)
    return _end(s, End.MODEL_ERROR)


def round_end(cfg: Cfg, s: Run, x: Input) -> Run:
    """Rounds::finish and RoundEnd::reset: a control stop ends the run uncounted (answered
    when the round gave the run's answer: a plan nobody here can approve); otherwise the
    round counts and at the cap the run fails, even with a continuation queued (cap
    first); a queued continuation then takes over with its own count.
    Otherwise a new generation: the round's calls and results are logged, budgets
    are full, no note."""
    if x.stop:
        return _end(s, End.ANSWERED if x.answered else End.STOPPED)
    if s.rounds <= 1:
        return _end(s, End.RUN_LIMIT)
    if x.reset:
        return _end(replace(s, version=s.version + 1), End.CONTINUED)
    return replace(
        start(cfg),
        rounds=s.rounds - 1,
        version=s.version + 1,
        cut_version=s.cut_version,
        cut_attempt=s.cut_attempt,
    )


def takes_steers(cfg: Cfg, s: Run, x: Input) -> bool:
    """Whether the steers the user queued while the run worked enter its logged context
    with this input: only at a counted round end that leaves the run going (live, or a
    queued continuation taking over), when every call of the round has its result.
    Anywhere else they wait for the next round end; one that finds the run ended is
    the prompt of the session's next run (a follow-up), never dropped."""
    if not (s.live and s.phase is Phase.TOOLS and x.kind is Kind.ROUND_END) or x.stop:
        return False
    return s.rounds > 1


class Entry(Choice):
    """A message of a tool round as it enters the logged context."""

    RESULT = "result"  # one call's result
    USER = "user"  # a user message that came while the round ran: a steer, a child's report


def round_log(calls: int, users: int) -> tuple[Entry, ...]:
    """The order in which a round's messages follow the reply that made its calls: each
    call's result, in call order, then the user messages that came while it ran (the
    steers `takes_steers` lets in, the children's reports). No user message ever lands
    between a call and its result."""
    return (Entry.RESULT,) * _nat(calls) + (Entry.USER,) * _nat(users)


def step(cfg: Cfg, s: Run, x: Input) -> Run:
    """The run after one input. Ended runs never change; abort ends any live phase."""
    if s.end is not End.LIVE or not accepts(s.phase, x.kind):
        return s
    if x.kind is Kind.ABORT:
        return _end(s, End.ABORTED)
    if s.phase is Phase.PREPARE:
        return before_request(cfg, s, x)
    if s.phase is Phase.COMPACT or s.phase is Phase.OVERFLOW:
        return after_compaction(cfg, s, x)
    if s.phase is Phase.TOOLS:
        return round_end(cfg, s, x)
    if x.kind is Kind.POLL_FAILED:
        return poll_failed(cfg, s, x)
    return after_reply(cfg, s, x)


def measure(cfg: Cfg, s: Run) -> int:
    """M: rounds left, then this round's unused compaction, then retries + notes left,
    then the stage of the attempt (polls left), as one mixed-radix number; 0 once ended."""
    if s.end is not End.LIVE:
        return 0
    p = cfg.polls
    width = 2 + (cfg.retries + cfg.notes + 2) * (p + 2)
    return (s.rounds - 1) * width + _inner(p, s)


def _inner(p: int, s: Run) -> int:
    if s.phase is Phase.TOOLS:
        return 1
    unused = 0 if s.compacted else p + 3
    if s.phase is Phase.PREPARE:
        stage = p + 2
    elif s.phase is Phase.CALL:
        stage = p + 1
    elif s.phase is Phase.POLL:
        stage = s.polls + 1
    else:  # a compaction
        stage = p + 3
    return 1 + unused + (s.retries + s.notes) * (p + 2) + stage


def valid(cfg: Cfg, s: Run) -> bool:
    """The states a run under valid limits can be in (the model's inductive invariant).

    Conjunctions use `&`, not `and`: each is then one branch for the prover."""
    p = cfg.polls
    counts = (
        (s.rounds >= 1)
        & ((s.rounds <= cfg.cap) | (s.rounds == 1))
        & (s.retries >= 0)
        & (s.retries <= cfg.retries)
        & (s.notes >= 0)
        & (s.notes <= cfg.notes)
        & (s.failures >= 0)
        & (s.version >= 0)
        & (s.attempt >= 0)
    )
    if s.phase is Phase.ENDED:
        polls = (s.polls >= 0) & (s.polls <= p)
    elif s.phase is Phase.POLL:
        polls = (s.polls >= 0) & (s.polls < p)
    else:
        polls = s.polls == p
    # every cut request is older than the one this run sends next
    cut = ((s.cut_version < s.version) | ((s.cut_version == s.version) & (s.cut_attempt < s.attempt))) & (
        (s.cut_version >= 0) | ((s.cut_version == -1) & (s.cut_attempt == -1))
    )
    compacting = s.phase is Phase.COMPACT or s.phase is Phase.OVERFLOW
    shape = ((s.phase is Phase.ENDED) == (s.end is not End.LIVE)) & (s.compacted or not compacting)
    return counts & polls & cut & shape
