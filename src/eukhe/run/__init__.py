"""The run: the generation loop that asks rules/run and rules/recovery at every decision."""

from typing import TYPE_CHECKING

# Named, not loaded: each is imported from its module (the run's machinery loads DBOS; a face's
# light modules never do).
if TYPE_CHECKING:
    from eukhe.run import fence, home_store, instructed, secrets
    from eukhe.run.chat_access import (
        Entry,
        EntryKind,
        now,
        page,
        read_session,
        status_json,
        status_lines,
        zoomed,
    )
    from eukhe.run.checkpoint import CheckpointError, Shadow, plan, project_of
    from eukhe.run.context import ProcessContext, begin
    from eukhe.run.deadline import TIMEOUT, Deadline, DurationError, duration
    from eukhe.run.drive import Answer, Request, Runs, SessionDriver
    from eukhe.run.handles import RunTable
    from eukhe.run.home_store import (
        FOLLOWUP,
        STEER,
        Chat,
        ChatStore,
        ChatStoreError,
        LineageError,
        Migrated,
        SessionRow,
    )
    from eukhe.run.loop import ABORT_GRACE
    from eukhe.run.mentions import Attached
    from eukhe.run.outcome import Ending, RunOutcome
    from eukhe.run.owner_access import (
        OwnerError,
        RequestKind,
        UnsafeSocket,
        alive,
        ask_once,
        info_path,
        read_info,
        socket_folder,
        socket_path,
    )
    from eukhe.run.permit import Asked, Asker
    from eukhe.run.runtime import Busy, Runtime
    from eukhe.run.session_service import RunStatus, Sessions, Transcript
    from eukhe.run.sink import RunSink
    from eukhe.run.spec import NoModel, RunSpec, SessionSetup, ToolsError, chosen_tools, setup
    from eukhe.run.store_access import StoreError, cause, database_url, read_problem, shown

__all__ = [
    "ABORT_GRACE",
    "FOLLOWUP",
    "STEER",
    "TIMEOUT",
    "Answer",
    "Asked",
    "Asker",
    "Attached",
    "Busy",
    "Chat",
    "ChatStore",
    "ChatStoreError",
    "CheckpointError",
    "Deadline",
    "DurationError",
    "Ending",
    "Entry",
    "EntryKind",
    "LineageError",
    "Migrated",
    "NoModel",
    "OwnerError",
    "ProcessContext",
    "Request",
    "RequestKind",
    "RunOutcome",
    "RunSink",
    "RunSpec",
    "RunStatus",
    "RunTable",
    "Runs",
    "Runtime",
    "SessionDriver",
    "SessionRow",
    "SessionSetup",
    "Sessions",
    "Shadow",
    "StoreError",
    "ToolsError",
    "Transcript",
    "UnsafeSocket",
    "alive",
    "ask_once",
    "begin",
    "cause",
    "chosen_tools",
    "database_url",
    "duration",
    "fence",
    "home_store",
    "info_path",
    "instructed",
    "now",
    "page",
    "plan",
    "project_of",
    "read_info",
    "read_problem",
    "read_session",
    "secrets",
    "setup",
    "shown",
    "socket_folder",
    "socket_path",
    "status_json",
    "status_lines",
    "zoomed",
]
