"""How the search tools start and show what they found: the root opened and decided on, paths
as the model named them, lines cut, output bounded, and every cut and stop said."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from eukhe.filekind import kind
from eukhe.home import home
from eukhe.rules.confine import Act
from eukhe.rules.wait import End
from eukhe.tools.base import Context
from eukhe.tools.files import resolve, why
from eukhe.tools.reach import Check, Refused, open_dir, open_object
from eukhe.tools.search import confined, engines
from eukhe.tools.search.engines import Found, Hidden, Pick, Root, Search

__all__ = ["LINE_CUT", "Bounded", "close", "cut", "ended", "opened", "shown", "withheld"]

LINE_CUT = 500
"""Characters of one line shown before it is cut."""

SECRET_NAMED = 20
"""Files named at most in the note on those left out for a secret value."""


def shown(p: Path, cwd: Path) -> str:
    """`p` relative to the working directory when it is under it, else absolute."""
    try:
        return p.relative_to(cwd).as_posix()
    except ValueError:
        return str(p)


def cut(text: str) -> str:
    text = text.removesuffix("\r")
    return text if len(text) <= LINE_CUT else text[:LINE_CUT] + f" [… {len(text):,} characters]"


def opened(path: str, cwd: Path, check: Check, files: bool) -> tuple[Root | None, str]:
    """The folder (or, when `files`, the regular file) a search starts at, opened and decided
    on for a search by the boundary `check` on what was opened, never on its name; or why it
    cannot be searched. The caller closes the root's descriptor."""
    p = resolve(path, cwd)
    try:
        try:
            got = open_dir(p, Act.SEARCH, check, path)
            return Root(got.fd, Path(got.real), Path(os.path.abspath(p)), True), ""
        except NotADirectoryError:
            if not files:
                return None, f"'{path}' is not a folder; glob searches folders"
        got = open_object(p, Act.SEARCH, check, path)
    except Refused as e:
        return None, f"not searched: {e}"
    except OSError as e:
        return None, f"'{path}' cannot be searched: {why(e)}"
    if not stat.S_ISREG(got.st.st_mode):  # held by O_PATH: a FIFO, a device, a socket
        got.close()
        return None, f"'{path}' is {kind(got.st.st_mode)}; grep searches regular files and folders"
    return Root(got.fd, Path(got.real), Path(os.path.abspath(p)), False), ""


def pick_and_search(
    ctx: Context, engine: str, root: Root, check: Check, glob: str | None = None
) -> tuple[Pick, Search]:
    """What a search of `root` takes and how it runs: ripgrep (`engine`: "auto", "rg" or
    "python") only where bubblewrap can confine it (the run's sandbox said whether it can run
    here), the run's secret values kept out, and the places beneath the root that the boundary
    denies skipped before any rule is asked of each file."""
    never = confined.beneath(str(root.real), check, home(), Path.home()) if root.folder else ()
    skipped = frozenset(never)
    readable = ctx.readable

    def keep(p: Path) -> bool:
        return not (skipped and str(p) in skipped) and readable(p)

    unavailable = getattr(ctx.sandbox, "unavailable", None) if ctx.sandbox is not None else None
    lim = ctx.limits
    how = Search(
        lim.search_timeout,
        lim.search_max_files,
        engines.chosen(engine),
        confined.bwrap() if unavailable is None else None,
        Hidden.of(ctx.hidden),
        never,
    )
    return Pick(root, glob, keep), how


def close(root: Root) -> None:
    with contextlib.suppress(OSError):
        os.close(root.fd)


class Bounded:
    """Lines of output up to `limit` characters; `full` once a line did not fit."""

    def __init__(self, limit: int) -> None:
        self.lines: list[str] = []
        self.limit = limit
        self.used = 0
        self.full = False

    def add(self, line: str) -> bool:
        if self.used + len(line) + 1 > self.limit and self.lines:
            self.full = True
            return False
        self.lines.append(line)
        self.used += len(line) + 1
        return True


def ended(found: Found, what: str, timeout: float) -> list[str]:
    """The notes on how a search ended short: its deadline, the run's abort, unreadable folders."""
    notes: list[str] = []
    end = found.ended.end if found.ended is not None else None
    if end is End.DEADLINE:
        notes.append(f"[{what} stopped after {timeout:g} s: what it found by then is shown]")
    if end is End.CANCEL:
        notes.append(f"[{what} was aborted: what it found by then is shown]")
    if found.ended is not None and found.ended.error is not None:
        notes.append(f"[{what} failed: {type(found.ended.error).__name__}: {found.ended.error}]")
    if found.walked.unreadable:
        first = found.walked.unreadable[0]
        more = len(found.walked.unreadable) - 1
        notes.append(f"[{first} could not be read{f', nor {more} more folders' if more else ''}]")
    return notes


def withheld(found: Found, root: Root, cwd: Path) -> list[str]:
    """The note on the files left out for the secret values they hold: named, whatever the
    pattern (a file is left out whether or not the pattern matched it)."""
    if not found.secret:
        return []
    n = len(found.secret)
    names = ", ".join(shown(root.named(p), cwd) for p in found.secret[:SECRET_NAMED])
    more = f" and {n - SECRET_NAMED:,} more" if n > SECRET_NAMED else ""
    holds = "file holds" if n == 1 else "files hold"
    return [f"[{n:,} {holds} a secret value eukhe keeps from the model: not searched: {names}{more}]"]
