"""Forks and conversation rewinds of sessions, in the runs' store.

A fork (`eukhe session fork ID --at N`) is a new session whose transcript begins with its
parent's runs 1..N (as the parent's transcript shows them), its own runs after. A rewind
(`eukhe rewind ID --to N --conversation`) ends the session's runs N.. as they stood: its
transcript stops before them, with a line saying so. Neither changes a run's record nor the
chat's log, both append-only: each is a row of its own here, kept with its time.

How a transcript is put together from these rows is `shown_runs`, the one rule every face uses.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sqlalchemy as sa

from eukhe.errors import Code, EukheError
from eukhe.store.engine import Tables

if TYPE_CHECKING:  # a run is a DBOS workflow status; DBOS loads with the store, not with this module
    from dbos import WorkflowStatus

FORKS = "eukhe_session_forks"
REWINDS = "eukhe_session_rewinds"
DEPTH = 32
"""Forks of forks a transcript follows back at most (a cycle cannot be made, but a store is data)."""


class LineageError(EukheError, RuntimeError):
    """The forks and rewinds cannot be read or written: says which and why."""

    code = Code.STORE


_META = sa.MetaData()
_forks = sa.Table(
    FORKS,
    _META,
    sa.Column("session", sa.Text, primary_key=True),
    sa.Column("parent", sa.Text, nullable=False),
    sa.Column("upto", sa.Integer, nullable=False),  # the parent's runs 1..upto begin the fork's transcript
    sa.Column("at", sa.Float, nullable=False),
)
_rewinds = sa.Table(
    REWINDS,
    _META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("session", sa.Text, nullable=False, index=True),
    sa.Column("first", sa.Integer, nullable=False),  # the runs first..last of the session are ended
    sa.Column("last", sa.Integer, nullable=False),
    sa.Column("at", sa.Float, nullable=False),
)


@dataclass(frozen=True)
class Rewind:
    first: int
    last: int
    at: float


@dataclass(frozen=True)
class Lineage:
    """What a session's transcript is made of besides its own runs."""

    parent: tuple[str, int] | None  # (session, upto): a fork's
    rewinds: tuple[Rewind, ...]

    def withdrawn(self, n: int) -> bool:
        """Whether a rewind ended the session's run n."""
        return any(r.first <= n <= r.last for r in self.rewinds)


class Lineages(Tables):
    """The two tables. Every method raises LineageError, never a driver's error."""

    error = LineageError
    what = "the sessions' forks and rewinds"
    meta = _META

    def of(self, session: str) -> Lineage:
        def read(c: sa.Connection) -> Lineage:
            fq = sa.select(_forks.c.parent, _forks.c.upto).where(_forks.c.session == session)
            f = c.execute(fq).first()
            q = sa.select(_rewinds.c.first, _rewinds.c.last, _rewinds.c.at)
            q = q.where(_rewinds.c.session == session).order_by(_rewinds.c.id)
            rs = tuple(Rewind(int(a), int(b), float(t)) for a, b, t in c.execute(q))
            return Lineage(None if f is None else (str(f[0]), int(f[1])), rs)

        got: Lineage = self._tx(f"read session {session}'s forks and rewinds", read)
        return got

    def fork(self, session: str, parent: str, upto: int) -> None:
        def put(c: sa.Connection) -> None:
            c.execute(_forks.insert().values(session=session, parent=parent, upto=upto, at=time.time()))

        self._tx(f"record the fork {session} of {parent}", put)

    def rewind(self, session: str, first: int, last: int) -> None:
        def put(c: sa.Connection) -> None:
            c.execute(_rewinds.insert().values(session=session, first=first, last=last, at=time.time()))

        self._tx(f"record the rewind of session {session}", put)


@dataclass(frozen=True)
class Shown:
    """One run of a transcript: the run (a DBOS workflow status), and the session it is of."""

    session: str
    number: int
    run: WorkflowStatus


async def shown_runs(
    session: str,
    runs: Callable[[str], Awaitable[Sequence[WorkflowStatus]]],
    lineage: Callable[[str], Awaitable[Lineage]],
) -> tuple[list[Shown], list[str]]:
    """The runs a session's transcript shows, oldest first, and a line for each rewind: a
    fork's parent's runs up to its point (their own rewinds applied), then its own runs, those a
    rewind ended left out. `runs(session)`: its runs; `lineage(session)`: its rows."""
    chain: list[tuple[str, int | None]] = [(session, None)]
    seen = {session}
    while len(chain) <= DEPTH:
        parent = (await lineage(chain[-1][0])).parent
        if parent is None or parent[0] in seen:
            break
        seen.add(parent[0])
        chain.append(parent)
    out: list[Shown] = []
    notes: list[str] = []
    for s, limit in reversed(chain):  # each with the last of its runs its child took
        own = await lineage(s)
        for w in await runs(s):
            n = int(str(w.workflow_id).rpartition("/")[2])
            if (limit is None or n <= limit) and not own.withdrawn(n):
                out.append(Shown(s, n, w))
        if s == session:
            notes = [_said(r) for r in own.rewinds]
    return out, notes


def _said(r: Rewind) -> str:
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(r.at))
    runs = f"run {r.first}" if r.first == r.last else f"runs {r.first}-{r.last}"
    return f"{runs} rewound at {when}: ended in this transcript (the chat's memory keeps them)"


def forked_from(parent: str, upto: int | None, parent_runs: Sequence[WorkflowStatus]) -> int:
    """The run a fork starts after: `upto` when the parent has it, else its last; 0 when it has none."""
    numbers = [int(str(w.workflow_id).rpartition("/")[2]) for w in parent_runs]
    if upto is None:
        return max(numbers, default=0)
    if upto not in numbers:
        raise LineageError(f"session {parent} has no run {upto} (its runs: 1 to {max(numbers, default=0)})")
    return upto
