"""The errors of provider admission, one root:

    AdmissionError
    ├── QueueFull      the provider's queue for this class is at its limit; retryable
    ├── SlotTimeout    the deadline passed while the request waited for a slot (also a TimeoutError)
    └── Preempted      a background request's slot went to a session request; ask again

Cancellation is never turned into one of these: a waiter or holder that is
cancelled ends its ticket and re-raises `CancelledError`. The one exception is
the cancel the controller itself makes to stop a preempted holder, which its
`async with` block turns into `Preempted`.
"""

from __future__ import annotations

from eukhe.admission._limits import UNLIMITED
from eukhe.errors import Code, EukheError


class AdmissionError(EukheError):
    """A request that got no slot of its provider, or lost it."""

    code = Code.PROVIDER

    retryable: bool = False

    def __init__(self, message: str, provider: str) -> None:
        super().__init__(message)
        self.provider = provider


class QueueFull(AdmissionError):
    """The class's queue holds `queue_limit` waiters already: the request was not queued
    (nothing was sent). Retryable: the queue drains as requests end."""

    retryable = True

    def __init__(self, provider: str, cls: str, queue_limit: int) -> None:
        super().__init__(
            f"provider {provider!r}: the {cls} queue is full "
            f"(providers.{provider}.queueLimit={queue_limit}): the request was not sent; "
            f"retry when a request of {provider!r} ends, or raise providers.{provider}.queueLimit",
            provider,
        )
        self.cls = cls
        self.queue_limit = queue_limit


class SlotTimeout(AdmissionError, TimeoutError):
    """The deadline passed while the request waited for a slot; its ticket has ended."""

    def __init__(self, provider: str, cls: str, waited: float, limit: int) -> None:
        shown = "no limit" if limit >= UNLIMITED else str(limit)
        super().__init__(
            f"provider {provider!r}: no {cls} slot by the deadline ({waited:.2f} s waited, "
            f"providers.{provider}.concurrency={shown}): the request was not sent",
            provider,
        )
        self.cls = cls
        self.waited = waited


class Preempted(AdmissionError):
    """A background request's slot went to a session request of the same provider
    (H3.1): its body was cancelled and its ticket has ended. The call asks for a slot
    again, within its own deadline (`run_in_slot` does)."""

    def __init__(self, provider: str, ticket: int) -> None:
        super().__init__(
            f"provider {provider!r}: background request (ticket {ticket}) preempted by a session "
            "request; ask for a slot again within the call's deadline",
            provider,
        )
        self.ticket = ticket
