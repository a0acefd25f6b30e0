"""What the user's hooks answered, by the run and the recorded step they fired in: a run
resumed after a crash reads the answer here instead of running the hooks again, even when
the crash came after they answered and before the step's own record (`rules.hook`'s
`hook_fires_once`). The first answer kept for a step stands."""

from __future__ import annotations

import json
import time

import sqlalchemy as sa

from eukhe.errors import Code, EukheError
from eukhe.json_types import JsonObject
from eukhe.store.engine import Tables

HOOK_ANSWERS = "eukhe_hook_answers"


class HookAnswerError(EukheError, RuntimeError):
    """The hooks' answers cannot be read or kept: says which and why."""

    code = Code.STORE


_META = sa.MetaData()
_answers = sa.Table(
    HOOK_ANSWERS,
    _META,
    sa.Column("run", sa.Text, primary_key=True),
    sa.Column("step", sa.Integer, primary_key=True),  # the DBOS step the hooks fired in
    sa.Column("event", sa.Text, primary_key=True),
    sa.Column("answer", sa.Text, nullable=False),  # the verdict, as JSON (`run.hook_events.verdict_json`)
    sa.Column("at", sa.Float, nullable=False),
)


class HookAnswers(Tables):
    """The hooks' answers table. Every method raises HookAnswerError, never a driver's error."""

    error = HookAnswerError
    what = "the hooks' answers"
    meta = _META

    def get(self, run: str, step: int, event: str) -> JsonObject | None:
        """The answer kept for the run's step and event, or None."""

        def read(c: sa.Connection) -> JsonObject | None:
            q = sa.select(_answers.c.answer).where(
                (_answers.c.run == run) & (_answers.c.step == step) & (_answers.c.event == event)
            )
            row = c.execute(q).first()
            got = json.loads(row[0]) if row is not None else None
            return got if isinstance(got, dict) else None

        found: JsonObject | None = self._tx(f"read the {event} hooks' answer of {run}", read)
        return found

    def keep(self, run: str, step: int, event: str, answer: JsonObject) -> None:
        """The answer, kept once: a second keep for the same step and event writes nothing."""

        def put(c: sa.Connection) -> None:
            row = {"run": run, "step": step, "event": event, "answer": json.dumps(answer), "at": time.time()}
            try:
                with c.begin_nested():
                    c.execute(_answers.insert().values(**row))
            except sa.exc.IntegrityError:  # kept already (a replay that ran them again): the first stands
                pass

        self._tx(f"keep the {event} hooks' answer of {run}", put)
