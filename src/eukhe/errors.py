"""One root for eukhe's errors, with a code that says what failed: a lease or owner
failure is not a model's, and a run that fails says which (`Outcome.code` is the
code's `kind`, as `eukhe run --events` has it: `docs/events.md`).

Each error class keeps the standard base it had (`ValueError`, `RuntimeError`, ...),
so code that catches those still does; `EukheError` is what they share."""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar


class Code(StrEnum):
    """What failed."""

    MODEL = "model"  # the model's reply, or the model's route (no model, an unknown provider)
    PROVIDER = "provider"  # a provider's slots or its wire
    OWNER = "owner"  # the home's owner process: not reachable, refused, gone
    LEASE = "lease"  # the root-turn lease
    CHAT = "chat"  # the chat memory
    STORE = "store"  # the store of runs, reports and the lease holder
    TOOL = "tool"  # a tool, or the sandbox it runs in
    SETTINGS = "settings"  # settings, trust, skills: what the user wrote
    PERMISSION = "permission"  # the permission rules and approvals
    HOME = "home"  # the home's private files
    INPUT = "input"  # what the user typed: a prompt, a command
    RUN = "run"  # a run that could not start or broke

    @property
    def kind(self) -> str:
        """The failure's kind in a run's outcome: `model_error`, `lease_error`, ..."""
        return f"{self.value}_error"


class EukheError(Exception):
    """An error of eukhe's own; `code` says what failed."""

    code: ClassVar[Code] = Code.RUN
