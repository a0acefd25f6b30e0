"""What a run's id says: a root session's run is `<session>/<n>`, a subagent's run
`<run>.c<k>` (a grandchild's `<run>.c<k>.c<j>`), and a subagent's task its run's id
with `.task`. Every face and layer reads ids, so this sits at the ground."""

from __future__ import annotations

import datetime
import secrets


def new_session() -> str:
    """A new session's id: when it began, and six random hex digits."""
    return datetime.datetime.now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


def valid_session(session: str) -> bool:
    """A session id a person may give: letters, digits, '-', '_' or '.', at most 80."""
    return bool(session) and len(session) <= 80 and all(c.isalnum() or c in "-_." for c in session)


def run_id(session: str, n: int) -> str:
    """A session's n-th run (from 1), zero-padded so that ids sort in run order."""
    return f"{session}/{n:04d}"


def session_of(run: str) -> str:
    """The session a run belongs to (a subagent's run too): `<session>/0003.c1` -> `<session>`."""
    return run.partition("/")[0]


def run_line(session: str, run: str) -> str:
    """The line that says a run started: `session <session>, run <n>`."""
    return f"session {session}, run {run.rpartition('/')[2].lstrip('0')}"


def is_root(run: str) -> bool:
    """A run of a root session, not a subagent's run or task (`<session>/0003.c1`)."""
    return ".c" not in run.rpartition("/")[2]


def name_of(child_id: str) -> str:
    """A child's name, from its id: `<session>/0003.c1` -> `c3.1` (short, and unique
    within its session; a grandchild `<session>/0003.c1.c2` -> `c3.1.2`)."""
    run, _, n = child_id.rpartition(".c")
    tail = run.rpartition("/")[2].split(".c")
    return "c" + ".".join([tail[0].lstrip("0") or "0", *tail[1:], n])
