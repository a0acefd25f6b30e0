"""How a run ended, as every face and the store see it: `RunOutcome`, from the run's loop to
the command line's exit code, the agent's view and the JSON of `eukhe run --json`.

Its JSON carries what a script needs to go on with what it started, under the names Claude
Code's `--output-format json` gives them: `session_id`, `run_id`, `duration_ms` and
`total_cost_usd` (0.0 when the model has no price). The face that asked for the run knows its
ids and times it (`told`); the workflow's own record leaves them null."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum

from eukhe.ai.request import Message, Request
from eukhe.errors import Code
from eukhe.json_types import JsonMapping, JsonObject, JsonValue
from eukhe.run.usage import Tally
from eukhe.settings.run import Price


class Ending(StrEnum):
    """How a run ended (`eukhe run` exits 0, 1 and 130 for them)."""

    ANSWERED = "answered"
    FAILED = "failed"
    ABORTED = "aborted"


@dataclass
class RunOutcome:
    outcome: Ending
    answer: str = ""
    code: str | None = None  # the failure's kind: "run_limit", "model_error", or an `errors.Code`'s
    message: str | None = None
    rounds: int = 0
    notes: int = 0
    retries: int = 0
    cut: bool = False  # answered with text cut at the output limit (stop reason length)
    transcript: list[Message] = field(default_factory=list)  # failed messages included
    requests: list[Request] = field(default_factory=list)  # what was sent, notes included
    denials: list[JsonObject] = field(default_factory=list)  # calls the permission rule denied
    usage: Tally = field(default_factory=Tally)  # every reply's tokens, failed ones too, once each
    price: Price | None = None  # the model's, from the settings: the usage's cost
    cost: float | None = None  # the usage's cost as the store recorded it (`of`), priced when it ended
    calls: int = 0  # the model calls the store recorded (`of`): its requests are not kept there
    session: str | None = None  # the session and run it ended, as the face that asked knows them
    run: str | None = None  # None: it never started (or the workflow's own record)
    duration_ms: int | None = None  # its wall time, from its start to this outcome, as the face saw it

    @staticmethod
    def of(obj: JsonMapping) -> RunOutcome:
        """An outcome from its JSON (`json`), as a run's workflow returned it to the store: the
        one place a face's outcome is read back from DBOS. Anything else is a failure that says so."""
        try:
            ending = Ending(str(obj.get("outcome")))
        except ValueError:
            return RunOutcome(
                Ending.FAILED, code=Code.RUN.kind, message=f"a run ended without an outcome: {obj!r:.200}"
            )
        error = _mapping(obj.get("error"))
        usage = _mapping(obj.get("usage"))
        cost = usage.get("cost")
        denials = obj.get("denials")
        took = obj.get("duration_ms")
        return RunOutcome(
            ending,
            answer=str(obj.get("answer") or ""),
            code=None if error.get("kind") is None else str(error["kind"]),
            message=None if error.get("message") is None else str(error["message"]),
            rounds=int(obj.get("rounds") or 0),
            notes=int(obj.get("notes") or 0),
            retries=int(obj.get("retries") or 0),
            cut=bool(obj.get("cut")),
            denials=[dict(d) for d in denials if isinstance(d, Mapping)] if isinstance(denials, list) else [],
            usage=Tally.of(usage),
            cost=float(cost) if isinstance(cost, int | float) else None,
            calls=int(obj.get("calls") or 0),
            session=_text(obj.get("session_id")),
            run=_text(obj.get("run_id")),
            duration_ms=took if isinstance(took, int) else None,
        )

    def told(self, session: str | None, run: str | None, duration_ms: int) -> RunOutcome:
        """This outcome as the face that asked for the run tells it: with its session, its run
        (None: it never started) and how long it took."""
        return replace(self, session=session, run=run, duration_ms=duration_ms)

    def json(self) -> JsonObject:
        error = {"kind": self.code, "message": self.message} if self.code else None
        usage = self._usage()
        cost = usage.get("cost")
        return {
            "outcome": self.outcome,
            "answer": self.answer,
            "error": error,
            # model calls, each sent request (a note's and a retry's too)
            "calls": len(self.requests) or self.calls,
            "rounds": self.rounds,
            "notes": self.notes,
            "retries": self.retries,
            "cut": self.cut,
            "denials": self.denials,
            "usage": usage,
            "session_id": self.session,
            "run_id": self.run,
            "duration_ms": self.duration_ms,
            "total_cost_usd": float(cost) if isinstance(cost, int | float) else 0.0,
        }

    def _usage(self) -> JsonObject:
        usage = self.usage.json(self.price)
        if "cost" not in usage and self.cost is not None:
            usage["cost"] = self.cost
        return usage


def _text(value: JsonValue) -> str | None:
    return value if isinstance(value, str) else None


def _mapping(value: JsonValue) -> JsonMapping:
    return value if isinstance(value, Mapping) else {}
