"""H1: a compactor call always ends with a line that fits; and the settle measure of H2.2.

A compactor call builds one chat-memory line: the summary of one message (a
level-0 node) or the merge of two built lines. This module decides everything
about it; the runtime moves bytes, keeps time and the texts, and asks.

One call (`line_open`, `line_step`). The runtime opens a line with the size of
the call's input in UTF-8 bytes and sends the first model request. For every
reply it sends only a `Reply`: its size in UTF-8 bytes (`read_reply` makes it
from the reply's text), or empty (no text, or thinking only), or an error (the
provider failed, or the model call passed `CALL_DEADLINE`, which counts the
slot wait and every preemption by a session request). The line answers:

- a reply of 1 to NODE bytes: the line is that reply (`End.FIT`): the first
  reply read that fits (H1.3);
- an over-long reply: a follow-up request in the same conversation, where
  the runtime shows where the line must end; but the tries end, and the line
  is the shortest reply cut to NODE bytes (`End.BEST`), when a follow-up is
  not shorter than the best reply so far (H1.2) or `TRIES` calls were made
  (H1.1). Among replies of equal length the first stays the best;
- an empty reply: a try, never a failure; the tries end and the line is the
  input cut to NODE bytes (`End.INPUT`, H1.4), whatever came before;
- an error: the call failed (`End.FAILED`, H1.5).

`ended` names the line's text from the texts the runtime kept; `cut` cuts at
a character boundary (a cut loses at most WIDEST - 1 bytes, so with NODE ≥ 4
the cut of a non-empty text is 1 to NODE bytes: `cut_bounds`).

The node (`pend_start`, `pend_after`). A node stays pending across calls;
`Pend.left` counts the failures it may still take before the last one: a
fresh node has FAILURES - 1 left, and the failure that finds none left builds
the node from the failed call's input cut to NODE bytes (`Act.CUT`: nothing is
read again, so only the save can fail). A call ends in one outcome:

- BUILT: its line was saved (counts);
- FAILED: the call failed (counts; the node waits RETRY before its next call);
- DISK: the input read, the line save or the cut save failed (counts nothing;
  the node stays pending as it was);
- STOPPED: a waiting turn stopped the call (counts nothing; the node is
  requeued with its failures left).

An outcome is what the runtime commits: it asks `pend_after(p, FAILED)` and,
when the answer is CUT, saves the input cut and commits that answer only once
the save succeeded; a failed cut save is DISK (`pend_after(p, DISK)` is p).
Likewise BUILT is committed only once the line is saved.

The settle measure (H2.2). A view line is Made (built) or Owed{n} (pending,
n failures left); measure = Σ (n + 1) over the pending lines (`measure`). The
spec writes "Σ n + 1 over pending" and "wait start measure = FAILURES ×
unbuilt view lines": both hold when n + 1 is summed per line and a fresh
line owes n = FAILURES - 1, which is how `Pend` counts (the (n+1)-th failure
builds it, law `fail_cap_builds`). A line that failed before the wait began
owes less, so a wait's start measure is at most FAILURES × unbuilt lines,
and equal to it when none of them has failed yet. Every counted outcome on a
pending line lowers the measure by at least one; disk failures and stops
leave it; so at most the start measure counted outcomes settle the view.

Pure: standard library only, frozen data, total functions. A malformed input
(a negative size) gets an explicit outcome: a negative input fails the call
at once, a reply of negative size fails the call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from eukhe.rules.states import Choice, replace

NODE = 512
"""Bytes (UTF-8) a line may have at most."""
TRIES = 5
"""Model calls of one compactor call at most (H1.1)."""
FAILURES = 3
"""Failed calls after which a node is built from its input cut to NODE bytes (H1.5)."""
CALL_DEADLINE = 600_000
"""Milliseconds one model call may take, slot wait and preemptions included; past it the call fails."""
RETRY = 10_000
"""Milliseconds a node waits after a failed call (or a disk failure) before its next call."""
WIDEST = 4
"""Bytes of the widest character in UTF-8: a cut at a character boundary loses fewer."""


@dataclass(frozen=True)
class Cfg:
    """The limits: model calls per compactor call, line bytes, failures per node."""

    tries: int
    node: int
    failures: int


LIMITS = Cfg(tries=TRIES, node=NODE, failures=FAILURES)


def cfg_valid(cfg: Cfg) -> bool:
    """Limits the model runs under: no negative count, at least one failure."""
    return (cfg.tries >= 0) & (cfg.node >= 0) & (cfg.failures >= 1)


# ---------------------------------------------------------------- text


def nbytes(text: str) -> int:
    """The size of a text in UTF-8 bytes (a lone surrogate counts as the 3 bytes it takes)."""
    return len(text.encode("utf-8", "surrogatepass"))


def cut(text: str, limit: int) -> str:
    """The longest prefix of `text` of at most `limit` UTF-8 bytes that never splits a
    character: `text` itself when it fits, "" for a limit of 0 or less."""
    if limit <= 0:
        return ""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    end = limit
    while end > 0 and (data[end] & 0xC0) == 0x80:  # data[end] continues a character begun before it
        end -= 1
    return data[:end].decode("utf-8", "surrogatepass")


def cut_bounds(size: int, limit: int) -> tuple[int, int]:
    """The least and most bytes `cut` leaves of a text of `size` bytes: all of it when it
    fits, else `limit` less at most WIDEST - 1 bytes of a character it did not split."""
    if limit <= 0:
        return (0, 0)
    if size <= limit:
        n = size if size > 0 else 0
        return (n, n)
    low = limit - (WIDEST - 1)
    return (low if low > 0 else 0, limit)


def kept(text: str) -> str:
    """A reply's text as a line keeps it: without surrounding whitespace."""
    return text.strip()


