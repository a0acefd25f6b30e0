"""The public face of `eukhe.admission`: every name resolves, none drifts unnoticed,
and every error is an `AdmissionError`."""

from __future__ import annotations

import eukhe.admission
from eukhe.admission import AdmissionError, Preempted, QueueFull, SlotTimeout

PUBLIC = {
    "DEFAULT_QUEUE_LIMIT",
    "REGISTRY",
    "UNLIMITED",
    "AdmissionError",
    "Controller",
    "Limits",
    "Preempted",
    "QueueFull",
    "Registry",
    "Slot",
    "SlotTimeout",
    "Statistics",
    "configure",
    "limits_from",
    "run_in_slot",
    "slot",
}


def test_exports_are_the_pinned_public_names() -> None:
    assert set(eukhe.admission.__all__) == PUBLIC
    for name in PUBLIC:
        assert getattr(eukhe.admission, name) is not None
        assert not name.startswith("_")


def test_every_error_has_one_root() -> None:
    for e in (QueueFull, SlotTimeout, Preempted):
        assert issubclass(e, AdmissionError)
    assert issubclass(SlotTimeout, TimeoutError)
    assert QueueFull.retryable and not Preempted.retryable and not SlotTimeout.retryable
