"""Persistence: the DBOS launch and its codec, URLs, the session queries, the parents' inbox of
reports, the lease holder's record, the executors' leases on a shared store, the chat writer's
election, the hooks' answers, and `eukhe doctor`'s probe. The faces reach it only through
`run/` (the session service, `run/home_store.py`, `run/store_access.py`)."""

from typing import TYPE_CHECKING

# Named, not loaded: each is imported from its module (DBOS and SQLAlchemy load with `durable` and
# the tables; `urls` is light).
if TYPE_CHECKING:
    from eukhe.store import durable, session_runs
    from eukhe.store.durable import Store, gone, takes_recovered
    from eukhe.store.election import Election
    from eukhe.store.engine import made, serialized
    from eukhe.store.executor_lease import ExecutorLease, Fleet, gone_on, host_of, shared, watcher_name
    from eukhe.store.fleet_status import ExecutorView, FleetView, HostView, read_fleet
    from eukhe.store.hook_answers import HookAnswerError, HookAnswers
    from eukhe.store.images import Images
    from eukhe.store.lease_holder import Holder, LeaseHolderError, LeaseHolderStore
    from eukhe.store.lineage import Lineage, LineageError, Lineages, forked_from, shown_runs
    from eukhe.store.migrate import Migrated, migrate
    from eukhe.store.probe import read_problem
    from eukhe.store.processes import alive, same, started
    from eukhe.store.reports import FOLLOWUP, STEER, USERS, Reports, submission
    from eukhe.store.session_runs import (
        CHILD_RUN,
        CHILD_TASK,
        IN_FLIGHT,
        NAMES,
        WORKFLOW,
        Carried,
        Row,
        Workflows,
    )
    from eukhe.store.urls import StoreError, cause, database_url, shown, sqlite_path

__all__ = [
    "CHILD_RUN",
    "CHILD_TASK",
    "FOLLOWUP",
    "IN_FLIGHT",
    "NAMES",
    "STEER",
    "USERS",
    "WORKFLOW",
    "Carried",
    "Election",
    "ExecutorLease",
    "ExecutorView",
    "Fleet",
    "FleetView",
    "Holder",
    "HookAnswerError",
    "HookAnswers",
    "HostView",
    "Images",
    "LeaseHolderError",
    "LeaseHolderStore",
    "Lineage",
    "LineageError",
    "Lineages",
    "Migrated",
    "Reports",
    "Row",
    "Store",
    "StoreError",
    "Workflows",
    "alive",
    "cause",
    "database_url",
    "durable",
    "forked_from",
    "gone",
    "gone_on",
    "host_of",
    "made",
    "migrate",
    "read_fleet",
    "read_problem",
    "same",
    "serialized",
    "session_runs",
    "shared",
    "shown",
    "shown_runs",
    "sqlite_path",
    "started",
    "submission",
    "takes_recovered",
    "watcher_name",
]