# ---------------------------------------------------------------- one call


class Kind(Choice):
    """What one reply is."""

    TEXT = "text"  # text of `size` bytes (as `kept` keeps it)
    EMPTY = "empty"  # no text: empty, whitespace or thinking only
    ERROR = "error"  # the provider failed, or the call passed CALL_DEADLINE


@dataclass(frozen=True)
class Reply:
    kind: Kind
    size: int = 0


EMPTY = Reply(Kind.EMPTY)
ERROR = Reply(Kind.ERROR)


def read_reply(text: str) -> Reply:
    """The reply the line reads from a reply's text blocks (thinking is never text)."""
    k = kept(text)
    return Reply(Kind.TEXT, nbytes(k)) if k else EMPTY


class End(Choice):
    LIVE = "live"  # a request is out; its reply is awaited
    FIT = "fit"  # the line is reply `chosen` (1 to NODE bytes)
    BEST = "best"  # the line is reply `chosen`, the shortest, cut to NODE bytes
    INPUT = "input"  # the line is the input cut to NODE bytes
    FAILED = "failed"  # the call failed: no line


@dataclass(frozen=True)
class Line:
    """One compactor call.

    input: bytes of the call's input; calls: model requests sent (the one awaiting
    its reply included); best, best_call: bytes of the shortest over-long reply read
    and the call that gave it (0, 0: none); chosen: the call whose reply the line is
    (0: the input, or no line); size: bytes of the text the line is cut from.
    """

    input: int
    calls: int
    best: int
    best_call: int
    chosen: int
    size: int
    end: End

    @property
    def live(self) -> bool:
        return self.end is End.LIVE


def _done(line: Line, end: End, chosen: int, size: int) -> Line:
    return replace(line, end=end, chosen=chosen, size=size)


def line_open(cfg: Cfg, input_size: int) -> Line:
    """A new call for an input of `input_size` bytes; the runtime sends its first
    request while the line is live. With no tries allowed the line is the input cut
    at once; a negative size is malformed and fails the call."""
    line = Line(input_size, 0, 0, 0, 0, 0, End.LIVE)
    if input_size < 0:
        return _done(line, End.FAILED, 0, 0)
    if cfg.tries <= 0:
        return _done(line, End.INPUT, 0, input_size)
    return replace(line, calls=1)


