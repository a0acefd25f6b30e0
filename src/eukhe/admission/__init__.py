"""Provider admission (H3): a user's request never waits behind background work.

One controller per provider in a `Registry` (the home's owner holds the one every
process of the home shares), whose state is the model `eukhe.rules.admission` and
whose every operation is the model's step. A request holds a slot for the time it
runs::

    async with registry.slot("vllm", interactive=True, deadline=loop.time() + 30) as s:
        async for event in provider.stream(request): ...

Session requests are interactive; the compactor, summaries and background
subagents are background. A session request preempts the provider's background
requests: their tasks are cancelled (their streams closed) and their blocks raise
`Preempted`; `run_in_slot` asks again within the call's deadline. A request that
waits is told its place in its queue and what holds it up (`on_queued`, a
`Queued`); one that takes its slot at once is told nothing. Limits come
from `providers.<name>.concurrency` and `providers.<name>.queueLimit`
(`registry.configure(settings)`).
"""

from eukhe.admission._controller import Controller, OnQueued, Queued, Slot, Statistics
from eukhe.admission._errors import AdmissionError, Preempted, QueueFull, SlotTimeout
from eukhe.admission._limits import DEFAULT_QUEUE_LIMIT, UNLIMITED, Limits, limits_from
from eukhe.admission._registry import Registry, Slots, run_in_slot

__all__ = [
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
]
