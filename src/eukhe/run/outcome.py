"""How a run ended, as every face and the store see it: `RunOutcome`, from the run's loop to
the command line's exit code, the agent's view and the JSON of `eukhe run --json`."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from eukhe.ai.request import Message, Request
from eukhe.json_types import JsonObject
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

    def json(self) -> JsonObject:
        error = {"kind": self.code, "message": self.message} if self.code else None
        return {
            "outcome": self.outcome,
            "answer": self.answer,
            "error": error,
            "calls": len(self.requests),  # model calls, each sent request (a note's and a retry's too)
            "rounds": self.rounds,
            "notes": self.notes,
            "retries": self.retries,
            "cut": self.cut,
            "denials": self.denials,
            "usage": self.usage.json(self.price),
        }
