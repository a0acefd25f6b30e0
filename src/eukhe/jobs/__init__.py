"""Background jobs (issue 54): commands the model started with `run_in_background`, each held
by a keeper process that ends its whole tree as `rules.job` says, their records and output in
the home, and what the home's owner ends at its start when their holder died."""

from typing import TYPE_CHECKING

from eukhe.jobs.record import JobError, Listed, listing
from eukhe.jobs.stop import stop
from eukhe.jobs.sweep import sweep

# Named, not loaded: a keeper starts with this package, and the holder loads asyncio and the
# sandbox, which it never needs (import them from `eukhe.jobs.holder`).
if TYPE_CHECKING:
    from eukhe.jobs.holder import Held, Jobs, Scope

__all__ = ["Held", "JobError", "Jobs", "Listed", "Scope", "listing", "stop", "sweep"]