def line_step(cfg: Cfg, line: Line, reply: Reply) -> Line:
    """The call after the reply to its last request. An ended line never changes.
    Live after the step: the runtime sends the follow-up request (call `calls`)."""
    if line.end is not End.LIVE:
        return line
    if reply.kind is Kind.ERROR or (reply.kind is Kind.TEXT and reply.size < 0):
        return _done(line, End.FAILED, 0, 0)
    if reply.kind is Kind.EMPTY or reply.size == 0:
        return _done(line, End.INPUT, 0, line.input)
    s = reply.size
    if s <= cfg.node:
        return _done(line, End.FIT, line.calls, s)
    if line.best_call >= 1 and s >= line.best:
        return _done(line, End.BEST, line.best_call, line.best)
    shorter = replace(line, best=s, best_call=line.calls)
    if line.calls >= cfg.tries:
        return _done(shorter, End.BEST, line.calls, s)
    return replace(shorter, calls=line.calls + 1)


def line_run(cfg: Cfg, input_size: int, replies: Sequence[Reply]) -> Line:
    """The call over a list of replies, one a request, until it ends (later ones unread)."""
    line = line_open(cfg, input_size)
    for r in replies:
        if line.end is not End.LIVE:
            break
        line = line_step(cfg, line, r)
    return line


def ended(cfg: Cfg, line: Line, input_text: str, replies: Sequence[str]) -> str | None:
    """The text of an ended line, from the call's input and the replies as they came
    (replies[k - 1] answered call k): the chosen reply (kept), or the input, cut to
    NODE bytes (a reply that fits is whole: its cut, should its size have been sent
    wrong, still fits). None when there is no line (live, failed, or the reply is
    missing)."""
    if line.end is End.INPUT:
        return cut(input_text, cfg.node)
    if line.end is End.FIT or line.end is End.BEST:
        if not 1 <= line.chosen <= len(replies):
            return None
        return cut(kept(replies[line.chosen - 1]), cfg.node)
    return None


def line_bytes(cfg: Cfg, line: Line) -> tuple[int, int]:
    """The least and most bytes the ended line has (0, 0 for no line): a reply that fits
    whole, the best reply or the input as `cut` leaves them."""
    if line.end is End.LIVE or line.end is End.FAILED:
        return (0, 0)
    if line.end is End.FIT:
        return (line.size, line.size)
    return cut_bounds(line.size, cfg.node)


def line_valid(cfg: Cfg, line: Line) -> bool:
    """The states a call under valid limits can be in (the model's inductive invariant)."""
    e = line.end
    counts = (line.calls >= 0) & (line.calls <= cfg.tries) & (line.best >= 0) & (line.best_call >= 0)
    # a best reply is over-long and came from the request before the one out
    best = ((line.best_call == 0) & (line.best == 0)) | (
        (line.best_call >= 1) & (line.best > cfg.node) & (line.best_call <= line.calls)
    )
    if e is End.LIVE:
        shape = (
            (line.input >= 0)
            & (line.calls >= 1)
            & (line.chosen == 0)
            & (line.size == 0)
            & (((line.calls == 1) & (line.best_call == 0)) | (line.best_call == line.calls - 1))
        )
    elif e is End.FIT:
        shape = (line.chosen == line.calls) & (line.chosen >= 1) & (line.size >= 1) & (line.size <= cfg.node)
    elif e is End.BEST:
        shape = (line.chosen == line.best_call) & (line.chosen >= 1) & (line.size == line.best)
    elif e is End.INPUT:
        shape = (line.chosen == 0) & (line.size == line.input) & (line.input >= 0)
    else:
        shape = (line.chosen == 0) & (line.size == 0)
    return counts & best & shape


# ---------------------------------------------------------------- the node


class Outcome(Choice):
    """How one call of a pending node ended, as the runtime commits it."""

    BUILT = "built"  # its line was saved (counts)
    FAILED = "failed"  # the call failed (counts)
    DISK = "disk"  # input read, line save or cut save failed (counts nothing)
    STOPPED = "stopped"  # a waiting turn stopped it (counts nothing)


