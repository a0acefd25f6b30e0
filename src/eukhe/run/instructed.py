"""Instruction files a run's model changed (issue 51), as the runtime keeps and says them;
what changed and what is said is `rules.instructed`'s.

- A run's start (`run.runtime.Runtime.start`) takes each instruction file's digest and the
  records (`taken`) into its spec, so a replay after a crash compares with the same; a
  subagent's spec carries its parent's. Its end (`ended`, in `run.workflow`) takes the
  digests again and records what it changed in the home (`settings.instructed`), and
  says so in the run.
- A session's start (`at_start`), in every face, says each file still as a run left it,
  one line each (`eukhe run`: on stderr and as a `notice` event; `eukhe acp`: an editor
  notice); the interactive agent asks about each that would load (`ui.instructed`), and
  a person's answer clears its record (`answered`). A record whose file the person
  changed since is cleared, never said.
- `look`: what the person sees of one before answering: its diff against the file before
  the run (the run's checkpoint, `run.checkpoint`), else its text.

A record that cannot be read or written is said, with why; it never fails a run or a
session."""

from __future__ import annotations

import asyncio
import difflib
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from eukhe.rules import instructed as rule
from eukhe.rules.instructed import Change, Taken
from eukhe.run.checkpoint import CheckpointError, Shadow, project_of
from eukhe.run.spec import RunSpec
from eukhe.settings import home
from eukhe.settings.instructed import InstructedError, change, changes
from eukhe.skills import instruction_digests, instruction_project, instruction_text

HEADLESS = (
    "it loads as the run left it; to look at it before it loads, open `eukhe` here "
    "(it shows it and asks first)"
)
"""What a face where nobody answers says the person may do (`rules.instructed.line`)."""

PERSON = "look at it before it loads: s shows it"
"""What the interactive agent's question says the person may do."""

SHOWN_LINES = 200
"""Lines of a file (or of its diff) `look` shows at most; the rest is counted."""

SHOWN_BYTES = 64 << 10
"""Bytes of a file `look` reads at most."""

LOOK_DEADLINE = 10.0
"""Seconds the look at the file before the run (its checkpoint's git calls) may take."""


def taken(cwd: str) -> Taken:
    """What a run in `cwd` takes as it starts: the digests of the instruction files its
    session would load, and the project's records then (none when they cannot be read: its
    end says so)."""
    where, folder = home(), Path(cwd)
    try:
        kept = changes(where, instruction_project(folder))
    except InstructedError:
        kept = ()
    return Taken(instruction_digests(where, folder), kept)


def ended(
    spec: RunSpec, run: str, show: Callable[[str, str], None], clock: Callable[[], float] = time.time
) -> None:
    """A run's end: the files it changed since its start (`spec.instructions`) recorded in
    the home, for the next session to say. `show` (kind, text): the run's line, for a record
    that could not be made. Never raises."""
    taken = spec.instructions
    if taken is None:  # begun by an earlier eukhe: nothing to compare with
        return
    try:
        cwd = Path(spec.cwd)
        where, project = home(), instruction_project(cwd)
        after = instruction_digests(where, cwd)
        if not rule.moved(changes(where, project), taken, after):  # the common case: no lock taken
            return
        session = spec.child.session if spec.child is not None else (spec.session or run)
        at = clock()

        def how(kept: tuple[Change, ...]) -> tuple[Change, ...]:  # read again under the lock
            return rule.recorded(kept, taken, after, run, session, at)

        change(where, project, how)  # said by the next session as it starts, not here: the
        # run's answer is its last line
    except InstructedError as e:
        show("notice", f"the instruction files this run changed could not be recorded: {e}")
        return
    except Exception as e:  # a run's end never fails for it: said, with what failed
        why = f"{type(e).__name__}: {e}"
        show("notice", f"the instruction files could not be compared at the run's end: {why}")
        return


@dataclass(frozen=True)
class Found:
    """What a session's start says and asks: lines to say, files to ask about before they
    load (a person's face only), and why the record could not be read ("" when it could)."""

    lines: tuple[str, ...] = ()
    asks: tuple[Change, ...] = ()
    problem: str = ""


