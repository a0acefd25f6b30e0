"""The parents' inbox of child reports, in the project's store (the database of the
durable runs): each submission by its id, with its fate, and whether each parent
session admits reports.

Every change of a fate is the rule's (`rules.child.place`, `withdraw`), made in one
transaction that reads the fate first: a submission is placed only from queued (a
resend under an id the parent knows is dropped), withdrawn only from queued (a
withdrawal that loses its race to placement leaves it placed). A submission to a
closed parent is refused: it is kept withdrawn, and the task submits again under
the next id once the parent reopens.

A placement names the run and the place in it that took it (`rules.child.key`), so a
run replayed after a crash takes the same reports again, and no other; which rows a
take places and hands back is the rule's (`rules.child.take`).

The user's messages to a session at work go through the same inbox, so that they
too are placed once, in order, and survive the terminal that typed them: a steer
(sender `STEER`) enters the run at its next round end where `rules.run.takes_steers`
lets it, a follow-up (`FOLLOWUP`) only at a run's start. Neither is a child's
report: a closed session does not withdraw them, and what no run took is the
session's next run's prompt.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import sqlalchemy as sa

from eukhe.errors import Code, EukheError
from eukhe.rules import child
from eukhe.rules.child import Fate
from eukhe.settings.secrets import NO_SECRETS, Redaction
from eukhe.store.engine import made, serialized
from eukhe.store.urls import cause, shown

T = TypeVar("T")

REPORTS = "eukhe_child_reports"
PARENTS = "eukhe_child_parents"
LOCK = 0x65756B6872  # "eukhr": the Postgres advisory lock that makes read-then-write atomic, as IMMEDIATE


class ReportStoreError(EukheError, RuntimeError):
    """The inbox cannot be read or written: names the database and why."""

    code = Code.STORE


_META = sa.MetaData()
_reports = sa.Table(
    REPORTS,
    _META,
    sa.Column("id", sa.Text, primary_key=True),  # "<child>:report:<n>"
    sa.Column("session", sa.Text, nullable=False, index=True),
    sa.Column("child", sa.Text, nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("fate", sa.Text, nullable=False),
    sa.Column("taker", sa.Text, nullable=True),  # "<run>#<key>": the take at that place of the run placed it
    sa.Column("at", sa.Float, nullable=False),
)
_parents = sa.Table(
    PARENTS,
    _META,
    sa.Column("session", sa.Text, primary_key=True),
    sa.Column("open", sa.Boolean, nullable=False),
)


@dataclass(frozen=True)
class Report:
    id: str
    session: str
    child: str
    text: str
    fate: Fate


STEER = "user:steer"
"""The sender of a steer: a user message for the run at its next round end."""
FOLLOWUP = "user:followup"
"""The sender of a follow-up: a user message for the session's next run."""
USERS = (STEER, FOLLOWUP)


def submission(child_id: str, n: int) -> str:
    """The id of a child's n-th submission: a resend keeps it, a resubmission takes n + 1."""
    return f"{child_id}:report:{n}"


