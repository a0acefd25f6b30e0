"""The laws of instruction files a run's model changed (`rules.instructed`, issue 51):
whatever runs, models and the person do to a folder's `AGENTS.md` and `CLAUDE.md`, a
session never loads a model's change unseen: each file a model changed and no person has
made or answered for since is said at the next session's start, and asked about where a
person answers; a file the person made, or answered for, is not said again; what is said
names the text the file holds and a run whose family (it, or its parent and their
subagents) was at work when a model wrote it; and a record the person made stale is gone.

The walk is one folder's files (its `AGENTS.md`, or both) and the runs on them: a run
begins, taking its digests and the records (`Taken`, as `run.runtime.Runtime.start` does),
or, while a run is at work, a subagent of it begins, taking its parent's (as a subagent's
spec carries them); a model writes a file (a text, a removal, or a link that does not
load: `UNREAD`); a run ends (`recorded`, as `run.instructed.ended`); with no run at work
the person edits a file, or a session starts, headless or with a person who answers yes,
no or not at all (`at_start`, then `without` for the stale records and the answered
ones, as `run.instructed.at_start` and `answered` do). Up to two runs are at work at
once, either may end first. Not walked: a run of its own that begins while another is
at work (a session's follow-up while a subagent of its last run works on, a recovered
run beside the user's): its digests are its own start's, and a text the other's model
left there then, took back, and this one's model wrote again would go unrecorded.

The ghost is what is true: for each file, the text the person last made or answered for
(`trusted`), whether a model wrote it since (`touched`), which runs were at work when a
model wrote each text, and each run's family. Every law is checked exhaustively within
the printed bounds, then sampled over longer histories.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum

from eukhe.laws.engine import Area, Law, Mutant
from eukhe.rules import instructed as rule
from eukhe.rules.instructed import UNREAD, Change, Digests, Start, Taken
from eukhe.rules.states import Choice, replace

PATHS = ("/p/AGENTS.md", "/p/CLAUDE.md")
"""The folder's files (a walk takes the first one, or both)."""

MODEL_TEXTS: tuple[str | None, ...] = ("m1", "m2", None, UNREAD)
"""What a model leaves a file holding: a text, another, no file, a file that does not load."""

PERSON_TEXTS = ("p1", "p2")
"""What the person leaves a file holding: never a model's text, nor no file (a person who
removes a file a run removed leaves it as the run did: that is not told from the run's)."""

Content = str | None
Files = tuple[Content, ...]


@dataclass(frozen=True)
class Model:
    """The functions of the rule the walk calls; a break swaps one."""

    recorded: Callable[[Sequence[Change], Taken, Digests, str, str, float], tuple[Change, ...]]
    at_start: Callable[[Sequence[Change], Digests, bool], Start]
    cleared: Callable[[Sequence[Change], Sequence[Change]], tuple[Change, ...]]
    answered: Callable[[Sequence[Change], Sequence[Change]], tuple[Change, ...]]


MODEL = Model(rule.recorded, rule.at_start, rule.without, rule.without)


@dataclass(frozen=True)
class ICfg:
    """The files as the folder first holds them (one or two); runs a history begins at most."""

    files: Files
    runs: int


@dataclass(frozen=True)
class S:
    """The files, the runs at work (each its number, the run whose start it took, and the
    files and the records as that one began), the runs begun so far, the records, and what
    the last session's start did (None: the last step was not one) with whether a person
    was there."""

    files: Files
    working: tuple[tuple[int, int, Files, tuple[Change, ...]], ...]
    begun: int
    records: tuple[Change, ...]
    start: Start | None = None
    person: bool = False


class Ev(Choice):
    BEGIN = "begin"  # a run begins: a subagent of the one at work (its start taken), else a run of its own
    WRITE = "write"  # the model of the `run`-th run at work writes `path` with `text`
    END = "end"  # the `run`-th run at work ends
    EDIT = "edit"  # the person writes `path` with `text`, no run at work
    SESSION = "session"  # a session starts, no run at work: `person` there, answering `answer`


class Answer(Choice):
    YES = "yes"
    NO = "no"
    NONE = "none"  # Ctrl-C, Ctrl-D; or nobody (headless)