def at_start(cwd: Path, person: bool, clock: Callable[[], float] = time.time) -> Found:
    """The instruction files runs changed that a session in `cwd` would load, still as the
    runs left them: said (`lines`), or for a person to answer (`asks`). Records the person
    made stale by a change of their own are cleared; a removal said to a person too."""
    where = home()
    project = instruction_project(cwd)
    try:
        kept = changes(where, project)
        if not kept:
            return Found()
        now = instruction_digests(where, cwd)
        start = rule.at_start(kept, now, person)
        if start.clear:  # cleared under the lock: a record another run made meanwhile stays
            change(where, project, lambda k: rule.without(k, start.clear))
    except InstructedError as e:
        return Found(problem=f"{e}; the instruction files load as they are")
    stamp = clock()
    return Found(tuple(rule.line(c, stamp, HEADLESS) for c in start.say), start.ask)


def answered(cwd: Path, done: Sequence[Change]) -> str:
    """A person answered about `done`: their records go; "" or why they could not."""
    if not done:
        return ""
    try:
        change(home(), instruction_project(cwd), lambda k: rule.without(k, done))
    except InstructedError as e:
        return f"the answer was not recorded (it is asked again next time): {e}"
    return ""


def question(c: Change, clock: Callable[[], float] = time.time) -> str:
    """The interactive agent's line about one file, before its question."""
    return rule.line(c, clock(), PERSON)


def look(c: Change, cwd: Path) -> list[str]:
    """What the person sees of a changed file: its diff against the file before the run
    (when the run's checkpoint holds it), else its text; at most SHOWN_LINES lines. Not on
    a running event loop (the checkpoint's git calls run on one of their own)."""
    now = _text(c, cwd)
    before = _before(c, cwd)
    if before is not None:
        name = os.path.basename(c.path)
        old, new = f"{name} before run {c.run}", f"{name} now"
        lines = list(difflib.unified_diff(before.splitlines(), now.splitlines(), old, new, lineterm=""))
        if not lines:
            lines = [f"{name} is as it was before run {c.run}"]
    else:
        lines = [f"{c.path} (no copy of it before run {c.run}: its text as it is now):", *now.splitlines()]
    if len(lines) > SHOWN_LINES:
        lines = [*lines[:SHOWN_LINES], f"… {len(lines) - SHOWN_LINES} more lines: {c.path}"]
    return lines


def _text(c: Change, cwd: Path) -> str:
    """The file's first SHOWN_BYTES as text, read as the loader reads it (one it refuses:
    why)."""
    got, cut, why = instruction_text(home(), cwd, c.path, SHOWN_BYTES)
    if got is None:
        return f"[{c.path} cannot be shown: {why}]"
    return got + (f"\n[… cut at {SHOWN_BYTES} bytes]" if cut else "")


def _before(c: Change, cwd: Path) -> str | None:
    """The file as the run's checkpoint holds it ("" when it was not there then), or None
    when no checkpoint of that run holds the project (nothing to compare with)."""
    project = project_of(cwd)
    rel = os.path.relpath(c.path, project)  # its folder's real path, as the record keeps it
    if rel.startswith(".."):  # the home's file: no checkpoint holds it
        return None
    shadow = Shadow(project, home(), deadline=LOOK_DEADLINE)
    if not (shadow.git_dir / "HEAD").exists():
        return None
    try:
        return asyncio.run(_shown(shadow, c.run, rel))
    except (CheckpointError, OSError, UnicodeDecodeError):
        return None


async def _shown(shadow: Shadow, run: str, rel: str) -> str | None:
    ref = f"refs/eukhe/{run}"
    if not (await shadow.git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", ok=(0, 1))).strip():
        return None
    listed = await shadow.git("ls-tree", "-z", ref, "--", rel)
    if not listed.strip("\0"):
        return ""  # the run made it
    meta = listed.partition("\t")[0].split()
    if len(meta) != 3 or meta[1] != "blob":
        return None
    return await shadow.git("cat-file", "blob", meta[2])
