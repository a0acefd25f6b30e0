"""The question the interactive agent asks before a session's first run, of each
instruction file (`AGENTS.md`, `CLAUDE.md`) a run's model changed and that is still as the
run left it (`run.instructed`): load it, or start this session without it; `s` shows it
first (its diff against the file before the run, when the run's checkpoint holds it).

An answer clears the file's record: it is asked about once. No answer (Ctrl-C, Ctrl-D)
starts the session without it, and leaves the record: it is asked about next time."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from eukhe.rules.instructed import Change
from eukhe.run import instructed

QUESTION = "Load it? y load it · n start this session without it · s show it [y/n/s] "


def ask_changed(folder: Path, read: Callable[[str], str], say: Callable[[str], None]) -> frozenset[str]:
    """Say each instruction file a run's model changed, and ask about each that would load;
    the files (by `skills.instruction_key`) this session starts without."""
    found = instructed.at_start(folder, person=True)
    for line in found.lines:  # removed ones: nothing to load
        say(line)
    if found.problem:
        say(found.problem)
    withheld: set[str] = set()
    done: list[Change] = []
    for n, c in enumerate(found.asks):
        got = _answer(c, folder, read, say)
        if got is None:  # left: this one and the rest withheld, asked about next time
            rest = found.asks[n:]
            withheld.update(r.path for r in rest)
            names = ", ".join(r.path for r in rest)
            say(f"not answered: this session starts without {names}; asked about again next time")
            break
        done.append(c)
        if got:
            say(f"{c.path} loads")
        else:
            withheld.add(c.path)
            say(f"this session starts without {c.path}; the next loads it, unless you change or remove it")
    if problem := instructed.answered(folder, done):
        say(problem)
    return frozenset(withheld)


def _answer(c: Change, folder: Path, read: Callable[[str], str], say: Callable[[str], None]) -> bool | None:
    """Whether the person loads the file (None: no answer)."""
    say(instructed.question(c))
    while True:
        try:
            answer = read(QUESTION).strip().lower()
        except (EOFError, KeyboardInterrupt):
            return None
        if answer in ("y", "yes"):
            return True
        if answer in ("n", "no"):
            return False
        if answer in ("s", "show"):
            for line in instructed.look(c, folder):
                say(f"  {line}")
            continue
        say("answer y, n or s")