@dataclass(frozen=True)
class In:
    kind: Ev
    run: int = 0
    path: int = 0
    text: Content = None
    person: bool = False
    answer: Answer = Answer.NONE


def _digests(files: Files) -> dict[str, Content]:
    return dict(zip(PATHS, files, strict=False))


def _run_id(n: int) -> str:
    return f"s/{n}"


def _put(files: Files, i: int, v: Content) -> Files:
    return (*files[:i], v, *files[i + 1 :])


def walk_start(m: Model, cfg: ICfg) -> S:
    return S(cfg.files, (), 0, ())


def walk_next(m: Model, cfg: ICfg, s: S, x: In) -> S:
    s = replace(s, start=None, person=False)
    if x.kind is Ev.BEGIN:
        n = s.begun + 1
        _, root, files, records = s.working[0] if s.working else (n, n, s.files, s.records)
        return replace(s, working=(*s.working, (n, root, files, records)), begun=n)
    if x.kind in (Ev.WRITE, Ev.EDIT):
        return replace(s, files=_put(s.files, x.path, x.text))
    if x.kind is Ev.END:
        n, _, files, records = s.working[x.run]
        taken = Taken(_digests(files), records)
        got = m.recorded(s.records, taken, _digests(s.files), _run_id(n), "s", 0.0)
        return replace(s, working=tuple(w for i, w in enumerate(s.working) if i != x.run), records=got)
    start = m.at_start(s.records, _digests(s.files), x.person)
    kept = m.cleared(s.records, start.clear)
    if x.person and x.answer is not Answer.NONE:
        kept = m.answered(kept, start.ask)
    return replace(s, records=kept, start=start, person=x.person)


def inputs(cfg: ICfg, s: S) -> list[In]:
    xs: list[In] = []
    paths = range(len(s.files))
    if s.begun < cfg.runs and len(s.working) < 2:
        xs.append(In(Ev.BEGIN))
    for r in range(len(s.working)):
        xs += [In(Ev.WRITE, run=r, path=p, text=t) for p in paths for t in MODEL_TEXTS]
        xs.append(In(Ev.END, run=r))
    if not s.working:
        xs += [In(Ev.EDIT, path=p, text=t) for p in paths for t in PERSON_TEXTS]
        xs.append(In(Ev.SESSION))
        xs += [In(Ev.SESSION, person=True, answer=a) for a in Answer]
    return xs


# ---------------------------------------------------------------- the ghost: what is true


@dataclass(frozen=True)
class Ghost:
    """Each file's text the person last made or answered for; whether a model wrote it
    since; each (file, text) a model wrote, with the runs at work as it did; and each run's
    family (the run whose start it took: its own, or its parent's)."""

    trusted: Files
    touched: tuple[bool, ...]
    wrote: frozenset[tuple[int, Content, str]]  # (file, text, a run at work)
    family: frozenset[tuple[str, int]] = frozenset()  # (run, the run whose start it took)


def ghost_start(cfg: ICfg) -> Ghost:
    return Ghost(cfg.files, tuple(False for _ in cfg.files), frozenset())


def ghost_next(m: Model, cfg: ICfg, g: Ghost, s: S, x: In, t: S) -> Ghost:
    if x.kind is Ev.BEGIN:
        n, root, _, _ = t.working[-1]
        return replace(g, family=g.family | {(_run_id(n), root)})
    if x.kind is Ev.WRITE:
        touched = (*g.touched[: x.path], True, *g.touched[x.path + 1 :])
        at_work = {(x.path, x.text, _run_id(n)) for n, _, _, _ in s.working}
        return replace(g, touched=touched, wrote=g.wrote | at_work)
    if x.kind is Ev.EDIT:
        touched = (*g.touched[: x.path], False, *g.touched[x.path + 1 :])
        return replace(g, trusted=_put(g.trusted, x.path, x.text), touched=touched)
    if x.kind is Ev.SESSION and x.person:  # the person saw each change: answered, or one that does not load
        seen = [
            i
            for i, now in enumerate(s.files)
            if now != g.trusted[i] and (x.answer is not Answer.NONE or not rule.loads(now))
        ]
        trusted = tuple(s.files[i] if i in seen else v for i, v in enumerate(g.trusted))
        touched = tuple(False if i in seen else v for i, v in enumerate(g.touched))
        return replace(g, trusted=trusted, touched=touched)
    return g