COUNTED = (Outcome.BUILT, Outcome.FAILED)


def counted(o: Outcome) -> bool:
    """Outcomes that count towards settling (H2.2): a saved line, a failed call."""
    return o is Outcome.BUILT or o is Outcome.FAILED


def outcome(line: Line) -> Outcome | None:
    """The outcome an ended call commits once its line is saved (a failed save is DISK);
    None while it is live."""
    if line.end is End.LIVE:
        return None
    return Outcome.FAILED if line.end is End.FAILED else Outcome.BUILT


@dataclass(frozen=True)
class Pend:
    """A node's pending state: made (built), or owed with `left` failures left before the
    failure that builds it from its input cut."""

    made: bool
    left: int


MADE = Pend(True, 0)


def pend_start(cfg: Cfg) -> Pend:
    """A node not built yet that has never failed: FAILURES - 1 failures left."""
    f = cfg.failures if cfg.failures >= 1 else 1
    return Pend(False, f - 1)


class Act(Choice):
    """What the runtime does after an outcome."""

    DONE = "done"  # the node is built
    CUT = "cut"  # save the input cut to NODE bytes as the node's line (the last failure)
    RETRY = "retry"  # wait RETRY, then the node may be started again
    REQUEUE = "requeue"  # the node may be started again at once
    IGNORED = "ignored"  # the node was built already: a late outcome changes nothing


@dataclass(frozen=True)
class After:
    pend: Pend
    act: Act


def pend_after(cfg: Cfg, p: Pend, o: Outcome) -> After:
    """`Pend.after`: the node after one outcome of a call."""
    if p.made:
        return After(p, Act.IGNORED)
    if o is Outcome.BUILT:
        return After(MADE, Act.DONE)
    if o is Outcome.FAILED:
        if p.left <= 0:
            return After(MADE, Act.CUT)
        return After(Pend(False, p.left - 1), Act.RETRY)
    if o is Outcome.DISK:
        return After(p, Act.RETRY)
    return After(p, Act.REQUEUE)


def pend_run(cfg: Cfg, p: Pend, outcomes: Sequence[Outcome]) -> Pend:
    """`Pend.run`: the node after a sequence of outcomes."""
    for o in outcomes:
        p = pend_after(cfg, p, o).pend
    return p


def pend_valid(cfg: Cfg, p: Pend) -> bool:
    return (p.left >= 0) & (p.left <= cfg.failures - 1) & ((not p.made) | (p.left == 0))


# ---------------------------------------------------------------- settling (H2.2)


def owed(p: Pend) -> int:
    """What one view line owes the measure: n + 1 while pending with n failures left."""
    if p.made:
        return 0
    return (p.left if p.left > 0 else 0) + 1


def measure(view: Sequence[Pend]) -> int:
    """The settle measure of a view's lines: Σ (n + 1) over the pending ones."""
    return sum(owed(p) for p in view)


def settled(view: Sequence[Pend]) -> bool:
    return all(p.made for p in view)


def settle_hit(cfg: Cfg, view: Sequence[Pend], k: int, o: Outcome) -> tuple[Pend, ...]:
    """The view's lines after outcome `o` of a call of line k (no line k: unchanged)."""
    lines = tuple(view)
    if not 0 <= k < len(lines):
        return lines
    return (*lines[:k], pend_after(cfg, lines[k], o).pend, *lines[k + 1 :])


# ---------------------------------------------------------------- lines without a model


def labelled(kind: str, text: str) -> str:
    """A message as a compactor's input: its kind, then its text (`user: ...`)."""
    return f"{kind}: {text}"


def free_line(cfg: Cfg, text: str) -> str | None:
    """A node's line when it needs no model call: its input itself, if it fits (a short
    message is its own line; two children that fit together are joined by a newline);
    else None."""
    return text if 1 <= nbytes(text) <= cfg.node else None


def joined(left: str, right: str) -> str:
    """A merge's input: its two children's lines, one a line."""
    return f"{left}\n{right}"
