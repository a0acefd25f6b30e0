"""`eukhe rewind SESSION --to N --files`: the project's files as they were before the session's
run N began, from the checkpoints its runs took (`run.checkpoint`).

The plan shows first: each file that would change, and each one a person changed by hand since
the session's last run ended, which is kept unless they say so. `--yes` applies the plan for
scripts (files changed by hand stay kept); without it, on a terminal a person confirms, and off
one the plan is only shown.
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from typing import Annotated

import typer

from eukhe.children.worktree import session_branches
from eukhe.cli import lazy
from eukhe.cli.output import echo
from eukhe.ids import valid_session
from eukhe.rules.rewind import rewindable
from eukhe.run.checkpoint import CheckpointError, Shadow, plan, project_of
from eukhe.settings import home
from eukhe.terminal import neutralized

__all__ = ["rewind"]

RUN = re.compile(r"^(?:(?P<session>.+)/)?(?P<n>\d{1,6})$")
"""`--to`: a run's number in the session (3), or its full id (SESSION/0003)."""


def _run_number(to: str, session: str) -> int:
    m = RUN.match(to.strip())
    if m is None or (m["session"] is not None and m["session"] != session) or int(m["n"]) < 1:
        raise ValueError(f"--to {to!r}: give a run's number in the session (3) or its id ({session}/0003)")
    return int(m["n"])


def _ask(question: str) -> bool:
    sys.stdout.write(neutralized(f"{question} [y/N] "))
    sys.stdout.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def rewind(
    session: Annotated[str, typer.Argument(help="The session, as `eukhe sessions` lists it.")],
    to: Annotated[str, typer.Option("--to", help="The run to go back before: its number (3) or id.")],
    files: Annotated[bool, typer.Option("--files", help="Restore the files (the default).")] = False,
    conversation: Annotated[
        bool,
        typer.Option("--conversation", help="End the session's runs from N on in its transcript."),
    ] = False,
    both: Annotated[bool, typer.Option("--both", help="The files and the conversation.")] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Apply the plan without asking (for scripts).")] = False,
) -> None:
    """Put the project's files back as they were before a run of the session began (--files,
    the default), end that run and the later ones in the session's transcript (--conversation),
    or both. The plan shows first; files you changed by hand since are kept unless you confirm."""
    if not valid_session(session):
        echo(f"eukhe rewind: session id {session!r}: use letters, digits, '-', '_' or '.'", err=True)
        raise typer.Exit(2)
    try:
        n = _run_number(to, session)
    except ValueError as e:
        echo(f"eukhe rewind: {e}", err=True)
        raise typer.Exit(2) from None
    if files or both or not conversation:
        _files(session, n, yes)
    if conversation or both:
        _conversation(session, n, yes)
    kept_branches(session, n)


def kept_branches(session: str, first: int = 1, said: str = "a rewind deletes none") -> None:
    """The branches the session's subagents in worktrees made from run `first` on, kept as they
    are (`said`: why), and how to take or drop one; nothing when there are none."""
    got = asyncio.run(session_branches(Path.cwd(), session, first))
    if got:
        echo(f"the branches of its subagents from run {first} on are kept ({said}): {', '.join(got)}")
        echo("  take one with `git merge BRANCH`, drop one with `git branch -D BRANCH`")


def _conversation(session: str, n: int, yes: bool) -> None:
    """End the session's runs n.. in its transcript, after its plan and a confirmation."""
    store = lazy.stored()
    runs = store.own_runs(session)
    if not runs:
        echo(f"eukhe rewind: no session {session!r} (eukhe sessions lists them)", err=True)
        raise typer.Exit(1)
    own = {k: prompt for k, _, prompt in runs}
    last, why = rewindable(session, n, [(k, live) for k, live, _ in runs])
    if why is not None and any(live for _, live, _ in runs):
        echo(f"eukhe rewind: {why}", err=True)
        raise typer.Exit(1)
    if why is not None:  # no such run: nothing to do
        echo(f"{why}: no conversation to rewind")
        return
    echo(f"rewind the conversation of session {session} to before run {n}; these runs end in its transcript:")
    for k in range(n, last + 1):
        if k in own:
            echo(f"  run {k}: {own[k][:70]}")
    if not yes:
        if not sys.stdin.isatty():
            echo("not applied: run it again with --yes, or on a terminal to confirm")
            return
        if not _ask(f"end {last - n + 1} runs in the transcript?"):
            echo("not applied")
            return
    echo(store.rewind_conversation(session, n, last))


def _files(session: str, n: int, yes: bool) -> None:
    """Put the project's files back as they were before run n, after the plan and a confirmation."""
    shadow = Shadow(project_of(Path.cwd()), home())
    try:
        commit, name, changes, hand, how = asyncio.run(plan(shadow, session, n))
    except CheckpointError as e:
        echo(f"eukhe rewind: the checkpoints of {shadow.project} cannot be read: {e}", err=True)
        raise typer.Exit(1) from None
    if commit is None:
        where = f"in {shadow.project}: nothing to rewind"
        echo(f"no run of session {session} from run {n} on changed files {where}")
        return
    if not changes:
        echo(f"the files of {shadow.project} are as they were before run {name}: nothing to rewind")
        return
    echo(f"rewind the files of {shadow.project} to before run {name}:")
    for c in changes:
        verb = {"A": "remove", "D": "restore", "M": "restore"}.get(c.status, "restore")
        mark = "  (changed by hand: kept unless you confirm)" if c.path in hand else ""
        echo(f"  {verb} {c.path}{mark}")
    if how and not hand:
        echo(f"({how})" if how.startswith("no record") else f"(no file was {how})")
    chosen = [c for c in changes if c.path not in hand]
    if not yes:
        if not sys.stdin.isatty():
            echo("not applied: run it again with --yes, or on a terminal to confirm")
            return
        if not _ask(f"restore {len(chosen)} files?"):
            echo("not applied")
            return
        if hand and _ask(f"also overwrite the {len(hand)} files you changed by hand?"):
            chosen = changes
    try:
        asyncio.run(shadow.restore(commit, chosen))
    except CheckpointError as e:
        echo(f"eukhe rewind: the files could not be restored: {e}", err=True)
        raise typer.Exit(1) from None
    kept = len(changes) - len(chosen)
    echo(f"restored {len(chosen)} files" + (f"; kept {kept} you changed by hand" if kept else ""))