# ---------------------------------------------------------------- laws


def _shown(t: S) -> dict[str, Change]:
    start = t.start
    assert start is not None
    return {c.path: c for c in (*start.say, *start.ask)}


def instr_model_change_said(m: Model, cfg: ICfg, g: Ghost, s: S, x: In, t: S) -> bool:
    """At a session's start, every file whose text a model changed from what the person
    made or answered for is said; where a person answers, asked about if it loads."""
    if x.kind is not Ev.SESSION or t.start is None:
        return True
    shown, asked = _shown(t), {c.path for c in t.start.ask}
    for i, path in enumerate(PATHS[: len(s.files)]):
        if s.files[i] == g.trusted[i]:
            continue
        if path not in shown:
            return False
        if x.person and rule.loads(s.files[i]) and path not in asked:
            return False
    return True


def instr_person_quiet(m: Model, cfg: ICfg, g: Ghost, s: S, x: In, t: S) -> bool:
    """At a session's start, a file no model wrote since the person made it or answered
    for it is neither said nor asked about: a person's own edit, an answer given, is said
    no more."""
    if x.kind is not Ev.SESSION or t.start is None:
        return True
    shown = _shown(t)
    return all(path not in shown for i, path in enumerate(PATHS[: len(s.files)]) if not g.touched[i])


def instr_names_a_writer(m: Model, cfg: ICfg, g: Ghost, s: S, x: In, t: S) -> bool:
    """What a session's start says of a file names the text it holds now, and a run of the
    family (a run and its subagents) one of which was at work when a model wrote that text."""
    if x.kind is not Ev.SESSION or t.start is None:
        return True
    root = dict(g.family)
    for path, c in _shown(t).items():
        i = PATHS.index(path)
        if c.digest != s.files[i]:
            return False
        writers = {r for j, text, r in g.wrote if (j, text) == (i, c.digest)}
        if not any(root.get(r) == root.get(c.run) for r in writers):
            return False
    return True


def instr_stale_cleared(m: Model, cfg: ICfg, g: Ghost, s: S, x: In, t: S) -> bool:
    """After a session's start, every record of its files holds the text the file holds:
    one the person changed since is gone."""
    if x.kind is not Ev.SESSION:
        return True
    now = _digests(t.files)
    return all(c.digest == now[c.path] for c in t.records if c.path in now)


LAWS = (
    Law(
        "instr_model_change_said",
        "instructions",
        "A model's change to an instruction file is said at the next session's start, asked if a person is.",
        history=instr_model_change_said,
        prove=False,
    ),
    Law(
        "instr_person_quiet",
        "instructions",
        "An instruction file the person made, or answered for, is not said again.",
        history=instr_person_quiet,
        prove=False,
    ),
    Law(
        "instr_names_a_writer",
        "instructions",
        "What is said of a changed file names its text now, and a run at work when a model wrote it.",
        history=instr_names_a_writer,
        prove=False,
    ),
    Law(
        "instr_stale_cleared",
        "instructions",
        "After a session's start, a record of a file the person changed since is gone.",
        history=instr_stale_cleared,
        prove=False,
    ),
)


# ---------------------------------------------------------------- breaks


def _appeared_unrecorded(
    kept: Sequence[Change], taken: Taken, after: Digests, run: str, session: str, at: float
) -> tuple[Change, ...]:
    """A file there was none of as the run began is not recorded."""
    got = rule.recorded(kept, taken, after, run, session, at)
    return tuple(c for c in got if c in kept or taken.digests.get(c.path) is not None)


def _vanished_unrecorded(
    kept: Sequence[Change], taken: Taken, after: Digests, run: str, session: str, at: float
) -> tuple[Change, ...]:
    """A file the run removed is not recorded."""
    got = rule.recorded(kept, taken, after, run, session, at)
    return tuple(c for c in got if c in kept or c.digest is not None)


def _recorded_keeps_run(
    kept: Sequence[Change], taken: Taken, after: Digests, run: str, session: str, at: float
) -> tuple[Change, ...]:
    """A file recorded already keeps its record's run, whatever run changed it next."""
    old = {c.path: c for c in kept}
    return tuple(
        replace(c, run=old[c.path].run) if c.path in old else c
        for c in rule.recorded(kept, taken, after, run, session, at)
    )