class Reports:
    """The inbox. Every method raises ReportStoreError, never a driver's error. `redact`:
    the secret values the process knows, out of every text it writes (a steer, a report)."""

    def __init__(self, url: str, redact: Redaction = NO_SECRETS) -> None:
        self.url = url
        self.redact = redact
        try:
            self._engine = serialized(url)
            made(self._engine, _META)
        except Exception as e:
            raise ReportStoreError(
                f"cannot open the child reports in the store at {shown(url)}: {cause(e)}"
            ) from e

    def close(self) -> None:
        self._engine.dispose()

    def _tx(self, what: str, work: Callable[[sa.Connection], T]) -> T:
        try:
            with self._engine.begin() as c:
                if c.dialect.name == "postgresql":
                    c.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": LOCK})
                return work(c)
        except ReportStoreError:
            raise
        except Exception as e:
            raise ReportStoreError(f"cannot {what} in the store at {shown(self.url)}: {cause(e)}") from e

    # ---------------------------------------------------------------- the parent

    def is_open(self, session: str) -> bool:
        """Whether the session admits reports (a session never closed does)."""

        def read(c: sa.Connection) -> bool:
            row = c.execute(sa.select(_parents.c.open).where(_parents.c.session == session)).first()
            return True if row is None else bool(row[0])

        return bool(self._tx(f"read whether session {session} admits reports", read))

    def reopen(self, session: str) -> None:
        self._tx(f"reopen session {session}", lambda c: _set_open(c, session, True))

    def close_parent(self, session: str) -> int:
        """The session closes: it admits nothing, and every queued report is withdrawn
        (each stays owed; its task resubmits once the session reopens). How many."""

        def close(c: sa.Connection) -> int:
            _set_open(c, session, False)
            rows = c.execute(
                sa.select(_reports.c.id, _reports.c.fate).where(
                    (_reports.c.session == session)
                    & (_reports.c.fate == Fate.QUEUED.value)
                    & _reports.c.child.not_in(USERS)  # the user's own messages stay queued
                )
            ).all()
            for rid, fate in rows:
                _fate(c, rid, child.withdraw(Fate(fate)))
            return len(rows)

        return int(self._tx(f"close session {session}", close))

    # ---------------------------------------------------------------- submissions

    def fate(self, rid: str) -> Fate:
        def read(c: sa.Connection) -> Fate:
            row = c.execute(sa.select(_reports.c.fate).where(_reports.c.id == rid)).first()
            return Fate.NONE if row is None else Fate(row[0])

        return Fate(self._tx(f"read report {rid}", read))

    def submit(self, rid: str, session: str, child_id: str, text: str) -> Fate:
        """Submit a report under its id; its fate. A resend (the id known) changes
        nothing; a closed parent refuses it (kept withdrawn)."""

        def submit(c: sa.Connection) -> Fate:
            row = c.execute(sa.select(_reports.c.fate).where(_reports.c.id == rid)).first()
            if row is not None:
                return Fate(row[0])
            prow = c.execute(sa.select(_parents.c.open).where(_parents.c.session == session)).first()
            fate = Fate.QUEUED if prow is None or bool(prow[0]) else Fate.WITHDRAWN
            c.execute(
                _reports.insert().values(
                    id=rid,
                    session=session,
                    child=child_id,
                    text=self.redact(text),
                    fate=fate.value,
                    at=time.time(),
                )
            )
            return fate

        return Fate(self._tx(f"submit report {rid}", submit))

    def withdraw(self, rid: str) -> Fate:
        """Withdraw a submission (its fate after: placed stays placed)."""

        def withdraw(c: sa.Connection) -> Fate:
            row = c.execute(sa.select(_reports.c.fate).where(_reports.c.id == rid)).first()
            if row is None:
                return Fate.NONE
            after = child.withdraw(Fate(row[0]))
            _fate(c, rid, after)
            return after

        return Fate(self._tx(f"withdraw report {rid}", withdraw))

    def say(self, session: str, sender: str, text: str) -> str:
        """Queue a user's message to the session (`STEER` or `FOLLOWUP`): it waits for
        its place whether or not the session admits children's reports; its id."""
        if sender not in USERS:
            raise ValueError(f"a user's message is sent as {' or '.join(USERS)}, not {sender!r}")
        rid = f"{session}:{sender}:{time.time_ns()}"

        def insert(c: sa.Connection) -> str:
            c.execute(
                _reports.insert().values(
                    id=rid,
                    session=session,
                    child=sender,
                    text=self.redact(text),
                    fate=Fate.QUEUED.value,
                    at=time.time(),
                )
            )
            return rid

        return str(self._tx(f"queue a message to session {session}", insert))

    def take(
        self,
        session: str,
        taker: str,
        steers: bool = True,
        followups: bool = True,
        until: float | None = None,
    ) -> list[Report]:
        """Place every queued message of the session, oldest first, for `taker` (a run and
        the key of its place): the children's reports, and the user's steers and
        follow-ups as asked (`until`: only those queued by then, epoch seconds); the same
        taker again gets the same messages back."""
        left = [s for s, wanted in ((STEER, steers), (FOLLOWUP, followups)) if not wanted]
        wanted: sa.ColumnElement[bool] = _reports.c.child.not_in(left)
        if until is not None:  # a user's message queued later is for a later place
            wanted = wanted & (_reports.c.child.not_in(USERS) | (_reports.c.at <= until))

        def take(c: sa.Connection) -> list[Report]:
            mine = (_reports.c.session == session) & (
                ((_reports.c.fate == Fate.QUEUED.value) & wanted) | (_reports.c.taker == taker)
            )
            rows = c.execute(
                sa.select(_reports.c.id, _reports.c.child, _reports.c.text, _reports.c.fate, _reports.c.taker)
                .where(mine)
                .order_by(_reports.c.at, _reports.c.id)
            ).all()
            held = tuple(child.Held(Fate(fate), by or "") for _, _, _, fate, by in rows)
            after, got = child.take(held, taker)  # the rule: what is placed, and what enters the run
            for (rid, *_), was, now in zip(rows, held, after, strict=True):
                if now != was:
                    c.execute(
                        _reports.update()
                        .where(_reports.c.id == rid)
                        .values(fate=now.fate.value, taker=now.taker)
                    )
            return [Report(rows[i][0], session, rows[i][1], rows[i][2], after[i].fate) for i in got]

        return list(self._tx(f"take the reports of session {session}", take))

    def queued(self, session: str) -> int:
        def count(c: sa.Connection) -> int:
            q = sa.select(sa.func.count()).where(
                (_reports.c.session == session) & (_reports.c.fate == Fate.QUEUED.value)
            )
            return int(c.execute(q).scalar_one())

        return int(self._tx(f"count the reports of session {session}", count))

    def all(self, session: str) -> Sequence[Report]:
        def read(c: sa.Connection) -> list[Report]:
            rows = c.execute(
                sa.select(_reports.c.id, _reports.c.child, _reports.c.text, _reports.c.fate)
                .where(_reports.c.session == session)
                .order_by(_reports.c.at, _reports.c.id)
            ).all()
            return [Report(r[0], session, r[1], r[2], Fate(r[3])) for r in rows]

        return list(self._tx(f"read the reports of session {session}", read))


def _set_open(c: sa.Connection, session: str, open_: bool) -> None:
    if c.execute(sa.select(_parents.c.session).where(_parents.c.session == session)).first() is None:
        c.execute(_parents.insert().values(session=session, open=open_))
    else:
        c.execute(_parents.update().where(_parents.c.session == session).values(open=open_))


def _fate(c: sa.Connection, rid: str, fate: Fate) -> None:
    c.execute(_reports.update().where(_reports.c.id == rid).values(fate=fate.value))
