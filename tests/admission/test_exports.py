"""The public face of `eukhe.admission`: every name resolves, none drifts unnoticed,
and every error is an `AdmissionError`."""

from __future__ import annotations

import eukhe.admission
from eukhe.admission import AdmissionError, Preempted, QueueFull, SlotTimeout

PUBLIC = {
    "DEFAULT_QUEUE_LIMIT",
    "UNLIMITED",
    "AdmissionError",
    "Controller",
    "Limits",
    "OnQueued",
    "Preempted",
    "QueueFull",
    "Queued",
    "Registry",
    "Slot",
    "SlotTimeout",
    "Slots",
    "Statistics",
    "limits_from",
    "run_in_slot",
}


def test_exports_are_the_pinned_public_names() -> None:
    """No process-wide registry among them: a registry is made and passed (the home's
    owner holds the one its processes share)."""
    assert set(eukhe.admission.__all__) == PUBLIC
    assert not hasattr(eukhe.admission, "REGISTRY")
    for name in PUBLIC:
        assert getattr(eukhe.admission, name) is not None
        assert not name.startswith("_")


def test_every_error_has_one_root() -> None:
    for e in (QueueFull, SlotTimeout, Preempted):
        assert issubclass(e, AdmissionError)
    assert issubclass(SlotTimeout, TimeoutError)
    assert QueueFull.retryable and not Preempted.retryable and not SlotTimeout.retryable