def _recorded_before(
    kept: Sequence[Change], taken: Taken, after: Digests, run: str, session: str, at: float
) -> tuple[Change, ...]:
    """The digest the file had as the run began recorded, not the one it left."""
    return tuple(
        replace(c, digest=taken.digests.get(c.path)) if c.run == run else c
        for c in rule.recorded(kept, taken, after, run, session, at)
    )


def _said_whatever(kept: Sequence[Change], now: Digests, person: bool) -> Start:
    """Every record said as it is, whatever the file holds now (a person's edit too)."""
    return rule.at_start(kept, {c.path: c.digest for c in kept if c.path in now}, person)


def _headless_clears(kept: Sequence[Change], now: Digests, person: bool) -> Start:
    """A headless face clears what it said: nobody answered, and it is said no more."""
    got = rule.at_start(kept, now, person)
    return got if person else replace(got, clear=(*got.clear, *got.say))


def _never_asks(kept: Sequence[Change], now: Digests, person: bool) -> Start:
    """A person's face only says the line, as a headless one: the file loads unasked."""
    got = rule.at_start(kept, now, False)
    return replace(got, clear=(*got.clear, *got.say)) if person else got


def _kept(kept: Sequence[Change], gone: Sequence[Change]) -> tuple[Change, ...]:
    return tuple(kept)


R = "instructions"

MUTANTS = (
    Mutant("a file that appeared in a run is not recorded", R, replace(MODEL, recorded=_appeared_unrecorded)),
    Mutant("a file that vanished in a run is not recorded", R, replace(MODEL, recorded=_vanished_unrecorded)),
    Mutant(
        "a file's first record keeps its run", "instructions", replace(MODEL, recorded=_recorded_keeps_run)
    ),
    Mutant("the digest before the run recorded", "instructions", replace(MODEL, recorded=_recorded_before)),
    Mutant(
        "a record said whatever the file holds now", "instructions", replace(MODEL, at_start=_said_whatever)
    ),
    Mutant("a headless face clears what it said", "instructions", replace(MODEL, at_start=_headless_clears)),
    Mutant("a person's face never asks", "instructions", replace(MODEL, at_start=_never_asks)),
    Mutant("a person's answer does not clear the record", "instructions", replace(MODEL, answered=_kept)),
    Mutant("a person's later edit does not clear the record", "instructions", replace(MODEL, cleared=_kept)),
)


# ---------------------------------------------------------------- the area


STARTS: tuple[Files, ...] = ((None,), ("p0",), (None, None), ("p0", None), ("p0", "p0"))
"""The folder as it first is: its AGENTS.md alone, there or not; or both files, neither,
an AGENTS.md, both."""
RUNS = 3
DEPTH = 6


def cfgs() -> Iterator[ICfg]:
    for files in STARTS:
        yield ICfg(files, RUNS if len(files) == 1 else 2)


def sample_cfg(seed: int) -> ICfg:
    """Any first folder, up to 12 runs a history."""
    return ICfg(STARTS[seed % len(STARTS)], 1 + (seed // len(STARTS)) % 12)


def proof_cases() -> list[tuple[dict[str, Enum], dict[str, Enum]]]:
    return []


AREA = Area(
    name="instructed",
    model=MODEL,
    cfg_type=ICfg,
    state_type=S,
    input_type=In,
    proof_cases=proof_cases,
    valid=lambda cfg, s: len(s.working) <= 2 and len(s.files) == len(cfg.files),
    cfg_valid=lambda cfg: cfg.runs >= 0 and 1 <= len(cfg.files) <= len(PATHS),
    start=walk_start,
    next=walk_next,
    inputs=inputs,
    cfgs=cfgs,
    bounds=(
        f"one file and {RUNS} runs, or two files and 2 runs ({len(STARTS)} first folders), 2 runs at "
        f"work at once, {len(MODEL_TEXTS)} texts a model leaves, {len(PERSON_TEXTS)} a person does, "
        "sessions headless or answered yes, no or not"
    ),
    depth=DEPTH,
    sample_cfg=sample_cfg,
    laws=LAWS,
    mutants=MUTANTS,
    ghost_start=ghost_start,
    ghost_next=ghost_next,
    samples=300,
)
